package server

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"platd/server/controllers"
	"platd/server/discovery"
)

// errNoAdvertiseAddress: no configured or local address can be written
// into Endpoints (loopback and link-local ones cannot).
var errNoAdvertiseAddress = errors.New("no usable address: set --advertise-address")

// advertiseAddress chooses the address in-cluster clients are told to
// reach the server at, as upstream: the configured one, else the bind
// address when it is usable, else the first usable address of an
// interface that is up, of the service range's family when one exists.
func advertiseAddress(configured, bind string, want6 bool) (netip.Addr, error) {
	if configured != "" {
		a, err := netip.ParseAddr(configured)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("--advertise-address %q: %w", configured, err)
		}
		return a.Unmap(), nil
	}
	if a, err := netip.ParseAddr(bind); err == nil && usable(a) {
		return a.Unmap(), nil
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("listing interfaces: %w", err)
	}
	var other netip.Addr
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, ad := range addrs {
			pfx, err := netip.ParsePrefix(ad.String())
			if err != nil || !usable(pfx.Addr()) {
				continue
			}
			a := pfx.Addr().Unmap()
			if a.Is6() == want6 {
				return a, nil
			}
			if !other.IsValid() {
				other = a
			}
		}
	}
	if other.IsValid() {
		return other, nil
	}
	return netip.Addr{}, errNoAdvertiseAddress
}

// usable: an address Endpoints accept.
func usable(a netip.Addr) bool {
	return a.IsValid() && !a.IsUnspecified() && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsLinkLocalMulticast() && !a.IsMulticast()
}

// discoveryAddresses sets where /api tells clients to reach the server, as
// upstream: the advertised address with the serving port for every
// client, and the API Service's cluster IP and port for clients in the
// service range. Without an address to advertise, clients are told the
// host they asked for.
func (s *Server) discoveryAddresses(o *discovery.Options) {
	ranges := serviceRanges(s.opts)
	port := s.ln.Addr().(*net.TCPAddr).Port
	if addr, err := advertiseAddress(s.opts.AdvertiseAddress, s.opts.BindAddress, ranges.ClusterIPs.Is6()); err == nil {
		o.ServerAddress = net.JoinHostPort(addr.String(), strconv.Itoa(port))
	}
	o.ServiceCIDR = ranges.ClusterIPs.Prefix()
	o.ServiceAddress = net.JoinHostPort(ranges.ClusterIPs.At(0).String(), strconv.Itoa(controllers.APIServicePort))
}
