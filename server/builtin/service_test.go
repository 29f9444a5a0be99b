package builtin

import (
	"fmt"
	"net/netip"
	"testing"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
)

// claimSet is an in-memory claim store for allocation tests.
type claimSet map[registry.Claim]bool

func (c claimSet) free(cl registry.Claim) bool { return !c[cl] }

// createService runs a service create as the REST layer does, claims
// included.
func createService(t *testing.T, d *registry.Descriptor, held claimSet, spec map[string]any) (registry.Object, apierr.FieldErrors, error) {
	t.Helper()
	obj := registry.Object{"metadata": map[string]any{"name": "s"}, "spec": copyObj(spec)}
	d.Strategy.Default(obj)
	d.Strategy.PrepareForCreate(obj)
	schema.ApplyDefaults(obj, d.Schema)
	errs, err := d.Strategy.Allocate(obj, nil, held.free)
	if len(errs) > 0 || err != nil {
		return obj, errs, err
	}
	if errs := d.Strategy.Validate(obj); len(errs) > 0 {
		return obj, errs, nil
	}
	for _, c := range d.Strategy.Claims(obj) {
		held[c] = true
	}
	return obj, nil, nil
}

func svcPorts(p ...map[string]any) []any {
	out := make([]any, len(p))
	for i := range p {
		out[i] = p[i]
	}
	return out
}

func TestServiceValidate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Service")
	p80 := map[string]any{"port": int64(80)}
	tests := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"minimal", map[string]any{"ports": svcPorts(p80)}, nil},
		{"headless without ports", map[string]any{"clusterIP": "None"}, nil},
		{"no ports", map[string]any{}, []string{"spec.ports: Required value"}},
		{"ports", map[string]any{"ports": svcPorts(
			map[string]any{"port": int64(0), "name": "A", "protocol": "ICMP", "targetPort": "Bad_Name"},
			map[string]any{"port": int64(80), "name": "a", "appProtocol": "a/b/c"},
			map[string]any{"port": int64(80), "name": "a"},
		)}, []string{
			`spec.ports[0].name: Invalid value: "A": ` + labelMsg,
			"spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
			`spec.ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"`,
			`spec.ports[0].targetPort: Invalid value: "Bad_Name": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
			"spec.ports[1].appProtocol: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
			`spec.ports[2].name: Duplicate value: "a"`,
			`spec.ports[2]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`,
		}},
		{"external name", map[string]any{"type": "ExternalName", "externalName": "Bad_Host."}, []string{
			`spec.externalName: Invalid value: "Bad_Host": ` + subdomainMsg,
		}},
		{"load balancer", map[string]any{"type": "LoadBalancer", "clusterIP": "None", "ports": svcPorts(map[string]any{"port": int64(10250)}),
			"loadBalancerSourceRanges": []any{"10.0.0.0/8", "nope"}}, []string{
			`spec.clusterIPs[0]: Invalid value: "None": may not be set to 'None' for LoadBalancer services`,
			"spec.ports[0]: Invalid value: 10250: may not expose port 10250 externally since it is used by kubelet",
			`spec.clusterIP: Invalid value: "None": may not be set to 'None' for LoadBalancer services`,
			`spec.LoadBalancerSourceRanges[1]: Invalid value: "nope": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`,
		}},
		{"external IPs and policies", map[string]any{"ports": svcPorts(p80), "externalIPs": []any{"127.0.0.1", "x"},
			"externalTrafficPolicy": "Local", "internalTrafficPolicy": "Nowhere", "trafficDistribution": "Far", "allocateLoadBalancerNodePorts": true}, []string{
			`spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`,
			`spec.externalIPs[1]: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
			"spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'",
			`spec.internalTrafficPolicy: Unsupported value: "Nowhere": supported values: "Cluster", "Local"`,
			`spec.trafficDistribution: Unsupported value: "Far": supported values: "PreferClose"`,
		}},
		{"cluster IPs", map[string]any{"clusterIP": "10.0.0.9", "clusterIPs": []any{"10.0.0.8"}, "ports": svcPorts(p80)}, []string{
			`spec.clusterIPs: Invalid value: []string{"10.0.0.8"}: first value must match ` + "`clusterIP`",
		}},
		{"families", map[string]any{"ipFamilies": []any{"IPv4", "IPv4", "IPX"}, "ipFamilyPolicy": "Sometimes", "ports": svcPorts(p80)}, []string{
			`spec.ipFamilies[1]: Duplicate value: "IPv4"`,
			`spec.ipFamilies[2]: Unsupported value: "IPX": supported values: "IPv4", "IPv6"`,
			`spec.ipFamilyPolicy: Unsupported value: "Sometimes": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"`,
		}},
		{"IPv6 asked", map[string]any{"ipFamilies": []any{"IPv6"}, "ports": svcPorts(p80)}, []string{
			`spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster`,
		}},
	}
	for _, tt := range tests {
		_, errs, err := createService(t, d, claimSet{}, tt.spec)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		checkErrs(t, tt.name, errs, tt.want)
	}
}

