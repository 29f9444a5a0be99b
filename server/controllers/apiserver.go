package controllers

import (
	"net/netip"

	"platd/config"
	"platd/server/registry"
)

// APIServer says where the API is served, for the objects in-cluster
// clients find it through.
type APIServer struct {
	// ServiceIP is the cluster IP of the API's Service: the first usable
	// address of the service range.
	ServiceIP netip.Addr
	// Address and Port are where the server is reached; an invalid
	// Address (none usable) keeps only the Service.
	Address netip.Addr
	Port    int
}

// APIServicePort is the port of the API's Service, as upstream.
const APIServicePort = 443

// APIServerObjects are the objects that tell in-cluster clients where the
// API is, as upstream's control plane keeps them: the Service in the
// default namespace with port "https" 443 to the server's port, and the
// Endpoints and EndpointSlice of the same name pointing at the server.
// Types that are not served are left out.
func APIServerObjects(reg *registry.Registry, b config.Brand, a APIServer) []Wanted {
	out := APIServerService(reg, b, a)
	if !a.Address.IsValid() {
		return out
	}
	return append(out, APIServerEndpointObjects(reg, b, []netip.Addr{a.Address}, a.Port)...)
}

// APIServerService is the API's Service alone: with N replicas each keeps
// it, and the leader keeps the endpoints.
func APIServerService(reg *registry.Registry, b config.Brand, a APIServer) []Wanted {
	d := reg.Lookup("", "v1", "services")
	if d == nil {
		return nil
	}
	return []Wanted{{Descriptor: d, Fields: []string{"spec.ports", "spec.type"}, Object: registry.Object{
		"metadata": apiObjectMeta(b, map[string]any{"component": "apiserver", "provider": b.APIServiceName}),
		"spec": map[string]any{
			"type": "ClusterIP", "clusterIP": a.ServiceIP.String(), "sessionAffinity": "None",
			"ports": []any{map[string]any{"name": "https", "protocol": "TCP", "port": int64(APIServicePort), "targetPort": int64(a.Port)}},
		},
	}}}
}

// APIServerEndpointObjects are the API's Endpoints and EndpointSlice
// listing addrs (sorted, of one family: the first address's) on port.
func APIServerEndpointObjects(reg *registry.Registry, b config.Brand, addrs []netip.Addr, port int) []Wanted {
	if len(addrs) == 0 {
		return nil
	}
	is6 := addrs[0].Is6()
	var ips []string
	for _, a := range addrs {
		if a.Is6() == is6 {
			ips = append(ips, a.String())
		}
	}
	portObj := map[string]any{"name": "https", "port": int64(port), "protocol": "TCP"}
	var out []Wanted
	if d := reg.Lookup("", "v1", "endpoints"); d != nil {
		var addresses []any
		for _, ip := range ips {
			addresses = append(addresses, map[string]any{"ip": ip})
		}
		// The slice is kept here too, so the mirroring controller must
		// leave these Endpoints alone: of the labels, only that one is
		// kept, as upstream's reconciler keeps it.
		skipMirror := "endpointslice." + b.LongDomain + "/skip-mirror"
		out = append(out, Wanted{Descriptor: d, Fields: []string{"metadata.labels[" + skipMirror + "]", "subsets"},
			Equivalent: map[string]func(want, have any) bool{"subsets": sameAPIEndpoints},
			Object: registry.Object{
				"metadata": apiObjectMeta(b, map[string]any{skipMirror: "true"}),
				"subsets":  []any{map[string]any{"addresses": addresses, "ports": []any{copyValue(portObj)}}},
			}})
	}
	if d := reg.Lookup(b.Group("discovery"), "v1", "endpointslices"); d != nil {
		addrType := "IPv4"
		if is6 {
			addrType = "IPv6"
		}
		var endpoints []any
		for _, ip := range ips {
			endpoints = append(endpoints, map[string]any{"addresses": []any{ip}, "conditions": map[string]any{"ready": true}})
		}
		out = append(out, Wanted{Descriptor: d, Fields: []string{"metadata.labels", "endpoints", "ports"}, Recreate: []string{"addressType"}, Object: registry.Object{
			"metadata":    apiObjectMeta(b, map[string]any{b.Label("service-name"): b.APIServiceName}),
			"addressType": addrType,
			"endpoints":   endpoints,
			"ports":       []any{copyValue(portObj)},
		}})
	}
	return out
}

// sameAPIEndpoints reports whether the stored subsets of the API's
// Endpoints count as the wanted ones, as upstream's reconciler checks
// them: one subset, with the wanted ports in order and addresses whose IPs
// are the wanted ones in any order. Whatever else an address or the
// subset holds is left as it is.
func sameAPIEndpoints(want, have any) bool {
	w, h := onlySubset(want), onlySubset(have)
	if w == nil || h == nil || !sameJSON(w["ports"], h["ports"]) {
		return false
	}
	wantIPs, haveIPs := subsetIPs(w), subsetIPs(h)
	if len(haveIPs) != len(wantIPs) {
		return false
	}
	seen := make(map[string]bool, len(wantIPs))
	for _, ip := range wantIPs {
		seen[ip] = false
	}
	for _, ip := range haveIPs {
		if done, ok := seen[ip]; !ok || done {
			return false
		}
		seen[ip] = true
	}
	return true
}

// onlySubset is the subset of a list of exactly one, else nil.
func onlySubset(subsets any) map[string]any {
	l, _ := subsets.([]any)
	if len(l) != 1 {
		return nil
	}
	m, _ := l[0].(map[string]any)
	return m
}

// subsetIPs are the IPs of a subset's ready addresses.
func subsetIPs(subset map[string]any) []string {
	l, _ := subset["addresses"].([]any)
	ips := make([]string, len(l))
	for i, a := range l {
		m, _ := a.(map[string]any)
		ips[i], _ = m["ip"].(string)
	}
	return ips
}

func apiObjectMeta(b config.Brand, labels map[string]any) map[string]any {
	return map[string]any{"name": b.APIServiceName, "namespace": "default", "labels": labels}
}
