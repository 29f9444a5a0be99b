package admission

import (
	"context"
	"strings"
	"testing"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
)

// runPolicy enforces one policy (matching every write unless spec says
// otherwise), bound with Deny and bspec, on a; the registry holds
// namespaces, config maps and extra. It returns the refusal's message
// ("" when admitted) and the warnings.
func runPolicy(t *testing.T, lookup fakeLookup, spec, bspec map[string]any, a *Attributes, extra ...*registry.Descriptor) (string, []string) {
	t.Helper()
	reg := registry.New()
	reg.Add(namespaces)
	reg.Add(configMaps)
	for _, d := range extra {
		reg.Add(d)
	}
	if _, ok := spec["matchConstraints"]; !ok {
		spec["matchConstraints"] = map[string]any{"resourceRules": []any{map[string]any{"operations": []any{"*"}, "apiGroups": []any{"*"}, "apiVersions": []any{"*"}, "resources": []any{"*"}}}}
	}
	b, _ := config.LookupBrand("plat")
	p := NewPolicies(reg, lookup, nil, b)
	p.ReplacePolicies([]registry.Object{{"metadata": map[string]any{"name": "p", "uid": "u", "generation": int64(1)}, "spec": spec}})
	bs := map[string]any{"policyName": "p", "validationActions": []any{"Deny"}}
	for k, v := range bspec {
		bs[k] = v
	}
	p.ReplaceBindings([]registry.Object{{"metadata": map[string]any{"name": "b"}, "spec": bs}})
	var warnings []string
	ctx := security.WithWarnings(context.Background(), func(m string) { warnings = append(warnings, m) })
	if err := p.Validate(ctx, a); err != nil {
		return apierr.FromError(err).Status.Message, warnings
	}
	return "", warnings
}

// configMapCreate is the create of config map c in namespace ns.
func configMapCreate() *Attributes {
	return &Attributes{Descriptor: configMaps, Operation: OpCreate, Namespace: "ns", Name: "c", User: &security.User{Name: "alice"},
		Object: registry.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "ns"}, "data": map[string]any{"a": "1"}}}
}

// TestMatchConditionsBudget checks that the match conditions have
// upstream's budget of their own, smaller than the validations': three
// conditions each near the per-expression limit run out of it, and
// running out fails the policy even after a false condition, as every
// condition is evaluated before any result counts.
func TestMatchConditionsBudget(t *testing.T) {
	t.Parallel()
	l := "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]"
	costly := l + ".all(a, " + l + ".all(b, " + l + ".all(c, " + l + ".all(d, a+b+c+d > 0))))"
	conditions := func(exprs ...string) []any {
		var out []any
		for i, e := range exprs {
			out = append(out, map[string]any{"name": string(rune('a' + i)), "expression": e})
		}
		return out
	}
	const outOfBudget = "validation failed due to running out of cost budget, no further validation rules will be run"
	tests := []struct {
		name       string
		conditions []any
		want       string
	}{
		{"within the budget", conditions(costly), "resulted in error: operation cancelled: actual cost limit exceeded"},
		{"over the budget", conditions(costly, costly, costly), outOfBudget},
		{"over the budget after a false condition", conditions("false", costly, costly, costly), outOfBudget},
		{"false condition", conditions("false", costly), ""},
	}
	for _, tt := range tests {
		got, _ := runPolicy(t, fakeLookup{"ns": {"metadata": map[string]any{"name": "ns"}}}, map[string]any{"matchConditions": tt.conditions,
			"validations": []any{map[string]any{"expression": "false", "message": "validated"}}}, nil, configMapCreate())
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) || strings.Contains(got, "validated") {
			t.Errorf("%s: refusal %q, want one with %q", tt.name, got, tt.want)
		}
	}
}

// TestMatchConditionsInput checks what match conditions see, as
// upstream's matcher gives it: no namespaceObject, and a request whose
// kind is the matched one but whose resource is the one the request
// addressed; the validations see the matched resource and the namespace.
func TestMatchConditionsInput(t *testing.T) {
	t.Parallel()
	core := &registry.Descriptor{Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
	grouped := &registry.Descriptor{Group: "events.example", Version: "v1", Resource: "events", Kind: "Event", Namespaced: true,
		Storage: &registry.Storage{Descriptor: core}}
	event := &Attributes{Descriptor: core, Operation: OpCreate, Namespace: "ns", Name: "e",
		Object: registry.Object{"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": "e", "namespace": "ns"}}}
	groupedRule := map[string]any{"resourceRules": []any{map[string]any{"operations": []any{"CREATE"}, "apiGroups": []any{"events.example"},
		"apiVersions": []any{"v1"}, "resources": []any{"events"}}}}
	lookup := fakeLookup{"ns": {"metadata": map[string]any{"name": "ns"}}}
	tests := []struct {
		name      string
		a         *Attributes
		match     map[string]any
		condition string
		want      string
	}{
		{"no namespaceObject", configMapCreate(), nil, "namespaceObject == null", "validated  with namespace"},
		{"resource as addressed, kind as matched", event, groupedRule,
			"request.resource.group == '' && request.kind.group == 'events.example' && request.requestResource.group == ''", "validated events.example with namespace"},
	}
	for _, tt := range tests {
		spec := map[string]any{"matchConditions": []any{map[string]any{"name": "c", "expression": tt.condition}},
			"validations": []any{map[string]any{"expression": "false",
				"messageExpression": "'validated ' + request.resource.group + ' ' + (namespaceObject == null ? '' : 'with namespace')"}}}
		if tt.match != nil {
			spec["matchConstraints"] = tt.match
		}
		got, _ := runPolicy(t, lookup, spec, nil, tt.a, core, grouped)
		if !strings.HasSuffix(got, ": "+tt.want) {
			t.Errorf("%s: refusal %q, want one ending %q", tt.name, got, tt.want)
		}
	}
}

// TestRequestOptions checks request.options: the options the request
// gave, with the kind and apiVersion of the operation's options object.
func TestRequestOptions(t *testing.T) {
	t.Parallel()
	a := configMapCreate()
	a.OptionsKind, a.DryRun = "CreateOptions", true
	a.Options = map[string]any{"fieldManager": "me", "fieldValidation": "Strict", "dryRun": []any{"All"}}
	got, _ := runPolicy(t, fakeLookup{"ns": {"metadata": map[string]any{"name": "ns"}}}, map[string]any{"validations": []any{map[string]any{"expression": "false",
		"messageExpression": "request.options.kind + ' ' + request.options.apiVersion + ' ' + request.options.fieldManager + ' ' + request.options.fieldValidation + ' ' + request.options.dryRun[0]"}}}, nil, a)
	b, _ := config.LookupBrand("plat")
	if want := ": CreateOptions " + b.MetaGroup() + "/v1 me Strict All"; !strings.HasSuffix(got, want) {
		t.Errorf("refusal %q, want one ending %q", got, want)
	}
}
