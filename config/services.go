package config

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Defaults of the service ranges, as upstream's API server.
const (
	DefaultServiceClusterIPRange = "10.0.0.0/24"
	DefaultServiceNodePortRange  = "30000-32767"
)

// maxServiceCIDRHostBits bounds --service-cluster-ip-range: a larger range
// is only more to scan for a free address, as upstream refuses it too.
const maxServiceCIDRHostBits = 20

// PortRange is a parsed --service-node-port-range: Size ports from Base.
type PortRange struct {
	Base, Size int
}

// ParseServiceCIDR parses --service-cluster-ip-range: one CIDR of at least
// four addresses and at most 2^20. Upstream's comma-separated dual-stack
// pair is refused as such: services here have one family.
func ParseServiceCIDR(s string) (netip.Prefix, error) {
	if strings.Contains(s, ",") {
		return netip.Prefix{}, fmt.Errorf("%q: dual-stack service ranges are not supported by platd; give one CIDR, such as %s", s, DefaultServiceClusterIPRange)
	}
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR such as %s", s, DefaultServiceClusterIPRange)
	}
	p = p.Masked()
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("%s is an IPv4-mapped IPv6 range: give the IPv4 range", p)
	}
	host := p.Addr().BitLen() - p.Bits()
	switch {
	case host > maxServiceCIDRHostBits:
		return netip.Prefix{}, fmt.Errorf("%s is too large; for %d-bit addresses, the mask must be >= %d", p, p.Addr().BitLen(), p.Addr().BitLen()-maxServiceCIDRHostBits)
	case host < 2:
		return netip.Prefix{}, fmt.Errorf("%s is too small: it needs at least two usable addresses", p)
	}
	return p, nil
}

// ParsePortRange parses "first-last", "first+count" (count ports after
// first) or a single port, as upstream's --service-node-port-range.
func ParsePortRange(s string) (PortRange, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) (PortRange, error) {
		return PortRange{}, fmt.Errorf("%q: %s (expected first-last, such as %s)", s, why, DefaultServiceNodePortRange)
	}
	num := func(v string) (int, bool) {
		n, err := strconv.Atoi(v)
		return n, err == nil && n >= 1 && n <= 65535 && v == strconv.Itoa(n)
	}
	var r PortRange
	switch {
	case strings.Contains(s, "-"):
		a, b, _ := strings.Cut(s, "-")
		lo, ok1 := num(a)
		hi, ok2 := num(b)
		if !ok1 || !ok2 {
			return bad("ports must be numbers from 1 to 65535")
		}
		if hi < lo {
			return bad("the last port is below the first")
		}
		r = PortRange{Base: lo, Size: hi - lo + 1}
	case strings.Contains(s, "+"):
		a, b, _ := strings.Cut(s, "+")
		lo, ok := num(a)
		n, err := strconv.Atoi(b)
		if !ok || err != nil || n < 0 || lo+n > 65535 {
			return bad("ports must be numbers from 1 to 65535")
		}
		r = PortRange{Base: lo, Size: n + 1}
	default:
		lo, ok := num(s)
		if !ok {
			return bad("ports must be numbers from 1 to 65535")
		}
		r = PortRange{Base: lo, Size: 1}
	}
	return r, nil
}

// validateServiceRanges parses the service range flags into o.
func (o *Options) validateServiceRanges() []string {
	var errs []string
	cidr := o.ServiceClusterIPRange
	if cidr == "" {
		cidr = DefaultServiceClusterIPRange
	}
	p, err := ParseServiceCIDR(cidr)
	if err != nil {
		errs = append(errs, "--service-cluster-ip-range: "+err.Error())
	}
	o.ServiceCIDR = p
	ports := o.ServiceNodePortRange
	if ports == "" {
		ports = DefaultServiceNodePortRange
	}
	r, err := ParsePortRange(ports)
	if err != nil {
		errs = append(errs, "--service-node-port-range: "+err.Error())
	}
	o.NodePorts = r
	return errs
}
