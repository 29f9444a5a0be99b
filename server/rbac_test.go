package server_test

import (
	"fmt"
	"strings"
	"testing"

	"platd/config"
)

// withRBAC starts the server with the RBAC mode alone: admin is in
// system:masters, alice is bound by nothing until a test binds her.
func withRBAC(o *config.Options) { o.AuthorizationModes = []string{config.ModeRBAC} }

// rbacEnv is a server in RBAC mode and the spelling of its rbac group.
type rbacEnv struct {
	*env
	group string
}

func (e rbacEnv) api(ns, resource string) string {
	if ns == "" {
		return "/apis/" + e.group + "/v1/" + resource
	}
	return "/apis/" + e.group + "/v1/namespaces/" + ns + "/" + resource
}

func (e rbacEnv) role(kind, ns, name string, rules ...map[string]any) map[string]any {
	md := map[string]any{"name": name}
	if ns != "" {
		md["namespace"] = ns
	}
	return map[string]any{"apiVersion": e.group + "/v1", "kind": kind, "metadata": md, "rules": rules}
}

func (e rbacEnv) binding(kind, ns, name, roleKind, role string, subjects ...map[string]any) map[string]any {
	md := map[string]any{"name": name}
	if ns != "" {
		md["namespace"] = ns
	}
	return map[string]any{"apiVersion": e.group + "/v1", "kind": kind, "metadata": md,
		"roleRef": map[string]any{"apiGroup": e.group, "kind": roleKind, "name": role}, "subjects": subjects}
}

func policy(verbs, groups, resources []string, names ...string) map[string]any {
	r := map[string]any{"verbs": verbs, "apiGroups": groups, "resources": resources}
	if len(names) > 0 {
		r["resourceNames"] = names
	}
	return r
}

func user(name string) map[string]any { return map[string]any{"kind": "User", "name": name} }

// as sends a request as alice.
func (e rbacEnv) alice(method, path string, body any) *resp {
	e.t.Helper()
	return e.send(req{method: method, path: path, body: body, token: aliceToken})
}

// eventuallyCode polls alice's request until it answers code: bindings
// take effect once the authorizer's index has seen them.
func (e rbacEnv) eventuallyCode(t *testing.T, method, path string, code int) *resp {
	t.Helper()
	var r *resp
	eventually(t, fmt.Sprintf("%s %s as alice to answer %d", method, path, code), func() bool {
		r = e.alice(method, path, nil)
		return r.code == code
	})
	return r
}

