package webhookclient

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestEndpoint checks upstream's default service resolution.
func TestEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cc               map[string]any
		want, serverName string
		err              error
	}{
		{map[string]any{"url": "https://h:8443/x"}, "https://h:8443/x", "", nil},
		{map[string]any{"service": map[string]any{"namespace": "ns", "name": "svc"}}, "https://svc.ns.svc:443", "svc.ns.svc", nil},
		{map[string]any{"service": map[string]any{"namespace": "ns", "name": "svc", "port": int64(8443), "path": "/v"}}, "https://svc.ns.svc:8443/v", "svc.ns.svc", nil},
		{map[string]any{"service": map[string]any{"namespace": "ns", "name": "svc", "port": float64(9443)}}, "https://svc.ns.svc:9443", "svc.ns.svc", nil},
		{map[string]any{}, "", "", ErrNoEndpoint},
	}
	for _, tt := range tests {
		got, sn, err := Endpoint(tt.cc)
		if err != tt.err || got != tt.want || sn != tt.serverName {
			t.Errorf("%v: %q %q %v", tt.cc, got, sn, err)
		}
	}
}

// TestPost checks what a call sends and how answers and failures read:
// the caBundle is the only root trusted, a non-2xx answer is the message
// of its Status or upstream's generic text.
func TestPost(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/status":
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"kind":"Status","message":"not you"}`)
		case "/bare":
			w.WriteHeader(http.StatusBadGateway)
		default:
			_, _ = w.Write(append([]byte("echo:"+r.URL.Query().Get("timeout")+":"), body...))
		}
	}))
	defer srv.Close()
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	c := New(map[string]any{"url": srv.URL + "/echo", "caBundle": ca})
	defer c.CloseIdle()
	target, err := c.Endpoint()
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Post(context.Background(), WithQuery(target, "timeout", "30s"), []byte(`{}`))
	if err != nil || string(got) != "echo:30s:{}" {
		t.Errorf("echo: %q %v", got, err)
	}
	tests := []struct{ path, want string }{
		{"/status", "not you"},
		{"/bare", "the server responded with the status code 502 but did not return more information"},
	}
	for _, tt := range tests {
		if _, err := c.Post(context.Background(), srv.URL+tt.path, nil); err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v, want %q", tt.path, err, tt.want)
		}
	}
	// Without the caBundle the system roots do not know the test CA.
	plain := New(map[string]any{"url": srv.URL})
	defer plain.CloseIdle()
	if _, err := plain.Post(context.Background(), srv.URL, nil); err == nil || !strings.HasPrefix(err.Error(), `Post "`+srv.URL+`": `) {
		t.Errorf("untrusted server: %v", err)
	}
}

// TestPostReadsWholeAnswer checks that an answer is read whole up to the
// client's bound, and that a longer one is an error naming the bound, not
// an answer cut short.
func TestPostReadsWholeAnswer(t *testing.T) {
	t.Parallel()
	const limit = 1000
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		_, _ = io.WriteString(w, strings.Repeat("x", n))
	}))
	defer srv.Close()
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	c := New(map[string]any{"url": srv.URL, "caBundle": ca})
	defer c.CloseIdle()
	if c.maxResponse != MaxResponse || MaxResponse < 1<<30 {
		t.Errorf("bound %d, MaxResponse %d: want at least 1 GiB", c.maxResponse, MaxResponse)
	}
	c.maxResponse = limit
	for _, tt := range []struct {
		n   int
		err string
	}{
		{0, ""},
		{limit - 1, ""},
		{limit, ""},
		{limit + 1, "webhook response too large: more than 1000 bytes"},
		{10 * limit, "webhook response too large: more than 1000 bytes"},
	} {
		got, err := c.Post(context.Background(), WithQuery(srv.URL, "n", strconv.Itoa(tt.n)), nil)
		switch {
		case tt.err == "" && (err != nil || len(got) != tt.n):
			t.Errorf("answer of %d bytes: read %d, %v", tt.n, len(got), err)
		case tt.err != "" && (err == nil || err.Error() != tt.err || !errors.Is(err, ErrResponseTooLarge)):
			t.Errorf("answer of %d bytes: %v, want %q", tt.n, err, tt.err)
		}
	}
}
