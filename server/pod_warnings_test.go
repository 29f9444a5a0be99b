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