func TestRBACAuthorization(t *testing.T) {
	t.Parallel()
	e := rbacEnv{start(t, withRBAC), ""}
	e.group = e.opts.Brand.Group("rbac.authorization")
	for _, ns := range []string{"ns1", "ns2"} {
		e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": ns}}).mustCode(t, 201)
	}
	e.do("POST", e.api("ns1", "roles"), e.role("Role", "ns1", "cm-reader", policy([]string{"get", "list"}, []string{""}, []string{"configmaps"}))).mustCode(t, 201)
	e.do("POST", e.api("ns1", "rolebindings"), e.binding("RoleBinding", "ns1", "alice-cm", "Role", "cm-reader", user("alice"))).mustCode(t, 201)

	e.eventuallyCode(t, "GET", "/api/v1/namespaces/ns1/configmaps", 200)
	// Elsewhere alice gets upstream's 403, word for word.
	r := e.alice("GET", "/api/v1/namespaces/ns2/configmaps", nil).mustCode(t, 403)
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"ns2\"","reason":"Forbidden","details":{"kind":"configmaps"},"code":403}` + "\n"
	if string(r.body) != want {
		t.Errorf("403 body:\n got %s\nwant %s", r.body, want)
	}
	e.alice("GET", "/api/v1/namespaces/ns1/secrets", nil).mustCode(t, 403)
	e.alice("DELETE", "/api/v1/namespaces/ns1/configmaps/x", nil).mustCode(t, 403)
	e.alice("GET", "/api/v1/configmaps", nil).mustCode(t, 403)

	// A binding to a role that does not exist says so in the 403.
	e.do("POST", e.api("ns2", "rolebindings"), e.binding("RoleBinding", "ns2", "ghost", "Role", "nope", user("alice"))).mustCode(t, 201)
	msg := `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "ns2": RBAC: role.` + e.group + ` "nope" not found`
	eventually(t, "the missing role in the 403", func() bool {
		m, _ := e.alice("GET", "/api/v1/namespaces/ns2/configmaps", nil).obj(t)["message"].(string)
		return m == msg
	})
	// Creating the role makes the binding work.
	e.do("POST", e.api("ns2", "roles"), e.role("Role", "ns2", "nope", policy([]string{"list"}, []string{""}, []string{"configmaps"}))).mustCode(t, 201)
	e.eventuallyCode(t, "GET", "/api/v1/namespaces/ns2/configmaps", 200)

	// A cluster role binding to a group alice is in allows everywhere.
	e.do("POST", e.api("", "clusterroles"), e.role("ClusterRole", "", "ns-reader", policy([]string{"get"}, []string{""}, []string{"namespaces"}, "ns1"))).mustCode(t, 201)
	crb := e.binding("ClusterRoleBinding", "", "authenticated-ns", "ClusterRole", "ns-reader", map[string]any{"kind": "Group", "name": "system:authenticated"})
	e.do("POST", e.api("", "clusterrolebindings"), crb).mustCode(t, 201)
	e.eventuallyCode(t, "GET", "/api/v1/namespaces/ns1", 200)
	e.alice("GET", "/api/v1/namespaces/ns2", nil).mustCode(t, 403)

	// Removed bindings stop allowing.
	e.do("DELETE", e.api("ns1", "rolebindings")+"/alice-cm", nil).mustCode(t, 200)
	e.eventuallyCode(t, "GET", "/api/v1/namespaces/ns1/configmaps", 403)
	e.do("DELETE", e.api("", "clusterrolebindings")+"/authenticated-ns", nil).mustCode(t, 200)
	e.eventuallyCode(t, "GET", "/api/v1/namespaces/ns1", 403)
}

func TestRBACEscalation(t *testing.T) {
	t.Parallel()
	e := rbacEnv{start(t, withRBAC), ""}
	e.group = e.opts.Brand.Group("rbac.authorization")
	g := e.group
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "ns1"}}).mustCode(t, 201)
	// alice may write roles and bindings in ns1, and read configmaps.
	e.do("POST", e.api("ns1", "roles"), e.role("Role", "ns1", "rbac-writer",
		policy([]string{"create", "update", "patch", "get"}, []string{g}, []string{"roles", "rolebindings"}),
		policy([]string{"get", "list"}, []string{""}, []string{"configmaps"}))).mustCode(t, 201)
	e.do("POST", e.api("ns1", "rolebindings"), e.binding("RoleBinding", "ns1", "alice-writer", "Role", "rbac-writer", user("alice"))).mustCode(t, 201)
	e.eventuallyCode(t, "GET", e.api("ns1", "roles")+"/rbac-writer", 200)

	forbidden := func(t *testing.T, r *resp, resource, name, msg string) {
		t.Helper()
		r.mustCode(t, 403).mustMessage(t, fmt.Sprintf("%s.%s %q is forbidden: %s", resource, g, name, msg))
		if d := r.obj(t)["details"]; fmt.Sprint(d) != fmt.Sprintf("map[group:%s kind:%s name:%s]", g, resource, name) {
			t.Errorf("details %v", d)
		}
	}
	head := `user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n"

	t.Run("role", func(t *testing.T) {
		r1 := e.role("Role", "ns1", "r1", policy([]string{"get", "list"}, []string{""}, []string{"secrets", "configmaps"}),
			policy([]string{"delete"}, []string{"apps"}, []string{"deployments"}, "web"))
		forbidden(t, e.alice("POST", e.api("ns1", "roles"), r1), "roles", "r1",
			head+`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`+"\n"+
				`{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["delete"]}`)
		// Also through PUT that creates.
		forbidden(t, e.alice("PUT", e.api("ns1", "roles")+"/r1", r1), "roles", "r1",
			head+`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`+"\n"+
				`{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["delete"]}`)
		// What alice holds she may grant.
		e.alice("POST", e.api("ns1", "roles"), e.role("Role", "ns1", "r2", policy([]string{"get"}, []string{""}, []string{"configmaps"}))).mustCode(t, 201)
		// Updates are checked, by patch and apply too.
		patch := `{"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["secrets"]}]}`
		r := e.send(req{method: "PATCH", path: e.api("ns1", "roles") + "/r2", body: patch, token: aliceToken,
			header: map[string]string{"Content-Type": "application/merge-patch+json"}})
		forbidden(t, r, "roles", "r2", head+`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`)
		apply := fmt.Sprintf(`{"apiVersion":"%s/v1","kind":"Role","metadata":{"name":"r2","namespace":"ns1"},"rules":[{"verbs":["watch"],"apiGroups":[""],"resources":["configmaps"]}]}`, g)
		r = e.send(req{method: "PATCH", path: e.api("ns1", "roles") + "/r2?fieldManager=alice&force=true", body: apply, token: aliceToken,
			header: map[string]string{"Content-Type": "application/apply-patch+yaml"}})
		forbidden(t, r, "roles", "r2", head+`{APIGroups:[""], Resources:["configmaps"], Verbs:["watch"]}`)
		// An update of only the garbage collector's fields is not checked,
		// even when the role already grants more than alice holds.
		e.do("PUT", e.api("ns1", "roles")+"/big", e.role("Role", "ns1", "big", policy([]string{"*"}, []string{"*"}, []string{"*"}))).mustCode(t, 201)
		gc := `{"metadata":{"finalizers":["example.com/keep"]}}`
		e.send(req{method: "PATCH", path: e.api("ns1", "roles") + "/big", body: gc, token: aliceToken,
			header: map[string]string{"Content-Type": "application/merge-patch+json"}}).mustCode(t, 200)
		label := `{"metadata":{"labels":{"a":"b"}}}`
		r = e.send(req{method: "PATCH", path: e.api("ns1", "roles") + "/big", body: label, token: aliceToken,
			header: map[string]string{"Content-Type": "application/merge-patch+json"}})
		forbidden(t, r, "roles", "big", head+`{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`)
	})

	t.Run("binding", func(t *testing.T) {
		e.do("POST", e.api("", "clusterroles"), e.role("ClusterRole", "", "secret-admin", policy([]string{"*"}, []string{""}, []string{"secrets"}))).mustCode(t, 201)
		b := e.binding("RoleBinding", "ns1", "alice-secrets", "ClusterRole", "secret-admin", user("alice"))
		// The authorizer's index follows the store: until it has the new
		// cluster role, a binding of it reads as a binding of a missing role.
		eventually(t, "the new cluster role to reach the RBAC index", func() bool {
			return !strings.Contains(string(e.alice("POST", e.api("ns1", "rolebindings"), b).body), "not found")
		})
		forbidden(t, e.alice("POST", e.api("ns1", "rolebindings"), b), "rolebindings", "alice-secrets",
			head+`{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}`)
		// Binding a missing role meets the role's NotFound, as upstream.
		e.alice("POST", e.api("ns1", "rolebindings"), e.binding("RoleBinding", "ns1", "ghost", "Role", "nope", user("bob"))).
			mustCode(t, 404).mustMessage(t, `roles.`+g+` "nope" not found`)
		// Binding a role alice's rules cover is allowed.
		e.alice("POST", e.api("ns1", "rolebindings"), e.binding("RoleBinding", "ns1", "bob-writer", "Role", "rbac-writer", user("bob"))).mustCode(t, 201)
		// roleRef stays immutable for everyone.
		changed := e.binding("RoleBinding", "ns1", "bob-writer", "Role", "r2", user("bob"))
		e.do("PUT", e.api("ns1", "rolebindings")+"/bob-writer", changed).mustCode(t, 422).mustMessage(t,
			fmt.Sprintf(`RoleBinding.%s "bob-writer" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"%s", Kind:"Role", Name:"r2"}: cannot change roleRef`, g, g))

		// The bind verb on that cluster role lets alice bind it.
		e.do("POST", e.api("ns1", "roles"), e.role("Role", "ns1", "binder", policy([]string{"bind"}, []string{g}, []string{"clusterroles"}, "secret-admin"))).mustCode(t, 201)
		e.do("POST", e.api("ns1", "rolebindings"), e.binding("RoleBinding", "ns1", "alice-binder", "Role", "binder", user("alice"))).mustCode(t, 201)
		eventually(t, "the bind verb to take effect", func() bool {
			return e.alice("POST", e.api("ns1", "rolebindings"), b).code == 201
		})
	})

	t.Run("escalate and aggregation", func(t *testing.T) {
		// alice may create cluster roles but holds no cluster rules.
		e.do("POST", e.api("", "clusterroles"), e.role("ClusterRole", "", "cr-writer", policy([]string{"create"}, []string{g}, []string{"clusterroles"}))).mustCode(t, 201)
		e.do("POST", e.api("", "clusterrolebindings"), e.binding("ClusterRoleBinding", "", "alice-cr-writer", "ClusterRole", "cr-writer", user("alice"))).mustCode(t, 201)
		agg := e.role("ClusterRole", "", "agg")
		agg["aggregationRule"] = map[string]any{"clusterRoleSelectors": []any{map[string]any{"matchLabels": map[string]any{"x": "y"}}}}
		eventually(t, "alice's cluster role writes to be allowed", func() bool {
			return e.alice("POST", e.api("", "clusterroles"), agg).code == 403 &&
				e.alice("POST", e.api("", "clusterroles"), e.role("ClusterRole", "", "empty")).code == 201
		})
		forbidden(t, e.alice("POST", e.api("", "clusterroles"), agg), "clusterroles", "agg", "must have cluster-admin privileges to use the aggregationRule")
		urls := e.role("ClusterRole", "", "urls", map[string]any{"verbs": []string{"get"}, "nonResourceURLs": []string{"/metrics", "/logs/*"}})
		forbidden(t, e.alice("POST", e.api("", "clusterroles"), urls), "clusterroles", "urls",
			head+`{NonResourceURLs:["/logs/*"], Verbs:["get"]}`+"\n"+`{NonResourceURLs:["/metrics"], Verbs:["get"]}`)

		// escalate on cluster roles lifts both checks.
		e.do("POST", e.api("", "clusterroles"), e.role("ClusterRole", "", "escalator", policy([]string{"escalate"}, []string{g}, []string{"clusterroles"}))).mustCode(t, 201)
		e.do("POST", e.api("", "clusterrolebindings"), e.binding("ClusterRoleBinding", "", "alice-escalator", "ClusterRole", "escalator", user("alice"))).mustCode(t, 201)
		eventually(t, "the escalate verb to take effect", func() bool {
			return e.alice("POST", e.api("", "clusterroles"), urls).code == 201
		})
		e.alice("POST", e.api("", "clusterroles"), agg).mustCode(t, 201)
	})
}
