package controllers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"platd/server/registry"
)

func TestClusterRoleAggregation(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	cr := e.lookup(t, e.brand.Group("rbac.authorization"), "v1", "clusterroles")
	rule := func(verb, resource string) map[string]any {
		return map[string]any{"verbs": []any{verb}, "apiGroups": []any{""}, "resources": []any{resource}}
	}
	role := func(name string, labels map[string]any, rules ...map[string]any) {
		t.Helper()
		list := []any{}
		for _, r := range rules {
			list = append(list, r)
		}
		if _, err := e.api.Create(ctx, cr, registry.Object{"metadata": map[string]any{"name": name, "labels": labels}, "rules": list}); err != nil {
			t.Fatal(err)
		}
	}
	rulesOf := func(name string) string {
		o, err := e.api.Get(cr, "", name)
		if err != nil {
			return err.Error()
		}
		j, _ := json.Marshal(o["rules"])
		return string(j)
	}
	wait := func(name, want string) {
		t.Helper()
		waitFor(t, name+" rules "+want, func() bool { return rulesOf(name) == want })
	}
	// Selected by the second selector, and by the first: it comes first.
	role("b", map[string]any{"x": "true", "y": "true"}, rule("get", "pods"), rule("list", "pods"))
	role("a", map[string]any{"x": "true"}, rule("list", "pods"), rule("get", "secrets"))
	// Matches its own selector: skipped.
	if _, err := e.api.Create(ctx, cr, registry.Object{"metadata": map[string]any{"name": "agg", "labels": map[string]any{"x": "true"}},
		"aggregationRule": map[string]any{"clusterRoleSelectors": []any{
			map[string]any{"matchLabels": map[string]any{"y": "true"}},
			map[string]any{"matchExpressions": []any{map[string]any{"key": "x", "operator": "Exists"}}},
		}}, "rules": []any{rule("own", "rule")}}); err != nil {
		t.Fatal(err)
	}
	e.run(t, (&ClusterRoleAggregation{Source: e.store, Objects: e.api, ClusterRoles: cr, Log: e.log}).Run)

	get, list, secrets := `{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}`, `{"apiGroups":[""],"resources":["pods"],"verbs":["list"]}`,
		`{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}`
	wait("agg", "["+get+","+list+","+secrets+"]")
	o, _ := e.api.Get(cr, "", "agg")
	mf, _ := json.Marshal(o["metadata"].(map[string]any)["managedFields"])
	if want := `"manager":"` + AggregationManager + `"`; !strings.Contains(string(mf), want) {
		t.Errorf("managedFields %s lack %s", mf, want)
	}

	// A label removed takes its role's rules out; one added brings them.
	if _, err := e.api.Update(ctx, cr, "", "b", "", func(o registry.Object) registry.Object {
		o["metadata"].(map[string]any)["labels"] = map[string]any{"z": "true"}
		return o
	}); err != nil {
		t.Fatal(err)
	}
	wait("agg", "["+list+","+secrets+"]")
	role("c", map[string]any{"y": "true"}, rule("watch", "pods"))
	wait("agg", `[{"apiGroups":[""],"resources":["pods"],"verbs":["watch"]},`+list+","+secrets+"]")
	// Nothing matching leaves an empty list.
	for _, n := range []string{"a", "c"} {
		if _, err := e.api.Delete(ctx, cr, "", n, registry.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wait("agg", "[]")
}
