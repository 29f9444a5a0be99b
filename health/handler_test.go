package health

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// readyzOnly are the upstream checks served on readyz but not on livez or
// healthz.
var readyzOnly = map[string]bool{"etcd-readiness": true, "informer-sync": true, "shutdown": true}

// upstreamRegistry registers passing checks named and ordered as in the
// captured readyz output, on the endpoints upstream serves them on. fail
// names checks that fail with "not finished".
func upstreamRegistry(t *testing.T, log *slog.Logger, fail ...string) *Registry {
	t.Helper()
	body, err := os.ReadFile("testdata/readyz-verbose.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := NewRegistry(log)
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		name, ok := strings.CutPrefix(line, "[+]")
		if !ok {
			continue
		}
		name = strings.TrimSuffix(name, " ok")
		c := Check{Name: name, Fn: func(*http.Request) error { return nil }}
		for _, f := range fail {
			if f == name {
				c.Fn = func(*http.Request) error { return errNotFinished }
			}
		}
		eps := []string{Healthz, Livez, Readyz}
		if readyzOnly[name] {
			eps = []string{Readyz}
		}
		if err := r.Add(eps, c); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// mux mounts the three endpoints the way the server does.
func mux(r *Registry) http.Handler {
	m := http.NewServeMux()
	for _, ep := range []string{Healthz, Livez, Readyz} {
		h := r.Handler(ep)
		m.Handle("/"+ep, h)
		m.Handle("/"+ep+"/", h)
	}
	return m
}

func get(h http.Handler, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}

func golden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const textPlain = "text/plain; charset=utf-8"

func TestHandlerGolden(t *testing.T) {
	t.Parallel()
	h := mux(upstreamRegistry(t, nil))
	tests := []struct {
		target    string
		status    int
		body      string
		golden    string
		nosniff   bool
		noHeaders bool
	}{
		{target: "/livez", status: 200, body: "ok", nosniff: true},
		{target: "/healthz", status: 200, body: "ok", nosniff: true},
		{target: "/readyz", status: 200, body: "ok", nosniff: true},
		{target: "/livez?verbose", status: 200, golden: "livez-verbose.txt", nosniff: true},
		{target: "/healthz?verbose", status: 200, golden: "healthz-verbose.txt", nosniff: true},
		{target: "/readyz?verbose", status: 200, golden: "readyz-verbose.txt", nosniff: true},
		{target: "/readyz?verbose=false", status: 200, golden: "readyz-verbose.txt", nosniff: true},
		{target: "/readyz?verbose&exclude=etcd", status: 200, golden: "readyz-verbose-exclude-etcd.txt", nosniff: true},
		{target: "/readyz?exclude=nonexistent&verbose", status: 200, golden: "readyz-exclude-nonexistent-verbose.txt", nosniff: true},
		{target: "/livez/ping", status: 200, body: "ok"},
		{target: "/livez/etcd", status: 200, body: "ok"},
		{target: "/readyz/etcd", status: 200, body: "ok"},
		{target: "/readyz/shutdown", status: 200, body: "ok"},
		{target: "/readyz/poststarthook/rbac/bootstrap-roles", status: 200, body: "ok"},
		{target: "/livez/nonexistent", status: 404, golden: "livez-nonexistent.txt", nosniff: true},
		{target: "/livez/shutdown", status: 404, golden: "livez-nonexistent.txt", nosniff: true},
		{target: "/healthz/informer-sync", status: 404, golden: "livez-nonexistent.txt", nosniff: true},
		{target: "/livez/", status: 404, golden: "livez-nonexistent.txt", nosniff: true},
		{target: "/readyz/poststarthook", status: 404, golden: "livez-nonexistent.txt", nosniff: true},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			t.Parallel()
			rec := get(h, tt.target)
			want := tt.body
			if tt.golden != "" {
				want = golden(t, tt.golden)
			}
			if rec.Code != tt.status || rec.Body.String() != want {
				t.Fatalf("got %d %q\nwant %d %q", rec.Code, rec.Body.String(), tt.status, want)
			}
			if ct := rec.Header().Get("Content-Type"); ct != textPlain {
				t.Errorf("Content-Type %q", ct)
			}
			if got := rec.Header().Get("X-Content-Type-Options") == "nosniff"; got != tt.nosniff {
				t.Errorf("nosniff = %v, want %v", got, tt.nosniff)
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "" {
				t.Errorf("Cache-Control set here: %q", cc)
			}
		})
	}
}

func TestHandlerFailures(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	r := NewRegistry(log)
	never := make(chan struct{})
	stopping := make(chan struct{})
	close(stopping)
	must(t, r.Add([]string{Livez, Readyz}, Ping, Check{Name: "etcd", Fn: func(*http.Request) error { return errors.New("dial tcp: refused") }}))
	must(t, r.Add([]string{Livez, Readyz}, Hook("rbac/bootstrap-roles", never)))
	must(t, r.Add([]string{Readyz}, Shutdown(stopping)))
	h := mux(r)

	failedReadyz := "[+]ping ok\n[-]etcd failed: reason withheld\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n[-]shutdown failed: reason withheld\nreadyz check failed\n"
	tests := []struct {
		target string
		status int
		body   string
	}{
		{"/readyz", 500, failedReadyz},
		{"/readyz?verbose", 500, failedReadyz},
		{"/livez?exclude=etcd&exclude=poststarthook/rbac/bootstrap-roles", 200, "ok"},
		{"/livez?exclude=etcd&exclude=zz&exclude=a%22b&exclude=poststarthook/rbac/bootstrap-roles&verbose=1", 200,
			"[+]ping ok\n[+]etcd excluded: ok\n[+]poststarthook/rbac/bootstrap-roles excluded: ok\nwarn: some health checks cannot be excluded: no matches for \"a\\\"b\",\"zz\"\nlivez check passed\n"},
		{"/livez?exclude=etcd", 500, "[+]ping ok\n[+]etcd excluded: ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\nlivez check failed\n"},
		{"/readyz/etcd", 500, "internal server error: dial tcp: refused\n"},
		{"/readyz/shutdown", 500, "internal server error: process is shutting down\n"},
		{"/livez/poststarthook/rbac/bootstrap-roles", 500, "internal server error: not finished\n"},
	}
	for _, tt := range tests {
		rec := get(h, tt.target)
		if rec.Code != tt.status || rec.Body.String() != tt.body {
			t.Errorf("%s: got %d %q\nwant %d %q", tt.target, rec.Code, rec.Body.String(), tt.status, tt.body)
		}
		if rec.Code == 500 && (rec.Header().Get("Content-Type") != textPlain || rec.Header().Get("X-Content-Type-Options") != "nosniff") {
			t.Errorf("%s: failure headers %v", tt.target, rec.Header())
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	// One line per failed probe, naming every failed check with its
	// reason; a probe failing only on unfinished start-up hooks logs at
	// debug level.
	ready := `level=WARN msg="health check failed" endpoint=readyz failed=`
	unfinished := `level=DEBUG msg="health check failed" endpoint=livez failed="poststarthook/rbac/bootstrap-roles: not finished"`
	want := strings.Join([]string{
		ready + `"etcd: dial tcp: refused; poststarthook/rbac/bootstrap-roles: not finished; shutdown: process is shutting down"`,
		ready + `"etcd: dial tcp: refused; poststarthook/rbac/bootstrap-roles: not finished; shutdown: process is shutting down"`,
		unfinished,
		ready + `"etcd: dial tcp: refused"`,
		ready + `"shutdown: process is shutting down"`,
		unfinished,
	}, "\n") + "\n"
	if logs.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", logs.String(), want)
	}
}

func TestHookAndShutdownFlip(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	stopping := make(chan struct{})
	r := NewRegistry(slog.New(slog.DiscardHandler))
	must(t, r.Add([]string{Readyz}, Hook("start-informers", done), Shutdown(stopping)))
	h := r.Handler(Readyz)
	if rec := get(h, "/readyz"); rec.Code != 500 {
		t.Fatalf("before hook finished: %d", rec.Code)
	}
	close(done)
	if rec := get(h, "/readyz"); rec.Code != 200 || rec.Body.String() != "ok" {
		t.Fatalf("after hook finished: %d %q", rec.Code, rec.Body.String())
	}
	close(stopping)
	if rec := get(h, "/readyz?verbose"); rec.Code != 500 || !strings.Contains(rec.Body.String(), "[-]shutdown failed: reason withheld\n") {
		t.Fatalf("while stopping: %d %q", rec.Code, rec.Body.String())
	}
}

func TestAdd(t *testing.T) {
	t.Parallel()
	ok := func(*http.Request) error { return nil }
	r := NewRegistry(nil)
	must(t, r.Add([]string{Livez, Readyz}, Ping))
	tests := []struct {
		name      string
		endpoints []string
		checks    []Check
		want      error
	}{
		{"no name", []string{Livez}, []Check{{Fn: ok}}, ErrInvalidCheck},
		{"no func", []string{Livez}, []Check{{Name: "x"}}, ErrInvalidCheck},
		{"no endpoints", nil, []Check{{Name: "x", Fn: ok}}, ErrInvalidCheck},
		{"already on endpoint", []string{Readyz}, []Check{Ping}, ErrDuplicateCheck},
		{"repeated in call", []string{Healthz}, []Check{{Name: "x", Fn: ok}, {Name: "x", Fn: ok}}, ErrDuplicateCheck},
		{"same name, other endpoint", []string{Healthz}, []Check{Ping}, nil},
	}
	for _, tt := range tests {
		if err := r.Add(tt.endpoints, tt.checks...); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
	names := func(cs []Check) (out []string) {
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	if got := names(r.Checks(Healthz)); len(got) != 1 || got[0] != "ping" {
		t.Fatalf("healthz checks %v: a failed Add registered something", got)
	}
}

func TestConcurrentAddAndServe(t *testing.T) {
	t.Parallel()
	r := NewRegistry(nil)
	h := r.Handler(Livez)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := string(rune('a' + i))
			if err := r.Add([]string{Livez}, Check{Name: name, Fn: func(*http.Request) error { return nil }}); err != nil {
				t.Error(err)
			}
			if rec := get(h, "/livez/"+name); rec.Code != 200 {
				t.Errorf("check %s: %d", name, rec.Code)
			}
			_ = get(h, "/livez?verbose")
		})
	}
	wg.Wait()
	if n := len(r.Checks(Livez)); n != 8 {
		t.Fatalf("%d checks registered", n)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A check under grace passes until its moment, then reports as itself;
// the single-check path follows the same rule.
func TestGrace(t *testing.T) {
	t.Parallel()
	unfinished := Hook("crd-informer-synced", make(chan struct{}))
	for _, tc := range []struct {
		name  string
		until time.Time
		code  int
		body  string
	}{
		{"within grace", time.Now().Add(time.Hour), http.StatusOK, "[+]ping ok\n[+]poststarthook/crd-informer-synced ok\nlivez check passed\n"},
		{"grace over", time.Now().Add(-time.Millisecond), http.StatusInternalServerError, "[+]ping ok\n[-]poststarthook/crd-informer-synced failed: reason withheld\nlivez check failed\n"},
	} {
		r := NewRegistry(slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err := r.Add([]string{Livez}, Ping, Grace(unfinished, tc.until)); err != nil {
			t.Fatal(err)
		}
		if err := r.Add([]string{Readyz}, Ping, unfinished); err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		mux(r).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/livez?verbose", nil))
		if w.Code != tc.code || w.Body.String() != tc.body {
			t.Errorf("%s: /livez?verbose %d %q, want %d %q", tc.name, w.Code, w.Body.String(), tc.code, tc.body)
		}
		w = httptest.NewRecorder()
		mux(r).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/livez/poststarthook/crd-informer-synced", nil))
		if (w.Code == http.StatusOK) != (tc.code == http.StatusOK) {
			t.Errorf("%s: single check %d %q", tc.name, w.Code, w.Body.String())
		}
		// Readyz has no grace.
		w = httptest.NewRecorder()
		mux(r).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		if w.Code != http.StatusInternalServerError {
			t.Errorf("%s: /readyz %d, want 500", tc.name, w.Code)
		}
	}
}

// TestLateHooksWarn: a start-up hook still unfinished after hookExpected,
// or failing livez once its grace period is over, is logged as a warning,
// with the same texts in the responses as an unfinished hook early in a
// start, which logs at debug level.
func TestLateHooksWarn(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	never := make(chan struct{})
	r := NewRegistry(log)
	must(t, r.Add([]string{Readyz}, Hook("early", never)))
	must(t, r.Add([]string{Livez}, hookSince("poststarthook/late", never, time.Now().Add(-hookExpected-time.Second))))
	must(t, r.Add([]string{Healthz}, Grace(Hook("graced", never), time.Now().Add(-time.Second))))
	h := mux(r)
	for _, tc := range []struct {
		target, body, level string
	}{
		{"/readyz", "[-]poststarthook/early failed: reason withheld\nreadyz check failed\n", "level=DEBUG"},
		{"/livez", "[-]poststarthook/late failed: reason withheld\nlivez check failed\n", "level=WARN"},
		{"/livez/poststarthook/late", "internal server error: not finished\n", "level=WARN"},
		{"/healthz", "[-]poststarthook/graced failed: reason withheld\nhealthz check failed\n", "level=WARN"},
	} {
		logMu.Lock()
		logs.Reset()
		logMu.Unlock()
		rec := get(h, tc.target)
		if rec.Code != 500 || rec.Body.String() != tc.body {
			t.Errorf("%s: %d %q, want 500 %q", tc.target, rec.Code, rec.Body, tc.body)
		}
		logMu.Lock()
		line := logs.String()
		logMu.Unlock()
		if !strings.Contains(line, tc.level+` msg="health check failed"`) || !strings.Contains(line, "not finished") || strings.Count(line, "\n") != 1 {
			t.Errorf("%s: logged %q, want one %s line", tc.target, line, tc.level)
		}
	}
}
