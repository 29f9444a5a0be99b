package server_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// at reads a value of a decoded JSON object at a path of member names and
// list indexes.
func at(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// fieldCheck is a value a stored object must hold at a path of member
// names and list indexes.
type fieldCheck struct {
	path []any
	want any
}

// mustStore creates body at the collection path and checks the fields of
// the object the server stored.
func mustStore(t *testing.T, e *env, path string, body map[string]any, checks []fieldCheck) {
	t.Helper()
	e.do("POST", path, body).mustCode(t, 201)
	name := body["metadata"].(map[string]any)["name"].(string)
	got := e.do("GET", path+"/"+name, nil).mustCode(t, 200).obj(t)
	for _, c := range checks {
		if v := at(got, c.path...); !reflect.DeepEqual(v, c.want) {
			t.Errorf("%v = %#v, want %#v", c.path, v, c.want)
		}
	}
}

// mustRefuse posts body to the collection path and checks that it is
// refused with 422, upstream's message for kind and causes (one cause
// bare, several in brackets), one detail per cause, and nothing stored.
func mustRefuse(t *testing.T, e *env, path string, body map[string]any, kind string, causes []string) {
	t.Helper()
	st := e.do("POST", path, body).mustCode(t, 422).obj(t)
	name := body["metadata"].(map[string]any)["name"].(string)
	want := fmt.Sprintf("%s %q is invalid: ", kind, name)
	if len(causes) == 1 {
		want += causes[0]
	} else {
		want += "[" + strings.Join(causes, ", ") + "]"
	}
	if st["message"] != want {
		t.Errorf("message:\n got  %s\n want %s", st["message"], want)
	}
	if got, _ := at(st, "details", "causes").([]any); len(got) != len(causes) {
		t.Errorf("causes: %v", got)
	}
	if e.do("GET", path+"/"+name, nil).code != 404 {
		t.Error("a refused object was stored")
	}
}

// groupPath is the collection path of a resource of a branded group ("" for
// the policy group, which has no domain).
func groupPath(group, version, ns, resource string) string {
	p := "/apis/" + group + "/" + version
	if ns != "" {
		p += "/namespaces/" + ns
	}
	return p + "/" + resource
}

// TestGroupTypesStoreDefaults creates one object of each type of the
// policy, networking, discovery, storage, node and coordination groups and
// reads back what upstream's defaulting and create rules store.
func TestGroupTypesStoreDefaults(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	type check = fieldCheck
	tests := []struct {
		name, path string
		body       map[string]any
		checks     []check
	}{
		{
			"poddisruptionbudget", groupPath("policy", "v1", "default", "poddisruptionbudgets"),
			map[string]any{
				"metadata": map[string]any{"name": "pdb"},
				"spec":     map[string]any{"minAvailable": "50%", "selector": map[string]any{"matchLabels": map[string]any{"app": "x"}}},
				"status":   map[string]any{"currentHealthy": 5, "disruptionsAllowed": 2},
			},
			[]check{
				{[]any{"metadata", "generation"}, 1.0},
				{[]any{"spec", "minAvailable"}, "50%"},
				{[]any{"status", "currentHealthy"}, 0.0},
				{[]any{"status", "disruptionsAllowed"}, 0.0},
			},
		},
		{
			"ingress", groupPath(b.Group("networking"), "v1", "default", "ingresses"),
			map[string]any{
				"metadata": map[string]any{"name": "ing"},
				"spec": map[string]any{"defaultBackend": map[string]any{"service": map[string]any{
					"name": "web", "port": map[string]any{"number": 80}}}},
				"status": map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "10.1.2.3"}}}},
			},
			[]check{
				{[]any{"metadata", "generation"}, 1.0},
				{[]any{"status"}, map[string]any{"loadBalancer": map[string]any{}}},
			},
		},
		{
			"ingressclass", groupPath(b.Group("networking"), "v1", "", "ingressclasses"),
			map[string]any{
				"metadata": map[string]any{"name": "nginx"},
				"spec":     map[string]any{"controller": "example.com/ingress", "parameters": map[string]any{"kind": "Params", "name": "p"}},
			},
			[]check{
				{[]any{"metadata", "generation"}, 1.0},
				{[]any{"spec", "parameters", "scope"}, "Cluster"},
			},
		},
		{
			"networkpolicy", groupPath(b.Group("networking"), "v1", "default", "networkpolicies"),
			map[string]any{
				"metadata": map[string]any{"name": "np"},
				"spec": map[string]any{
					"podSelector": map[string]any{},
					"egress":      []any{map[string]any{"ports": []any{map[string]any{"port": 53}}}},
				},
			},
			[]check{
				{[]any{"metadata", "generation"}, 1.0},
				{[]any{"spec", "policyTypes"}, []any{"Ingress", "Egress"}},
				{[]any{"spec", "egress", 0, "ports", 0, "protocol"}, "TCP"},
			},
		},
		{
			"endpointslice", groupPath(b.Group("discovery"), "v1", "default", "endpointslices"),
			map[string]any{
				"metadata":    map[string]any{"name": "web-abc", "labels": map[string]any{b.Label("service-name"): "web"}},
				"addressType": "IPv4",
				"endpoints": []any{map[string]any{
					"addresses": []any{"10.0.0.1"}, "deprecatedTopology": map[string]any{"a": "b"}}},
				"ports": []any{map[string]any{"port": 80}},
			},
			[]check{
				{[]any{"metadata", "generation"}, 1.0},
				{[]any{"ports", 0, "protocol"}, "TCP"},
				{[]any{"ports", 0, "name"}, ""},
				{[]any{"endpoints", 0, "deprecatedTopology"}, nil},
			},
		},
		{
			"storageclass", groupPath(b.Group("storage"), "v1", "", "storageclasses"),
			map[string]any{"metadata": map[string]any{"name": "fast"}, "provisioner": "example.com/disk"},
			[]check{
				{[]any{"reclaimPolicy"}, "Delete"},
				{[]any{"volumeBindingMode"}, "Immediate"},
			},
		},
		{
			"csidriver", groupPath(b.Group("storage"), "v1", "", "csidrivers"),
			map[string]any{"metadata": map[string]any{"name": "disk.example.com"}, "spec": map[string]any{}},
			[]check{
				{[]any{"spec"}, map[string]any{
					"attachRequired": true, "podInfoOnMount": false, "volumeLifecycleModes": []any{"Persistent"},
					"storageCapacity": false, "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": false,
					"seLinuxMount": false,
				}},
			},
		},
		{
			"csinode", groupPath(b.Group("storage"), "v1", "", "csinodes"),
			map[string]any{"metadata": map[string]any{"name": "node-1"}, "spec": map[string]any{"drivers": []any{
				map[string]any{"name": "disk.example.com", "nodeID": "i-123", "topologyKeys": []any{"zone"}}}}},
			[]check{{[]any{"spec", "drivers", 0, "nodeID"}, "i-123"}},
		},
		{
			"csistoragecapacity", groupPath(b.Group("storage"), "v1", "default", "csistoragecapacities"),
			map[string]any{"metadata": map[string]any{"name": "cap"}, "storageClassName": "fast", "capacity": "10Gi"},
			[]check{{[]any{"capacity"}, "10Gi"}, {[]any{"storageClassName"}, "fast"}},
		},
		{
			"volumeattachment", groupPath(b.Group("storage"), "v1", "", "volumeattachments"),
			map[string]any{
				"metadata": map[string]any{"name": "va"},
				"spec": map[string]any{"attacher": "disk.example.com", "nodeName": "node-1",
					"source": map[string]any{"persistentVolumeName": "pv-1"}},
				"status": map[string]any{"attached": true},
			},
			[]check{{[]any{"status"}, map[string]any{"attached": false}}},
		},
		{
			"runtimeclass", groupPath(b.Group("node"), "v1", "", "runtimeclasses"),
			map[string]any{"metadata": map[string]any{"name": "gvisor"}, "handler": "runsc",
				"overhead": map[string]any{"podFixed": map[string]any{"cpu": "250m", "memory": "64Mi"}}},
			[]check{{[]any{"handler"}, "runsc"}, {[]any{"overhead", "podFixed", "cpu"}, "250m"}},
		},
		{
			"lease", groupPath(b.Group("coordination"), "v1", "default", "leases"),
			map[string]any{"metadata": map[string]any{"name": "lock"}, "spec": map[string]any{
				"holderIdentity": "a", "leaseDurationSeconds": 15,
				"strategy": "OldestEmulationVersion", "preferredHolder": "b"}},
			[]check{
				{[]any{"spec", "holderIdentity"}, "a"},
				{[]any{"spec", "strategy"}, nil},
				{[]any{"spec", "preferredHolder"}, nil},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { mustStore(t, e, tt.path, tt.body, tt.checks) })
	}
}

