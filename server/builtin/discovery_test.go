package builtin

import (
	"fmt"
	"reflect"
	"testing"

	"platd/server/registry"
)

func slice(addrType string, endpoints []any, ports []any) registry.Object {
	obj := named("s", map[string]any{"addressType": addrType})
	if endpoints != nil {
		obj["endpoints"] = endpoints
	}
	if ports != nil {
		obj["ports"] = ports
	}
	return obj
}

func endpoint(addrs ...any) map[string]any { return map[string]any{"addresses": addrs} }

func TestEndpointSliceCreate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "EndpointSlice")
	ep := endpoint("10.0.0.1")
	ep["deprecatedTopology"] = map[string]any{"zone": "a"}
	got := mustCreate(t, d, slice("IPv4", []any{ep}, []any{map[string]any{"port": int64(80)}}))
	if !reflect.DeepEqual(got["ports"], []any{map[string]any{"port": int64(80), "name": "", "protocol": "TCP"}}) ||
		valueAt(got["endpoints"].([]any)[0].(map[string]any), "deprecatedTopology") != nil || intAt(got, "metadata", "generation") != 1 {
		t.Errorf("created: %v", got)
	}

	many := make([]any, endpointSliceEndpointsMax+1)
	addrs := make([]any, endpointAddressesMax+1)
	for i := range many {
		many[i] = endpoint("10.0.0.1")
	}
	for i := range addrs {
		addrs[i] = fmt.Sprintf("10.0.1.%d", i+1)
	}
	ports := make([]any, endpointSlicePortsMax+1)
	for i := range ports {
		ports[i] = map[string]any{"name": fmt.Sprintf("p%d", i)}
	}
	zones := make([]any, endpointZoneHintsMax+1)
	for i := range zones {
		zones[i] = map[string]any{"name": fmt.Sprintf("z%d", i)}
	}
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"ipv6", slice("IPv6", []any{endpoint("2001:db8::1")}, nil), nil},
		{"fqdn", slice("FQDN", []any{endpoint("db.example.com.")}, nil), nil},
		{"no type", slice("", nil, nil), []string{"addressType: Required value"}},
		{"bad type", slice("IPv5", []any{endpoint("x")}, nil), []string{
			`addressType: Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"`,
		}},
		{"ipv4 addresses", slice("IPv4", []any{endpoint("2001:db8::1", "0.0.0.0", "169.254.1.1", "224.0.0.1", "x"), endpoint()}, nil), []string{
			`endpoints[0].addresses[0]: Invalid value: "2001:db8::1": must be a valid IPv4 address`,
			`endpoints[0].addresses[1]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)`,
			`endpoints[0].addresses[2]: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)`,
			`endpoints[0].addresses[3]: Invalid value: "224.0.0.1": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)`,
			`endpoints[0].addresses[4]: Invalid value: "x": must be a valid IPv4 address`,
			`endpoints[0].addresses[4]: Invalid value: "x": must be a valid IP address`,
			"endpoints[1].addresses: Required value: must contain at least 1 address",
		}},
		{"ipv6 addresses", slice("IPv6", []any{endpoint("10.0.0.1", "::1")}, nil), []string{
			`endpoints[0].addresses[0]: Invalid value: "10.0.0.1": must be a valid IPv6 address`,
			`endpoints[0].addresses[1]: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128)`,
		}},
		{"fqdn addresses", slice("FQDN", []any{endpoint("localhost", "a_b.com", "")}, nil), []string{
			`endpoints[0].addresses[0]: Invalid value: "localhost": should be a domain with at least two segments separated by dots`,
			`endpoints[0].addresses[1]: Invalid value: "a_b.com": ` + subdomainMsg,
			"endpoints[0].addresses[2]: Required value",
		}},
		{"too many endpoints", slice("IPv4", many, nil), []string{"endpoints: Too many: 1001: must have at most 1000 items"}},
		{"too many addresses", slice("IPv4", []any{endpoint(addrs...)}, nil), []string{"endpoints[0].addresses: Too many: 101: must have at most 100 items"}},
		{"endpoint fields", slice("IPv4", []any{map[string]any{
			"addresses": []any{"10.0.0.1"}, "nodeName": "Node", "hostname": "a.b",
			"hints": map[string]any{"forZones": []any{map[string]any{"name": "z"}, map[string]any{"name": "z"}, map[string]any{"name": "-"}}},
		}}, nil), []string{
			`endpoints[0].nodeName: Invalid value: "Node": ` + subdomainMsg,
			`endpoints[0].hostname: Invalid value: "a.b": must not contain dots`,
			`endpoints[0].hints.forZones[1].name: Duplicate value: "z"`,
			`endpoints[0].hints.forZones[2].name: Invalid value: "-": ` + labelValueMsg,
		}},
		{"too many zones", slice("IPv4", []any{map[string]any{"addresses": []any{"10.0.0.1"}, "hints": map[string]any{"forZones": zones}}}, nil), []string{
			"endpoints[0].hints.forZones: Too many: 9: must have at most 8 items",
		}},
		{"ports", slice("IPv4", nil, []any{
			map[string]any{"name": "http", "protocol": "ICMP"},
			map[string]any{"name": "http", "appProtocol": "a/b/c"},
			map[string]any{"name": "Web"},
			map[string]any{},
			map[string]any{},
		}), []string{
			`ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"`,
			`ports[1].name: Duplicate value: "http"`,
			"ports[1].appProtocol: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
			`ports[2].name: Invalid value: "Web": ` + labelMsg,
			`ports[4].name: Duplicate value: ""`,
		}},
		{"too many ports", slice("IPv4", nil, ports), []string{"ports: Too many: 20001: must have at most 20000 items"}},
	}
	for _, tt := range tests {
		_, errs := create(d, tt.obj)
		checkErrs(t, tt.name, errs, tt.want)
	}
}

func TestEndpointSliceUpdate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "EndpointSlice")
	stored := mustCreate(t, d, slice("IPv4", []any{endpoint("10.0.0.1")}, nil))
	relabel := func(obj registry.Object) registry.Object {
		obj["metadata"].(map[string]any)["labels"] = map[string]any{"a": "b"}
		return obj
	}
	tests := []struct {
		name           string
		obj            registry.Object
		want           []string
		wantGeneration int64
	}{
		{"unchanged", slice("IPv4", []any{endpoint("10.0.0.1")}, nil), nil, 1},
		{"endpoints", slice("IPv4", []any{endpoint("10.0.0.2")}, nil), nil, 2},
		{"labels", relabel(slice("IPv4", []any{endpoint("10.0.0.1")}, nil)), nil, 2},
		{"ports defaulted", slice("IPv4", []any{endpoint("10.0.0.1")}, []any{map[string]any{}}), nil, 2},
		{"address type", slice("IPv6", []any{endpoint("2001:db8::1")}, nil), []string{`addressType: Invalid value: "IPv6": field is immutable`}, 2},
	}
	for _, tt := range tests {
		got, errs := update(d, tt.obj, stored, "")
		checkErrs(t, tt.name, errs, tt.want)
		if g := intAt(got, "metadata", "generation"); g != tt.wantGeneration {
			t.Errorf("%s: generation %d, want %d", tt.name, g, tt.wantGeneration)
		}
	}
}
