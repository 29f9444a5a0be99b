package aggregator

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"platd/security"
	"platd/server/registry"
)

// flundersList is the resource list of w.example.com/v1 the discovery
// tests' servers publish.
const flundersList = `{"kind":"APIResourceList","groupVersion":"w.example.com/v1","resources":[{"name":"flunders","namespaced":true,"kind":"Flunder","verbs":["get"]}]}`

// serveDiscovery answers flundersList at /apis/w.example.com/v1 and 404
// elsewhere.
func serveDiscovery(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/apis/w.example.com/v1" {
		http.NotFound(w, r)
		return
	}
	fmt.Fprint(w, flundersList)
}

// servingAs starts a TLS server of h whose certificate, for the service
// name api.ns.svc, a new CA signs; it returns the server and that CA's
// certificate as a caBundle.
func servingAs(t *testing.T, h http.Handler) (*httptest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	ca, err := security.EnsureCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "srv.crt"), filepath.Join(dir, "srv.key")
	if err := ca.EnsureServingCert(certFile, keyFile, []string{"api.ns.svc"}); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, base64.StdEncoding.EncodeToString(ca.CertPEM())
}

// TestDiscoveryReadVerifiesServer: the availability check does not
// verify the extension server, as upstream's; the resources discovery
// publishes are read verifying it against the APIService's caBundle, so
// a server that fails verification passes the check but lists nothing.
func TestDiscoveryReadVerifiesServer(t *testing.T) {
	srv, goodCA := servingAs(t, http.HandlerFunc(serveDiscovery))
	_, otherCA := servingAs(t, http.NotFoundHandler())
	tests := []struct {
		name      string
		caBundle  string
		resources bool
	}{
		{"server's CA", goodCA, true},
		{"another CA", otherCA, false},
		{"skips verification", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := backedBy(srv, tt.caBundle)
			a := newTestAggregator(objs)
			a.cfg.APIServices = &registry.Descriptor{Resource: "apiservices"}
			defer a.Close()
			if err := a.CheckDiscovery(context.Background(), "v1.w.example.com", asSpec(objs)); err != nil {
				t.Fatalf("check: %v", err)
			}
			a.mu.Lock()
			res := a.lists["v1.w.example.com"].resources
			a.mu.Unlock()
			if (res != nil) != tt.resources {
				t.Fatalf("resources kept: %+v; want some: %v", res, tt.resources)
			}
			if gvs := a.RemoteGroupVersions(); len(gvs) != 1 || (gvs[0].Resources != nil) != tt.resources {
				t.Errorf("discovery lists %+v; want resources: %v", gvs, tt.resources)
			}
		})
	}
}

// TestCheckDiscoveryAttempts: a check makes checkAttempts requests, each
// to an endpoint chosen on its own, and passes when any answers, so one
// dead endpoint among live ones does not fail it. The choice is
// injected: the first endpoint chosen is the dead one.
func TestCheckDiscoveryAttempts(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(serveDiscovery))
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := int64(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	live := int64(srv.Listener.Addr().(*net.TCPAddr).Port)
	subset := func(port int64) map[string]any {
		return map[string]any{"addresses": []any{map[string]any{"ip": "127.0.0.1"}}, "ports": []any{map[string]any{"name": "https", "port": port}}}
	}
	tests := []struct {
		name    string
		ports   []int64
		wantErr string
	}{
		{"first chosen is dead", []int64{dead, live}, ""},
		{"all dead", []int64{dead}, fmt.Sprintf("failing or missing response from https://127.0.0.1:%d/apis/w.example.com/v1", dead)},
		{"all live", []int64{live}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := backedBy(srv, "")
			var subsets []any
			for _, p := range tt.ports {
				subsets = append(subsets, subset(p))
			}
			objs["endpoints/ns/api"]["subsets"] = subsets
			a := newTestAggregator(objs)
			defer a.Close()
			var picks atomic.Int32
			a.pick = func(n int) int {
				if picks.Add(1) == 1 {
					return 0
				}
				return n - 1
			}
			err := a.CheckDiscovery(context.Background(), "v1.w.example.com", asSpec(objs))
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)) {
				t.Errorf("check: %v; want %q", err, tt.wantErr)
			}
			if tt.wantErr != "" && picks.Load() != checkAttempts {
				t.Errorf("%d endpoints tried; want %d", picks.Load(), checkAttempts)
			}
		})
	}
}