// TestGroupTypesRejectInvalid checks that each type answers a broken
// object with 422 and upstream's causes.
func TestGroupTypesRejectInvalid(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	tests := []struct {
		name, path string
		body       map[string]any
		kind       string
		causes     []string
	}{
		{"pdb both bounds", groupPath("policy", "v1", "default", "poddisruptionbudgets"),
			map[string]any{"metadata": map[string]any{"name": "p"}, "spec": map[string]any{"minAvailable": "150%", "unhealthyPodEvictionPolicy": "Never"}},
			"PodDisruptionBudget.policy", []string{
				`spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%`,
				`spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"`,
			}},
		{"ingress path type", groupPath(b.Group("networking"), "v1", "default", "ingresses"),
			map[string]any{"metadata": map[string]any{"name": "i"}, "spec": map[string]any{"rules": []any{map[string]any{
				"host": "1.2.3.4", "http": map[string]any{"paths": []any{map[string]any{"path": "/a", "backend": map[string]any{}}}}}}}},
			"Ingress." + b.Group("networking"), []string{
				`spec.rules[0].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address`,
				`spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified`,
			}},
		{"network policy port", groupPath(b.Group("networking"), "v1", "default", "networkpolicies"),
			map[string]any{"metadata": map[string]any{"name": "n"}, "spec": map[string]any{"ingress": []any{map[string]any{
				"ports": []any{map[string]any{"port": 80, "endPort": 70}}, "from": []any{map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/8", "except": []any{"11.0.0.0/16"}}}}}}}},
			"NetworkPolicy." + b.Group("networking"), []string{
				"spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`",
				"spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: \"11.0.0.0/16\": must be a strict subset of `cidr`",
			}},
		{"endpointslice address", groupPath(b.Group("discovery"), "v1", "default", "endpointslices"),
			map[string]any{"metadata": map[string]any{"name": "s"}, "addressType": "IPv4", "endpoints": []any{map[string]any{"addresses": []any{"127.0.0.1"}}}},
			"EndpointSlice." + b.Group("discovery"), []string{
				`endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`,
			}},
		{"storageclass policy", groupPath(b.Group("storage"), "v1", "", "storageclasses"),
			map[string]any{"metadata": map[string]any{"name": "s"}, "reclaimPolicy": "Recycle"},
			"StorageClass." + b.Group("storage"), []string{
				`provisioner: Required value`,
				`reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"`,
			}},
		{"volumeattachment source", groupPath(b.Group("storage"), "v1", "", "volumeattachments"),
			map[string]any{"metadata": map[string]any{"name": "v"}, "spec": map[string]any{"attacher": "d.example.com", "nodeName": "n"}},
			"VolumeAttachment." + b.Group("storage"), []string{
				`spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName`,
			}},
		{"runtimeclass handler", groupPath(b.Group("node"), "v1", "", "runtimeclasses"),
			map[string]any{"metadata": map[string]any{"name": "r"}, "handler": "Run_C"},
			"RuntimeClass." + b.Group("node"), []string{
				`handler: Invalid value: "Run_C": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
			}},
		{"lease duration", groupPath(b.Group("coordination"), "v1", "default", "leases"),
			map[string]any{"metadata": map[string]any{"name": "l"}, "spec": map[string]any{"leaseDurationSeconds": 0, "leaseTransitions": -1}},
			"Lease." + b.Group("coordination"), []string{
				`spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0`,
				`spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { mustRefuse(t, e, tt.path, tt.body, tt.kind, tt.causes) })
	}
}

// TestStatusSubresourceRules checks the split between a type's main
// resource and its status: the main resource keeps status and bumps the
// generation on spec changes; the status subresource keeps spec.
func TestStatusSubresourceRules(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := groupPath("policy", "v1", "default", "poddisruptionbudgets")
	e.do("POST", base, map[string]any{"metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"maxUnavailable": 1}}).mustCode(t, 201)

	cur := e.do("GET", base+"/p", nil).mustCode(t, 200).obj(t)
	cur["status"] = map[string]any{"currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3, "disruptionsAllowed": 1}
	cur["spec"] = map[string]any{"maxUnavailable": 2}
	st := e.do("PUT", base+"/p/status", cur).mustCode(t, 200).obj(t)
	if at(st, "status", "currentHealthy") != 3.0 || at(st, "spec", "maxUnavailable") != 1.0 || at(st, "metadata", "generation") != 1.0 {
		t.Errorf("status write: status %v, spec %v, generation %v", st["status"], st["spec"], at(st, "metadata", "generation"))
	}

	st["spec"] = map[string]any{"maxUnavailable": "10%"}
	st["status"] = map[string]any{}
	up := e.do("PUT", base+"/p", st).mustCode(t, 200).obj(t)
	if at(up, "spec", "maxUnavailable") != "10%" || at(up, "status", "currentHealthy") != 3.0 || at(up, "metadata", "generation") != 2.0 {
		t.Errorf("main write: spec %v, status %v, generation %v", up["spec"], up["status"], at(up, "metadata", "generation"))
	}

	// A status write is checked by the status rules.
	up["status"] = map[string]any{"expectedPods": -1}
	bad := e.do("PUT", base+"/p/status", up).mustCode(t, 422).obj(t)
	if !strings.Contains(bad["message"].(string), "status.expectedPods: Invalid value: -1: must be greater than or equal to 0") {
		t.Errorf("bad status: %v", bad["message"])
	}

	// The same spec does not bump the generation again.
	up = e.do("GET", base+"/p", nil).mustCode(t, 200).obj(t)
	up["metadata"].(map[string]any)["labels"] = map[string]any{"a": "b"}
	again := e.do("PUT", base+"/p", up).mustCode(t, 200).obj(t)
	if at(again, "metadata", "generation") != 2.0 {
		t.Errorf("label change bumped the generation to %v", at(again, "metadata", "generation"))
	}
}

// TestImmutableFieldsOnUpdate checks the fields of the group types that
// may not change once stored.
func TestImmutableFieldsOnUpdate(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	sc := groupPath(b.Group("storage"), "v1", "", "storageclasses")
	e.do("POST", sc, map[string]any{"metadata": map[string]any{"name": "s"}, "provisioner": "example.com/a",
		"parameters": map[string]any{"k": "v"}}).mustCode(t, 201)
	obj := e.do("GET", sc+"/s", nil).mustCode(t, 200).obj(t)
	obj["provisioner"] = "example.com/b"
	obj["parameters"] = map[string]any{"k": "w"}
	obj["volumeBindingMode"] = "WaitForFirstConsumer"
	st := e.do("PUT", sc+"/s", obj).mustCode(t, 422).obj(t)
	want := `StorageClass.` + b.Group("storage") + ` "s" is invalid: [parameters: Forbidden: updates to parameters are forbidden., ` +
		`provisioner: Forbidden: updates to provisioner are forbidden., ` +
		`volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable]`
	if st["message"] != want {
		t.Errorf("message:\n got  %s\n want %s", st["message"], want)
	}

	es := groupPath(b.Group("discovery"), "v1", "default", "endpointslices")
	e.do("POST", es, map[string]any{"metadata": map[string]any{"name": "e"}, "addressType": "FQDN",
		"endpoints": []any{map[string]any{"addresses": []any{"db.example.com"}}}}).mustCode(t, 201)
	obj = e.do("GET", es+"/e", nil).mustCode(t, 200).obj(t)
	obj["addressType"] = "IPv6"
	obj["endpoints"] = []any{}
	st = e.do("PUT", es+"/e", obj).mustCode(t, 422).obj(t)
	if want := `EndpointSlice.` + b.Group("discovery") + ` "e" is invalid: addressType: Invalid value: "IPv6": field is immutable`; st["message"] != want {
		t.Errorf("message:\n got  %s\n want %s", st["message"], want)
	}
	obj["addressType"] = "FQDN"
	up := e.do("PUT", es+"/e", obj).mustCode(t, 200).obj(t)
	if at(up, "metadata", "generation") != 2.0 {
		t.Errorf("endpoint change left generation at %v", at(up, "metadata", "generation"))
	}
}
