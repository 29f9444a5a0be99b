package builtin

import (
	"reflect"
	"strings"
	"testing"

	"platd/server/registry"
)

func named(name string, members map[string]any) registry.Object {
	obj := registry.Object{"metadata": map[string]any{"name": name, "namespace": "ns"}}
	for k, v := range members {
		obj[k] = v
	}
	return obj
}

func TestIngressClass(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "IngressClass")
	class := func(spec map[string]any) registry.Object { return named("c", map[string]any{"spec": spec}) }
	got := mustCreate(t, d, class(map[string]any{"controller": "example.com/ingress", "parameters": map[string]any{"kind": "K", "name": "n"}}))
	if str(got, "spec", "parameters", "scope") != "Cluster" || intAt(got, "metadata", "generation") != 1 {
		t.Errorf("defaults: %v", got)
	}
	tests := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"namespaced parameters", map[string]any{"controller": "example.com/x", "parameters": map[string]any{
			"apiGroup": "example.com", "kind": "K", "name": "n", "scope": "Namespace", "namespace": "ns"}}, nil},
		{"no controller", map[string]any{}, []string{"spec.controller: Required value"}},
		{"no path", map[string]any{"controller": "example.com"}, []string{
			`spec.controller: Invalid value: "example.com": must be a domain-prefixed path (such as "acme.io/foo")`,
		}},
		{"bad domain and path", map[string]any{"controller": "Example/a b"}, []string{
			`spec.controller: Invalid value: "Example": ` + subdomainMsg,
			`spec.controller: Invalid value: "a b": must be a valid path (regex used for validation is '[A-Za-z0-9/\-._~%!$&'()*+,;=:]+')`,
		}},
		{"too long", map[string]any{"controller": "example.com/" + strings.Repeat("a", 240)}, []string{
			"spec.controller: Too long: may not be more than 250 bytes",
		}},
		{"parameters", map[string]any{"controller": "example.com/x", "parameters": map[string]any{
			"apiGroup": "Bad", "kind": "a/b", "scope": "Namespace"}}, []string{
			`spec.parameters.apiGroup: Invalid value: "Bad": ` + subdomainMsg,
			`spec.parameters.kind: Invalid value: "a/b": may not contain '/'`,
			"spec.parameters.name: Required value: name is required",
			"spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'",
		}},
		{"cluster with namespace", map[string]any{"controller": "example.com/x", "parameters": map[string]any{
			"kind": "K", "name": "..", "scope": "Cluster", "namespace": "ns"}}, []string{
			`spec.parameters.name: Invalid value: "..": may not be '..'`,
			"spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'",
		}},
		{"scope", map[string]any{"controller": "example.com/x", "parameters": map[string]any{"kind": "K", "name": "n", "scope": "World"}}, []string{
			`spec.parameters.scope: Unsupported value: "World": supported values: "Cluster", "Namespace"`,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, class(tt.spec))
		checkErrs(t, tt.name, errs, tt.want)
	}
	_, errs := update(d, class(map[string]any{"controller": "example.com/other"}), got, "")
	checkErrs(t, "controller changed", errs, []string{`spec.controller: Invalid value: "example.com/other": field is immutable`})
	next, errs := update(d, class(map[string]any{"controller": "example.com/ingress"}), got, "")
	checkErrs(t, "parameters dropped", errs, nil)
	if intAt(next, "metadata", "generation") != 2 {
		t.Errorf("spec change kept generation %v", valueAt(next, "metadata", "generation"))
	}
}

func TestIngressCreate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Ingress")
	backend := map[string]any{"service": map[string]any{"name": "web", "port": map[string]any{"number": int64(80)}}}
	path := func(pathType, p string) map[string]any {
		m := map[string]any{"path": p, "backend": backend}
		if pathType != "" {
			m["pathType"] = pathType
		}
		return m
	}
	rule := func(host string, paths ...any) map[string]any {
		return map[string]any{"host": host, "http": map[string]any{"paths": paths}}
	}
	ing := func(spec map[string]any) registry.Object { return named("i", map[string]any{"spec": spec}) }
	got := mustCreate(t, d, ing(map[string]any{"defaultBackend": backend}))
	if !reflect.DeepEqual(got["status"], map[string]any{"loadBalancer": map[string]any{}}) || intAt(got, "metadata", "generation") != 1 {
		t.Errorf("created: %v", got)
	}
	tests := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"rules", map[string]any{"rules": []any{rule("*.example.com", path("Prefix", "/"), path("ImplementationSpecific", ""))}, "ingressClassName": "nginx"}, nil},
		{"nothing", map[string]any{}, []string{"spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"}},
		{"empty rules", map[string]any{"rules": []any{}}, []string{"spec: Invalid value: []networking.IngressRule{}: either `defaultBackend` or `rules` must be specified"}},
		{"hosts", map[string]any{"rules": []any{rule("10.0.0.1", path("Exact", "/")), rule("a.*.com", path("Exact", "/")), map[string]any{"host": "Foo"}}}, []string{
			`spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address`,
			`spec.rules[1].host: Invalid value: "a.*.com": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			`spec.rules[2].host: Invalid value: "Foo": ` + subdomainMsg,
		}},
		{"paths", map[string]any{"rules": []any{
			rule("", path("Exact", "a"), path("Prefix", "/a//b/."), path("ImplementationSpecific", "x"), path("Regex", "/"), path("", "/")),
			map[string]any{"http": map[string]any{}},
		}}, []string{
			`spec.rules[0].http.paths[0].path: Invalid value: "a": must be an absolute path`,
			`spec.rules[0].http.paths[1].path: Invalid value: "/a//b/.": must not contain '//'`,
			`spec.rules[0].http.paths[1].path: Invalid value: "/a//b/.": cannot end with '/.'`,
			`spec.rules[0].http.paths[2].path: Invalid value: "x": must be an absolute path`,
			`spec.rules[0].http.paths[3].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"`,
			"spec.rules[0].http.paths[4].pathType: Required value: pathType must be specified",
			"spec.rules[1].http.paths: Required value",
		}},
		{"backends", map[string]any{"defaultBackend": map[string]any{}, "rules": []any{rule("",
			map[string]any{"pathType": "Exact", "path": "/", "backend": map[string]any{"service": map[string]any{"name": "1web", "port": map[string]any{"name": "http", "number": int64(80)}}}},
			map[string]any{"pathType": "Exact", "path": "/", "backend": map[string]any{"service": map[string]any{"port": map[string]any{"name": "HTTP"}}}},
			map[string]any{"pathType": "Exact", "path": "/", "backend": map[string]any{"service": map[string]any{"name": "w", "port": map[string]any{"number": int64(70000)}}}},
			map[string]any{"pathType": "Exact", "path": "/", "backend": map[string]any{"service": map[string]any{"name": "w"}}},
			map[string]any{"pathType": "Exact", "path": "/", "backend": map[string]any{"service": map[string]any{"name": "w"}, "resource": map[string]any{"kind": "K", "name": "n"}}},
			map[string]any{"pathType": "Exact", "path": "/", "backend": map[string]any{"resource": map[string]any{"kind": "K"}}},
		)}}, []string{
			`spec.defaultBackend: Invalid value: "": resource or service backend is required`,
			`spec.rules[0].http.paths[0].backend.service.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
			`spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both port name & port number`,
			"spec.rules[0].http.paths[1].backend.service.name: Required value",
			`spec.rules[0].http.paths[1].backend.service.port.name: Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
			`spec.rules[0].http.paths[1].backend.service.port.name: Invalid value: "HTTP": must contain at least one letter (a-z)`,
			"spec.rules[0].http.paths[2].backend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive",
			"spec.rules[0].http.paths[3].backend: Required value: port name or number is required",
			`spec.rules[0].http.paths[4].backend: Invalid value: "": cannot set both resource and service backends`,
			"spec.rules[0].http.paths[5].backend.resource.name: Required value: name is required",
		}},
		{"tls", map[string]any{"defaultBackend": backend, "tls": []any{map[string]any{"hosts": []any{"*.ok.com", "*bad.com", "UP"}, "secretName": "Bad_Name"}}}, []string{
			`spec.tls[0].hosts[1]: Invalid value: "*bad.com": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			`spec.tls[0].hosts[2]: Invalid value: "UP": ` + subdomainMsg,
			`spec.tls[0].secretName: Invalid value: "Bad_Name": ` + subdomainMsg,
		}},
		{"class name", map[string]any{"defaultBackend": backend, "ingressClassName": "A"}, []string{
			`spec.ingressClassName: Invalid value: "A": ` + subdomainMsg,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, ing(tt.spec))
		checkErrs(t, tt.name, errs, tt.want)
	}

	annotated := ing(map[string]any{"defaultBackend": backend, "ingressClassName": "nginx"})
	annotated["metadata"].(map[string]any)["annotations"] = map[string]any{brand.Label("ingress.class"): "traefik"}
	_, errs := create(d, annotated)
	checkErrs(t, "class annotation", errs, []string{
		`annotations.` + brand.Label("ingress.class") + `: Invalid value: "traefik": must match ` + "`ingressClassName`" + ` when both are specified`,
	})
}

func TestIngressUpdate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Ingress")
	backend := map[string]any{"service": map[string]any{"name": "web", "port": map[string]any{"number": int64(80)}}}
	ing := func(spec map[string]any) registry.Object { return named("i", map[string]any{"spec": spec}) }
	stored := mustCreate(t, d, ing(map[string]any{"defaultBackend": backend}))

	// Rules stored before they were checked stay acceptable.
	legacySpec := map[string]any{"defaultBackend": backend,
		"tls":   []any{map[string]any{"secretName": "Bad_Name"}},
		"rules": []any{map[string]any{"host": "*.example.com", "http": map[string]any{"paths": []any{map[string]any{"path": "/"}}}}},
	}
	legacy := copyObj(stored)
	legacy["spec"] = legacySpec
	_, errs := update(d, ing(legacySpec), legacy, "")
	checkErrs(t, "legacy kept", errs, nil)
	_, errs = update(d, ing(legacySpec), stored, "")
	checkErrs(t, "legacy new", errs, []string{
		"spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified",
		`spec.tls[0].secretName: Invalid value: "Bad_Name": ` + subdomainMsg,
	})

	// The annotation rule is for creates only.
	annotated := ing(map[string]any{"defaultBackend": backend, "ingressClassName": "nginx"})
	annotated["metadata"].(map[string]any)["annotations"] = map[string]any{brand.Label("ingress.class"): "traefik"}
	_, errs = update(d, annotated, stored, "")
	checkErrs(t, "annotation on update", errs, nil)

	status := registry.Object{"status": map[string]any{"loadBalancer": map[string]any{"ingress": []any{
		map[string]any{"ip": "010.1.2.3", "hostname": "lb.example.com"},
		map[string]any{"ip": "1.2.3", "hostname": "10.0.0.1"},
		map[string]any{"hostname": "LB"},
	}}}}
	got, errs := update(d, status, stored, "status")
	checkErrs(t, "status", errs, []string{
		`status.loadBalancer.ingress[1].ip: Invalid value: "1.2.3": must be a valid IP address`,
		`status.loadBalancer.ingress[1].hostname: Invalid value: "10.0.0.1": must be a DNS name, not an IP address`,
		`status.loadBalancer.ingress[2].hostname: Invalid value: "LB": ` + subdomainMsg,
	})
	if len(listAt(got, "status", "loadBalancer", "ingress")) != 3 || intAt(got, "metadata", "generation") != 1 {
		t.Errorf("status write: %v", got)
	}
}

func TestNetworkPolicy(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "NetworkPolicy")
	np := func(spec map[string]any) registry.Object { return named("n", map[string]any{"spec": spec}) }
	got := mustCreate(t, d, np(map[string]any{
		"ingress": []any{map[string]any{"ports": []any{map[string]any{"port": "http"}}}},
	}))
	if !reflect.DeepEqual(got["spec"], map[string]any{
		"podSelector": map[string]any{},
		"ingress":     []any{map[string]any{"ports": []any{map[string]any{"port": "http", "protocol": "TCP"}}}},
		"policyTypes": []any{"Ingress"},
	}) || intAt(got, "metadata", "generation") != 1 {
		t.Errorf("defaults: %#v", got)
	}
	egress := mustCreate(t, d, np(map[string]any{"egress": []any{map[string]any{}}}))
	if !reflect.DeepEqual(egress["spec"].(map[string]any)["policyTypes"], []any{"Ingress", "Egress"}) {
		t.Errorf("egress policy types: %v", egress["spec"])
	}
	explicit := mustCreate(t, d, np(map[string]any{"egress": []any{map[string]any{}}, "policyTypes": []any{"Egress"}}))
	if !reflect.DeepEqual(explicit["spec"].(map[string]any)["policyTypes"], []any{"Egress"}) {
		t.Errorf("explicit policy types: %v", explicit["spec"])
	}
	tests := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"ports", map[string]any{"ingress": []any{map[string]any{"ports": []any{
			map[string]any{"protocol": "ICMP", "port": int64(0)},
			map[string]any{"port": "a--b", "endPort": int64(90)},
			map[string]any{"endPort": int64(90)},
			map[string]any{"port": int64(80), "endPort": int64(70000)},
			map[string]any{"port": int64(80), "endPort": int64(81)},
		}}}}, []string{
			`spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"`,
			"spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
			"spec.ingress[0].ports[1].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
			`spec.ingress[0].ports[1].port: Invalid value: "a--b": must not contain consecutive hyphens`,
			"spec.ingress[0].ports[2].endPort: Invalid value: 90: may not be specified when `port` is not specified",
			"spec.ingress[0].ports[3].endPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
		}},
		{"peers", map[string]any{"egress": []any{map[string]any{"to": []any{
			map[string]any{},
			map[string]any{"podSelector": map[string]any{}, "ipBlock": map[string]any{"cidr": "10.0.0.0/8"}},
			map[string]any{"podSelector": map[string]any{}, "namespaceSelector": map[string]any{"matchLabels": map[string]any{"a": "-"}}},
			map[string]any{"ipBlock": map[string]any{}},
			map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/33"}},
			map[string]any{"ipBlock": map[string]any{"cidr": "010.0.0.0/8", "except": []any{"10.1.0.0/16", "10.0.0.0/8", "11.0.0.0/24", "x", "10.2.0.0/16"}}},
		}}}}, []string{
			"spec.egress[0].to[0]: Required value: must specify a peer",
			"spec.egress[0].to[1]: Forbidden: may not specify both ipBlock and another peer",
			`spec.egress[0].to[2].namespaceSelector.matchLabels: Invalid value: "-": ` + labelValueMsg,
			"spec.egress[0].to[3].ipBlock.cidr: Required value",
			`spec.egress[0].to[4].ipBlock.cidr: Invalid value: "10.0.0.0/33": not a valid CIDR`,
			"spec.egress[0].to[5].ipBlock.except[1]: Invalid value: \"10.0.0.0/8\": must be a strict subset of `cidr`",
			"spec.egress[0].to[5].ipBlock.except[2]: Invalid value: \"11.0.0.0/24\": must be a strict subset of `cidr`",
			`spec.egress[0].to[5].ipBlock.except[3]: Invalid value: "x": not a valid CIDR`,
		}},
		{"policy types", map[string]any{"policyTypes": []any{"Ingress", "Other"}}, []string{
			`spec.policyTypes[1]: Unsupported value: "Other": supported values: "Ingress", "Egress"`,
		}},
		{"too many policy types", map[string]any{"policyTypes": []any{"Ingress", "Egress", "Ingress"}}, []string{
			`spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", "Egress", "Ingress"}: may not specify more than two policyTypes`,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, np(tt.spec))
		checkErrs(t, tt.name, errs, tt.want)
	}

	// A stored pod selector with a bad value relaxes the value rule.
	bad := map[string]any{"matchExpressions": []any{map[string]any{"key": "k", "operator": "In", "values": []any{"-"}}}}
	legacy := copyObj(got)
	legacy["spec"].(map[string]any)["podSelector"] = bad
	_, errs := update(d, np(map[string]any{"podSelector": bad}), legacy, "")
	checkErrs(t, "legacy selector", errs, nil)
	next, errs := update(d, np(map[string]any{"podSelector": bad}), got, "")
	checkErrs(t, "new bad selector", errs, []string{`spec.podSelector.matchExpressions[0].values[0]: Invalid value: "-": ` + labelValueMsg})
	if intAt(next, "metadata", "generation") != 2 {
		t.Errorf("generation %v", valueAt(next, "metadata", "generation"))
	}
}
