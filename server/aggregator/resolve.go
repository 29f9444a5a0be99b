package aggregator

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"

	"platd/server/apierr"
	"platd/server/registry"
)

// ErrNoEndpoints is why a service cannot be routed to: none of its
// endpoints is ready with the port the APIService names.
var ErrNoEndpoints = errors.New("no endpoints available")

// resolve is where a request for the service ns/name, port port, goes.
// No proxy routes a ClusterIP on this host, so a service is resolved as
// upstream's --enable-aggregator-routing resolves it: to a ready address
// of its endpoints, with the endpoint port named as the service port.
// An ExternalName service is reached at its external name. The errors
// are upstream's texts.
func (a *Aggregator) resolve(ns, name string, port int64) (*url.URL, error) {
	svc, err := a.cfg.Objects.Get(a.cfg.Services, ns, name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil, fmt.Errorf("service %q not found", name)
	}
	if err != nil {
		return nil, err
	}
	spec, _ := svc["spec"].(map[string]any)
	switch t, _ := spec["type"].(string); t {
	case "ExternalName":
		host, _ := spec["externalName"].(string)
		return &url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.FormatInt(port, 10))}, nil
	case "", "ClusterIP", "NodePort", "LoadBalancer":
	default:
		return nil, fmt.Errorf("unsupported service type %q", t)
	}
	portName, ok := servicePortName(spec, port)
	if !ok {
		return nil, fmt.Errorf("no service port %d found for service %q", port, name)
	}
	ep, err := a.cfg.Objects.Get(a.cfg.Endpoints, ns, name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil, fmt.Errorf("endpoints %q not found", name)
	}
	if err != nil {
		return nil, err
	}
	host, ok := pickEndpoint(ep, portName, a.pick)
	if !ok {
		return nil, fmt.Errorf("%w for service %q", ErrNoEndpoints, name)
	}
	return &url.URL{Scheme: "https", Host: host}, nil
}

// servicePortName is the name of the port numbered port of a service's
// spec, and whether it has one.
func servicePortName(spec map[string]any, port int64) (string, bool) {
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		if n, _ := pm["port"].(int64); n == port {
			name, _ := pm["name"].(string)
			return name, true
		}
	}
	return "", false
}

// pickEndpoint returns host:port of a ready address of ep with the port
// called portName, the one of the n found that pick(n) chooses: at
// random (rand.IntN), as upstream spreads requests over the endpoints.
func pickEndpoint(ep registry.Object, portName string, pick func(n int) int) (string, bool) {
	subsets, _ := ep["subsets"].([]any)
	type candidate struct {
		ip   string
		port int64
	}
	var found []candidate
	for _, s := range subsets {
		sm, _ := s.(map[string]any)
		addrs, _ := sm["addresses"].([]any)
		ports, _ := sm["ports"].([]any)
		for _, p := range ports {
			pm, _ := p.(map[string]any)
			if name, _ := pm["name"].(string); name != portName {
				continue
			}
			n, _ := pm["port"].(int64)
			for _, a := range addrs {
				am, _ := a.(map[string]any)
				if ip, _ := am["ip"].(string); ip != "" {
					found = append(found, candidate{ip, n})
				}
			}
			break
		}
	}
	if len(found) == 0 {
		return "", false
	}
	c := found[pick(len(found))]
	return net.JoinHostPort(c.ip, strconv.FormatInt(c.port, 10)), true
}