func TestServiceAllocate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Service")
	held := claimSet{}
	// Two ports of one number share a node port.
	obj, errs, err := createService(t, d, held, map[string]any{"type": "NodePort", "ports": svcPorts(
		map[string]any{"port": int64(53), "name": "dns", "protocol": "UDP"},
		map[string]any{"port": int64(53), "name": "dns-tcp"},
		map[string]any{"port": int64(80), "name": "http"},
	)})
	if len(errs) > 0 || err != nil {
		t.Fatal(errs, err)
	}
	ports := mapsOf(valueAt(obj, "spec", "ports"))
	if intAt(ports[0], "nodePort") != intAt(ports[1], "nodePort") || intAt(ports[0], "nodePort") == intAt(ports[2], "nodePort") {
		t.Errorf("node ports %v", ports)
	}
	if claims := d.Strategy.Claims(obj); len(claims) != 3 {
		t.Errorf("claims %v", claims)
	}
	// A range with four addresses runs full.
	small := services(brand, RangesFrom(netip.MustParsePrefix("10.9.0.0/29"), config.PortRange{Base: 30000, Size: 100}), endpoints())
	small.Schema = d.Schema
	held = claimSet{}
	for i := range 6 {
		if _, errs, err := createService(t, small, held, map[string]any{"ports": svcPorts(map[string]any{"port": int64(80)})}); len(errs) > 0 || err != nil {
			t.Fatalf("create %d: %v %v", i, errs, err)
		}
	}
	_, _, err = createService(t, small, held, map[string]any{"ports": svcPorts(map[string]any{"port": int64(80)})})
	// Upstream's internal error, as the server's answer renders it.
	if err == nil || err.Error() != "Internal error occurred: failed to allocate a serviceIP: range is full" {
		t.Errorf("full range: %v", err)
	}
	_, errs, _ = createService(t, small, held, map[string]any{"clusterIP": "10.9.0.3", "ports": svcPorts(map[string]any{"port": int64(80)})})
	checkErrs(t, "taken", errs, []string{`spec.clusterIPs: Invalid value: []string{"10.9.0.3"}: failed to allocate IP 10.9.0.3: provided IP is already allocated`})
	_, errs, _ = createService(t, small, held, map[string]any{"clusterIP": "010.9.0.3", "ports": svcPorts(map[string]any{"port": int64(80)})})
	if len(errs) == 0 {
		t.Errorf("a second spelling of a held IP was allocated")
	}
	// An ExternalName service claims no node port it carries.
	obj, errs, _ = createService(t, d, claimSet{}, map[string]any{"type": "ExternalName", "externalName": "a.example.com", "ports": svcPorts(map[string]any{"port": int64(80), "nodePort": int64(5)})})
	if len(errs) > 0 || len(d.Strategy.Claims(obj)) != 0 {
		t.Errorf("external name: %v claims %v", errs, d.Strategy.Claims(obj))
	}
	// Headless services without selector may list both families.
	obj, errs, _ = createService(t, d, claimSet{}, map[string]any{"clusterIP": "None"})
	if len(errs) > 0 || fmt.Sprint(valueAt(obj, "spec", "ipFamilies")) != "[IPv4 IPv6]" || str(obj, "spec", "ipFamilyPolicy") != policyRequireDualStack {
		t.Errorf("headless: %v %v", errs, obj["spec"])
	}
}

