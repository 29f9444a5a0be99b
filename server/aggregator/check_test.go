package aggregator

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
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
