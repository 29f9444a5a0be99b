package builtin

import (
	"context"
	"reflect"
	"testing"

	"platd/server/registry"
)

func node(spec, status map[string]any) registry.Object {
	obj := registry.Object{"metadata": map[string]any{"name": "n1"}, "spec": spec}
	if status != nil {
		obj["status"] = status
	}
	return obj
}

func TestNodeCreate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Node")
	got := mustCreate(t, d, node(
		map[string]any{"podCIDR": "10.0.0.0/24", "configSource": map[string]any{}},
		map[string]any{"capacity": map[string]any{"cpu": "2", "pods": "110"}, "features": map[string]any{}},
	))
	spec, st := mapAt(got, "spec"), mapAt(got, "status")
	if !reflect.DeepEqual(spec["podCIDRs"], []any{"10.0.0.0/24"}) || has(spec, "configSource") {
		t.Errorf("spec: %v", spec)
	}
	if !reflect.DeepEqual(st["allocatable"], map[string]any{"cpu": "2", "pods": "110"}) || has(st, "features") {
		t.Errorf("status: %v", st)
	}
	// The single field wins when both disagree, as for older clients.
	got = mustCreate(t, d, node(map[string]any{"podCIDR": "10.9.0.0/24", "podCIDRs": []any{"10.0.0.0/24", "fd00::/64"}}, nil))
	if !reflect.DeepEqual(mapAt(got, "spec")["podCIDRs"], []any{"10.9.0.0/24"}) {
		t.Errorf("podCIDRs do not follow podCIDR: %v", got["spec"])
	}
	got = mustCreate(t, d, node(map[string]any{"podCIDRs": []any{"10.0.0.0/24", "fd00::/64"}}, nil))
	if str(got, "spec", "podCIDR") != "10.0.0.0/24" {
		t.Errorf("podCIDR does not follow podCIDRs: %v", got["spec"])
	}

	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"taints", node(map[string]any{"taints": []any{
			map[string]any{"key": "a b", "value": "-x", "effect": "NoSchedule"},
			map[string]any{"key": "k", "effect": ""},
			map[string]any{"key": "k", "effect": "Never"},
			map[string]any{"key": "k", "value": "v", "effect": "NoExecute"},
			map[string]any{"key": "k", "value": "w", "effect": "NoExecute"},
		}}, nil), []string{
			"metadata.taints[0].key: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
			`metadata.taints[0].value: Invalid value: "-x": ` + labelValueMsg,
			"metadata.taints[1].effect: Required value",
			`metadata.taints[2].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
			`metadata.taints[4]: Duplicate value: core.Taint{Key:"k", Value:"w", Effect:"NoExecute", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair`,
		}},
		{"resources", node(nil, map[string]any{"capacity": map[string]any{"cpu": "-1", "pods": "1500m"}, "allocatable": map[string]any{}}), []string{
			`status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0`,
			`status.capacity.pods: Invalid value: 1500m: must be an integer`,
		}},
		{"bad cidrs", node(map[string]any{"podCIDRs": []any{"10.0.0.0/33", "10.1.0.0/16"}}, nil), []string{
			`spec.podCIDRs[0]: Invalid value: []string{"10.0.0.0/33", "10.1.0.0/16"}: must be valid CIDR`,
			`spec.podCIDRs: Internal error: invalid PodCIDRs. failed to check with dual stack with error:failed to parse cidr value:"10.0.0.0/33" with error:invalid CIDR address: 10.0.0.0/33`,
			`spec.podCIDRs: Invalid value: []string{"10.0.0.0/33", "10.1.0.0/16"}: may specify no more than one CIDR for each IP family`,
		}},
		{"one family", node(map[string]any{"podCIDRs": []any{"10.0.0.0/16", "10.0.0.0/16"}}, nil), []string{
			`spec.podCIDRs: Invalid value: []string{"10.0.0.0/16", "10.0.0.0/16"}: may specify no more than one CIDR for each IP family`,
			`spec.podCIDRs[1]: Duplicate value: "10.0.0.0/16"`,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, tt.obj)
		checkErrs(t, tt.name, errs, tt.want)
	}
}

func TestNodeUpdate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Node")
	stored := mustCreate(t, d, node(map[string]any{}, map[string]any{"capacity": map[string]any{"cpu": "2"}}))
	// The pod CIDRs and provider ID may be set once.
	next := copyObj(stored)
	mapAt(next, "spec")["podCIDRs"] = []any{"10.0.0.0/24"}
	mapAt(next, "spec")["providerID"] = "cloud://a"
	mapAt(next, "spec")["unschedulable"] = true
	next["status"] = map[string]any{}
	set, errs := update(d, next, stored, "")
	checkErrs(t, "set once", errs, nil)
	if str(set, "status", "capacity", "cpu") != "2" {
		t.Errorf("status changed by a spec update: %v", set["status"])
	}
	again := copyObj(set)
	mapAt(again, "spec")["podCIDRs"] = []any{"10.1.0.0/24"}
	delete(mapAt(again, "spec"), "podCIDR")
	mapAt(again, "spec")["providerID"] = "cloud://b"
	mapAt(again, "spec")["externalID"] = "x"
	_, errs = update(d, again, set, "")
	checkErrs(t, "changed", errs, []string{
		`spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid`,
		`spec.providerID: Forbidden: node updates may not change providerID except from "" to valid`,
		"spec.externalID: Forbidden: may not be updated",
	})

	st := copyObj(set)
	st["status"] = map[string]any{"addresses": []any{
		map[string]any{"type": "InternalIP", "address": "10.0.0.1"},
		map[string]any{"type": "InternalIP", "address": "10.0.0.1"},
	}, "config": map[string]any{}}
	got, errs := update(d, st, set, "status")
	checkErrs(t, "status", errs, []string{`status.addresses[1]: Duplicate value: core.NodeAddress{Type:"InternalIP", Address:"10.0.0.1"}`})
	if has(mapAt(got, "status"), "config") {
		t.Errorf("status.config kept")
	}
	if sel := d.FieldSelectors["spec.unschedulable"]; sel.Get(set) != "true" || sel.Get(stored) != "false" {
		t.Errorf("spec.unschedulable selector: %q %q", sel.Get(set), sel.Get(stored))
	}
}

func TestNodeNotReadyTaintAtCreation(t *testing.T) {
	t.Parallel()
	r := nodeRules{pods: newPodRules(brand)}
	notReady := r.pods.notReadyTaint
	added := `{"effect":"NoSchedule","key":"` + notReady + `"}`
	tests := []struct {
		name, spec string
		// want is the node's taints after admission.
		want string
	}{
		{"none", `{}`, `[` + added + `]`},
		{"others kept first", `{"taints":[{"key":"dedicated","value":"db","effect":"NoSchedule"}]}`,
			`[{"effect":"NoSchedule","key":"dedicated","value":"db"},` + added + `]`},
		{"already there, any value", `{"taints":[{"key":"` + notReady + `","value":"x","effect":"NoSchedule"}]}`,
			`[{"effect":"NoSchedule","key":"` + notReady + `","value":"x"}]`},
		{"same key, other effect", `{"taints":[{"key":"` + notReady + `","effect":"NoExecute"}]}`,
			`[{"effect":"NoExecute","key":"` + notReady + `"},` + added + `]`},
	}
	for _, tt := range tests {
		obj := registry.Object{"metadata": map[string]any{"name": "n1"}, "spec": decodeJSON(t, tt.spec)}
		if err := r.taintNotReady(context.Background(), nil, obj, nil); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := canonicalJSON(t, mapAt(obj, "spec")["taints"]); got != tt.want {
			t.Errorf("%s: taints %s, want %s", tt.name, got, tt.want)
		}
	}
	// An update is left as written: the taint may have been lifted.
	obj := registry.Object{"spec": map[string]any{}}
	if err := r.taintNotReady(context.Background(), nil, obj, registry.Object{"spec": map[string]any{}}); err != nil || has(mapAt(obj, "spec"), "taints") {
		t.Errorf("update: %v %v", err, obj)
	}
}
