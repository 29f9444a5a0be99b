package server_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// rootPaths reads GET path as a RootPaths listing, checking the form
// upstream's index writes: 200, application/json, indented by two spaces,
// no trailing newline, and the paths sorted with no repeats.
func rootPaths(t *testing.T, e *env, path string) []string {
	t.Helper()
	r := e.do("GET", path, nil).mustCode(t, 200)
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q", path, ct)
	}
	var doc struct {
		Paths []string `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, r.body)
	}
	if indented, _ := json.MarshalIndent(doc, "", "  "); !bytes.Equal(indented, r.body) {
		t.Errorf("%s: body is not the two-space indented listing:\n%s", path, r.body)
	}
	if !slices.IsSorted(doc.Paths) || len(slices.Compact(slices.Clone(doc.Paths))) != len(doc.Paths) {
		t.Errorf("%s: paths not sorted and unique: %q", path, doc.Paths)
	}
	return doc.Paths
}

// GET / lists the paths a client can start from, as upstream's index: the
// discovery documents of every served group and group-version, the fixed
// documents, and each health endpoint with each of its checks. Every path
// listed answers, and groups added while serving (a CRD's, an APIService
// naming a service) are listed from the next request.
func TestRootPaths(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	paths := rootPaths(t, e, "/")
	if again := rootPaths(t, e, "/index.html"); !slices.Equal(again, paths) {
		t.Errorf("/index.html lists %q\nwant %q", again, paths)
	}
	for _, want := range []string{
		"/api", "/api/v1", "/apis", "/apis/",
		"/apis/apps", "/apis/apps/v1",
		"/apis/autoscaling", "/apis/autoscaling/v1", "/apis/autoscaling/v2",
		"/apis/" + b.Group("apiextensions"), "/apis/" + b.Group("apiextensions") + "/v1",
		"/healthz", "/healthz/etcd", "/livez", "/livez/ping", "/readyz", "/readyz/informer-sync", "/readyz/shutdown",
		"/healthz/poststarthook/start-apiextensions-controllers",
		"/metrics", "/openapi/v2", "/openapi/v3", "/openapi/v3/", "/version",
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("%s is not listed", want)
		}
	}
	for _, p := range paths {
		if r := e.do("GET", p, nil); r.code != 200 {
			t.Errorf("listed %s answers %d: %.200s", p, r.code, r.body)
		}
	}
	if r := e.do("HEAD", "/", nil).mustCode(t, 200); len(r.body) != 0 {
		t.Errorf("HEAD / has a body: %q", r.body)
	}

	e.do("POST", crdPath, gadgetCRD("roots.example.com")).mustCode(t, 201)
	e.do("POST", groupPath(b.Group("apiregistration"), "v1", "", "apiservices"), map[string]any{
		"metadata": map[string]any{"name": "v1beta1.remote.example.com"},
		"spec": map[string]any{"group": "remote.example.com", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 10,
			"service": map[string]any{"namespace": "default", "name": "backend"}},
	}).mustCode(t, 201)
	after := rootPaths(t, e, "/")
	for _, want := range []string{"/apis/roots.example.com", "/apis/roots.example.com/v1", "/apis/roots.example.com/v2",
		"/apis/remote.example.com", "/apis/remote.example.com/v1beta1"} {
		if !slices.Contains(after, want) {
			t.Errorf("%s is not listed once added", want)
		}
	}
	if len(after) != len(paths)+5 {
		t.Errorf("listing grew from %d to %d paths, want 5 more", len(paths), len(after))
	}
}
