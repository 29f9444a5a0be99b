package security

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"platd/config"
)

// pkiFixture is a CA with a serving pair for 127.0.0.1 and an admin client
// pair, all on disk.
type pkiFixture struct {
	ca                      *CA
	dir                     string
	servingCert, servingKey string
	clientCert, clientKey   string
}

func newPKIFixture(t *testing.T) *pkiFixture {
	t.Helper()
	dir := t.TempDir()
	ca, err := EnsureCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := &pkiFixture{
		ca: ca, dir: dir,
		servingCert: filepath.Join(dir, "serving.crt"), servingKey: filepath.Join(dir, "serving.key"),
		clientCert: filepath.Join(dir, "admin.crt"), clientKey: filepath.Join(dir, "admin.key"),
	}
	if err := ca.EnsureServingCert(f.servingCert, f.servingKey, DefaultHosts()); err != nil {
		t.Fatal(err)
	}
	if err := ca.EnsureClientCert(f.clientCert, f.clientKey, "admin", []string{SystemPrivilegedGroup}); err != nil {
		t.Fatal(err)
	}
	return f
}

// whoamiServer serves the authenticated user name over TLS, or 401, and
// returns its base URL.
func whoamiServer(t *testing.T, f *pkiFixture) string {
	t.Helper()
	pool, err := LoadCertPool(f.ca.CertFile())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ServerTLSConfig(f.servingCert, f.servingKey, pool, TLSPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := config.LookupBrand("kubernetes")
	authn := NewAuthenticator(AuthConfig{Brand: b, ClientRoots: func() *x509.CertPool { return pool }, Tokens: []config.Token{{Token: "tok", User: "alice"}}})
	srv := &http.Server{
		TLSConfig: cfg,
		ErrorLog:  log.New(io.Discard, "", 0),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, ok, err := authn.AuthenticateRequest(r)
			if err != nil || !ok {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			io.WriteString(w, u.Name+" "+strings.Join(u.Groups, ",")+" "+r.Proto)
		}),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String()
}

func TestServerTLSConfig(t *testing.T) {
	t.Parallel()
	f := newPKIFixture(t)
	cfg, err := ServerTLSConfig(f.servingCert, f.servingKey, f.ca.CertPool(), TLSPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS12 || !slices.Equal(cfg.NextProtos, []string{"h2", "http/1.1"}) || cfg.ClientAuth != tls.RequestClientCert {
		t.Fatalf("config = min %x protos %q client auth %v", cfg.MinVersion, cfg.NextProtos, cfg.ClientAuth)
	}
	noCA, err := ServerTLSConfig(f.servingCert, f.servingKey, nil, TLSPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if noCA.ClientAuth != tls.NoClientCert {
		t.Fatalf("without client CAs ClientAuth = %v", noCA.ClientAuth)
	}
	if _, err := ServerTLSConfig(filepath.Join(f.dir, "missing.crt"), f.servingKey, nil, TLSPolicy{}); err == nil {
		t.Fatal("missing certificate: want error")
	}
	if _, err := ServerTLSConfig(f.clientCert, f.servingKey, nil, TLSPolicy{}); !errors.Is(err, ErrKeyMaterial) {
		t.Fatalf("mismatched pair: err = %v, want ErrKeyMaterial", err)
	}
	// The serving key is ECDSA: the RSA suite alone cannot carry HTTP/2.
	rsaOnly := TLSPolicy{MinVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}
	want := "invalid configuration: --tls-cipher-suites: the serving key is ECDSA, and HTTP/2 below TLS 1.3 needs TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 in the list"
	if _, err := ServerTLSConfig(f.servingCert, f.servingKey, nil, rsaOnly); err == nil || err.Error() != want || !errors.Is(err, config.ErrInvalid) {
		t.Errorf("RSA suite with an ECDSA key: %v", err)
	}
	rsaOnly.MinVersion = tls.VersionTLS13
	if _, err := ServerTLSConfig(f.servingCert, f.servingKey, nil, rsaOnly); err != nil {
		t.Errorf("TLS 1.3 only: %v", err)
	}
	if _, err := ServerTLSConfig(f.servingCert, f.servingKey, nil, TLSPolicy{CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}); err != nil {
		t.Errorf("ECDSA suite: %v", err)
	}
}

func TestTLSClientCertificates(t *testing.T) {
	t.Parallel()
	f := newPKIFixture(t)
	base := whoamiServer(t, f)
	stranger := newPKIFixture(t)

	tests := []struct {
		name       string
		certFile   string
		keyFile    string
		token      string
		wantStatus int
		wantBody   string
	}{
		{name: "client certificate", certFile: f.clientCert, keyFile: f.clientKey, wantStatus: 200, wantBody: "admin system:masters,system:authenticated HTTP/2.0"},
		{name: "certificate of another CA is a 401 not a TLS alert", certFile: stranger.clientCert, keyFile: stranger.clientKey, wantStatus: 401},
		{name: "foreign certificate plus token", certFile: stranger.clientCert, keyFile: stranger.clientKey, token: "tok", wantStatus: 200, wantBody: "alice system:authenticated HTTP/2.0"},
		{name: "no credentials", wantStatus: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tc := &tls.Config{RootCAs: f.ca.CertPool(), NextProtos: []string{"h2"}}
			if tt.certFile != "" {
				pair, err := tls.LoadX509KeyPair(tt.certFile, tt.keyFile)
				if err != nil {
					t.Fatal(err)
				}
				tc.Certificates = []tls.Certificate{pair}
			}
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true}}
			defer client.CloseIdleConnections()
			req, _ := http.NewRequest(http.MethodGet, base+"/whoami", nil)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d body %q, want %d", resp.StatusCode, body, tt.wantStatus)
			}
			if tt.wantBody != "" && string(body) != tt.wantBody {
				t.Fatalf("body %q, want %q", body, tt.wantBody)
			}
		})
	}
}

