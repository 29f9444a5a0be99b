package filters

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"platd/security"
)

// TestLimitInFlight fills each pool's slots with handlers blocked on a
// channel, then checks which further requests are refused and how.
func TestLimitInFlight(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 16)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Block") != "" {
			entered <- struct{}{}
			<-release
		}
		w.WriteHeader(http.StatusTeapot)
	})
	// The filter keeps its slots per instance: build it once.
	limited := LimitInFlight(next, 2, 1)
	h := RequestInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := &security.User{Name: "alice"}
		if r.Header.Get("Admin") != "" {
			u.Groups = []string{security.SystemPrivilegedGroup}
		}
		limited.ServeHTTP(w, r.WithContext(WithUser(r.Context(), u)))
	}))
	serve := func(method, target string, hdr ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, nil)
		for _, k := range hdr {
			r.Header.Set(k, "1")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	var wg sync.WaitGroup
	block := func(method, target string) {
		wg.Add(1)
		go func() { defer wg.Done(); serve(method, target, "Block") }()
		<-entered
	}
	block(http.MethodGet, "/api/v1/namespaces/a/configmaps")
	block(http.MethodGet, "/api/v1/namespaces/a/configmaps/x")
	block(http.MethodPost, "/api/v1/namespaces/a/configmaps")

	for _, tc := range []struct {
		name, method, target string
		hdr                  []string
		want                 int
	}{
		{"read over the limit", http.MethodGet, "/api/v1/configmaps", nil, http.StatusTooManyRequests},
		{"write over the limit", http.MethodDelete, "/api/v1/namespaces/a/configmaps/x", nil, http.StatusTooManyRequests},
		{"non-resource get counts as a read", http.MethodGet, "/version", nil, http.StatusTooManyRequests},
		{"watch is long-running", http.MethodGet, "/api/v1/configmaps?watch=true", nil, http.StatusTeapot},
		{"log stream is long-running", http.MethodGet, "/api/v1/namespaces/a/pods/p/log", nil, http.StatusTeapot},
		{"privileged group is exempt", http.MethodGet, "/api/v1/configmaps", []string{"Admin"}, http.StatusTeapot},
		{"privileged write is exempt", http.MethodPost, "/api/v1/namespaces/a/configmaps", []string{"Admin"}, http.StatusTeapot},
		{"readyz is exempt", http.MethodGet, "/readyz", nil, http.StatusTeapot},
		{"livez is exempt", http.MethodGet, "/livez?verbose", nil, http.StatusTeapot},
		{"healthz is exempt", http.MethodGet, "/healthz", nil, http.StatusTeapot},
		{"one check is not a probe", http.MethodGet, "/readyz/ping", nil, http.StatusTooManyRequests},
		{"HEAD is not a probe", http.MethodHead, "/readyz", nil, http.StatusTooManyRequests},
		{"metrics are not a probe", http.MethodGet, "/metrics", nil, http.StatusTooManyRequests},
	} {
		rec := serve(tc.method, tc.target, tc.hdr...)
		if rec.Code != tc.want {
			t.Errorf("%s: code %d, want %d (body %q)", tc.name, rec.Code, tc.want, rec.Body)
			continue
		}
		if tc.want != http.StatusTooManyRequests {
			continue
		}
		if got, want := rec.Body.String(), "Too many requests, please try again later.\n"; got != want {
			t.Errorf("%s: body %q, want %q", tc.name, got, want)
		}
		if got := rec.Header().Get("Retry-After"); got != "1" {
			t.Errorf("%s: Retry-After %q, want 1", tc.name, got)
		}
		if got := rec.Header().Get("Content-Type"); got != "text/plain; charset=utf-8" {
			t.Errorf("%s: Content-Type %q, want text/plain", tc.name, got)
		}
	}
	close(release)
	wg.Wait()
	if rec := serve(http.MethodGet, "/api/v1/configmaps"); rec.Code != http.StatusTeapot {
		t.Errorf("after release: code %d, want %d", rec.Code, http.StatusTeapot)
	}
}

// A zero limit is no limit.
func TestLimitInFlightZero(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	blocking := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		w.WriteHeader(http.StatusTeapot)
	})
	h := RequestInfo(LimitInFlight(blocking, 0, 1))
	var wg sync.WaitGroup
	codes := make([]int, 3)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil))
			codes[i] = rec.Code
		}()
		<-entered
	}
	close(release)
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusTeapot {
			t.Errorf("read %d: code %d, want %d: reads have no limit", i, c, http.StatusTeapot)
		}
	}
}
