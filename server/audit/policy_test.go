package audit

import (
	"slices"
	"testing"

	"platd/config"
	"platd/security"
)

func ptr[T any](v T) *T { return &v }

func TestPolicyEvaluate(t *testing.T) {
	t.Parallel()
	alice := &security.User{Name: "alice", Groups: []string{"devs", "system:authenticated"}}
	bob := &security.User{Name: "bob", Groups: []string{"system:authenticated"}}
	res := func(u *security.User, verb, group, ns, resource, sub, name string) *security.Attributes {
		return &security.Attributes{User: u, Verb: verb, ResourceRequest: true, APIGroup: group, APIVersion: "v1",
			Namespace: ns, Resource: resource, Subresource: sub, Name: name}
	}
	nonRes := func(u *security.User, path string) *security.Attributes {
		return &security.Attributes{User: u, Verb: "get", Path: path}
	}
	cases := []struct {
		name string
		rule config.AuditRule
		a    *security.Attributes
		want bool
	}{
		{"empty rule matches all", config.AuditRule{}, nonRes(nil, "/x"), true},
		{"user", config.AuditRule{Users: []string{"alice"}}, res(alice, "get", "", "a", "pods", "", "p"), true},
		{"other user", config.AuditRule{Users: []string{"alice"}}, res(bob, "get", "", "a", "pods", "", "p"), false},
		{"users need a user", config.AuditRule{Users: []string{"alice"}}, nonRes(nil, "/x"), false},
		{"group", config.AuditRule{UserGroups: []string{"devs"}}, res(alice, "get", "", "a", "pods", "", ""), true},
		{"other group", config.AuditRule{UserGroups: []string{"devs"}}, res(bob, "get", "", "a", "pods", "", ""), false},
		{"verb", config.AuditRule{Verbs: []string{"create", "get"}}, res(bob, "get", "", "a", "pods", "", ""), true},
		{"other verb", config.AuditRule{Verbs: []string{"create"}}, res(bob, "get", "", "a", "pods", "", ""), false},
		{"namespace", config.AuditRule{Namespaces: []string{"a"}}, res(bob, "get", "", "a", "pods", "", ""), true},
		{"other namespace", config.AuditRule{Namespaces: []string{"a"}}, res(bob, "get", "", "b", "pods", "", ""), false},
		{"empty namespace is cluster scope", config.AuditRule{Namespaces: []string{""}}, res(bob, "get", "", "", "nodes", "", ""), true},
		{"empty namespace misses namespaced", config.AuditRule{Namespaces: []string{""}}, res(bob, "get", "", "a", "pods", "", ""), false},
		{"namespaces miss non-resource", config.AuditRule{Namespaces: []string{""}}, nonRes(bob, "/x"), false},
		{"group only", config.AuditRule{Resources: []config.AuditGroupResources{{Group: "apps"}}}, res(bob, "get", "apps", "a", "deployments", "", ""), true},
		{"core group is empty", config.AuditRule{Resources: []config.AuditGroupResources{{Group: ""}}}, res(bob, "get", "apps", "a", "deployments", "", ""), false},
		{"resource", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"pods"}}}}, res(bob, "get", "", "a", "pods", "", ""), true},
		{"resource misses its subresource", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"pods"}}}}, res(bob, "get", "", "a", "pods", "log", "p"), false},
		{"resource/sub", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"pods/log"}}}}, res(bob, "get", "", "a", "pods", "log", "p"), true},
		{"star", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"*"}}}}, res(bob, "get", "", "a", "pods", "log", "p"), true},
		{"star/sub", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"*/status"}}}}, res(bob, "update", "", "a", "pods", "status", "p"), true},
		{"star/sub other sub", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"*/status"}}}}, res(bob, "get", "", "a", "pods", "log", "p"), false},
		{"star/sub misses main", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"*/status"}}}}, res(bob, "get", "", "a", "pods", "", "p"), false},
		{"resource/star sub", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"pods/*"}}}}, res(bob, "get", "", "a", "pods", "exec", "p"), true},
		{"resource/star main", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"pods/*"}}}}, res(bob, "get", "", "a", "pods", "", "p"), true},
		{"resource/star other", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"pods/*"}}}}, res(bob, "get", "", "a", "services", "", "p"), false},
		{"resourceNames", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"configmaps"}, ResourceNames: []string{"c1"}}}}, res(bob, "get", "", "a", "configmaps", "", "c1"), true},
		{"other name", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"configmaps"}, ResourceNames: []string{"c1"}}}}, res(bob, "get", "", "a", "configmaps", "", "c2"), false},
		{"resourceNames miss lists", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"configmaps"}, ResourceNames: []string{"c1"}}}}, res(bob, "list", "", "a", "configmaps", "", ""), false},
		{"resources miss non-resource", config.AuditRule{Resources: []config.AuditGroupResources{{Resources: []string{"*"}}}}, nonRes(bob, "/healthz"), false},
		{"url", config.AuditRule{NonResourceURLs: []string{"/healthz"}}, nonRes(bob, "/healthz"), true},
		{"url exact", config.AuditRule{NonResourceURLs: []string{"/healthz"}}, nonRes(bob, "/healthz/ping"), false},
		{"url prefix", config.AuditRule{NonResourceURLs: []string{"/healthz*"}}, nonRes(bob, "/healthz/ping"), true},
		{"url star", config.AuditRule{NonResourceURLs: []string{"*"}}, nonRes(bob, "/anything"), true},
		{"urls miss resources", config.AuditRule{NonResourceURLs: []string{"*"}}, res(bob, "get", "", "a", "pods", "", ""), false},
	}
	for _, c := range cases {
		c.rule.Level = config.AuditLevelMetadata
		p := NewPolicy(&config.AuditPolicy{Rules: []config.AuditRule{c.rule}})
		got := p.Evaluate(c.a).Level == LevelMetadata
		if got != c.want {
			t.Errorf("%s: matched %t, want %t", c.name, got, c.want)
		}
	}
}

