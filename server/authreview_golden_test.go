package server_test

import (
	"encoding/json"
	"os"
	"platd/config"
	"testing"
)

// goldenBody reads the body of a v1.32 server's response.
func goldenBody(t *testing.T, file string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("testdata/upstream/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The reviews answer as a v1.32 server does, in the kubernetes brand.
func TestAuthReviewsMatchUpstream(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"))
	kb, _ := config.LookupBrand("kubernetes")
	// Times and the manager (curl there) differ; everything else is the
	// same.
	normalize := func(m map[string]any) string {
		md := m["metadata"].(map[string]any)
		if _, ok := md["creationTimestamp"].(string); ok {
			md["creationTimestamp"] = "T"
		}
		for _, f := range asAnyList(md["managedFields"]) {
			f.(map[string]any)["time"] = "T"
			f.(map[string]any)["manager"] = "M"
		}
		return jsonOf(t, m)
	}
	got := e.do("POST", "/apis/"+kb.Group("authentication")+"/v1/tokenreviews",
		`{"apiVersion": "`+kb.Group("authentication")+`/v1", "kind": "TokenReview", "spec": {"token": "not-a-valid-token"}}`).mustCode(t, 201).obj(t)
	if g, w := normalize(got), normalize(goldenBody(t, "tokenreview-bogus-token.json")); g != w {
		t.Errorf("bogus token review:\n got  %s\n want %s", g, w)
	}
	got = e.do("POST", "/apis/"+kb.Group("authentication")+"/v1/selfsubjectreviews", `{"apiVersion": "`+kb.Group("authentication")+`/v1", "kind": "SelfSubjectReview"}`).mustCode(t, 201).obj(t)
	if g, w := normalize(got), normalize(goldenBody(t, "selfsubjectreview-admin.json")); g != w {
		t.Errorf("self subject review:\n got  %s\n want %s", g, w)
	}
}

func asAnyList(v any) []any { l, _ := v.([]any); return l }
