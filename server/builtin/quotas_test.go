package builtin

import (
	"testing"

	"platd/server/registry"
)

func quotaObject(spec map[string]any) registry.Object {
	return registry.Object{"metadata": map[string]any{"name": "q", "namespace": "ns"}, "spec": spec}
}

func TestQuotaCreate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "ResourceQuota")
	got := mustCreate(t, d, registry.Object{
		"metadata": map[string]any{"name": "q", "namespace": "ns"},
		"spec":     map[string]any{"hard": map[string]any{"pods": "10", "requests.cpu": "1.0001m", "count/deployments.apps": "2"}},
	})
	if str(got, "spec", "hard", "requests.cpu") != "2m" {
		t.Errorf("hard not rounded: %v", got["spec"])
	}
	hard := func(h map[string]any) map[string]any { return map[string]any{"hard": h} }
	sel := func(reqs ...any) map[string]any {
		return map[string]any{"hard": map[string]any{"cpu": "1"}, "scopeSelector": map[string]any{"matchExpressions": reqs}}
	}
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"names and amounts", quotaObject(hard(map[string]any{"storage": "1", "foo": "1", "pods": "1500m", "cpu": "-1"})), []string{
			`spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0`,
			`spec.hard[foo]: Invalid value: "foo": must be a standard resource type or fully qualified`,
			`spec.hard[foo]: Invalid value: "foo": must be a standard resource for quota`,
			`spec.hard[pods]: Invalid value: 1500m: must be an integer`,
			`spec.hard[storage]: Invalid value: "storage": must be a standard resource for quota`,
		}},
		// One error per scope and resource it may not limit: BestEffort
		// limits neither cpu nor services, NotBestEffort not services.
		{"scopes", quotaObject(map[string]any{"hard": map[string]any{"cpu": "1", "services": "1"}, "scopes": []any{"BestEffort", "NotBestEffort", "Sometimes"}}), []string{
			`spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort", "Sometimes"}: unsupported scope applied to resource`,
			`spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort", "Sometimes"}: unsupported scope applied to resource`,
			`spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort", "Sometimes"}: unsupported scope applied to resource`,
			`spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort", "Sometimes"}: unsupported scope`,
			`spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort", "Sometimes"}: conflicting scopes`,
		}},
		{"selector", quotaObject(sel(
			map[string]any{"scopeName": "BestEffort", "operator": "In", "values": []any{"a"}},
			map[string]any{"scopeName": "NotBestEffort", "operator": "Exists"},
			map[string]any{"scopeName": "PriorityClass", "operator": "Has"},
			map[string]any{"scopeName": "PriorityClass", "operator": "NotIn"},
		)), []string{
			`spec.scopeSelector.matchExpressions: Invalid value: core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{core.ScopedResourceSelectorRequirement{ScopeName:"BestEffort", Operator:"In", Values:[]string{"a"}}, core.ScopedResourceSelectorRequirement{ScopeName:"NotBestEffort", Operator:"Exists", Values:[]string(nil)}, core.ScopedResourceSelectorRequirement{ScopeName:"PriorityClass", Operator:"Has", Values:[]string(nil)}, core.ScopedResourceSelectorRequirement{ScopeName:"PriorityClass", Operator:"NotIn", Values:[]string(nil)}}}: unsupported scope applied to resource`,
			"spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
			`spec.scopeSelector.matchExpressions.operator: Invalid value: "Has": not a valid selector operator`,
			"spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
			`spec.scopeSelector.matchExpressions: Invalid value: []core.ResourceQuotaScope(nil): conflicting scopes`,
		}},
		{"exists with values", quotaObject(map[string]any{"scopeSelector": map[string]any{"matchExpressions": []any{
			map[string]any{"scopeName": "Unknown", "operator": "Exists", "values": []any{"x"}},
		}}}), []string{
			`spec.scopeSelector.matchExpressions.scopeName: Invalid value: "Unknown": unsupported scope`,
			"spec.scopeSelector.matchExpressions.values: Invalid value: []string{\"x\"}: must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, tt.obj)
		checkErrs(t, tt.name, errs, tt.want)
	}
}

func TestQuotaUpdate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "ResourceQuota")
	stored := mustCreate(t, d, quotaObject(map[string]any{"hard": map[string]any{"pods": "1"}, "scopes": []any{"Terminating", "BestEffort"}}))
	next := copyObj(stored)
	mapAt(next, "spec")["scopes"] = []any{"BestEffort", "Terminating"}
	mapAt(next, "spec", "hard")["pods"] = "2"
	_, errs := update(d, next, stored, "")
	checkErrs(t, "same scopes", errs, nil)
	mapAt(next, "spec")["scopes"] = []any{"BestEffort"}
	_, errs = update(d, next, stored, "")
	checkErrs(t, "scopes changed", errs, []string{`spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort"}: field is immutable`})

	st := copyObj(stored)
	st["status"] = map[string]any{"hard": map[string]any{"pods": "1"}, "used": map[string]any{"pods": "-1", "bogus": "1"}}
	_, errs = update(d, st, stored, "status")
	checkErrs(t, "status", errs, []string{
		`status.used[bogus]: Invalid value: "bogus": must be a standard resource type or fully qualified`,
		`status.used[bogus]: Invalid value: "bogus": must be a standard resource for quota`,
		`status.used[pods]: Invalid value: "-1": must be greater than or equal to 0`,
	})
}
