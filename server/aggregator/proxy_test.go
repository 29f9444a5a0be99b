package aggregator

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"platd/security"
)

// backedBy is an Available APIService v1.w.example.com (key asKey) whose
// service ns/api has srv as its one endpoint. A non-empty caBundle is its
// spec.caBundle; without one it skips verification.
func backedBy(srv *httptest.Server, caBundle string) fakeObjects {
	port := int64(srv.Listener.Addr().(*net.TCPAddr).Port)
	spec := map[string]any{"group": "w.example.com", "version": "v1", "service": map[string]any{"namespace": "ns", "name": "api", "port": int64(443)}}
	if caBundle != "" {
		spec["caBundle"] = caBundle
	} else {
		spec["insecureSkipTLSVerify"] = true
	}
	return fakeObjects{
		asKey: {"metadata": map[string]any{"name": "v1.w.example.com"}, "spec": spec,
			"status": map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "True"}}}},
		"services/ns/api": {"spec": map[string]any{"ports": []any{map[string]any{"name": "https", "port": int64(443)}}}},
		"endpoints/ns/api": {"subsets": []any{map[string]any{"addresses": []any{map[string]any{"ip": "127.0.0.1"}},
			"ports": []any{map[string]any{"name": "https", "port": port}}}}},
	}
}

// asKey is the fakeObjects key of backedBy's APIService.
const asKey = "apiservices//v1.w.example.com"

// asSpec is the spec of backedBy's APIService.
func asSpec(objs fakeObjects) map[string]any { return objs[asKey]["spec"].(map[string]any) }

// TestProxyRefusesRedirects: a backend's redirect never reaches the
// client, who might follow it elsewhere with its credentials: it becomes
// a 502 with upstream's message, unless redirects are allowed.
func TestProxyRefusesRedirects(t *testing.T) {
	tests := []struct {
		name     string
		code     int
		location string
		allow    bool
		wantCode int
		wantBody string
		wantLoc  string
	}{
		{"found", http.StatusFound, "https://elsewhere.example.org/x", false, http.StatusBadGateway, msgRedirect, ""},
		{"permanent", http.StatusPermanentRedirect, "/other", false, http.StatusBadGateway, msgRedirect, ""},
		{"not modified, no location", http.StatusNotModified, "", false, http.StatusNotModified, "", ""},
		{"multiple choices, no location", http.StatusMultipleChoices, "", false, http.StatusMultipleChoices, "choose", ""},
		{"allowed", http.StatusFound, "https://elsewhere.example.org/x", true, http.StatusFound, "moved", "https://elsewhere.example.org/x"},
		{"ok", http.StatusOK, "", false, http.StatusOK, "fine", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.location != "" {
					w.Header().Set("Location", tt.location)
				}
				w.Header().Set("X-Backend", "1")
				w.WriteHeader(tt.code)
				_, _ = w.Write([]byte(map[int]string{http.StatusFound: "moved", http.StatusPermanentRedirect: "moved", http.StatusMultipleChoices: "choose", http.StatusOK: "fine"}[tt.code]))
			}))
			defer srv.Close()
			objs := backedBy(srv, "")
			a := newTestAggregator(objs)
			a.cfg.AllowRedirects = tt.allow
			defer a.Close()
			rec := httptest.NewRecorder()
			a.Proxy(rec, httptest.NewRequest(http.MethodGet, "/apis/w.example.com/v1/namespaces/default/flunders", nil), objs[asKey], &security.User{Name: "bob"})
			if rec.Code != tt.wantCode || rec.Body.String() != tt.wantBody || rec.Header().Get("Location") != tt.wantLoc {
				t.Errorf("got %d %q, Location %q; want %d %q, Location %q", rec.Code, rec.Body.String(), rec.Header().Get("Location"), tt.wantCode, tt.wantBody, tt.wantLoc)
			}
			if tt.wantCode == http.StatusBadGateway {
				if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" || rec.Header().Get("X-Backend") != "" {
					t.Errorf("headers of the refusal: %v", rec.Header())
				}
			}
		})
	}
}

