package server_test

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"platd/config"
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
	// Warnings for what the type ignores and addresses not in canonical
	// form, as upstream.
	r := e.do("POST", servicesPath, svc("warned", map[string]any{"externalName": "x.example.com", "externalIPs": []any{"192.0.2.010"}, "ports": ports(tcpPort(80))}))
	r.mustCode(t, 201)
	if got := strings.Join(r.header.Values("Warning"), "|"); got != `299 - "spec.externalIPs[0]: IP address was accepted, but will be invalid in a future Kubernetes release: ParseAddr(\"192.0.2.010\"): IPv4 field has octet with leading zero"|299 - "spec.externalName is ignored when spec.type is not \"ExternalName\""` {
		t.Errorf("warnings %s", got)
	}
	// The proxy needs a node network.
	for _, p := range []string{"/web/proxy", "/web/proxy/healthz", "/web:80/proxy/a/b"} {
		r := e.do("GET", servicesPath+p, nil)
		if r.code != 503 || !strings.Contains(statusText(t, r), "platd runs no nodes") {
			t.Errorf("GET %s: %d %s", p, r.code, r.body)
		}
	}
	e.do("GET", servicesPath+"/missing/proxy", nil).mustCode(t, 404)
	// Field selectors on the cluster IP and the type.
	names := func(q string) string {
		var out []string
		for _, it := range e.do("GET", servicesPath+"?fieldSelector="+url.QueryEscape(q), nil).mustCode(t, 200).obj(t)["items"].([]any) {
			out = append(out, path(it.(map[string]any), "metadata.name").(string))
		}
		return strings.Join(out, ",")
	}
	if got := names("spec.clusterIP=None"); got != "headless" {
		t.Errorf("spec.clusterIP=None: %s", got)
	}
	bad := e.do("GET", servicesPath+"?fieldSelector=spec.ports%3D1", nil).mustCode(t, 400).obj(t)
	if bad["message"] != "field label not supported: spec.ports" {
		t.Errorf("unknown field label: %v", bad["message"])
	}
	if got := names("spec.type=NodePort"); got != "np" {
		t.Errorf("spec.type=NodePort: %s", got)
	}
	if got := names("spec.clusterIP!=None,spec.type=ClusterIP"); got != e.opts.Brand.APIServiceName+",warned,web" {
		t.Errorf("spec.clusterIP!=None,spec.type=ClusterIP: %s", got)
	}
}

