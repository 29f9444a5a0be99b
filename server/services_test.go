package server_test

import (
	"fmt"
	"net/netip"

	"testing"
)

const servicesPath = "/api/v1/namespaces/default/services"

// svc is a service body with the given spec.
func svc(name string, spec map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{"name": name}, "spec": spec}
}

// tcpPort is one service port.
func tcpPort(port int, extra ...any) map[string]any {
	p := map[string]any{"port": port}
	for i := 0; i+1 < len(extra); i += 2 {
		p[extra[i].(string)] = extra[i+1]
	}
	return p
}

func ports(p ...map[string]any) []any {
	out := make([]any, len(p))
	for i := range p {
		out[i] = p[i]
	}
	return out
}

// statusText is the message of a Status body.
func statusText(t *testing.T, r *resp) string {
	t.Helper()
	m, _ := r.obj(t)["message"].(string)
	return m
}

func TestServiceDefaults(t *testing.T) {
	t.Parallel()
	e := start(t)
	got := e.do("POST", servicesPath, svc("web", map[string]any{
		"selector": map[string]any{"app": "web"}, "ports": ports(tcpPort(80)),
	})).mustCode(t, 201).obj(t)
	ip, _ := path(got, "spec.clusterIP").(string)
	addr, err := netip.ParseAddr(ip)
	if err != nil || !netip.MustParsePrefix("10.0.0.0/24").Contains(addr) || ip == "10.0.0.0" || ip == "10.0.0.255" || ip == "10.0.0.1" {
		t.Fatalf("clusterIP %q not allocated from the range", ip)
	}
	for field, want := range map[string]any{
		"spec.type":                  "ClusterIP",
		"spec.sessionAffinity":       "None",
		"spec.internalTrafficPolicy": "Cluster",
		"spec.ipFamilyPolicy":        "SingleStack",
	} {
		if v := path(got, field); v != want {
			t.Errorf("%s = %v, want %v", field, v, want)
		}
	}
	if fmt.Sprint(path(got, "spec.clusterIPs")) != "["+ip+"]" || fmt.Sprint(path(got, "spec.ipFamilies")) != "[IPv4]" {
		t.Errorf("clusterIPs %v ipFamilies %v", path(got, "spec.clusterIPs"), path(got, "spec.ipFamilies"))
	}
	p := got["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)
	if p["protocol"] != "TCP" || p["targetPort"] != float64(80) {
		t.Errorf("port defaults %v", p)
	}
	if _, ok := path(got, "status.loadBalancer").(map[string]any); !ok {
		t.Errorf("status %v", got["status"])
	}
	if path(got, "spec.externalTrafficPolicy") != nil {
		t.Errorf("a ClusterIP service got externalTrafficPolicy %v", path(got, "spec.externalTrafficPolicy"))
	}

	// NodePort: node ports from the range, external traffic policy.
	np := e.do("POST", servicesPath, svc("np", map[string]any{
		"type": "NodePort", "ports": ports(tcpPort(80, "name", "http"), tcpPort(443, "name", "https", "targetPort", "tls")),
	})).mustCode(t, 201).obj(t)
	for _, x := range np["spec"].(map[string]any)["ports"].([]any) {
		n := x.(map[string]any)["nodePort"].(float64)
		if n < 30000 || n > 32767 {
			t.Errorf("nodePort %v out of range", n)
		}
	}
	if path(np, "spec.externalTrafficPolicy") != "Cluster" {
		t.Errorf("externalTrafficPolicy %v", path(np, "spec.externalTrafficPolicy"))
	}
	lb := e.do("POST", servicesPath, svc("lb", map[string]any{
		"type": "LoadBalancer", "sessionAffinity": "ClientIP", "ports": ports(tcpPort(80)),
	})).mustCode(t, 201).obj(t)
	if path(lb, "spec.allocateLoadBalancerNodePorts") != true || path(lb, "spec.sessionAffinityConfig.clientIP.timeoutSeconds") != float64(10800) {
		t.Errorf("load balancer defaults %v", lb["spec"])
	}
	// A status write changes only the status.
	lb["spec"].(map[string]any)["selector"] = map[string]any{"ignored": "yes"}
	lb["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "192.0.2.10"}}}}
	st := e.do("PUT", servicesPath+"/lb/status", lb).mustCode(t, 200).obj(t)
	if path(st, "spec.selector") != nil || fmt.Sprint(path(st, "status.loadBalancer.ingress")) != "[map[ip:192.0.2.10 ipMode:VIP]]" {
		t.Errorf("status write: %v %v", path(st, "spec.selector"), path(st, "status"))
	}
	// Headless services get no IP.
	hl := e.do("POST", servicesPath, svc("headless", map[string]any{"clusterIP": "None", "selector": map[string]any{"a": "b"}, "ports": ports(tcpPort(80))})).mustCode(t, 201).obj(t)
	if path(hl, "spec.clusterIP") != "None" || fmt.Sprint(path(hl, "spec.clusterIPs")) != "[None]" {
		t.Errorf("headless %v", hl["spec"])
	}
	ext := e.do("POST", servicesPath, svc("ext", map[string]any{"type": "ExternalName", "externalName": "db.example.com"})).mustCode(t, 201).obj(t)
	if path(ext, "spec.clusterIP") != nil || path(ext, "spec.ipFamilyPolicy") != nil {
		t.Errorf("external name %v", ext["spec"])
	}
}
