package controllers

import (
	"context"
	"testing"

	"platd/server/admission"
	"platd/server/apierr"
	"platd/server/registry"
)

// TestAdmissionPoliciesFollowTheStore checks that policies and bindings
// stored before Load apply at once, and that later changes (a new
// generation, a deleted binding) are followed.
func TestAdmissionPoliciesFollowTheStore(t *testing.T) {
	e := newTestEnv(t)
	g := e.brand.Group("admissionregistration")
	p := admission.NewPolicies(e.reg, e.api, nil, e.brand)
	c := &AdmissionPolicies{Source: e.store, Policies: p, Log: e.log,
		Policy: e.lookup(t, g, "v1", "validatingadmissionpolicies"), Binding: e.lookup(t, g, "v1", "validatingadmissionpolicybindings")}
	ctx := context.Background()
	cms := e.lookup(t, "", "v1", "configmaps")
	policy := func(max string) registry.Object {
		return registry.Object{"metadata": map[string]any{"name": "size"}, "spec": map[string]any{
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"operations": []any{"CREATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"}}}},
			"validations": []any{map[string]any{"expression": "object.data.size() <= " + max, "message": "at most " + max}},
		}}
	}
	if _, err := e.api.Create(ctx, e.lookup(t, "", "v1", "namespaces"), registry.Object{"metadata": map[string]any{"name": "default"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.api.Create(ctx, c.Policy, policy("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.api.Create(ctx, c.Binding, registry.Object{"metadata": map[string]any{"name": "size"},
		"spec": map[string]any{"policyName": "size", "validationActions": []any{"Deny"}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Load(); err != nil {
		t.Fatal(err)
	}
	two := registry.Object{"metadata": map[string]any{"namespace": "default"}, "data": map[string]any{"a": "1", "b": "2"}}
	a := &admission.Attributes{Descriptor: cms, Operation: admission.OpCreate, Namespace: "default", Name: "c", Object: two}
	message := func() string {
		if err := p.Validate(ctx, a); err != nil {
			return apierr.FromError(err).Status.Message
		}
		return ""
	}
	if got := message(); got != `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'size' with binding 'size' denied request: at most 1` {
		t.Fatalf("after Load: %q", got)
	}
	e.run(t, c.Run)
	if _, err := e.api.Update(ctx, c.Policy, "", "size", "", func(old registry.Object) registry.Object {
		next := policy("2")
		next["metadata"] = old["metadata"]
		return next
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new generation", func() bool { return message() == "" })
	a.Object = registry.Object{"metadata": map[string]any{}, "data": map[string]any{"a": "1", "b": "2", "c": "3"}}
	if message() == "" {
		t.Fatal("three keys admitted")
	}
	if _, err := e.api.Delete(ctx, c.Binding, "", "size", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the binding's removal", func() bool { return message() == "" })
}
