package builtin

import (
	"strings"
	"testing"

	"platd/server/registry"
)

func pdb(spec map[string]any) registry.Object {
	return registry.Object{"metadata": map[string]any{"name": "p", "namespace": "ns"}, "spec": spec}
}

func TestPodDisruptionBudgetCreate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "PodDisruptionBudget")
	obj := pdb(map[string]any{"minAvailable": int64(2)})
	obj["status"] = map[string]any{"currentHealthy": int64(4)}
	got := mustCreate(t, d, obj)
	if intAt(got, "metadata", "generation") != 1 || intAt(got, "status", "currentHealthy") != 0 {
		t.Errorf("created: generation %v, status %v", valueAt(got, "metadata", "generation"), got["status"])
	}
	percentMsg := `a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`
	tests := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"min", map[string]any{"minAvailable": "100%"}, nil},
		{"max zero", map[string]any{"maxUnavailable": int64(0)}, nil},
		{"none", map[string]any{}, nil},
		{"both", map[string]any{"minAvailable": int64(1), "maxUnavailable": "5%"}, []string{
			`spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:&intstr.IntOrString{Type:0, IntVal:1, StrVal:""}, Selector:(*v1.LabelSelector)(nil), MaxUnavailable:&intstr.IntOrString{Type:1, IntVal:0, StrVal:"5%"}, UnhealthyPodEvictionPolicy:(*policy.UnhealthyPodEvictionPolicyType)(nil)}: minAvailable and maxUnavailable cannot be both set`,
		}},
		{"negative", map[string]any{"minAvailable": int64(-1)}, []string{
			"spec.minAvailable: Invalid value: -1: must be greater than or equal to 0",
		}},
		{"not a percent", map[string]any{"maxUnavailable": "5"}, []string{
			`spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"5"}: ` + percentMsg,
		}},
		{"over 100", map[string]any{"maxUnavailable": "101%"}, []string{
			`spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"101%"}: must not be greater than 100%`,
		}},
		{"huge percent", map[string]any{"maxUnavailable": "99999999999999999999%"}, []string{
			`spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"99999999999999999999%"}: must not be greater than 100%`,
		}},
		{"selector", map[string]any{"selector": map[string]any{
			"matchLabels": map[string]any{"a/b/c": "x"},
			"matchExpressions": []any{
				map[string]any{"key": "k", "operator": "In"},
				map[string]any{"key": "k", "operator": "Exists", "values": []any{"v"}},
				map[string]any{"key": "k", "operator": "Has", "values": []any{"-bad"}},
			},
		}}, []string{
			"spec.selector.matchLabels: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
			"spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
			"spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
			`spec.selector.matchExpressions[2].operator: Invalid value: "Has": not a valid selector operator`,
			`spec.selector.matchExpressions[2].values[0]: Invalid value: "-bad": ` + labelValueMsg,
		}},
		{"policy", map[string]any{"unhealthyPodEvictionPolicy": ""}, []string{
			`spec.unhealthyPodEvictionPolicy: Unsupported value: "": supported values: "AlwaysAllow", "IfHealthyBudget"`,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, pdb(tt.spec))
		checkErrs(t, tt.name, errs, tt.want)
	}
}

func TestPodDisruptionBudgetUpdate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "PodDisruptionBudget")
	badSelector := map[string]any{"matchExpressions": []any{map[string]any{"key": "k", "operator": "In", "values": []any{"-bad"}}}}
	stored := mustCreate(t, d, pdb(map[string]any{"minAvailable": int64(1)}))
	legacy := copyObj(stored)
	legacy["spec"] = map[string]any{"selector": badSelector}

	// A spec change bumps the generation; status is kept from the stored object.
	withStatus := copyObj(stored)
	withStatus["status"] = map[string]any{"currentHealthy": int64(3)}
	next := pdb(map[string]any{"minAvailable": int64(2)})
	next["status"] = map[string]any{"currentHealthy": int64(9)}
	got, errs := update(d, next, withStatus, "")
	checkErrs(t, "spec change", errs, nil)
	if intAt(got, "metadata", "generation") != 2 || intAt(got, "status", "currentHealthy") != 3 {
		t.Errorf("spec change: generation %v, status %v", valueAt(got, "metadata", "generation"), got["status"])
	}
	got, _ = update(d, pdb(map[string]any{"minAvailable": int64(1)}), stored, "")
	if intAt(got, "metadata", "generation") != 1 {
		t.Errorf("same spec bumped the generation: %v", valueAt(got, "metadata", "generation"))
	}

	tests := []struct {
		name     string
		obj, old registry.Object
		sub      string
		want     []string
	}{
		{"bad value kept", pdb(map[string]any{"selector": badSelector}), legacy, "", nil},
		{"bad value new", pdb(map[string]any{"selector": badSelector}), stored, "", []string{
			`spec.selector.matchExpressions[0].values[0]: Invalid value: "-bad": ` + labelValueMsg,
		}},
		{"status counts", registry.Object{"status": map[string]any{"disruptionsAllowed": int64(-1), "expectedPods": int64(-2)}}, stored, "status", []string{
			"status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0",
			"status.expectedPods: Invalid value: -2: must be greater than or equal to 0",
		}},
		{"status conditions", registry.Object{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods", "lastTransitionTime": "2024-01-01T00:00:00Z"},
			map[string]any{"type": "DisruptionAllowed", "status": "Maybe", "reason": "1st", "observedGeneration": int64(-1), "message": strings.Repeat("m", 32*1024+1)},
		}}}, stored, "status", []string{
			`status.conditions[1].type: Duplicate value: "DisruptionAllowed"`,
			`status.conditions[1].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"`,
			"status.conditions[1].observedGeneration: Invalid value: -1: must be greater than or equal to zero",
			"status.conditions[1].lastTransitionTime: Required value: must be set",
			`status.conditions[1].reason: Invalid value: "1st": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')`,
			"status.conditions[1].message: Too long: may not be more than 32768 bytes",
		}},
	}
	for _, tt := range tests {
		_, errs := update(d, tt.obj, tt.old, tt.sub)
		checkErrs(t, tt.name, errs, tt.want)
	}

	// A status write keeps the stored spec.
	got, _ = update(d, registry.Object{"spec": map[string]any{"minAvailable": int64(7)}, "status": map[string]any{"expectedPods": int64(3)}}, stored, "status")
	if intAt(got, "spec", "minAvailable") != 1 || intAt(got, "status", "expectedPods") != 3 || intAt(got, "metadata", "generation") != 1 {
		t.Errorf("status write: %v", got)
	}
}
