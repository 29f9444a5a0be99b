package builtin

import (
	"context"
	"fmt"
	"testing"

	"platd/security"
	"platd/security/rbac"
	"platd/server/apierr"
	"platd/server/registry"
)

func TestRBACGuard(t *testing.T) {
	g := brand.Group("rbac.authorization")
	az := rbac.New(brand)
	az.PutRole(&rbac.Role{Namespace: "ns1", Name: "cm", Rules: []rbac.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}})
	az.PutRole(&rbac.Role{Name: "secrets", Rules: []rbac.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}}}})
	az.PutBinding(&rbac.Binding{Namespace: "ns1", Name: "alice", RoleRef: rbac.RoleRef{Kind: "Role", Name: "cm"}, Subjects: []rbac.Subject{{Kind: "User", Name: "alice"}}})
	// The chain allows escalate on roles named "free" and bind on the
	// cluster role "secrets", to carol only.
	chain := security.NewChain(security.AuthorizerFunc(func(_ context.Context, a security.Attributes) (security.Decision, string, error) {
		if a.User.Name == "carol" && a.APIGroup == g && ((a.Verb == "escalate" && a.Resource == "roles" && a.Name == "free") ||
			(a.Verb == "bind" && a.Resource == "clusterroles" && a.Name == "secrets")) {
			return security.DecisionAllow, "", nil
		}
		return security.DecisionNoOpinion, "", nil
	}))
	on := rbacGuard{group: g, sv: Services{Authorizer: chain, RBAC: func() *rbac.Authorizer { return az }}}
	off := rbacGuard{group: g, sv: Services{Authorizer: chain, RBAC: func() *rbac.Authorizer { return nil }}}
	alice := registry.Requester{Name: "alice", Groups: []string{"system:authenticated"}}
	carol := registry.Requester{Name: "carol", Groups: []string{"system:authenticated"}}
	admin := registry.Requester{Name: "admin", Groups: []string{"system:masters"}}
	role := func(name string, verbs ...any) registry.Object {
		return registry.Object{"metadata": map[string]any{"name": name, "namespace": "ns1"},
			"rules": []any{map[string]any{"verbs": verbs, "apiGroups": []any{""}, "resources": []any{"secrets"}}}}
	}
	binding := func(name, kind, ref string) registry.Object {
		return registry.Object{"metadata": map[string]any{"name": name, "namespace": "ns1"},
			"roleRef": map[string]any{"apiGroup": g, "kind": kind, "name": ref}}
	}
	aggregated := registry.Object{"metadata": map[string]any{"name": "agg"},
		"aggregationRule": map[string]any{"clusterRoleSelectors": []any{map[string]any{}}}}
	withFinalizer := role("big", "*")
	withFinalizer["metadata"].(map[string]any)["finalizers"] = []any{"x/y"}
	withLabel := role("big", "*")
	withLabel["metadata"].(map[string]any)["labels"] = map[string]any{"a": "b"}
	grant := `user "%s" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n"
	for _, c := range []struct {
		name     string
		check    func(context.Context, registry.Requester, string, registry.Object, registry.Object) error
		who      registry.Requester
		reqName  string
		obj, old registry.Object
		want     string
	}{
		{"rbac off", off.roleWrite("roles"), alice, "", role("r", "get"), nil, ""},
		{"masters", on.roleWrite("roles"), admin, "", role("r", "get"), nil, ""},
		{"missing rule", on.roleWrite("roles"), alice, "", role("r", "get", "list"), nil,
			fmt.Sprintf(`roles.%s "r" is forbidden: `+grant+`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`, g, "alice")},
		{"escalate on the request's name", on.roleWrite("roles"), carol, "free", role("free", "*"), nil, ""},
		{"escalate not on a create without name", on.roleWrite("roles"), carol, "", role("free", "get"), nil,
			fmt.Sprintf(`roles.%s "free" is forbidden: `+grant+`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`, g, "carol")},
		{"only gc fields", on.roleWrite("roles"), alice, "big", withFinalizer, role("big", "*"), ""},
		{"more than gc fields", on.roleWrite("roles"), alice, "big", withLabel, role("big", "*"),
			fmt.Sprintf(`roles.%s "big" is forbidden: `+grant+`{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}`, g, "alice")},
		{"aggregation", on.roleWrite("clusterroles"), alice, "agg", aggregated, nil,
			fmt.Sprintf(`clusterroles.%s "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`, g)},
		{"aggregation removed", on.roleWrite("clusterroles"), alice, "agg", registry.Object{"metadata": map[string]any{"name": "agg"}}, aggregated,
			fmt.Sprintf(`clusterroles.%s "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`, g)},
		{"bind held role", on.bindingWrite("rolebindings"), alice, "", binding("b", "Role", "cm"), nil, ""},
		{"bind more", on.bindingWrite("rolebindings"), alice, "", binding("b", "ClusterRole", "secrets"), nil,
			fmt.Sprintf(`rolebindings.%s "b" is forbidden: `+grant+`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`, g, "alice")},
		{"bind verb", on.bindingWrite("rolebindings"), carol, "", binding("b", "ClusterRole", "secrets"), nil, ""},
		{"bind off", off.bindingWrite("rolebindings"), alice, "", binding("b", "Role", "nope"), nil, ""},
	} {
		err := c.check(context.Background(), c.who, c.reqName, c.obj, c.old)
		got := ""
		if err != nil {
			e, ok := err.(*apierr.Error)
			if !ok || e.Status.Code != 403 {
				t.Errorf("%s: error %#v is no 403", c.name, err)
			}
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	// Binding a missing role meets the role's own 404, as upstream.
	err := on.bindingWrite("rolebindings")(context.Background(), alice, "", binding("b", "Role", "nope"), nil)
	if e, ok := err.(*apierr.Error); !ok || e.Status.Code != 404 || err.Error() != fmt.Sprintf(`roles.%s "nope" not found`, g) {
		t.Errorf("missing role: %#v", err)
	}
}