// TestServiceValidation checks upstream's texts and paths.
func TestServiceValidation(t *testing.T) {
	t.Parallel()
	e := start(t)
	for _, tc := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"no ports", svc("a", map[string]any{}), `Service "a" is invalid: spec.ports: Required value`},
		{"name", svc("1abc", map[string]any{"ports": ports(tcpPort(80))}),
			`metadata.name: Invalid value: "1abc": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`},
		{"unnamed ports", svc("a", map[string]any{"ports": ports(tcpPort(80), tcpPort(81))}),
			`[spec.ports[0].name: Required value, spec.ports[1].name: Required value]`},
		{"duplicate names", svc("a", map[string]any{"ports": ports(tcpPort(80, "name", "x"), tcpPort(81, "name", "x"))}),
			`spec.ports[1].name: Duplicate value: "x"`},
		{"port range", svc("a", map[string]any{"ports": ports(tcpPort(70000))}),
			`spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive`},
		{"protocol", svc("a", map[string]any{"ports": ports(tcpPort(80, "protocol", "ICMP"))}),
			`spec.ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"`},
		{"type", svc("a", map[string]any{"type": "Magic", "ports": ports(tcpPort(80))}),
			`spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`},
		{"external name", svc("a", map[string]any{"type": "ExternalName"}), `spec.externalName: Required value`},
		{"selector", svc("a", map[string]any{"selector": map[string]any{"a": "b c"}, "ports": ports(tcpPort(80))}),
			`spec.selector: Invalid value: "b c": a valid label must be an empty string or consist of alphanumeric characters`},
		{"node port on ClusterIP", svc("a", map[string]any{"ports": ports(tcpPort(80, "nodePort", 30001))}),
			"spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"},
		{"node port range", svc("a", map[string]any{"type": "NodePort", "ports": ports(tcpPort(80, "nodePort", 8080))}),
			`spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767`},
		{"cluster IP range", svc("a", map[string]any{"clusterIP": "10.1.0.5", "ports": ports(tcpPort(80))}),
			`spec.clusterIPs: Invalid value: []string{"10.1.0.5"}: failed to allocate IP 10.1.0.5: provided IP is not in the valid range. The range of valid IPs is 10.0.0.0/24`},
		{"broadcast", svc("a", map[string]any{"clusterIP": "10.0.0.255", "ports": ports(tcpPort(80))}),
			`failed to allocate IP 10.0.0.255: provided IP is not in the valid range`},
		{"bad IP", svc("a", map[string]any{"clusterIP": "10.0.0.x", "ports": ports(tcpPort(80))}),
			`spec.clusterIPs[0]: Invalid value: "10.0.0.x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`},
		{"dual stack", svc("a", map[string]any{"ipFamilyPolicy": "RequireDualStack", "ports": ports(tcpPort(80))}),
			`spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`},
		{"affinity timeout", svc("a", map[string]any{"sessionAffinity": "ClientIP", "sessionAffinityConfig": map[string]any{"clientIP": map[string]any{"timeoutSeconds": 0}}, "ports": ports(tcpPort(80))}),
			`spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400`},
		{"kubernetes service IP", svc("a", map[string]any{"clusterIP": "10.0.0.1", "ports": ports(tcpPort(80))}),
			`spec.clusterIPs: Invalid value: []string{"10.0.0.1"}: failed to allocate IP 10.0.0.1: provided IP is already allocated`},
	} {
		r := e.do("POST", servicesPath, tc.body).mustCode(t, 422)
		if msg := statusText(t, r); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %s\nwant %s", tc.name, msg, tc.want)
		}
	}
	// Endpoints.
	epPath := "/api/v1/namespaces/default/endpoints"
	r := e.do("POST", epPath, map[string]any{"metadata": map[string]any{"name": "ep"}, "subsets": []any{
		map[string]any{},
		map[string]any{"addresses": []any{map[string]any{"ip": "127.0.0.1"}}, "ports": []any{map[string]any{"port": 80}, map[string]any{"port": 0, "name": "b"}}},
	}}).mustCode(t, 422)
	for _, want := range []string{
		"subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`",
		`subsets[1].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`,
		"subsets[1].ports[0].name: Required value",
		"subsets[1].ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
	} {
		if msg := statusText(t, r); !strings.Contains(msg, want) {
			t.Errorf("endpoints: %s\nwant %s", msg, want)
		}
	}
	ep := e.do("POST", epPath, map[string]any{"metadata": map[string]any{"name": "ep"}, "subsets": []any{
		map[string]any{"addresses": []any{map[string]any{"ip": "192.0.2.7"}}, "ports": []any{map[string]any{"port": 80}}},
	}}).mustCode(t, 201).obj(t)
	if p := ep["subsets"].([]any)[0].(map[string]any)["ports"].([]any)[0].(map[string]any); p["protocol"] != "TCP" {
		t.Errorf("endpoint port defaults %v", p)
	}
}

