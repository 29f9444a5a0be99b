package discovery

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// coreDescriptors are the core resources the golden captures are trimmed
// to, described as the built-in registry describes them.
func coreDescriptors() []*registry.Descriptor {
	status := []string{"get", "patch", "update"}
	return []*registry.Descriptor{
		{Version: "v1", Kind: "ConfigMap", ListKind: "ConfigMapList", Resource: "configmaps", Singular: "configmap", Namespaced: true, ShortNames: []string{"cm"}, Verbs: allVerbs},
		{Version: "v1", Kind: "Namespace", ListKind: "NamespaceList", Resource: "namespaces", Singular: "namespace", ShortNames: []string{"ns"},
			Verbs:        []string{"watch", "create", "delete", "get", "list", "patch", "update"}, // unsorted on purpose
			Subresources: []registry.Subresource{{Name: "status", Verbs: status}, {Name: "finalize", Verbs: []string{"update"}}}},
		{Version: "v1", Kind: "Secret", ListKind: "SecretList", Resource: "secrets", Singular: "secret", Namespaced: true, Verbs: allVerbs},
		{Version: "v1", Kind: "ServiceAccount", ListKind: "ServiceAccountList", Resource: "serviceaccounts", Singular: "serviceaccount", Namespaced: true, ShortNames: []string{"sa"}, Verbs: allVerbs},
		{Version: "v1", Kind: "LimitRange", ListKind: "LimitRangeList", Resource: "limitranges", Singular: "limitrange", Namespaced: true, ShortNames: []string{"limits"}, Verbs: allVerbs},
		{Version: "v1", Kind: "Event", ListKind: "EventList", Resource: "events", Singular: "event", Namespaced: true, ShortNames: []string{"ev"}, Verbs: allVerbs},
	}
}

// rbacDescriptors are the four RBAC kinds in the brand's group.
func rbacDescriptors(b config.Brand) []*registry.Descriptor {
	g := b.Group("rbac.authorization")
	mk := func(kind, res string, ns bool) *registry.Descriptor {
		return &registry.Descriptor{Group: g, Version: "v1", Kind: kind, ListKind: kind + "List", Resource: res + "s", Singular: res, Namespaced: ns, Verbs: allVerbs}
	}
	return []*registry.Descriptor{
		mk("Role", "role", true), mk("RoleBinding", "rolebinding", true),
		mk("ClusterRole", "clusterrole", false), mk("ClusterRoleBinding", "clusterrolebinding", false),
	}
}

func mustBrand(t *testing.T, name string) config.Brand {
	t.Helper()
	b, err := config.LookupBrand(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newTestHandler serves the core and RBAC fixtures in brand.
func newTestHandler(t *testing.T, brand string) (*Handler, *registry.Registry) {
	t.Helper()
	b := mustBrand(t, brand)
	reg := registry.New()
	for _, d := range coreDescriptors() {
		reg.Add(d)
	}
	for _, d := range rbacDescriptors(b) {
		reg.Add(d)
	}
	cat, err := schema.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	return New(reg, b, Options{Version: goldenVersion, Schema: cat.Schema}), reg
}

// goldenVersion is the build the golden captures report.
var goldenVersion = VersionInfo{
	GitVersion: "v1.32.0-beta.0+master-2024-11",
	GitCommit:  "cd13ec4ae44e35ce12aefbb05627be4474ff2b1f",
	BuildDate:  "2026-11-21T22:32:01Z",
	GoVersion:  "go1.26.8",
	Compiler:   "gc",
	Platform:   "linux/amd64",
}

// get performs a request against h the way curl did in the captures.
func get(h http.Handler, path string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.Host = "127.0.0.1:6443"
	r.Header.Set("User-Agent", "curl/7.88.1")
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// goldenCapture returns the headers and body of a captured response.
func goldenCapture(t *testing.T, name string) (http.Header, []byte) {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		t.Fatalf("%s: no header/body separator", name)
	}
	hdr := http.Header{}
	for i, line := range bytes.Split(head, []byte("\n")) {
		if i == 0 {
			continue
		}
		k, v, _ := bytes.Cut(line, []byte(": "))
		hdr.Add(string(k), string(v))
	}
	return hdr, body
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }
