package printers

import "testing"

func TestPDBPrinter(t *testing.T) {
	p := New(testBrand(t, "plat"))
	checkTable(t, p.For("policy", "v1", "poddisruptionbudgets"), []colSpec{
		nameSpec, str0("Min Available"), str0("Max Unavailable"), int0("Allowed Disruptions"), ageSpec,
	}, []printerCase{
		{name: "min available number", obj: `{` + meta("pdb") + `,"spec":{"minAvailable":2},"status":{"disruptionsAllowed":1}}`, cells: []any{"pdb", "2", "N/A", int64(1), "60m"}},
		{name: "max unavailable percent", obj: `{` + meta("pdb") + `,"spec":{"maxUnavailable":"25%"}}`, cells: []any{"pdb", "N/A", "25%", int64(0), "60m"}},
	})
}

func TestNetworkingPrinters(t *testing.T) {
	b := testBrand(t, "plat")
	p := New(b)
	g := b.Group("networking")
	checkTable(t, p.For(g, "v1", "ingresses"), []colSpec{nameSpec, str0("Class"), str0("Hosts"), str0("Address"), str0("Ports"), ageSpec}, []printerCase{
		{
			name: "tls with addresses",
			obj: `{` + meta("web") + `,"spec":{"ingressClassName":"nginx","tls":[{"hosts":["a.example"]}],"rules":[{"host":"a.example"},{"host":"b.example"}]},
				"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.9"},{"hostname":"elb.example"},{"ip":"203.0.113.9"}]}}}`,
			cells: []any{"web", "nginx", "a.example,b.example", "203.0.113.9,elb.example", "80, 443", "60m"},
		},
		{
			name:  "no class, no host",
			obj:   `{` + meta("i") + `,"spec":{"defaultBackend":{"service":{"name":"s","port":{"number":80}}},"rules":[{"http":{}}]}}`,
			cells: []any{"i", "<none>", "*", "", "80", "60m"},
		},
		{
			name:  "many hosts count rules beyond the third host",
			obj:   `{` + meta("i") + `,"spec":{"rules":[{"host":"a"},{},{"host":"b"},{"host":"c"},{"host":"d"},{}]}}`,
			cells: []any{"i", "<none>", "a,b,c + 3 more...", "", "80", "60m"},
		},
		{
			name:  "three hosts exactly",
			obj:   `{` + meta("i") + `,"spec":{"rules":[{"host":"a"},{},{"host":"b"},{"host":"c"}]}}`,
			cells: []any{"i", "<none>", "a,b,c", "", "80", "60m"},
		},
	})
	checkTable(t, p.For(g, "v1", "ingressclasses"), []colSpec{nameSpec, str0("Controller"), str0("Parameters"), ageSpec}, []printerCase{
		{
			name:  "with parameters",
			obj:   `{` + meta("nginx") + `,"spec":{"controller":"example.com/ingress","parameters":{"apiGroup":"k.example.com","kind":"Params","name":"p1"}}}`,
			cells: []any{"nginx", "example.com/ingress", "Params.k.example.com/p1", "60m"},
		},
		{
			name:  "core parameters",
			obj:   `{` + meta("c") + `,"spec":{"controller":"x","parameters":{"kind":"ConfigMap","name":"cfg","scope":"Namespace","namespace":"ns"}}}`,
			cells: []any{"c", "x", "ConfigMap/cfg", "60m"},
		},
		{name: "none", obj: `{` + meta("c") + `,"spec":{"controller":"x"}}`, cells: []any{"c", "x", "<none>", "60m"}},
	})
	checkTable(t, p.For(g, "v1", "networkpolicies"), []colSpec{nameSpec, str0("Pod-Selector"), ageSpec}, []printerCase{
		{name: "all pods", obj: `{` + meta("deny") + `,"spec":{"podSelector":{}}}`, cells: []any{"deny", "<none>", "60m"}},
		{name: "selected", obj: `{` + meta("web") + `,"spec":{"podSelector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"Exists"}]}}}`, cells: []any{"web", "app=web,tier", "60m"}},
	})
}

func TestEndpointSlicePrinter(t *testing.T) {
	b := testBrand(t, "plat")
	p := New(b)
	checkTable(t, p.For(b.Group("discovery"), "v1", "endpointslices"), []colSpec{nameSpec, str0("AddressType"), str0("Ports"), str0("Endpoints"), ageSpec}, []printerCase{
		{
			name: "ports and endpoints",
			obj: `{` + meta("web-abc") + `,"addressType":"IPv4","ports":[{"name":"http","port":80},{"name":"named"},{},{"port":9090}],
				"endpoints":[{"addresses":["10.0.0.1","10.0.0.2"]},{"addresses":["10.0.0.3"]},{"addresses":["10.0.0.4"]}]}`,
			cells: []any{"web-abc", "IPv4", "80,named,* + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...", "60m"},
		},
		{name: "empty", obj: `{` + meta("e") + `,"addressType":"IPv6","endpoints":[]}`, cells: []any{"e", "IPv6", "<unset>", "<unset>", "60m"}},
	})
}
