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
		// Every example of the upstream table.
		{"GET", "/api/v1/namespaces/ns/pods", true, "list", "ns", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods?watch=1", true, "watch", "ns", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods?watch=true&fieldSelector=metadata.name%3Dp1", true, "watch", "ns", "pods", "", "p1", "", "v1"},
		{"GET", "/api/v1/watch/namespaces/ns/pods/p1", true, "watch", "ns", "pods", "", "p1", "", "v1"},
		{"DELETE", "/apis/apps/v1/namespaces/ns/deployments", true, "deletecollection", "ns", "deployments", "", "", "apps", "v1"},
		{"PUT", "/api/v1/namespaces/ns/pods/p1/status", true, "update", "ns", "pods", "status", "p1", "", "v1"},
		{"GET", "/api/v1/namespaces/ns", true, "get", "ns", "namespaces", "", "ns", "", "v1"},
		{"PUT", "/api/v1/namespaces/ns/finalize", true, "update", "ns", "namespaces", "finalize", "ns", "", "v1"},
		{"GET", "/api/v1/nodes/n1/proxy/stats", true, "get", "", "nodes", "proxy", "n1", "", "v1"},
		{"GET", "/api/v1/proxy/namespaces/ns/pods/p1/x", true, "proxy", "ns", "pods", "", "p1", "", "v1"},
		{"POST", "/api/v1/namespaces/ns/serviceaccounts/sa/token", true, "create", "ns", "serviceaccounts", "token", "sa", "", "v1"},
		{"GET", "/apis/rbac.example.com/v1", false, "get", "", "", "", "", "", ""},
		{"GET", "/healthz", false, "get", "", "", "", "", "", ""},
		{"POST", "/logs", false, "post", "", "", "", "", "", ""},
		// Method verbs.
		{"HEAD", "/api/v1/namespaces/ns/pods/p1", true, "get", "ns", "pods", "", "p1", "", "v1"},
		{"PATCH", "/api/v1/namespaces/ns/configmaps/c", true, "patch", "ns", "configmaps", "", "c", "", "v1"},
		{"DELETE", "/api/v1/namespaces/ns/configmaps/c", true, "delete", "ns", "configmaps", "", "c", "", "v1"},
		{"POST", "/api/v1/namespaces/ns/configmaps", true, "create", "ns", "configmaps", "", "", "", "v1"},
		{"OPTIONS", "/api/v1/namespaces/ns/configmaps", true, "", "ns", "configmaps", "", "", "", "v1"},
		{"DELETE", "/api/v1/namespaces", true, "deletecollection", "", "namespaces", "", "", "", "v1"},
		{"GET", "/api/v1/configmaps", true, "list", "", "configmaps", "", "", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/status", true, "get", "ns", "namespaces", "status", "ns", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods/p1/log/extra", true, "get", "ns", "pods", "log", "p1", "", "v1"},
		// watch from the query: anything but 0 and false in any case.
		{"GET", "/api/v1/pods?watch=0", true, "list", "", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/pods?watch=FALSE", true, "list", "", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/pods?watch=f", true, "watch", "", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/pods?watch=", true, "watch", "", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/watch/pods?watch=0", true, "watch", "", "pods", "", "", "", "v1"},
		// A field selector pinning metadata.name names the object.
		{"GET", "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3D%3Dp1", true, "list", "ns", "pods", "", "p1", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dp1,spec.nodeName%3Dn", true, "list", "ns", "pods", "", "p1", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name!%3Dp1", true, "list", "ns", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3D..", true, "list", "ns", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dp%3D1", true, "list", "ns", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/watch/namespaces/ns/pods?fieldSelector=metadata.name%3Dp1", true, "watch", "ns", "pods", "", "", "", "v1"},
		// A query upstream cannot decode names nothing.
		{"GET", "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dp1&labelSelector=a+in+(b", true, "list", "ns", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dp1&limit=x", true, "list", "ns", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods?watch=1&fieldSelector=metadata.name%3Dp1&timeoutSeconds=1.5", true, "watch", "ns", "pods", "", "", "", "v1"},
		{"GET", "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Dp1&limit=5&labelSelector=a%3Db", true, "list", "ns", "pods", "", "p1", "", "v1"},
		// Non-resource requests.
		{"GET", "/api/v1", false, "get", "", "", "", "", "", ""},
		{"GET", "/apis/apps", false, "get", "", "", "", "", "", ""},
		{"PUT", "/version", false, "put", "", "", "", "", "", ""},
		{"DELETE", "/foo/bar/baz", false, "delete", "", "", "", "", "", ""},
	}
	for _, c := range cases {
		u, _ := url.Parse(c.url)
		i := Parse(c.method, u)
		got := []string{i.Verb, i.Namespace, i.Resource, i.Subresource, i.Name, i.Group, i.Version}
		want := []string{c.verb, c.ns, c.res, c.sub, c.name, c.group, c.version}
		if i.IsResource != c.resource || i.Err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s %s: resource=%v %q err %v, want resource=%v %q", c.method, c.url, i.IsResource, got, i.Err, c.resource, want)
		}
	}
}

// A verb the path names must be followed by something.
func TestParseVerbViaPathAlone(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"/api/v1/watch", "/apis/apps/v1/proxy/", "/api/v1/watch?x=1"} {
		u, _ := url.Parse(raw)
		i := Parse("GET", u)
		want := "unable to determine kind and namespace from url, " + raw
		if i.Err == nil || i.Err.Error() != want {
			t.Errorf("%s: err %v, want %q", raw, i.Err, want)
		}
	}
}

// The selectors of a collection read are kept for authorization; those of
// other verbs, and of the verb-via-path form, are not.
func TestParseSelectors(t *testing.T) {
	t.Parallel()
	const q = "?fieldSelector=spec.nodeName%3Dn1&labelSelector=app%3Dweb"
	for _, c := range []struct {
		method, url string
		kept        bool
	}{
		{"GET", "/api/v1/pods" + q, true},
		{"GET", "/api/v1/namespaces/ns/pods" + q + "&watch=1", true},
		{"DELETE", "/api/v1/namespaces/ns/pods" + q, true},
		{"GET", "/api/v1/namespaces/ns/pods/p1" + q, false},
		{"DELETE", "/api/v1/namespaces/ns/pods/p1" + q, false},
		{"POST", "/api/v1/namespaces/ns/pods" + q, false},
		{"GET", "/api/v1/watch/namespaces/ns/pods" + q, false},
		{"GET", "/healthz" + q, false},
	} {
		u, _ := url.Parse(c.url)
		i := Parse(c.method, u)
		got := i.FieldSelector + "|" + i.LabelSelector
		want := "|"
		if c.kept {
			want = "spec.nodeName=n1|app=web"
		}
		if got != want {
			t.Errorf("%s %s: selectors %q, want %q", c.method, c.url, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"/api/v1/namespaces/ns/pods?watch=1", "/apis/g/v/x/y/z", "/api/v1/watch/namespaces/", "//api//v1", "/apis/a/b/c?fieldSelector=metadata.name%3D", "/api/v1/proxy", "/api/v1/pods?labelSelector=a%20in%20(b"} {
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
		if i.Err != nil && i.IsResource && i.Resource != "" {
			t.Errorf("error %v on a request that names a resource: %+v", i.Err, i)
		}
	})
}