func TestCertReloader(t *testing.T) {
	t.Parallel()
	f := newPKIFixture(t)
	r, err := newCertReloader(f.servingCert, f.servingKey, 0)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := r.getCertificate(nil)

	// Replace the pair (another host forces a reissue) and make sure the
	// stamp differs even on a coarse-grained file system.
	if err := f.ca.EnsureServingCert(f.servingCert, f.servingKey, []string{"reloaded.example"}); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	for _, p := range []string{f.servingCert, f.servingKey} {
		if err := os.Chtimes(p, future, future); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := r.getCertificate(nil)
	if after == before || !slices.Contains(after.Leaf.DNSNames, "reloaded.example") {
		t.Fatalf("certificate not reloaded: DNS names %q", after.Leaf.DNSNames)
	}

	// A broken file keeps the last good pair in service.
	writeFile(t, f.servingCert, []byte("garbage"))
	later := future.Add(time.Hour)
	os.Chtimes(f.servingCert, later, later)
	if kept, _ := r.getCertificate(nil); kept != after {
		t.Fatal("broken file replaced the serving certificate")
	}

	// Within the recheck interval the files are not looked at.
	slow, err := newCertReloader(f.clientCert, f.clientKey, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cached, _ := slow.getCertificate(nil)
	if err := f.ca.EnsureClientCert(f.clientCert, f.clientKey, "someone-else", nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := slow.getCertificate(nil); got != cached || got.Leaf.Subject.CommonName != "admin" {
		t.Fatal("reloaded within the recheck interval")
	}
}

func TestLoadCertPool(t *testing.T) {
	t.Parallel()
	f := newPKIFixture(t)
	pool, err := LoadCertPool(f.ca.CertFile())
	if err != nil {
		t.Fatal(err)
	}
	leaf := readLeaf(t, f.clientCert)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("pool does not verify a client cert of the CA: %v", err)
	}
	if _, err := LoadCertPool(f.servingKey); !errors.Is(err, ErrNoCertificates) {
		t.Fatalf("key file: err = %v, want ErrNoCertificates", err)
	}
	if _, err := LoadCertPool(filepath.Join(f.dir, "nope.pem")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: err = %v, want ErrNotExist", err)
	}
}
