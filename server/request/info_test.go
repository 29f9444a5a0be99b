package request

import (
	"net/url"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		method, url                              string
		resource                                 bool
		verb, ns, res, sub, name, group, version string
	}{
		{"GET", "/api/v1/namespaces/ns/pods", true, "list", "ns", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods?watch=1", true, "watch", "ns", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods?watch=true&fieldSelector=metadata.name%3Dp1", true, "watch", "ns", "pods", "", "p1", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3D%3Dp1", true, "list", "ns", "pods", "", "p1", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name!%3Dp1", true, "list", "ns", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/watch/namespaces/ns/pods/p1", true, "watch", "ns", "pods", "", "p1", "", "v1"},
		{"DELETE", "/apis/apps/v1/namespaces/ns/deployments", true, "deletecollection", "ns", "deployments", "", "", "apps", "v1"},
		{"PUT", "/api/v1/namespaces/ns/pods/p1/status", true, "update", "ns", "pods", "status", "p1", "", "v1"},
		{"GET", "/api/v1/namespaces/ns", true, "get", "ns", "namespaces", "", "ns", "", "v1"},
		{"PUT", "/api/v1/namespaces/ns/finalize", true, "update", "ns", "namespaces", "finalize", "ns", "", "v1"},
		{"POST", "/api/v1/namespaces/ns/serviceaccounts/sa/token", true, "create", "ns", "serviceaccounts", "token", "sa", "", "v1"},
		{"GET", "/api/v1/configmaps", true, "list", "", "configmaps", "", "", "", "v1"},
		{"PATCH", "/api/v1/namespaces/ns/configmaps/c", true, "patch", "ns", "configmaps", "", "c", "", "v1"},
		{"GET", "/apis/rbac.example.com/v1", false, "get", "", "", "", "", "", ""},
		{"GET", "/api/v1", false, "get", "", "", "", "", "", ""},
		{"GET", "/healthz", false, "get", "", "", "", "", "", ""},
		{"POST", "/logs", false, "post", "", "", "", "", "", ""},
	}
	for _, c := range cases {
		u, _ := url.Parse(c.url)
		i := Parse(c.method, u)
		got := []string{i.Verb, i.Namespace, i.Resource, i.Subresource, i.Name, i.Group, i.Version}
		want := []string{c.verb, c.ns, c.res, c.sub, c.name, c.group, c.version}
		if i.IsResource != c.resource || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s %s: resource=%v %q, want resource=%v %q", c.method, c.url, i.IsResource, got, c.resource, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"/api/v1/namespaces/ns/pods?watch=1", "/apis/g/v/x/y/z", "/api/v1/watch/namespaces/", "//api//v1", "/apis/a/b/c?fieldSelector=metadata.name%3D"} {
		f.Add("GET", s)
	}
	f.Fuzz(func(t *testing.T, method, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		i := Parse(method, u)
		if i.IsResource && i.Version == "" {
			t.Errorf("resource request without version: %+v", i)
		}
		if i.NameFromSelector && strings.ContainsAny(i.Name, "/%") {
			t.Errorf("selector name %q is not a path segment", i.Name)
		}
	})
}
