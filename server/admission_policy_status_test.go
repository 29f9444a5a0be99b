package server_test

import (
	"reflect"
	"strings"
	"testing"

	"platd/server/controllers"
)

// typeChecked polls the policy called name until its status is of its
// generation and has typeChecking, and returns it.
func (e *policyEnv) typeChecked(name string, generation float64) map[string]any {
	e.t.Helper()
	var p map[string]any
	eventually(e.t, "the type checking of "+name, func() bool {
		p = e.do("GET", e.policyPath("validatingadmissionpolicies")+"/"+name, nil).mustCode(e.t, 200).obj(e.t)
		return at(p, "status", "observedGeneration") == generation && at(p, "status", "typeChecking") != nil
	})
	return p
}

func expressionWarnings(p map[string]any) []map[string]any {
	var out []map[string]any
	l, _ := at(p, "status", "typeChecking", "expressionWarnings").([]any)
	for _, w := range l {
		out = append(out, w.(map[string]any))
	}
	return out
}

func deploymentRules() map[string]any {
	return map[string]any{"resourceRules": []any{map[string]any{"operations": []any{"CREATE", "UPDATE"},
		"apiGroups": []any{"apps"}, "apiVersions": []any{"v1"}, "resources": []any{"deployments"}}}}
}

// TestPolicyTypeChecking follows upstream's conformance flow: a policy
// whose expressions fit the Deployment schema gets an empty typeChecking;
// a confused one gets a warning for its expression and one for its
// messageExpression, in upstream's words, applied by the status
// controller's manager; a new generation is checked again.
func TestPolicyTypeChecking(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)

	e.policy("correct", map[string]any{"matchConstraints": deploymentRules(),
		"validations": []any{map[string]any{"expression": "object.spec.replicas > 1"}}})
	p := e.typeChecked("correct", 1)
	if tc := at(p, "status", "typeChecking"); !reflect.DeepEqual(tc, map[string]any{}) {
		t.Errorf("typeChecking of a correct policy: %v, want {}", tc)
	}

	e.policy("confused", map[string]any{"matchConstraints": deploymentRules(),
		"validations": []any{map[string]any{"expression": "object.spec.replicas > '1'",
			"messageExpression": "'wants replicas > 1, got ' + object.spec.replicas"}}})
	p = e.typeChecked("confused", 1)
	ws := expressionWarnings(p)
	want := []map[string]any{
		{"fieldRef": "spec.validations[0].expression", "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n | object.spec.replicas > '1'\n | .....................^\n"},
		{"fieldRef": "spec.validations[0].messageExpression", "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:28: found no matching overload for '_+_' applied to '(string, int)'\n | 'wants replicas > 1, got ' + object.spec.replicas\n | ...........................^\n"},
	}
	if !reflect.DeepEqual(ws, want) {
		t.Errorf("warnings:\n got %q\nwant %q", ws, want)
	}
	var owner map[string]any
	for _, f := range at(p, "metadata", "managedFields").([]any) {
		if m := f.(map[string]any); m["manager"] == controllers.PolicyStatusManager {
			owner = m
		}
	}
	if owner == nil || owner["operation"] != "Apply" || owner["subresource"] != "status" ||
		!reflect.DeepEqual(at(owner, "fieldsV1", "f:status"), map[string]any{"f:observedGeneration": map[string]any{}, "f:typeChecking": map[string]any{"f:expressionWarnings": map[string]any{}}}) {
		t.Errorf("status manager's entry %v", owner)
	}

	// A new generation is checked again: the warnings follow the spec.
	patched := e.do("PATCH", e.policyPath("validatingadmissionpolicies")+"/confused",
		[]any{map[string]any{"op": "replace", "path": "/spec/validations", "value": []any{
			map[string]any{"expression": "object.spec.replicas > 1"}, map[string]any{"expression": "object.spec.nosuch == 1"}}}},
		"Content-Type", "application/json-patch+json").mustCode(t, 200).obj(t)
	if at(patched, "metadata", "generation") != 2.0 {
		t.Fatalf("patched generation %v", at(patched, "metadata", "generation"))
	}
	p = e.typeChecked("confused", 2)
	ws = expressionWarnings(p)
	if len(ws) != 1 || ws[0]["fieldRef"] != "spec.validations[1].expression" || !strings.Contains(ws[0]["warning"].(string), "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'nosuch'") {
		t.Errorf("warnings of generation 2: %v", ws)
	}
}

// TestPolicyTypeCheckingCustomResource checks a policy against a custom
// resource's schema, and its params against a ConfigMap's.
func TestPolicyTypeCheckingCustomResource(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	e.do("POST", crdPath, gadgetCRD("typed.example.com")).mustCode(t, 201)
	e.policy("gadgets", map[string]any{
		"paramKind": map[string]any{"apiVersion": "v1", "kind": "ConfigMap"},
		"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{"operations": []any{"CREATE"},
			"apiGroups": []any{"typed.example.com"}, "apiVersions": []any{"v1", "v2"}, "resources": []any{"gadgets", "gadgets/status"}}}},
		"validations": []any{
			map[string]any{"expression": "object.spec.replicas > 1 && object.spec.tags.all(t, t != params.data['x'])"},
			map[string]any{"expression": "object.spec.color == 1"},
			map[string]any{"expression": "params.nosuch == 'x'"},
		}})
	p := e.typeChecked("gadgets", 1)
	ws := expressionWarnings(p)
	var refs []any
	for _, w := range ws {
		refs = append(refs, w["fieldRef"])
	}
	if !reflect.DeepEqual(refs, []any{"spec.validations[1].expression", "spec.validations[2].expression"}) {
		t.Fatalf("warnings %v", ws)
	}
	// Both served versions, in order, each with the compiler's issue.
	for _, v := range []string{"v1", "v2"} {
		if w := ws[1]["warning"].(string); !strings.Contains(w, "typed.example.com/"+v+", Kind=Gadget: ERROR: <input>:1:7: undefined field 'nosuch'") {
			t.Errorf("params warning lacks %s: %q", v, w)
		}
	}
	if w := ws[0]["warning"].(string); !strings.HasPrefix(w, "typed.example.com/v1, Kind=Gadget: ERROR: <input>:1:19: found no matching overload for '_==_' applied to '(string, int)'") ||
		!strings.Contains(w, "\n\ntyped.example.com/v2, Kind=Gadget: ") {
		t.Errorf("color warning %q", w)
	}
}
