package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"platd/config"
)

// upstreamRBACPolicy reads the default policy a v1.32 server serves,
// respelled in brand b.
func upstreamRBACPolicy(t *testing.T, b config.Brand) map[string][]map[string]any {
	t.Helper()
	raw, err := os.ReadFile("testdata/upstream/rbac-default-policy.json")
	if err != nil {
		t.Fatal(err)
	}
	k := config.Brands["kubernetes"]
	s := strings.NewReplacer(k.LegacyTokenTrackingConfigMap, b.LegacyTokenTrackingConfigMap, k.Domain, b.Domain, k.LongDomain, b.LongDomain,
		k.SystemNamespace, b.SystemNamespace, k.PublicNamespace, b.PublicNamespace).Replace(string(raw))
	var p map[string][]map[string]any
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// aggregatedRules is what the aggregation controller makes of the named
// role among roles: per selector, the rules of the roles it matches in name
// order (their own aggregated rules if they aggregate), each once.
func aggregatedRules(roles []map[string]any, name string) []any {
	byName := map[string]map[string]any{}
	var names []string
	for _, r := range roles {
		n := path(r, "metadata.name").(string)
		byName[n] = r
		names = append(names, n)
	}
	slices.Sort(names)
	out := []any{}
	sels, _ := path(byName[name], "aggregationRule.clusterRoleSelectors").([]any)
	for _, sel := range sels {
		match := sel.(map[string]any)["matchLabels"].(map[string]any)
		for _, n := range names {
			labels, _ := path(byName[n], "metadata.labels").(map[string]any)
			ok := n != name
			for k, v := range match {
				ok = ok && labels[k] == v
			}
			if !ok {
				continue
			}
			rules, _ := byName[n]["rules"].([]any)
			if byName[n]["aggregationRule"] != nil {
				rules = aggregatedRules(roles, n)
			}
			for _, r := range rules {
				if !slices.ContainsFunc(out, func(o any) bool { return reflect.DeepEqual(o, r) }) {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// rbacItems lists a resource of the rbac group, by namespace/name.
func (e *env) rbacItems(t *testing.T, resource string) map[string]map[string]any {
	t.Helper()
	list := e.do("GET", groupPath(e.opts.Brand.Group("rbac.authorization"), "v1", "", resource), nil).mustCode(t, 200).obj(t)
	out := map[string]map[string]any{}
	for _, it := range list["items"].([]any) {
		o := it.(map[string]any)
		ns, _ := path(o, "metadata.namespace").(string)
		out[ns+"/"+path(o, "metadata.name").(string)] = o
	}
	return out
}

// TestRBACDefaultPolicyServed compares every default role and binding a
// server with RBAC serves, field by field, with what v1.32 serves.
func TestRBACDefaultPolicyServed(t *testing.T) {
	t.Parallel()
	for _, brand := range []string{"kubernetes", "plat"} {
		t.Run(brand, func(t *testing.T) {
			t.Parallel()
			e := start(t, withBrand(brand), withRBAC)
			want := upstreamRBACPolicy(t, e.opts.Brand)
			for resource, key := range map[string]string{"clusterroles": "clusterRoles", "clusterrolebindings": "clusterRoleBindings",
				"roles": "roles", "rolebindings": "roleBindings"} {
				served := e.rbacItems(t, resource)
				if len(served) != len(want[key]) {
					t.Errorf("%s: %d served, want %d", resource, len(served), len(want[key]))
				}
				for _, w := range want[key] {
					ns, _ := path(w, "metadata.namespace").(string)
					name := ns + "/" + path(w, "metadata.name").(string)
					got := served[name]
					if got == nil {
						t.Errorf("%s %s not served", resource, name)
						continue
					}
					for _, f := range []string{"metadata.labels", "metadata.annotations", "aggregationRule", "roleRef", "subjects", "rules"} {
						if g, w := path(got, f), path(w, f); w != nil && !reflect.DeepEqual(g, w) {
							gj, _ := json.Marshal(g)
							wj, _ := json.Marshal(w)
							t.Errorf("%s %s %s:\n got  %s\n want %s", resource, name, f, gj, wj)
						}
					}
				}
			}
			// The aggregated roles (served with null rules by a server
			// without controller manager) get the union of the roles
			// they select.
			crPath := groupPath(e.opts.Brand.Group("rbac.authorization"), "v1", "", "clusterroles")
			for _, name := range []string{"view", "edit", "admin"} {
				w := aggregatedRules(want["clusterRoles"], name)
				if len(w) < 10 {
					t.Fatalf("%s: only %d rules expected", name, len(w))
				}
				eventually(t, name+" aggregated", func() bool {
					return reflect.DeepEqual(path(e.do("GET", crPath+"/"+name, nil).obj(t), "rules"), w)
				})
			}
			body := string(e.do("GET", "/readyz?verbose", nil).mustCode(t, 200).body)
			if !strings.Contains(body, "[+]poststarthook/start-system-namespaces-controller ok\n[+]poststarthook/start-cluster-authentication-info-controller ok\n[+]poststarthook/start-legacy-token-tracking-controller ok\n[+]poststarthook/rbac/bootstrap-roles ok\n[+]poststarthook/scheduling/bootstrap-system-priority-classes ok\n") {
				t.Errorf("readyz does not report the policy written:\n%s", body)
			}
		})
	}
}

// TestRBACDefaultPolicyRestart: a restart writes nothing when nothing
// changed; a removed rule comes back; an object marked autoupdate=false
// stays as its owner left it.
func TestRBACDefaultPolicyRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir, withRBAC))
	b := e.opts.Brand
	crPath := groupPath(b.Group("rbac.authorization"), "v1", "", "clusterroles")

	basic := e.do("GET", crPath+"/system:basic-user", nil).mustCode(t, 200).obj(t)
	wantRules := basic["rules"]
	basic["rules"] = basic["rules"].([]any)[:1]
	e.do("PUT", crPath+"/system:basic-user", basic).mustCode(t, 200)
	disc := e.do("GET", crPath+"/system:discovery", nil).mustCode(t, 200).obj(t)
	disc["metadata"].(map[string]any)["annotations"].(map[string]any)[b.RBACAutoUpdateAnnotation()] = "false"
	disc["rules"] = []any{map[string]any{"verbs": []any{"get"}, "nonResourceURLs": []any{"/version"}}}
	disc = e.do("PUT", crPath+"/system:discovery", disc).mustCode(t, 200).obj(t)

	// The aggregated roles are complete before the snapshot.
	var served []map[string]any
	for _, o := range e.rbacItems(t, "clusterroles") {
		served = append(served, o)
	}
	for _, name := range []string{"view", "edit", "admin"} {
		w := aggregatedRules(served, name)
		eventually(t, name+" aggregated", func() bool {
			return reflect.DeepEqual(path(e.do("GET", crPath+"/"+name, nil).obj(t), "rules"), w)
		})
	}
	before := map[string]map[string]map[string]any{}
	for _, r := range []string{"clusterroles", "clusterrolebindings", "roles", "rolebindings"} {
		before[r] = e.rbacItems(t, r)
	}
	e.stop()

	e2 := startWith(t, testOptions(t, dir, withRBAC))
	for r, objs := range before {
		after := e2.rbacItems(t, r)
		if len(after) != len(objs) {
			t.Errorf("%s: %d after the restart, %d before", r, len(after), len(objs))
		}
		for name, o := range objs {
			changed := path(after[name], "metadata.resourceVersion") != path(o, "metadata.resourceVersion")
			if changed != (r == "clusterroles" && name == "/system:basic-user") {
				t.Errorf("%s %s: resourceVersion %v before, %v after the restart", r, name, path(o, "metadata.resourceVersion"), path(after[name], "metadata.resourceVersion"))
			}
		}
	}
	// The removed rule is added back.
	got := e2.do("GET", crPath+"/system:basic-user", nil).mustCode(t, 200).obj(t)
	if !reflect.DeepEqual(got["rules"], wantRules) {
		t.Errorf("system:basic-user rules after the restart: %v, want %v", got["rules"], wantRules)
	}
	if got := e2.do("GET", crPath+"/system:discovery", nil).mustCode(t, 200).obj(t); !reflect.DeepEqual(got, disc) {
		t.Errorf("protected system:discovery changed by the restart:\n got  %v\n want %v", got, disc)
	}
}

// TestRBACAggregationFollowsLabels: a role labelled to aggregate into view
// reaches view, edit and admin, and leaves them when the label goes.
func TestRBACAggregationFollowsLabels(t *testing.T) {
	t.Parallel()
	e := start(t, withRBAC)
	b := e.opts.Brand
	crPath := groupPath(b.Group("rbac.authorization"), "v1", "", "clusterroles")
	widgets := map[string]any{"verbs": []any{"get", "list"}, "apiGroups": []any{"example.com"}, "resources": []any{"widgets"}}
	has := func(name string) bool {
		rules, _ := path(e.do("GET", crPath+"/"+name, nil).mustCode(t, 200).obj(t), "rules").([]any)
		return slices.ContainsFunc(rules, func(r any) bool { return reflect.DeepEqual(r, widgets) })
	}
	e.do("POST", crPath, map[string]any{"metadata": map[string]any{"name": "widget-viewer",
		"labels": map[string]any{b.RBACAggregateLabel("view"): "true"}}, "rules": []any{widgets}}).mustCode(t, 201)
	for _, name := range []string{"view", "edit", "admin"} {
		eventually(t, "widgets in "+name, func() bool { return has(name) })
	}
	e.do("PATCH", crPath+"/widget-viewer", `{"metadata":{"labels":{"`+b.RBACAggregateLabel("view")+`":null}}}`,
		"Content-Type", "application/merge-patch+json").mustCode(t, 200)
	for _, name := range []string{"view", "edit", "admin"} {
		eventually(t, "widgets gone from "+name, func() bool { return !has(name) })
	}
}

// TestRBACPolicyFromAuthorizationConfig: RBAC named by the authorization
// configuration file writes the default policy too.
func TestRBACPolicyFromAuthorizationConfig(t *testing.T) {
	t.Parallel()
	b := config.Brands["plat"]
	file := filepath.Join(t.TempDir(), "authz.yaml")
	if err := os.WriteFile(file, []byte(authzFile(b, "- {type: RBAC, name: rbac}\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	e := start(t, func(o *config.Options) { o.AuthorizationConfigFile, o.AuthorizationModes = file, nil })
	e.do("GET", "/readyz/poststarthook/rbac/bootstrap-roles", nil).mustCode(t, 200)
	got := e.do("GET", groupPath(b.Group("rbac.authorization"), "v1", "", "clusterrolebindings/cluster-admin"), nil).mustCode(t, 200).obj(t)
	if name := path(got, "roleRef.name"); name != "cluster-admin" {
		t.Errorf("cluster-admin binding roleRef %v", name)
	}
}
