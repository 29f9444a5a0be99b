package security

import (
	"context"
	"reflect"
	"testing"

	"platd/config"
)

func TestABACAuthorize(t *testing.T) {
	t.Parallel()
	z := NewABAC([]config.ABACPolicy{
		{User: "alice", Namespace: "ns1", Resource: "*", APIGroup: "*", Readonly: true},
		{Group: "dev", Namespace: "*", Resource: "deployments", APIGroup: "apps"},
		{User: "bob", Group: "ops", Namespace: "*", Resource: "*", APIGroup: "*"},
		{Group: AllAuthenticated, Readonly: true, NonResourcePath: "/apis*"},
		{User: "carol", NonResourcePath: "/healthz"},
		{Namespace: "*", Resource: "*", APIGroup: "*"}, // no subject: matches no one
		{User: "*", NonResourcePath: "*"},              // as parsed only from code: "*" user matches anyone
	})
	alice := &User{Name: "alice", Groups: []string{AllAuthenticated}}
	dev := &User{Name: "dan", Groups: []string{"dev", AllAuthenticated}}
	bob := &User{Name: "bob", Groups: []string{AllAuthenticated}}
	bobOps := &User{Name: "bob", Groups: []string{"ops", AllAuthenticated}}
	carol := &User{Name: "carol", Groups: []string{AllAuthenticated}}
	anon := &User{Name: Anonymous, Groups: []string{AllUnauthenticated}}
	res := func(u *User, verb, ns, group, resource, sub string) Attributes {
		return Attributes{User: u, Verb: verb, Namespace: ns, APIGroup: group, Resource: resource, Subresource: sub, ResourceRequest: true}
	}
	path := func(u *User, verb, p string) Attributes { return Attributes{User: u, Verb: verb, Path: p} }
	tests := []struct {
		name string
		a    Attributes
		want Decision
	}{
		{"readonly get in its namespace", res(alice, "get", "ns1", "", "pods", ""), DecisionAllow},
		{"readonly list and watch", res(alice, "watch", "ns1", "apps", "deployments", ""), DecisionAllow},
		{"subresource is not looked at", res(alice, "get", "ns1", "", "pods", "log"), DecisionAllow},
		{"readonly refuses create", res(alice, "create", "ns1", "", "pods", ""), DecisionNoOpinion},
		{"readonly refuses delete", res(alice, "delete", "ns1", "", "pods", ""), DecisionNoOpinion},
		{"other namespace", res(alice, "get", "ns2", "", "pods", ""), DecisionNoOpinion},
		{"cluster scope is namespace empty", res(alice, "get", "", "", "nodes", ""), DecisionNoOpinion},
		{"group line, any verb", res(dev, "delete", "x", "apps", "deployments", ""), DecisionAllow},
		{"group line, other API group", res(dev, "delete", "x", "extensions", "deployments", ""), DecisionNoOpinion},
		{"group line, other resource", res(dev, "get", "x", "apps", "replicasets", ""), DecisionNoOpinion},
		{"user and group both required: user only", res(bob, "create", "x", "", "pods", ""), DecisionNoOpinion},
		{"user and group both required: both", res(bobOps, "create", "", "", "nodes", ""), DecisionAllow},
		{"path prefix", path(carol, "get", "/apis/apps/v1"), DecisionAllow},
		{"path prefix readonly", path(carol, "post", "/apis/apps/v1"), DecisionAllow},
		{"exact path any verb", path(carol, "post", "/healthz"), DecisionAllow},
		{"exact path does not prefix", path(carol, "post", "/healthz/ping"), DecisionAllow},
		{"the star user line allows any path", path(alice, "put", "/version"), DecisionAllow},
		{"nil user", Attributes{Verb: "get", Path: "/x"}, DecisionNoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, reason, err := z.Authorize(context.Background(), tt.a)
			if err != nil || d != tt.want {
				t.Fatalf("got %v %q %v, want %v", d, reason, err, tt.want)
			}
			wantReason := ""
			if d == DecisionNoOpinion {
				wantReason = "No policy matched."
			}
			if reason != wantReason {
				t.Fatalf("reason %q, want %q", reason, wantReason)
			}
		})
	}
	// Without the "*" line the anonymous user and other paths fall through.
	strict := NewABAC([]config.ABACPolicy{{Group: AllAuthenticated, Readonly: true, NonResourcePath: "/apis*"}, {User: "carol", NonResourcePath: "/healthz"}})
	for _, a := range []Attributes{path(anon, "get", "/apis"), path(carol, "post", "/healthz/ping"), path(carol, "post", "/apis"), res(carol, "get", "", "", "pods", "")} {
		if d, reason, _ := strict.Authorize(context.Background(), a); d != DecisionNoOpinion || reason != ABACNoMatchReason {
			t.Errorf("%+v: %v %q", a, d, reason)
		}
	}
	if d, _, _ := strict.Authorize(context.Background(), path(carol, "get", "/apis/x")); d != DecisionAllow {
		t.Errorf("prefix path: %v", d)
	}
}

func TestABACRulesFor(t *testing.T) {
	t.Parallel()
	z := NewABAC([]config.ABACPolicy{
		{User: "alice", Namespace: "ns1", Resource: "pods", APIGroup: "", Readonly: true},
		{User: "alice", Namespace: "*", Resource: "*", APIGroup: "*", NonResourcePath: "*"},
		{User: "alice", Namespace: "ns2", Resource: "secrets", APIGroup: ""},
		{User: "bob", Namespace: "*", Resource: "*", APIGroup: "*"},
		{Group: AllAuthenticated, Readonly: true, NonResourcePath: "/healthz"},
	})
	alice := &User{Name: "alice", Groups: []string{AllAuthenticated}}
	rules, incomplete, err := z.RulesFor(context.Background(), alice, "ns1")
	if err != nil || incomplete {
		t.Fatal(incomplete, err)
	}
	want := Rules{
		Resource: []ResourceRule{
			{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}},
			{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
		},
		// The /healthz line has no namespace: as upstream, it is listed
		// only for the namespace "".
		NonResource: []NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
	}
	if !reflect.DeepEqual(rules, want) {
		t.Fatalf("rules %+v\nwant %+v", rules, want)
	}
	rules, _, _ = z.RulesFor(context.Background(), &User{Name: "carol", Groups: []string{AllAuthenticated}}, "")
	want = Rules{NonResource: []NonResourceRule{{Verbs: []string{"get", "list", "watch"}, NonResourceURLs: []string{"/healthz"}}}}
	if !reflect.DeepEqual(rules, want) {
		t.Fatalf("cluster rules %+v\nwant %+v", rules, want)
	}
	anon := &User{Name: Anonymous, Groups: []string{AllUnauthenticated}}
	if rules, _, _ := z.RulesFor(context.Background(), anon, "ns1"); len(rules.Resource)+len(rules.NonResource) != 0 {
		t.Fatalf("anonymous rules %+v", rules)
	}
}