// TestServiceClusterIPImmutable: an allocated IP stays; writing the
// object back without it keeps it.
func TestServiceClusterIPImmutable(t *testing.T) {
	t.Parallel()
	e := start(t)
	got := e.do("POST", servicesPath, svc("imm", map[string]any{"ports": ports(tcpPort(80))})).mustCode(t, 201).obj(t)
	ip := path(got, "spec.clusterIP").(string)
	other := "10.0.0.200"
	if ip == other {
		other = "10.0.0.201"
	}
	r := e.do("PUT", servicesPath+"/imm", svc("imm", map[string]any{"clusterIP": other, "ports": ports(tcpPort(80))})).mustCode(t, 422)
	if want := `spec.clusterIPs[0]: Invalid value: []string{"` + other + `"}: may not change once set`; !strings.Contains(statusText(t, r), want) {
		t.Errorf("changing clusterIP: %s", statusText(t, r))
	}
	// A PUT without the allocated values keeps them.
	put := e.do("PUT", servicesPath+"/imm", svc("imm", map[string]any{"ports": ports(tcpPort(81))})).mustCode(t, 200).obj(t)
	if path(put, "spec.clusterIP") != ip {
		t.Errorf("PUT without clusterIP: %v, want %s", path(put, "spec.clusterIP"), ip)
	}
	// To ExternalName releases the IP, back allocates one.
	e.do("PATCH", servicesPath+"/imm", `{"spec":{"type":"ExternalName","externalName":"x.example.com"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	e.do("POST", servicesPath, svc("takes", map[string]any{"clusterIP": ip, "ports": ports(tcpPort(80))})).mustCode(t, 201)
	back := e.do("PATCH", servicesPath+"/imm", `{"spec":{"type":"NodePort","externalName":null}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200).obj(t)
	if nip, _ := path(back, "spec.clusterIP").(string); nip == "" || nip == ip {
		t.Errorf("back from ExternalName: clusterIP %q", nip)
	}
	if n, _ := back["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["nodePort"].(float64); n < 30000 {
		t.Errorf("ClusterIP to NodePort: nodePort %v", n)
	}
	// PUT creates a missing service, allocating as POST does.
	put = e.do("PUT", servicesPath+"/put-made", svc("put-made", map[string]any{"ports": ports(tcpPort(80))})).mustCode(t, 201).obj(t)
	if a, err := netip.ParseAddr(fmt.Sprint(path(put, "spec.clusterIP"))); err != nil || !netip.MustParsePrefix("10.0.0.0/24").Contains(a) {
		t.Errorf("PUT create: clusterIP %v", path(put, "spec.clusterIP"))
	}
}

// TestServiceAllocation: concurrent creates never share a value; a
// deleted service's values can be taken again.
func TestServiceAllocation(t *testing.T) {
	t.Parallel()
	e := start(t)
	const n = 32
	ips := make([]string, n)
	nodePorts := make([]float64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.do("POST", servicesPath, svc(fmt.Sprintf("par-%d", i), map[string]any{"type": "NodePort", "ports": ports(tcpPort(80))}))
			if r.code != 201 {
				t.Errorf("create %d: %d %s", i, r.code, r.body)
				return
			}
			var m map[string]any
			m = r.obj(t)
			ips[i], _ = path(m, "spec.clusterIP").(string)
			nodePorts[i] = m["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["nodePort"].(float64)
		}()
	}
	wg.Wait()
	seenIP, seenPort := map[string]int{}, map[float64]int{}
	for i := range n {
		if j, dup := seenIP[ips[i]]; dup || ips[i] == "" {
			t.Errorf("services %d and %d share cluster IP %q", i, j, ips[i])
		}
		if j, dup := seenPort[nodePorts[i]]; dup {
			t.Errorf("services %d and %d share node port %v", i, j, nodePorts[i])
		}
		seenIP[ips[i]], seenPort[nodePorts[i]] = i, i
	}
	// Explicit values already held are refused with upstream's texts.
	r := e.do("POST", servicesPath, svc("dup", map[string]any{"type": "NodePort", "clusterIP": ips[0], "ports": ports(tcpPort(80))})).mustCode(t, 422)
	if want := fmt.Sprintf(`spec.clusterIPs: Invalid value: []string{%q}: failed to allocate IP %s: provided IP is already allocated`, ips[0], ips[0]); !strings.Contains(statusText(t, r), want) {
		t.Errorf("taken IP: %s", statusText(t, r))
	}
	r = e.do("POST", servicesPath, svc("dup", map[string]any{"type": "NodePort", "ports": ports(tcpPort(80, "nodePort", nodePorts[0]))})).mustCode(t, 422)
	if want := fmt.Sprintf(`spec.ports[0].nodePort: Invalid value: %v: provided port is already allocated`, nodePorts[0]); !strings.Contains(statusText(t, r), want) {
		t.Errorf("taken port: %s", statusText(t, r))
	}
	// Deleting releases both, and removes the endpoints of the name.
	e.do("POST", "/api/v1/namespaces/default/endpoints", map[string]any{"metadata": map[string]any{"name": "par-0"}}).mustCode(t, 201)
	e.do("POST", "/api/v1/namespaces/default/endpoints", map[string]any{"metadata": map[string]any{"name": "par-1", "finalizers": []any{"example.com/keep"}}}).mustCode(t, 201)
	e.do("DELETE", servicesPath+"/par-0", nil).mustCode(t, 200)
	e.do("DELETE", servicesPath+"/par-1", nil).mustCode(t, 200)
	e.do("GET", "/api/v1/namespaces/default/endpoints/par-0", nil).mustCode(t, 404)
	e.do("GET", "/api/v1/namespaces/default/endpoints/par-1", nil).mustCode(t, 200)
	got := e.do("POST", servicesPath, svc("reuse", map[string]any{"type": "NodePort", "clusterIP": ips[0], "ports": ports(tcpPort(80, "nodePort", nodePorts[0]))})).mustCode(t, 201).obj(t)
	if path(got, "spec.clusterIP") != ips[0] {
		t.Errorf("reuse: %v", got["spec"])
	}
	// A dry run allocates nothing.
	e.do("POST", servicesPath+"?dryRun=All", svc("dry", map[string]any{"clusterIP": "10.0.0.5", "ports": ports(tcpPort(80))})).mustCode(t, 201)
	e.do("POST", servicesPath, svc("wet", map[string]any{"clusterIP": "10.0.0.5", "ports": ports(tcpPort(80))})).mustCode(t, 201)
}

// TestServiceAllocationSurvivesRestart: claims are stored with the
// services.
func TestServiceAllocationSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir))
	got := e.do("POST", servicesPath, svc("keep", map[string]any{"type": "NodePort", "ports": ports(tcpPort(80))})).mustCode(t, 201).obj(t)
	ip := path(got, "spec.clusterIP").(string)
	np := got["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["nodePort"]
	e.stop()
	e2 := startWith(t, testOptions(t, dir))
	r := e2.do("POST", servicesPath, svc("steal", map[string]any{"clusterIP": ip, "ports": ports(tcpPort(80))})).mustCode(t, 422)
	if !strings.Contains(statusText(t, r), "provided IP is already allocated") {
		t.Errorf("after restart: %s", statusText(t, r))
	}
	r = e2.do("POST", servicesPath, svc("steal", map[string]any{"type": "NodePort", "ports": ports(tcpPort(80, "nodePort", np))})).mustCode(t, 422)
	if !strings.Contains(statusText(t, r), "provided port is already allocated") {
		t.Errorf("after restart: %s", statusText(t, r))
	}
}

