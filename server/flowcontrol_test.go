package server_test

import (
	"testing"
	"time"
)

// TestFlowControlClassification: every request names the flow schema and
// priority level it was classified into, as upstream's priority and
// fairness names them; each flow schema's status says whether its
// priority level exists, and classification follows changes.
func TestFlowControlClassification(t *testing.T) {
	t.Parallel()
	e := start(t)
	fc := groupPath(e.opts.Brand.Group("flowcontrol.apiserver"), "v1", "", "")
	uid := func(resource, name string) string {
		t.Helper()
		return at(e.do("GET", fc+resource+"/"+name, nil).mustCode(t, 200).obj(t), "metadata", "uid").(string)
	}
	classified := func(what string, r *resp, fs, pl string) {
		t.Helper()
		if got, want := r.header.Values("X-Kubernetes-Pf-Flowschema-Uid"), uid("flowschemas", fs); len(got) != 1 || got[0] != want {
			t.Errorf("%s: flow schema uid %v, want %s's %s", what, got, fs, want)
		}
		if got, want := r.header.Values("X-Kubernetes-Pf-Prioritylevel-Uid"), uid("prioritylevelconfigurations", pl); len(got) != 1 || got[0] != want {
			t.Errorf("%s: priority level uid %v, want %s's %s", what, got, pl, want)
		}
	}
	classified("the administrator", e.do("GET", "/api/v1/namespaces/default/configmaps", nil).mustCode(t, 200), "exempt", "exempt")
	classified("a probe", e.send(req{method: "GET", path: "/readyz", token: aliceToken}).mustCode(t, 200), "probes", "exempt")
	// Classified before authorization, as upstream: a refusal says where
	// it was classified too.
	classified("an impersonated user", e.do("GET", "/api/v1/namespaces/default/configmaps", nil, "Impersonate-User", "dave"), "global-default", "global-default")
	if r := e.send(req{method: "GET", path: "/api/v1/namespaces", token: "not-a-token"}).mustCode(t, 401); r.header.Get("X-Kubernetes-Pf-Flowschema-Uid") != "" {
		t.Errorf("401: classified %v, want no headers: unauthenticated requests are not", r.header)
	}

	// The bootstrap schemas' levels all exist.
	const manager = "api-priority-and-fairness-config-consumer-v1"
	eventually(t, "the exempt flow schema's Dangling condition", func() bool {
		return at(e.do("GET", fc+"flowschemas/exempt", nil).mustCode(t, 200).obj(t), "status", "conditions") != nil
	})
	exempt := e.do("GET", fc+"flowschemas/exempt", nil).mustCode(t, 200).obj(t)
	cond := at(exempt, "status", "conditions", 0).(map[string]any)
	if cond["type"] != "Dangling" || cond["status"] != "False" || cond["reason"] != "Found" ||
		cond["message"] != `This FlowSchema references the PriorityLevelConfiguration object named "exempt" and it exists` || cond["lastTransitionTime"] == nil {
		t.Errorf("exempt: condition %v", cond)
	}
	var entry map[string]any
	for _, m := range at(exempt, "metadata", "managedFields").([]any) {
		if m := m.(map[string]any); m["manager"] == manager {
			entry = m
		}
	}
	if entry == nil || entry["operation"] != "Apply" || entry["subresource"] != "status" {
		t.Errorf("exempt: managed fields %v, want an Apply of status by %s", at(exempt, "metadata", "managedFields"), manager)
	}

	// A schema naming a level that does not exist is dangling, and
	// classifies nothing until the level is made.
	e.do("POST", fc+"flowschemas", map[string]any{"metadata": map[string]any{"name": "daves"}, "spec": map[string]any{
		"priorityLevelConfiguration": map[string]any{"name": "daves-level"}, "matchingPrecedence": 500,
		"rules": []any{map[string]any{
			"subjects":         []any{map[string]any{"kind": "User", "user": map[string]any{"name": "dave"}}},
			"nonResourceRules": []any{map[string]any{"verbs": []any{"*"}, "nonResourceURLs": []any{"*"}}},
			"resourceRules": []any{map[string]any{"verbs": []any{"*"}, "apiGroups": []any{"*"}, "resources": []any{"*"},
				"clusterScope": true, "namespaces": []any{"*"}}}}}}}).mustCode(t, 201)
	dangling := func(want string) func() bool {
		return func() bool {
			c, _ := at(e.do("GET", fc+"flowschemas/daves", nil).mustCode(t, 200).obj(t), "status", "conditions", 0).(map[string]any)
			return c != nil && c["status"] == want
		}
	}
	eventually(t, "daves dangling", dangling("True"))
	c := at(e.do("GET", fc+"flowschemas/daves", nil).mustCode(t, 200).obj(t), "status", "conditions", 0).(map[string]any)
	if c["reason"] != "NotFound" || c["message"] != `This FlowSchema references the PriorityLevelConfiguration object named "daves-level" but there is no such object` {
		t.Errorf("daves: condition %v", c)
	}
	classified("a user of a dangling schema", e.do("GET", "/version", nil, "Impersonate-User", "dave"), "global-default", "global-default")

	e.do("POST", fc+"prioritylevelconfigurations", map[string]any{"metadata": map[string]any{"name": "daves-level"}, "spec": map[string]any{
		"type": "Limited", "limited": map[string]any{"limitResponse": map[string]any{"type": "Reject"}}}}).mustCode(t, 201)
	eventually(t, "daves found", dangling("False"))
	eventually(t, "dave classified by his schema", func() bool {
		r := e.do("GET", "/version", nil, "Impersonate-User", "dave")
		return r.header.Get("X-Kubernetes-Pf-Flowschema-Uid") == uid("flowschemas", "daves")
	})
	classified("dave", e.do("GET", "/version", nil, "Impersonate-User", "dave"), "daves", "daves-level")
}

// TestLegacyTokenTracking: the ConfigMap dating the tracking of legacy
// service-account tokens exists with the day it was made, and a date
// that does not parse is set to today's, as upstream's API server keeps
// it.
func TestLegacyTokenTracking(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.opts.Brand
	path := "/api/v1/namespaces/" + b.SystemNamespace + "/configmaps/" + b.LegacyTokenTrackingConfigMap
	var cm map[string]any
	eventually(t, "the tracking ConfigMap", func() bool {
		r := e.do("GET", path, nil)
		if r.code == 200 {
			cm = r.obj(t)
		}
		return r.code == 200
	})
	since, _ := at(cm, "data", "since").(string)
	day, err := time.Parse("2006-01-02", since)
	if err != nil || time.Since(day) > 48*time.Hour || time.Until(day) > 24*time.Hour {
		t.Fatalf("since %q (%v), want today's date", since, err)
	}
	if d := at(cm, "data").(map[string]any); len(d) != 1 {
		t.Errorf("data %v, want only since", d)
	}
	cm["data"] = map[string]any{"since": "last tuesday", "note": "kept"}
	e.do("PUT", path, cm).mustCode(t, 200)
	eventually(t, "the date repaired", func() bool {
		s, _ := at(e.do("GET", path, nil).mustCode(t, 200).obj(t), "data", "since").(string)
		_, err := time.Parse("2006-01-02", s)
		return err == nil
	})
	if note := at(e.do("GET", path, nil).mustCode(t, 200).obj(t), "data", "note"); note != "kept" {
		t.Errorf("other data %v, want it left", note)
	}
}
