package metrics

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"platd/server/request"
)

func TestReportedVerbAndScope(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		info        request.Info
		contentType string
		verb, scope string
	}{
		{"get", request.Info{Verb: "get", Namespace: "ns", Name: "a"}, "", "GET", "resource"},
		{"get cluster-scoped", request.Info{Verb: "get", Name: "a"}, "", "GET", "resource"},
		{"list in a namespace", request.Info{Verb: "list", Namespace: "ns"}, "", "LIST", "namespace"},
		{"list everywhere", request.Info{Verb: "list"}, "", "LIST", "cluster"},
		{"list by name selector", request.Info{Verb: "list", Namespace: "ns", Name: "a", NameFromSelector: true}, "", "LIST", "namespace"},
		{"watch", request.Info{Verb: "watch", Namespace: "ns"}, "", "WATCH", "namespace"},
		{"create", request.Info{Verb: "create", Namespace: "ns"}, "application/json", "POST", "resource"},
		{"update", request.Info{Verb: "update", Name: "a"}, "application/json", "PUT", "resource"},
		{"merge patch", request.Info{Verb: "patch", Name: "a"}, "application/merge-patch+json", "PATCH", "resource"},
		{"apply", request.Info{Verb: "patch", Name: "a"}, "application/apply-patch+yaml; charset=utf-8", "APPLY", "resource"},
		{"delete", request.Info{Verb: "delete", Namespace: "ns", Name: "a"}, "", "DELETE", "resource"},
		{"deletecollection", request.Info{Verb: "deletecollection", Namespace: "ns"}, "", "DELETECOLLECTION", "namespace"},
		{"unknown verb", request.Info{Verb: "bogus"}, "", "other", "cluster"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/x", nil)
			r.Header.Set("Content-Type", c.contentType)
			if got := reportedVerb(&c.info, r); got != c.verb {
				t.Errorf("verb %q, want %q", got, c.verb)
			}
			if got := cleanScope(&c.info); got != c.scope {
				t.Errorf("scope %q, want %q", got, c.scope)
			}
		})
	}
}

func TestCleanDryRun(t *testing.T) {
	t.Parallel()
	for query, want := range map[string]string{
		"":                          "",
		"?pretty=true":              "",
		"?dryRun=All":               "All",
		"?dryRun=All&dryRun=All":    "All",
		"?dryRun=Some":              "invalid",
		"?dryRun=All&dryRun=x":      "invalid",
		"?dryRunx=1":                "",
		"?fieldManager=dryRun-tool": "",
	} {
		if got := cleanDryRun(httptest.NewRequest("POST", "/x"+query, nil)); got != want {
			t.Errorf("%q: %q, want %q", query, got, want)
		}
	}
}

func TestCodeString(t *testing.T) {
	t.Parallel()
	for _, code := range []int{100, 200, 201, 202, 204, 301, 400, 401, 403, 404, 409, 410, 422, 429, 500, 503} {
		if got, want := codeString(code), strconv.Itoa(code); got != want {
			t.Errorf("%d: %q", code, got)
		}
	}
}

// BenchmarkInstrumentGet is the filter's cost on a GET of one object.
func BenchmarkInstrumentGet(b *testing.B) {
	r := New()
	h := r.Instrument(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }),
		func(string, string, string) bool { return true })
	req := httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps/a", nil)
	req = req.WithContext(request.WithInfo(req.Context(), &request.Info{IsResource: true, Verb: "get", Version: "v1", Namespace: "ns", Resource: "configmaps", Name: "a"}))
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, req)
	}
}

func TestStatusWriterSkipsInterimCodes(t *testing.T) {
	t.Parallel()
	w := &statusWriter{ResponseWriter: discard{}}
	if w.code() != 200 {
		t.Errorf("nothing written: %d", w.code())
	}
	w.WriteHeader(http.StatusContinue)
	w.WriteHeader(http.StatusCreated)
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if w.code() != http.StatusCreated {
		t.Errorf("code %d, want 201", w.code())
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