// TestAPIServerService: the API's own Service, Endpoints and EndpointSlice
// exist from the start and come back when deleted or changed.
func TestAPIServerService(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.opts.Brand
	name := b.APIServiceName
	u, _ := url.Parse(e.srv.URL())
	port, _ := strconv.Atoi(u.Port())
	s := e.do("GET", servicesPath+"/"+name, nil).mustCode(t, 200).obj(t)
	if path(s, "spec.clusterIP") != "10.0.0.1" || path(s, "spec.type") != "ClusterIP" || path(s, "metadata.labels.provider") != name ||
		fmt.Sprint(path(s, "spec.ports")) != fmt.Sprintf("[map[name:https port:443 protocol:TCP targetPort:%v]]", port) {
		t.Fatalf("service %v", s["spec"])
	}
	epPath := "/api/v1/namespaces/default/endpoints/" + name
	ep := e.do("GET", epPath, nil).mustCode(t, 200).obj(t)
	ss := ep["subsets"].([]any)[0].(map[string]any)
	addr := ss["addresses"].([]any)[0].(map[string]any)["ip"].(string)
	if a, err := netip.ParseAddr(addr); err != nil || a.IsLoopback() ||
		fmt.Sprint(ss["ports"]) != fmt.Sprintf("[map[name:https port:%v protocol:TCP]]", port) {
		t.Fatalf("endpoints %v", ep)
	}
	if ep["metadata"].(map[string]any)["labels"].(map[string]any)["endpointslice."+b.LongDomain+"/skip-mirror"] != "true" {
		t.Errorf("endpoints labels %v", path(ep, "metadata.labels"))
	}
	slicePath := "/apis/" + b.Group("discovery") + "/v1/namespaces/default/endpointslices/" + name
	sl := e.do("GET", slicePath, nil).mustCode(t, 200).obj(t)
	if sl["metadata"].(map[string]any)["labels"].(map[string]any)[b.Label("service-name")] != name || sl["addressType"] != "IPv4" ||
		fmt.Sprint(sl["endpoints"]) != "[map[addresses:["+addr+"] conditions:map[ready:true]]]" {
		t.Fatalf("endpointslice %v", sl)
	}

	// Deleted, they come back; the service with its address.
	e.do("DELETE", servicesPath+"/"+name, nil).mustCode(t, 200)
	e.do("DELETE", slicePath, nil).mustCode(t, 200)
	eventually(t, "the API service recreated", func() bool {
		r := e.do("GET", servicesPath+"/"+name, nil)
		return r.code == 200 && path(r.obj(t), "spec.clusterIP") == "10.0.0.1"
	})
	eventually(t, "the API endpoint slice recreated", func() bool { return e.do("GET", slicePath, nil).code == 200 })
	// Changed, they are repaired.
	e.do("PATCH", epPath, `{"subsets":[{"addresses":[{"ip":"192.0.2.99"}],"ports":[{"port":1}]}]}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	e.do("PATCH", servicesPath+"/"+name, `{"spec":{"ports":[{"port":8443,"name":"x"}]}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	eventually(t, "the API endpoints repaired", func() bool {
		got := e.do("GET", epPath, nil).obj(t)
		return fmt.Sprint(got["subsets"]) == fmt.Sprint(ep["subsets"])
	})
	eventually(t, "the API service repaired", func() bool {
		got := e.do("GET", servicesPath+"/"+name, nil).obj(t)
		return fmt.Sprint(path(got, "spec.ports")) == fmt.Sprint(path(s, "spec.ports"))
	})
}

// TestServiceReleaseOnCollectionDelete: deleting a collection or a
// namespace releases the values of every service in it.
func TestServiceReleaseOnCollectionDelete(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "gone"}}).mustCode(t, 201)
	gone := "/api/v1/namespaces/gone/services"
	e.do("POST", gone, svc("a", map[string]any{"clusterIP": "10.0.0.10", "ports": ports(tcpPort(80))})).mustCode(t, 201)
	e.do("POST", servicesPath, svc("b", map[string]any{"type": "NodePort", "clusterIP": "10.0.0.11", "ports": ports(tcpPort(80, "nodePort", 30100))})).mustCode(t, 201)
	e.do("DELETE", servicesPath+"?fieldSelector=metadata.name%3Db", nil).mustCode(t, 200)
	e.do("POST", servicesPath, svc("b2", map[string]any{"type": "NodePort", "clusterIP": "10.0.0.11", "ports": ports(tcpPort(80, "nodePort", 30100))})).mustCode(t, 201)
	e.do("DELETE", "/api/v1/namespaces/gone", nil).mustCode(t, 200)
	eventually(t, "namespace gone", func() bool { return e.do("GET", "/api/v1/namespaces/gone", nil).code == 404 })
	e.do("POST", servicesPath, svc("a2", map[string]any{"clusterIP": "10.0.0.10", "ports": ports(tcpPort(80))})).mustCode(t, 201)
	// A service kept by a finalizer holds its IP until it goes.
	held := svc("f", map[string]any{"clusterIP": "10.0.0.12", "ports": ports(tcpPort(80))})
	held["metadata"].(map[string]any)["finalizers"] = []any{"example.com/hold"}
	e.do("POST", servicesPath, held).mustCode(t, 201)
	e.do("DELETE", servicesPath+"/f", nil).mustCode(t, 200)
	e.do("POST", servicesPath, svc("f2", map[string]any{"clusterIP": "10.0.0.12", "ports": ports(tcpPort(80))})).mustCode(t, 422).
		mustMessage(t, `Service "f2" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.12"}: failed to allocate IP 10.0.0.12: provided IP is already allocated`)
	e.do("PATCH", servicesPath+"/f", `{"metadata":{"finalizers":null}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	e.do("GET", servicesPath+"/f", nil).mustCode(t, 404)
	e.do("POST", servicesPath, svc("f2", map[string]any{"clusterIP": "10.0.0.12", "ports": ports(tcpPort(80))})).mustCode(t, 201)
}

// TestServiceCustomRanges: the range flags decide the API service's IP
// and what other services get.
func TestServiceCustomRanges(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) {
		o.ServiceClusterIPRange, o.ServiceNodePortRange = "10.96.0.0/16", "20000-20001"
	})
	api := e.do("GET", servicesPath+"/"+e.opts.Brand.APIServiceName, nil).mustCode(t, 200).obj(t)
	if path(api, "spec.clusterIP") != "10.96.0.1" {
		t.Errorf("API service IP %v", path(api, "spec.clusterIP"))
	}
	seen := map[float64]bool{}
	for i := range 2 {
		got := e.do("POST", servicesPath, svc(fmt.Sprintf("np-%d", i), map[string]any{"type": "NodePort", "ports": ports(tcpPort(80))})).mustCode(t, 201).obj(t)
		if a, err := netip.ParseAddr(path(got, "spec.clusterIP").(string)); err != nil || !netip.MustParsePrefix("10.96.0.0/16").Contains(a) {
			t.Errorf("clusterIP %v", path(got, "spec.clusterIP"))
		}
		n := got["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["nodePort"].(float64)
		if (n != 20000 && n != 20001) || seen[n] {
			t.Errorf("nodePort %v", n)
		}
		seen[n] = true
	}
	r := e.do("POST", servicesPath, svc("np-full", map[string]any{"type": "NodePort", "ports": ports(tcpPort(80))})).mustCode(t, 500)
	if msg := statusText(t, r); msg != "Internal error occurred: failed to allocate a nodePort: range is full" {
		t.Errorf("full range: %s", msg)
	}
}

// TestServiceIPv6Range: a single-stack IPv6 range gives IPv6 services.
func TestServiceIPv6Range(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.ServiceClusterIPRange = "fd00:10::/112" })
	api := e.do("GET", servicesPath+"/"+e.opts.Brand.APIServiceName, nil).mustCode(t, 200).obj(t)
	if path(api, "spec.clusterIP") != "fd00:10::1" || fmt.Sprint(path(api, "spec.ipFamilies")) != "[IPv6]" {
		t.Errorf("API service %v", api["spec"])
	}
	got := e.do("POST", servicesPath, svc("six", map[string]any{"ports": ports(tcpPort(80))})).mustCode(t, 201).obj(t)
	if a, err := netip.ParseAddr(fmt.Sprint(path(got, "spec.clusterIP"))); err != nil || !netip.MustParsePrefix("fd00:10::/112").Contains(a) ||
		fmt.Sprint(path(got, "spec.ipFamilies")) != "[IPv6]" {
		t.Errorf("service %v", got["spec"])
	}
	r := e.do("POST", servicesPath, svc("four", map[string]any{"clusterIP": "10.0.0.5", "ports": ports(tcpPort(80))})).mustCode(t, 422)
	if want := `spec.clusterIPs[0]: Invalid value: []string{"10.0.0.5"}: IPv4 is not configured on this cluster`; !strings.Contains(statusText(t, r), want) {
		t.Errorf("IPv4 on an IPv6 cluster: %s", statusText(t, r))
	}
}

// On update a service's own ports stay held, as upstream's allocator holds
// them while the update runs: a port added without a node port, or a
// health check port picked, never gets one of them; one asked for in
// another role is refused; and the health check port does not change
// while one is needed. With two ports in the range, the only right pick
// is the other one.
func TestServiceUpdateKeepsOwnPortsHeld(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.ServiceNodePortRange = "20000-20001" })
	const mp = "application/merge-patch+json"
	e.do("POST", servicesPath, svc("np", map[string]any{"type": "NodePort", "ports": ports(tcpPort(80, "name", "a", "nodePort", 20000))})).mustCode(t, 201)
	for range 10 {
		r := e.do("PATCH", servicesPath+"/np", `{"spec":{"ports":[{"name":"a","port":80,"nodePort":20000},{"name":"b","port":81,"protocol":"UDP"}]}}`, "Content-Type", mp).mustCode(t, 200)
		if np := path(r.obj(t), "spec.ports").([]any)[1].(map[string]any)["nodePort"]; np != float64(20001) {
			t.Fatalf("added port got node port %v; 20000 is the service's own", np)
		}
		e.do("PATCH", servicesPath+"/np", `{"spec":{"ports":[{"name":"a","port":80,"nodePort":20000}]}}`, "Content-Type", mp).mustCode(t, 200)
	}
	e.do("DELETE", servicesPath+"/np", nil).mustCode(t, 200)

	e.do("POST", servicesPath, svc("lb", map[string]any{"type": "LoadBalancer", "ports": ports(tcpPort(80, "name", "a", "nodePort", 20000))})).mustCode(t, 201)
	for range 10 {
		r := e.do("PATCH", servicesPath+"/lb", `{"spec":{"externalTrafficPolicy":"Local"}}`, "Content-Type", mp).mustCode(t, 200)
		if hc := path(r.obj(t), "spec.healthCheckNodePort"); hc != float64(20001) {
			t.Fatalf("health check port %v; 20000 is the service's node port", hc)
		}
		e.do("PATCH", servicesPath+"/lb", `{"spec":{"externalTrafficPolicy":"Cluster"}}`, "Content-Type", mp).mustCode(t, 200)
	}
	e.do("PATCH", servicesPath+"/lb", `{"spec":{"externalTrafficPolicy":"Local","healthCheckNodePort":20000}}`, "Content-Type", mp).mustCode(t, 500).
		mustMessage(t, "failed to allocate requested HealthCheck NodePort 20000: provided port is already allocated")
	e.do("PATCH", servicesPath+"/lb", `{"spec":{"externalTrafficPolicy":"Local","healthCheckNodePort":20001}}`, "Content-Type", mp).mustCode(t, 200)
	e.do("PATCH", servicesPath+"/lb", `{"spec":{"ports":[{"name":"a","port":80,"nodePort":20000},{"name":"b","port":81,"nodePort":20001}]}}`, "Content-Type", mp).mustCode(t, 422).
		mustMessage(t, `Service "lb" is invalid: spec.ports[1].nodePort: Invalid value: 20001: provided port is already allocated`)

	// The service's node port is given too: one drawn at random could be
	// the health check's.
	wide := start(t)
	wide.do("POST", servicesPath, svc("lb", map[string]any{"type": "LoadBalancer", "externalTrafficPolicy": "Local", "healthCheckNodePort": 30200,
		"ports": ports(tcpPort(80, "nodePort", 30100))})).mustCode(t, 201)
	wide.do("PATCH", servicesPath+"/lb", `{"spec":{"healthCheckNodePort":30300}}`, "Content-Type", mp).mustCode(t, 422).
		mustMessage(t, `Service "lb" is invalid: spec.healthCheckNodePort: Forbidden: field is immutable`)
}
