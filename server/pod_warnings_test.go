package server_test

import (
	"slices"
	"testing"
)

// Deprecated pod fields warn on create and update, also in workload
// templates, as upstream.
func TestPodDeprecationWarnings(t *testing.T) {
	t.Parallel()
	e := start(t)
	spec := `"spec":{"volumes":[{"name":"src","gitRepo":{"repository":"https://example.com/r.git"}}],"containers":[{"name":"c","image":"busybox","env":[{"name":"A","value":"1"},{"name":"A","value":"2"}]}]}`
	want := []string{
		`299 - "spec.volumes[0].gitRepo: deprecated in v1.11"`,
		`299 - "spec.containers[0].env[1]: hides previous definition of \"A\", which may be dropped when using apply"`,
	}
	r := e.do("POST", podsPath, `{"metadata":{"name":"old"},`+spec+`}`).mustCode(t, 201)
	if got := r.header.Values("Warning"); !slices.Equal(got, want) {
		t.Errorf("create warnings %q", got)
	}
	r = e.do("PATCH", podsPath+"/old", `{"metadata":{"labels":{"a":"b"}}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	if got := r.header.Values("Warning"); !slices.Equal(got, want) {
		t.Errorf("update warnings %q", got)
	}
	r = e.do("POST", "/apis/apps/v1/namespaces/default/deployments", `{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},`+spec+`}}}`).mustCode(t, 201)
	if got := r.header.Values("Warning"); len(got) != 2 || got[0] != `299 - "spec.template.spec.volumes[0].gitRepo: deprecated in v1.11"` {
		t.Errorf("deployment warnings %q", got)
	}
}

// TestCreateWarningsOnlyWhenValid: a create earns its type's warnings (a
// workload named other than a DNS label, deprecated pod fields) only once
// the object is valid, as upstream warns after validation.
func TestCreateWarningsOnlyWhenValid(t *testing.T) {
	t.Parallel()
	e := start(t)
	deployments := "/apis/apps/v1/namespaces/default/deployments"
	deployment := func(name, containers string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},` +
			`"spec":{"volumes":[{"name":"src","gitRepo":{"repository":"r"}}],"containers":` + containers + `}}}}`
	}
	nameWarning := `299 - "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]"`
	r := e.do("POST", deployments, deployment("web.v1", `[{"name":"c","image":"busybox"}]`)).mustCode(t, 201)
	if got, want := r.header.Values("Warning"), []string{nameWarning, `299 - "spec.template.spec.volumes[0].gitRepo: deprecated in v1.11"`}; !slices.Equal(got, want) {
		t.Errorf("valid deployment warnings %q, want %q", got, want)
	}
	for _, body := range []string{
		deployment("Web.v1", `[{"name":"c","image":"busybox"}]`),
		deployment("web.v2", `[]`),
	} {
		r := e.do("POST", deployments, body).mustCode(t, 422)
		if got := r.header.Values("Warning"); len(got) > 0 {
			t.Errorf("invalid deployment warned %q", got)
		}
	}
	if got := e.do("GET", deployments+"/web.v2", nil).code; got != 404 {
		t.Errorf("invalid deployment stored: %d", got)
	}
}
