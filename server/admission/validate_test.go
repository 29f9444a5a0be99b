package admission

import (
	"context"
	"reflect"
	"testing"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
)

var configMaps = &registry.Descriptor{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}

// fakeLookup serves namespaces and config maps from memory.
type fakeLookup map[string]registry.Object // "ns/name" for config maps, "name" for namespaces

func (l fakeLookup) Get(d *registry.Descriptor, ns, name string) (registry.Object, error) {
	key := name
	if d.Namespaced {
		key = ns + "/" + name
	}
	if o, ok := l[key]; ok {
		return o, nil
	}
	return nil, apierr.NotFound(d.Group, d.Resource, name)
}

func (l fakeLookup) List(d *registry.Descriptor, ns string) ([]registry.Object, int64, error) {
	var out []registry.Object
	for _, k := range []string{"params/a", "params/b", "params/c"} {
		if o, ok := l[k]; ok {
			out = append(out, o)
		}
	}
	return out, 1, nil
}

func TestValidate(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	reg.Add(namespaces)
	reg.Add(configMaps)
	param := func(name, max string, labels map[string]any) registry.Object {
		return registry.Object{"metadata": map[string]any{"name": name, "namespace": "params", "labels": labels}, "data": map[string]any{"max": max}}
	}
	lookup := fakeLookup{
		"ns": {"metadata": map[string]any{"name": "ns", "labels": map[string]any{"team": "a"}, "creationTimestamp": "2026-01-02T03:04:05Z"},
			"status": map[string]any{"phase": "Active", "conditions": []any{map[string]any{"type": "T", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z"}}}},
		"params/a": param("a", "1", map[string]any{"set": "x"}),
		"params/b": param("b", "5", map[string]any{"set": "x"}),
	}
	rules := map[string]any{"resourceRules": []any{map[string]any{"operations": []any{"*"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"}}}}
	policy := func(spec map[string]any) registry.Object {
		spec["matchConstraints"] = rules
		return registry.Object{"metadata": map[string]any{"name": "p", "uid": "u", "generation": int64(1)}, "spec": spec}
	}
	validations := func(v ...map[string]any) []any {
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = x
		}
		return out
	}
	bind := func(actions []any, extra map[string]any) registry.Object {
		spec := map[string]any{"policyName": "p", "validationActions": actions}
		for k, v := range extra {
			spec[k] = v
		}
		return registry.Object{"metadata": map[string]any{"name": "b"}, "spec": spec}
	}
	deny := []any{"Deny"}
	byName := map[string]any{"paramRef": map[string]any{"name": "a", "namespace": "params", "parameterNotFoundAction": "Deny"}}
	tests := []struct {
		name     string
		policy   registry.Object
		binding  registry.Object
		code     int // 0: admitted
		message  string
		warnings []string
	}{
		{name: "admitted", policy: policy(map[string]any{"validations": validations(map[string]any{"expression": "object.data.size() < 3"})}), binding: bind(deny, nil)},
		{name: "denied", policy: policy(map[string]any{"validations": validations(map[string]any{"expression": "object.data.size() < 2"})}), binding: bind(deny, nil),
			code: 422, message: `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: object.data.size() < 2`},
		{name: "reason", policy: policy(map[string]any{"validations": validations(map[string]any{"expression": "false", "message": " no ", "reason": "Unauthorized"})}), binding: bind(deny, nil),
			code: 401, message: `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no`},
		{name: "first denial wins", policy: policy(map[string]any{"validations": validations(
			map[string]any{"expression": "true"}, map[string]any{"expression": "false", "messageExpression": "'second of ' + request.namespace"}, map[string]any{"expression": "false", "reason": "Forbidden"})}),
			binding: bind(deny, nil), code: 422, message: `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: second of ns`},
		{name: "warn", policy: policy(map[string]any{"validations": validations(map[string]any{"expression": "false", "message": "m"})}), binding: bind([]any{"Warn"}, nil),
			warnings: []string{"Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': m"}},
		{name: "audit and deny", policy: policy(map[string]any{"validations": validations(map[string]any{"expression": "false", "message": "m"})}), binding: bind([]any{"Audit", "Deny"}, nil),
			code: 422, message: `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: m`},
		{name: "runtime error, Fail", policy: policy(map[string]any{"validations": validations(map[string]any{"expression": "object.data.x == 'y'"})}), binding: bind(deny, nil),
			code: 422, message: `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'object.data.x == 'y'' resulted in error: no such key: x`},
		{name: "runtime error, Ignore", policy: policy(map[string]any{"failurePolicy": "Ignore", "validations": validations(map[string]any{"expression": "object.data.x == 'y'"})}), binding: bind(deny, nil)},
		{name: "compile error", policy: policy(map[string]any{"validations": validations(map[string]any{"expression": "object.data.x +"})}), binding: bind(deny, nil),
			code: 422, message: "configmaps \"c\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: compilation error: compilation failed: ERROR: <input>:1:16: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | object.data.x +\n | ...............^"},
		{name: "match condition false", policy: policy(map[string]any{"matchConditions": []any{map[string]any{"name": "a", "expression": "false"}, map[string]any{"name": "b", "expression": "object.nope == 1"}},
			"validations": validations(map[string]any{"expression": "false"})}), binding: bind(deny, nil)},
		{name: "match condition errors", policy: policy(map[string]any{"matchConditions": []any{map[string]any{"name": "a", "expression": "object.nope == 1"}, map[string]any{"name": "b", "expression": "object.nah == 1"}},
			"validations": validations(map[string]any{"expression": "false"})}), binding: bind(deny, nil),
			code: 422, message: `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: [expression 'object.nope == 1' resulted in error: no such key: nope, expression 'object.nah == 1' resulted in error: no such key: nah]`},
		{name: "unknown param kind", policy: policy(map[string]any{"paramKind": map[string]any{"apiVersion": "example.com/v1", "kind": "Limits"}, "validations": validations(map[string]any{"expression": "false"})}),
			binding: bind(deny, byName), code: 422, message: `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Limits'`},
		{name: "unknown param kind, Ignore", policy: policy(map[string]any{"failurePolicy": "Ignore", "paramKind": map[string]any{"apiVersion": "example.com/v1", "kind": "Limits"}, "validations": validations(map[string]any{"expression": "false"})}),
			binding: bind(deny, byName)},
		{name: "param by name", policy: policy(map[string]any{"paramKind": map[string]any{"apiVersion": "v1", "kind": "ConfigMap"},
			"validations": validations(map[string]any{"expression": "object.data.size() <= int(params.data.max)", "messageExpression": "params.kind + ' ' + params.metadata.name"})}),
			binding: bind(deny, byName), code: 422, message: `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ConfigMap a`},
		{name: "params by selector", policy: policy(map[string]any{"paramKind": map[string]any{"apiVersion": "v1", "kind": "ConfigMap"},
			"validations": validations(map[string]any{"expression": "object.data.size() <= int(params.data.max)", "messageExpression": "string(params.metadata.name)"})}),
			binding:  bind([]any{"Warn"}, map[string]any{"paramRef": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"set": "x"}}, "namespace": "params"}}),
			warnings: []string{"Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': a"}},
		{name: "missing param, Deny", policy: policy(map[string]any{"paramKind": map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}, "validations": validations(map[string]any{"expression": "false"})}),
			binding: bind(deny, map[string]any{"paramRef": map[string]any{"name": "zz", "namespace": "params", "parameterNotFoundAction": "Deny"}}),
			code:    422, message: "configmaps \"c\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"},
		{name: "missing param, Allow", policy: policy(map[string]any{"paramKind": map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}, "validations": validations(map[string]any{"expression": "false"})}),
			binding: bind(deny, map[string]any{"paramRef": map[string]any{"name": "zz", "namespace": "params", "parameterNotFoundAction": "Allow"}})},
		{name: "binding elsewhere", policy: policy(map[string]any{"validations": validations(map[string]any{"expression": "false"})}),
			binding: bind(deny, map[string]any{"matchResources": map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"team": "b"}}}})},
		{name: "namespace object", policy: policy(map[string]any{"validations": validations(map[string]any{"expression": "namespaceObject.metadata.labels.team != 'a'",
			"messageExpression": "'team ' + namespaceObject.metadata.labels.team + ' since ' + string(namespaceObject.metadata.creationTimestamp) + ', ' + string(namespaceObject.status.conditions[0].lastTransitionTime < timestamp('2027-01-01T00:00:00Z')) + ', ' + namespaceObject.status.phase"})}),
			binding: bind(deny, nil), code: 422, message: `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: team a since 2026-01-02T03:04:05Z, true, Active`},
		{name: "variables", policy: policy(map[string]any{"variables": []any{map[string]any{"name": "n", "expression": "object.data.size()"}},
			"validations": validations(map[string]any{"expression": "variables.n < 2", "messageExpression": "string(variables.n) + ' keys'"})}),
			binding: bind(deny, nil), code: 422, message: `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: 2 keys`},
		{name: "budget", policy: policy(map[string]any{"validations": validations(map[string]any{"expression": "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20].all(a, [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20].all(b, [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20].all(c, [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20].all(d, [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20].all(e, a+b+c+d+e > 0)))))"})}),
			binding: bind(deny, nil), code: 422, message: `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression '[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20].all(a, [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20].all(b, [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20].all(c, [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20].all(d, [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20].all(e, a+b+c+d+e > 0)))))' resulted in error: operation cancelled: actual cost limit exceeded`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := config.LookupBrand("plat")
			p := NewPolicies(reg, lookup, nil, b)
			p.ReplacePolicies([]registry.Object{tt.policy})
			p.ReplaceBindings([]registry.Object{tt.binding})
			var warnings []string
			ctx := security.WithWarnings(context.Background(), func(m string) { warnings = append(warnings, m) })
			a := &Attributes{Descriptor: configMaps, Operation: OpCreate, Namespace: "ns", Name: "c", User: &security.User{Name: "alice"},
				Object: registry.Object{"metadata": map[string]any{"name": "c", "namespace": "ns"}, "data": map[string]any{"a": "1", "b": "2"}}}
			err := p.Validate(ctx, a)
			if tt.code == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			} else {
				st := apierr.FromError(err).Status
				if int(st.Code) != tt.code || st.Message != tt.message {
					t.Fatalf("refusal %d %q\nwant %d %q", st.Code, st.Message, tt.code, tt.message)
				}
			}
			if !reflect.DeepEqual(warnings, tt.warnings) {
				t.Errorf("warnings %q, want %q", warnings, tt.warnings)
			}
		})
	}
}

// TestPoliciesCompileOncePerGeneration checks that a policy set again
// with the same generation keeps its compiled form, and a new generation
// is compiled anew.
func TestPoliciesCompileOncePerGeneration(t *testing.T) {
	t.Parallel()
	b, _ := config.LookupBrand("plat")
	p := NewPolicies(registry.New(), fakeLookup{}, nil, b)
	obj := func(gen int64, expr string) registry.Object {
		return registry.Object{"metadata": map[string]any{"name": "p", "uid": "u", "generation": gen},
			"spec": map[string]any{"validations": []any{map[string]any{"expression": expr}}}}
	}
	p.SetPolicy(obj(1, "true"))
	first := p.policies["p"]
	p.SetPolicy(obj(1, "true"))
	if p.policies["p"] != first {
		t.Error("the same generation was compiled again")
	}
	p.SetPolicy(obj(2, "false"))
	if got := p.policies["p"]; got == first || got.validations[0].expr != "false" {
		t.Error("a new generation was not compiled")
	}
	p.DeletePolicy("p")
	if len(p.policies) != 0 {
		t.Error("the policy was not removed")
	}
}
