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

// servicePort is the port of the API's Service, as upstream.
const apiServicePort = 443

// APIServerObjects are the objects that tell in-cluster clients where the
// API is, as upstream's control plane keeps them: the Service in the
// default namespace with port "https" 443 to the server's port, and the
// Endpoints and EndpointSlice of the same name pointing at the server.
// Types that are not served are left out.
func APIServerObjects(reg *registry.Registry, b config.Brand, a APIServer) []Wanted {
	name := b.APIServiceName
	meta := func(labels map[string]any) map[string]any {
		return map[string]any{"name": name, "namespace": "default", "labels": labels}
	}
	var out []Wanted
	if d := reg.Lookup("", "v1", "services"); d != nil {
		out = append(out, Wanted{Descriptor: d, Fields: []string{"spec.ports", "spec.type"}, Object: registry.Object{
			"metadata": meta(map[string]any{"component": "apiserver", "provider": name}),
			"spec": map[string]any{
				"type": "ClusterIP", "clusterIP": a.ServiceIP.String(), "sessionAffinity": "None",
				"ports": []any{map[string]any{"name": "https", "protocol": "TCP", "port": int64(apiServicePort), "targetPort": int64(a.Port)}},
			},
		}})
	}
	if !a.Address.IsValid() {
		return out
	}
	ip := a.Address.String()
	port := map[string]any{"name": "https", "port": int64(a.Port), "protocol": "TCP"}
	if d := reg.Lookup("", "v1", "endpoints"); d != nil {
		out = append(out, Wanted{Descriptor: d, Fields: []string{"metadata.labels", "subsets"}, Object: registry.Object{
			// The slice is kept here too, so the mirroring controller
			// must leave these Endpoints alone.
			"metadata": meta(map[string]any{"endpointslice." + b.LongDomain + "/skip-mirror": "true"}),
			"subsets": []any{map[string]any{
				"addresses": []any{map[string]any{"ip": ip}},
				"ports":     []any{copyValue(port)},
			}},
		}})
	}
	if d := reg.Lookup(b.Group("discovery"), "v1", "endpointslices"); d != nil {
		addrType := "IPv4"
		if a.Address.Is6() {
			addrType = "IPv6"
		}
		out = append(out, Wanted{Descriptor: d, Fields: []string{"metadata.labels", "endpoints", "ports"}, Recreate: []string{"addressType"}, Object: registry.Object{
			"metadata":    meta(map[string]any{b.Label("service-name"): name}),
			"addressType": addrType,
			"endpoints":   []any{map[string]any{"addresses": []any{ip}, "conditions": map[string]any{"ready": true}}},
			"ports":       []any{copyValue(port)},
		}})
	}
	return out
}