func TestServiceUpdatePrepare(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Service")
	old, _, _ := createService(t, d, claimSet{}, map[string]any{"type": "NodePort", "ports": svcPorts(map[string]any{"port": int64(80), "name": "a"})})
	// Written back without allocated values, the service keeps them.
	next, errs := update(d, registry.Object{"metadata": map[string]any{"name": "s"}, "spec": map[string]any{"type": "NodePort", "ports": svcPorts(map[string]any{"port": int64(80), "name": "a"})}}, old, "")
	checkErrs(t, "write back", errs, nil)
	if str(next, "spec", "clusterIP") != str(old, "spec", "clusterIP") || intAt(mapsOf(valueAt(next, "spec", "ports"))[0], "nodePort") == 0 {
		t.Errorf("write back: %v", next["spec"])
	}
	// To ClusterIP drops the node ports and the external policy.
	next, errs = update(d, registry.Object{"metadata": map[string]any{"name": "s"}, "spec": map[string]any{"type": "ClusterIP", "ports": svcPorts(map[string]any{"port": int64(80), "name": "a"})}}, old, "")
	checkErrs(t, "to ClusterIP", errs, nil)
	if intAt(mapsOf(valueAt(next, "spec", "ports"))[0], "nodePort") != 0 || present(mapOf(next["spec"]), "externalTrafficPolicy") {
		t.Errorf("to ClusterIP: %v", next["spec"])
	}
	// To ExternalName drops the cluster IP.
	next, errs = update(d, registry.Object{"metadata": map[string]any{"name": "s"}, "spec": map[string]any{"type": "ExternalName", "externalName": "a.example.com"}}, old, "")
	checkErrs(t, "to ExternalName", errs, nil)
	if present(mapOf(next["spec"]), "clusterIP") || len(d.Strategy.Claims(next)) != 0 {
		t.Errorf("to ExternalName: %v", next["spec"])
	}
	// The cluster IP cannot change.
	_, errs = update(d, registry.Object{"metadata": map[string]any{"name": "s"}, "spec": map[string]any{"type": "NodePort", "clusterIP": "10.0.0.99", "ports": svcPorts(map[string]any{"port": int64(80), "name": "a"})}}, old, "")
	checkErrs(t, "change IP", errs, []string{`spec.clusterIPs[0]: Invalid value: []string{"10.0.0.99"}: may not change once set`})
}

func TestEndpointsValidate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Endpoints")
	_, errs := create(d, registry.Object{"metadata": map[string]any{"name": "e"}, "subsets": []any{
		map[string]any{"notReadyAddresses": []any{map[string]any{"ip": "10.1.2.3", "hostname": "a.b", "nodeName": "N"}}},
		map[string]any{"addresses": []any{map[string]any{"ip": "0.0.0.0"}}, "ports": []any{map[string]any{"port": int64(1), "protocol": "X", "appProtocol": "-"}}},
	}})
	checkErrs(t, "endpoints", errs, []string{
		`subsets[0].notReadyAddresses[0].hostname: Invalid value: "a.b": must not contain dots`,
		`subsets[0].notReadyAddresses[0].nodeName: Invalid value: "N": ` + subdomainMsg,
		`subsets[1].addresses[0].ip: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)`,
		`subsets[1].ports[0].protocol: Unsupported value: "X": supported values: "SCTP", "TCP", "UDP"`,
		"subsets[1].ports[0].appProtocol: Invalid value: \"-\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
	})
}

func TestServiceWarnings(t *testing.T) {
	t.Parallel()
	warn := serviceWarnings(brand)
	hints := "service." + brand.LongDomain + "/topology-aware-hints"
	got := warn(registry.Object{
		"metadata": map[string]any{"annotations": map[string]any{hints: "auto"}},
		"spec": map[string]any{"type": "ExternalName", "clusterIP": "fd00:0::1", "clusterIPs": []any{"fd00:0::1"},
			"externalIPs": []any{"10.1.2.3"}, "loadBalancerIP": "01.2.3.4"},
	}, nil)
	want := []string{
		"annotation " + hints + " is deprecated, please use service." + brand.LongDomain + "/topology-mode instead",
		`spec.clusterIPs[0]: IPv6 address "fd00:0::1" is not in RFC 5952 canonical format ("fd00::1"), which may cause controller apply-loops`,
		`spec.loadBalancerIP: IP address was accepted, but will be invalid in a future Kubernetes release: ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero`,
		`spec.externalIPs is ignored when spec.type is "ExternalName"`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("warnings:\n got  %q\n want %q", got, want)
	}
	if got := warn(registry.Object{"spec": map[string]any{"clusterIP": "None", "clusterIPs": []any{"None"}}}, nil); len(got) != 0 {
		t.Errorf("headless: %q", got)
	}
}

func TestServiceStatusUpdate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Service")
	old, _, _ := createService(t, d, claimSet{}, map[string]any{"ports": svcPorts(map[string]any{"port": int64(80)})})
	withStatus := func(st map[string]any) registry.Object {
		o := copyObj(old)
		o["status"] = st
		return o
	}
	_, errs := update(d, withStatus(map[string]any{
		"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "192.0.2.1"}}},
		"conditions":   []any{map[string]any{"type": "Ready", "status": "Maybe"}},
	}), old, "status")
	if len(errs) < 2 || errs[0].Error() != "status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'" ||
		errs[1].Field != "status.conditions[0].status" {
		t.Errorf("status errors: %q", errStrings(errs))
	}
	_, errs = update(d, withStatus(map[string]any{"loadBalancer": map[string]any{}}), old, "status")
	checkErrs(t, "empty status", errs, nil)
}