func TestIsDiscovery(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"/apis/w.example.com/v1", true},
		{"/apis/w.example.com/v1/", true},
		{"/apis/w.example.com/v1/flunders", false},
		{"/apis/w.example.com/v1/namespaces/x/flunders", false},
		{"/apis/w.example.com", false},
		{"/openapi/v3/apis/w.example.com/v1", false},
		{"/api/v1", false},
	}
	for _, tt := range tests {
		if got := isDiscovery(tt.path); got != tt.want {
			t.Errorf("isDiscovery(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

// TestProxyDiscoveryTimeout: a proxied discovery request is cut after
// discoveryTimeout, whatever the request's own deadline, and answers 503.
// The request itself is canceled only much later, which would answer
// "context canceled".
func TestProxyDiscoveryTimeout(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	objs := backedBy(srv, "")
	a := newTestAggregator(objs)
	a.discoveryTimeout = 20 * time.Millisecond
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer time.AfterFunc(10*time.Second, cancel).Stop()
	rec := httptest.NewRecorder()
	a.Proxy(rec, httptest.NewRequest(http.MethodGet, "/apis/w.example.com/v1", nil).WithContext(ctx), objs[asKey], &security.User{Name: "bob"})
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), context.DeadlineExceeded.Error()) {
		t.Errorf("got %d %q; want 503 %q", rec.Code, rec.Body.String(), context.DeadlineExceeded)
	}
}

// TestProxyAuditID: the extension server gets the request's audit ID,
// the one the server answers (the client's or one of its own), so both
// audit logs name the request alike.
func TestProxyAuditID(t *testing.T) {
	tests := []struct {
		name       string
		sent, kept string
		want       string
	}{
		{"chosen by the server", "", "4f2c-server", "4f2c-server"},
		{"the client's", "c1-client", "c1-client", "c1-client"},
		{"none", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan []string, 1)
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got <- r.Header.Values("Audit-Id")
			}))
			defer srv.Close()
			objs := backedBy(srv, "")
			a := newTestAggregator(objs)
			defer a.Close()
			req := httptest.NewRequest(http.MethodGet, "/apis/w.example.com/v1/flunders", nil)
			if tt.sent != "" {
				req.Header.Set("Audit-Id", tt.sent)
			}
			rec := httptest.NewRecorder()
			if tt.kept != "" {
				rec.Header().Set("Audit-Id", tt.kept)
			}
			a.Proxy(rec, req, objs[asKey], &security.User{Name: "bob"})
			var want []string
			if tt.want != "" {
				want = []string{tt.want}
			}
			if ids := <-got; !slices.Equal(ids, want) {
				t.Errorf("the extension server got Audit-Id %q; want %q", ids, want)
			}
		})
	}
}

// TestProxyForwardedFor: the client's address is appended to the
// X-Forwarded-For chain the request came with, as upstream's proxy does.
func TestProxyForwardedFor(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"no chain", nil, "192.0.2.9"},
		{"one hop", []string{"198.51.100.7"}, "198.51.100.7, 192.0.2.9"},
		{"two hops", []string{"203.0.113.1, 198.51.100.7"}, "203.0.113.1, 198.51.100.7, 192.0.2.9"},
		{"two headers", []string{"203.0.113.1", "198.51.100.7"}, "203.0.113.1, 198.51.100.7, 192.0.2.9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan []string, 1)
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got <- r.Header.Values("X-Forwarded-For")
			}))
			defer srv.Close()
			objs := backedBy(srv, "")
			a := newTestAggregator(objs)
			defer a.Close()
			req := httptest.NewRequest(http.MethodGet, "/apis/w.example.com/v1/flunders", nil)
			req.RemoteAddr = "192.0.2.9:4000"
			req.Header["X-Forwarded-For"] = tt.in
			a.Proxy(httptest.NewRecorder(), req, objs[asKey], &security.User{Name: "bob"})
			if xff := <-got; !slices.Equal(xff, []string{tt.want}) {
				t.Errorf("X-Forwarded-For %q; want %q", xff, tt.want)
			}
		})
	}
}

// TestProxyKeepsQuery: the query reaches the extension server as the
// client wrote it (order, repeats and escapes), as upstream's proxy
// copies the raw query.
func TestProxyKeepsQuery(t *testing.T) {
	for _, q := range []string{"watch=1&resourceVersion=5&allowWatchBookmarks=true", "labelSelector=a%3Db%2Cc&limit=5&labelSelector=x", "fieldSelector=metadata.name%3Dfoo"} {
		got := make(chan string, 1)
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got <- r.URL.Path + "?" + r.URL.RawQuery
		}))
		objs := backedBy(srv, "")
		a := newTestAggregator(objs)
		a.Proxy(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/apis/w.example.com/v1/flunders?"+q, nil), objs[asKey], &security.User{Name: "bob"})
		if g, want := <-got, "/apis/w.example.com/v1/flunders?"+q; g != want {
			t.Errorf("the extension server got %s, want %s", g, want)
		}
		a.Close()
		srv.Close()
	}
}
