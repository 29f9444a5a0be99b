package controllers

import (
	"context"
	"testing"

	"platd/security"
	"platd/security/rbac"
	"platd/server/registry"
)

func TestRBACFollowsTheStore(t *testing.T) {
	e := newTestEnv(t)
	g := e.brand.Group("rbac.authorization")
	c := &RBAC{Source: e.store, Authorizer: rbac.New(e.brand), Log: e.log,
		Roles: e.lookup(t, g, "v1", "roles"), ClusterRoles: e.lookup(t, g, "v1", "clusterroles"),
		RoleBindings: e.lookup(t, g, "v1", "rolebindings"), ClusterRoleBindings: e.lookup(t, g, "v1", "clusterrolebindings")}
	ctx := context.Background()
	create := func(d *registry.Descriptor, obj registry.Object) {
		t.Helper()
		if _, err := e.api.Create(ctx, d, obj); err != nil {
			t.Fatal(err)
		}
	}
	ns := func(name string) {
		t.Helper()
		create(e.lookup(t, "", "v1", "namespaces"), registry.Object{"metadata": map[string]any{"name": name}})
	}
	ns("ns1")
	rule := []any{map[string]any{"verbs": []any{"list"}, "apiGroups": []any{""}, "resources": []any{"configmaps"}}}
	binding := func(name, kind, role string) registry.Object {
		return registry.Object{"metadata": map[string]any{"name": name, "namespace": "ns1"},
			"roleRef":  map[string]any{"apiGroup": g, "kind": kind, "name": role},
			"subjects": []any{map[string]any{"kind": "User", "name": "alice", "apiGroup": g}}}
	}
	// Stored before Load: the first decision already sees it.
	create(c.ClusterRoles, registry.Object{"metadata": map[string]any{"name": "cm-list"}, "rules": rule})
	create(c.RoleBindings, binding("by-cluster-role", "ClusterRole", "cm-list"))
	if err := c.Load(); err != nil {
		t.Fatal(err)
	}
	list := security.Attributes{User: &security.User{Name: "alice"}, Verb: "list", Namespace: "ns1", Resource: "configmaps", ResourceRequest: true}
	decide := func() (security.Decision, string) {
		d, reason, _ := c.Authorizer.Authorize(ctx, list)
		return d, reason
	}
	if d, reason := decide(); d != security.DecisionAllow || reason != `RBAC: allowed by RoleBinding "by-cluster-role/ns1" of ClusterRole "cm-list" to User "alice"` {
		t.Fatalf("after Load: %v %q", d, reason)
	}
	// Written after Load and before Run: the watch starts where Load read.
	create(c.Roles, registry.Object{"metadata": map[string]any{"name": "cm-list", "namespace": "ns1"}, "rules": rule})
	create(c.RoleBindings, binding("by-role", "Role", "cm-list"))
	if _, err := e.api.Delete(ctx, c.RoleBindings, "ns1", "by-cluster-role", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.run(t, c.Run)
	waitFor(t, "the role binding to allow", func() bool {
		d, reason := decide()
		return d == security.DecisionAllow && reason == `RBAC: allowed by RoleBinding "by-role/ns1" of Role "cm-list" to User "alice"`
	})
	if _, err := e.api.Delete(ctx, c.Roles, "ns1", "cm-list", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deleted role to be missed", func() bool {
		d, reason := decide()
		return d == security.DecisionNoOpinion && reason == `RBAC: role.`+g+` "cm-list" not found`
	})
	if _, err := e.api.Delete(ctx, c.RoleBindings, "ns1", "by-role", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "no binding to apply", func() bool {
		d, reason := decide()
		return d == security.DecisionNoOpinion && reason == ""
	})
}
