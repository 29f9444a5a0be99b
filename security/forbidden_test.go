package security

import (
	"testing"

	"platd/config"
)

// The expected strings of the first cases are the messages of the upstream
// captures errors/forbidden-*.resp.
func TestForbiddenMessage(t *testing.T) {
	t.Parallel()
	kube, err := config.LookupBrand("kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	plat, err := config.LookupBrand("plat")
	if err != nil {
		t.Fatal(err)
	}
	alice := &User{Name: "alice"}
	anon := &User{Name: Anonymous, Groups: []string{AllUnauthenticated}}
	res := func(u *User, verb, group, resource, sub, ns, name string) Attributes {
		return Attributes{User: u, Verb: verb, APIGroup: group, APIVersion: "v1", Resource: resource, Subresource: sub, Namespace: ns, Name: name, ResourceRequest: true}
	}
	tests := []struct {
		name   string
		attrs  Attributes
		reason string
		want   string
	}{
		{
			name:  "golden forbidden-list-namespaced",
			attrs: res(alice, "list", "", "configmaps", "", "golden-err", ""),
			want:  `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "golden-err"`,
		},
		{
			name:  "golden forbidden-anonymous",
			attrs: res(anon, "list", "", "configmaps", "", "golden-err", ""),
			want:  `configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "golden-err"`,
		},
		{
			name:  "golden forbidden-create",
			attrs: res(alice, "create", "", "configmaps", "", "golden-err", ""),
			want:  `configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "golden-err"`,
		},
		{
			name:  "golden forbidden-get-named",
			attrs: res(alice, "get", "", "configmaps", "", "golden-err", "exists"),
			want:  `configmaps "exists" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "golden-err"`,
		},
		{
			name:  "golden forbidden-get-cluster-scoped (a namespace is its own namespace)",
			attrs: res(alice, "get", "", "namespaces", "", "golden-err", "golden-err"),
			want:  `namespaces "golden-err" is forbidden: User "alice" cannot get resource "namespaces" in API group "" in the namespace "golden-err"`,
		},
		{
			name:  "golden forbidden-list-cluster-scoped",
			attrs: res(alice, "list", "", "namespaces", "", "", ""),
			want:  `namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope`,
		},
		{
			name:  "golden forbidden-get-rbac-cluster-scoped",
			attrs: res(alice, "get", kube.Group("rbac.authorization"), "clusterroles", "", "", "view"),
			want:  `clusterroles.rbac.authorization.` + kube.Domain + ` "view" is forbidden: User "alice" cannot get resource "clusterroles" in API group "rbac.authorization.` + kube.Domain + `" at the cluster scope`,
		},
		{
			name:  "golden forbidden-nonresource",
			attrs: Attributes{User: alice, Verb: "get", Path: "/metrics"},
			want:  `forbidden: User "alice" cannot get path "/metrics"`,
		},
		{
			name:  "other group in the plat brand",
			attrs: res(alice, "create", plat.Group("rbac.authorization"), "roles", "", "default", ""),
			want:  `roles.rbac.authorization.` + plat.Domain + ` is forbidden: User "alice" cannot create resource "roles" in API group "rbac.authorization.` + plat.Domain + `" in the namespace "default"`,
		},
		{
			name:  "subresource",
			attrs: res(alice, "update", "", "namespaces", "finalize", "", "ns1"),
			want:  `namespaces "ns1" is forbidden: User "alice" cannot update resource "namespaces/finalize" in API group "" at the cluster scope`,
		},
		{
			name:  "anonymous non-resource",
			attrs: Attributes{User: anon, Verb: "get", Path: "/apis"},
			want:  `forbidden: User "system:anonymous" cannot get path "/apis"`,
		},
		{
			name:   "authorizer reason appended",
			attrs:  res(alice, "list", "", "pods", "", "ns1", ""),
			reason: AlwaysDenyReason,
			want:   `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "ns1": Everything is forbidden.`,
		},
		{
			name:  "html characters escaped",
			attrs: Attributes{User: &User{Name: "<b>&co</b>"}, Verb: "get", Path: "/x?a=1&b=<2>"},
			want:  `forbidden: User "&lt;b&gt;&amp;co&lt;/b&gt;" cannot get path "/x?a=1&amp;b=&lt;2&gt;"`,
		},
		{
			name:  "no user",
			attrs: Attributes{Verb: "get", Path: "/"},
			want:  `forbidden: User "" cannot get path "/"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ForbiddenMessage(tt.attrs, tt.reason); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
