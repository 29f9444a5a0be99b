package controllers

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"platd/server/rbacpolicy"
	"platd/server/registry"
)

func (e *testEnv) rbacBootstrap(t *testing.T) *RBACBootstrap {
	t.Helper()
	g := e.brand.Group("rbac.authorization")
	return &RBACBootstrap{Objects: e.api, Brand: e.brand, Log: e.log,
		ClusterRoles: e.lookup(t, g, "v1", "clusterroles"), ClusterRoleBindings: e.lookup(t, g, "v1", "clusterrolebindings"),
		Roles: e.lookup(t, g, "v1", "roles"), RoleBindings: e.lookup(t, g, "v1", "rolebindings"),
		Policy: rbacpolicy.For(e.brand).Objects(e.brand), EnsureNamespace: e.api.EnsureNamespace}
}

func TestRBACBootstrapWritesOnceAndRepairs(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	c := e.rbacBootstrap(t)
	p := c.Policy
	total := int64(len(p.ClusterRoles) + len(p.ClusterRoleBindings) + len(p.Roles) + len(p.RoleBindings))
	stats, err := c.Run(ctx)
	if err != nil || stats != (RBACBootstrapStats{Created: total}) {
		t.Fatalf("first run: %+v, %v; want %d created", stats, err, total)
	}
	rev := e.store.Revision()
	if stats, err = c.Run(ctx); err != nil || stats != (RBACBootstrapStats{}) || e.store.Revision() != rev {
		t.Fatalf("second run: %+v, %v, revision %d -> %d; want nothing written", stats, err, rev, e.store.Revision())
	}

	// A rule removed, a protected role changed, a binding pointed
	// elsewhere, a subject removed from a protected binding.
	update := func(d *registry.Descriptor, ns, name string, f func(o registry.Object)) {
		t.Helper()
		if _, err := e.api.Update(ctx, d, ns, name, "", func(o registry.Object) registry.Object { f(o); return o }); err != nil {
			t.Fatal(err)
		}
	}
	update(c.ClusterRoles, "", "system:basic-user", func(o registry.Object) { o["rules"] = o["rules"].([]any)[:1] })
	update(c.ClusterRoles, "", "system:discovery", func(o registry.Object) {
		o["rules"] = []any{map[string]any{"verbs": []any{"get"}, "nonResourceURLs": []any{"/api"}}}
		child(child(o, "metadata"), "annotations")[e.brand.RBACAutoUpdateAnnotation()] = "false"
	})
	update(c.ClusterRoleBindings, "", "cluster-admin", func(o registry.Object) {
		child(child(o, "metadata"), "annotations")[e.brand.RBACAutoUpdateAnnotation()] = "false"
		o["subjects"] = []any{}
	})
	if _, err := e.api.Delete(ctx, c.RoleBindings, e.brand.SystemNamespace, "system:controller:token-cleaner", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := copyObject(p.RoleBindings[5])
	if rbacpolicy.Name(rb) != "system:controller:token-cleaner" {
		t.Fatalf("role binding 5 is %s", rbacpolicy.Name(rb))
	}
	rb["roleRef"].(map[string]any)["name"] = "other"
	if _, err := e.api.Create(ctx, c.RoleBindings, rb); err != nil {
		t.Fatal(err)
	}

	stats, err = c.Run(ctx)
	if want := (RBACBootstrapStats{Updated: 1, Recreated: 1, Protected: 2}); err != nil || stats != want {
		t.Fatalf("repairing run: %+v, %v; want %+v", stats, err, want)
	}
	basic, _ := e.api.Get(c.ClusterRoles, "", "system:basic-user")
	group := e.brand.Group("authentication")
	if got, want := rbacpolicy.RulesOf(basic)[1:], []rbacpolicy.Rule{{Verbs: []string{"create"}, APIGroups: []string{group}, Resources: []string{"selfsubjectreviews"}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("system:basic-user rules after repair: %+v, want %+v", got, want)
	}
	if disc, _ := e.api.Get(c.ClusterRoles, "", "system:discovery"); len(rbacpolicy.RulesOf(disc)) != 1 || len(rbacpolicy.RulesOf(disc)[0].NonResourceURLs) != 1 {
		t.Errorf("protected system:discovery changed: %v", disc["rules"])
	}
	ca, _ := e.api.Get(c.ClusterRoleBindings, "", "cluster-admin")
	if subs, _ := ca["subjects"].([]any); len(subs) != 0 {
		t.Errorf("protected cluster-admin binding changed: %v", ca["subjects"])
	}
	tc, _ := e.api.Get(c.RoleBindings, e.brand.SystemNamespace, "system:controller:token-cleaner")
	if name := tc["roleRef"].(map[string]any)["name"]; name != "system:controller:token-cleaner" {
		t.Errorf("token-cleaner binding roleRef %v after repair", name)
	}
}

func TestRBACBootstrapMigrates(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	c := e.rbacBootstrap(t)
	legacy := registry.Object{"metadata": map[string]any{"name": "edit", "labels": map[string]any{"mine": "yes"}},
		"rules": []any{map[string]any{"verbs": []any{"frobnicate"}, "apiGroups": []any{""}, "resources": []any{"widgets"}}}}
	if _, err := e.api.Create(ctx, c.ClusterRoles, legacy); err != nil {
		t.Fatal(err)
	}
	discovery := copyObject(c.Policy.ClusterRoleBindings[2])
	if rbacpolicy.Name(discovery) != rbacpolicy.SplitFrom {
		t.Fatalf("binding 2 is %s", rbacpolicy.Name(discovery))
	}
	discovery["subjects"] = []any{map[string]any{"kind": "User", "apiGroup": e.brand.Group("rbac.authorization"), "name": "carol"}}
	if _, err := e.api.Create(ctx, c.ClusterRoleBindings, discovery); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	moved, err := e.api.Get(c.ClusterRoles, "", "system:aggregate-to-edit")
	if err != nil {
		t.Fatal(err)
	}
	if r := rbacpolicy.RulesOf(moved); len(r) < 2 || r[0].Verbs[0] != "frobnicate" {
		t.Errorf("system:aggregate-to-edit rules: %+v", r)
	}
	if moved["metadata"].(map[string]any)["labels"].(map[string]any)["mine"] != "yes" {
		t.Errorf("labels not carried over: %v", moved["metadata"])
	}
	// The legacy role becomes the aggregated one.
	if edit, _ := e.api.Get(c.ClusterRoles, "", "edit"); edit["aggregationRule"] == nil {
		t.Errorf("edit has no aggregationRule: %v", edit)
	}
	piv, err := e.api.Get(c.ClusterRoleBindings, "", rbacpolicy.SplitTo)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range piv["subjects"].([]any) {
		names = append(names, s.(map[string]any)["name"].(string))
	}
	if want := []string{"carol", "system:authenticated", "system:unauthenticated"}; !reflect.DeepEqual(names, want) {
		t.Errorf("%s subjects %v, want %v", rbacpolicy.SplitTo, names, want)
	}
}

// failingLists is a store that never answers lists.
type failingLists struct{ Objects }

func (failingLists) List(*registry.Descriptor, string) ([]registry.Object, int64, error) {
	return nil, 0, errors.New("etcdserver: request timed out")
}

func TestRBACBootstrapGivesUp(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	c := e.rbacBootstrap(t)
	c.Objects = failingLists{e.api}
	c.Interval, c.Timeout = time.Millisecond, 20*time.Millisecond
	_, err := c.Run(context.Background())
	if want := "unable to initialize roles: timed out waiting for the condition"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}