func TestPolicyFirstRuleWins(t *testing.T) {
	t.Parallel()
	p := NewPolicy(&config.AuditPolicy{
		OmitStages:        []string{config.AuditStageRequestReceived},
		OmitManagedFields: true,
		Rules: []config.AuditRule{
			{Level: config.AuditLevelNone, Verbs: []string{"watch"}},
			{Level: config.AuditLevelRequestResponse, Namespaces: []string{"a"}, OmitStages: []string{config.AuditStagePanic, config.AuditStageRequestReceived}, OmitManagedFields: ptr(false)},
			{Level: config.AuditLevelRequest},
		},
	})
	a := &security.Attributes{Verb: "watch", ResourceRequest: true, Namespace: "a", Resource: "pods"}
	if got := p.Evaluate(a); got.Level != LevelNone {
		t.Errorf("watch: %v", got.Level)
	}
	a.Verb = "get"
	got := p.Evaluate(a)
	if got.Level != LevelRequestResponse || got.OmitManagedFields || !slices.Equal(got.OmitStages, []string{config.AuditStageRequestReceived, config.AuditStagePanic}) {
		t.Errorf("get in a: %+v", got)
	}
	a.Namespace = "b"
	got = p.Evaluate(a)
	if got.Level != LevelRequest || !got.OmitManagedFields || !slices.Equal(got.OmitStages, []string{config.AuditStageRequestReceived}) {
		t.Errorf("get in b: %+v", got)
	}
	if got := NewPolicy(&config.AuditPolicy{Rules: []config.AuditRule{{Level: config.AuditLevelMetadata, Users: []string{"x"}}}}).Evaluate(a); got.Level != LevelNone {
		t.Errorf("no rule matching: %v", got.Level)
	}
}
