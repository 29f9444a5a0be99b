package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"platd/config"
)

// Go's profiles are served under /debug/pprof/ as upstream's --profiling
// serves them: the index, named profiles, CPU profiles; /debug/pprof
// redirects to the index; the command line is not served; and only users
// allowed the paths get them (not alice under RBAC).
func TestProfiling(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.AuthorizationModes = []string{config.ModeRBAC} })

	r, err := http.NewRequest("GET", e.srv.URL()+"/debug/pprof", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+adminToken)
	noFollow := *e.client
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := noFollow.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/debug/pprof/" {
		t.Errorf("/debug/pprof: %d Location %q, want 302 to /debug/pprof/", res.StatusCode, res.Header.Get("Location"))
	}

	gzipped := func(b []byte) bool { return bytes.HasPrefix(b, []byte{0x1f, 0x8b}) }
	for _, tc := range []struct {
		path string
		code int
		body func([]byte) bool
	}{
		{"/debug/pprof/", 200, func(b []byte) bool {
			return bytes.Contains(b, []byte("heap")) && bytes.Contains(b, []byte("goroutine"))
		}},
		{"/debug/pprof/heap", 200, gzipped},
		{"/debug/pprof/profile?seconds=1", 200, gzipped},
		{"/debug/pprof/goroutine?debug=1", 200, func(b []byte) bool { return bytes.HasPrefix(b, []byte("goroutine profile: total ")) }},
		{"/debug/pprof/cmdline", 404, func(b []byte) bool { return string(b) == "Unknown profile\n" }},
	} {
		got := e.do("GET", tc.path, nil)
		if got.code != tc.code || !tc.body(got.body) {
			t.Errorf("%s: %d %.120q", tc.path, got.code, got.body)
		}
	}

	denied := e.send(req{method: "GET", path: "/debug/pprof/heap", token: aliceToken}).mustCode(t, 403)
	denied.mustMessage(t, `forbidden: User "alice" cannot get path "/debug/pprof/heap"`)
}

// --profiling=false leaves the paths unserved: the plain 404 of any path
// outside the API.
func TestProfilingOff(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.NoProfiling = true })
	for _, p := range []string{"/debug/pprof", "/debug/pprof/", "/debug/pprof/heap"} {
		if r := e.do("GET", p, nil); r.code != 404 || !strings.HasPrefix(string(r.body), "404 page not found") {
			t.Errorf("%s: %d %.80q", p, r.code, r.body)
		}
	}
}
