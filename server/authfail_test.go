package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"platd/config"
	"platd/security"
)

// expiredClientCert is a client certificate for user signed by the data
// directory's CA that expired an hour ago.
func expiredClientCert(t *testing.T, certDir, user string) tls.Certificate {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(certDir, name))
		if err != nil {
			t.Fatal(err)
		}
		blk, _ := pem.Decode(b)
		if blk == nil {
			t.Fatalf("%s: no PEM", name)
		}
		return blk.Bytes
	}
	caCert, err := x509.ParseCertificate(read("ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := x509.ParseECPrivateKey(read(security.CAKeyName))
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(4242), Subject: pkix.Name{CommonName: user},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// getWith sends GET path with the client certificate and bearer token
// given (either may be empty) and the user agent ua, on a fresh
// connection.
func (e *env) getWith(cert *tls.Certificate, token, ua, path string) int {
	e.t.Helper()
	tr := e.client.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig = tr.TLSClientConfig.Clone()
	if cert != nil {
		// Sent whatever CAs the server names as acceptable.
		tr.TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	r, _ := http.NewRequest("GET", e.srv.URL()+path, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	r.Header.Set("User-Agent", ua)
	res, err := c.Do(r)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

// A failed authentication is logged at info with its reason class, the
// client's address and user agent, and never the credential, also at
// debug; a request without credentials only at debug.
func TestFailedAuthenticationLogged(t *testing.T) {
	t.Parallel()
	p := newOIDCProvider(t)
	authnFile := filepath.Join(t.TempDir(), "authn.yaml")
	writeFileAtomic(t, authnFile, p.config("oidc:"))
	var logs lockedBuffer
	e := startLogged(t, testOptions(t, t.TempDir(), func(o *config.Options) { o.AuthenticationConfigFile = authnFile }),
		slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	eventually(t, "JWT authenticator ready", func() bool {
		return e.getWith(nil, p.token(t, map[string]any{"tenant": "acme"}), "probe", "/version") == 200
	})

	stranger, err := security.EnsureCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sdir := t.TempDir()
	if err := stranger.EnsureClientCert(filepath.Join(sdir, "c.crt"), filepath.Join(sdir, "c.key"), "mallory", nil); err != nil {
		t.Fatal(err)
	}
	strangerCert, err := tls.LoadX509KeyPair(filepath.Join(sdir, "c.crt"), filepath.Join(sdir, "c.key"))
	if err != nil {
		t.Fatal(err)
	}
	expiredCert := expiredClientCert(t, e.opts.CertDir, "old-admin")
	const badToken = "S3CRET-not-a-valid-token-9f8e7d"
	expiredJWT := p.token(t, map[string]any{"tenant": "acme", "exp": time.Now().Add(-time.Minute).Unix()})
	cases := []struct {
		name   string
		cert   *tls.Certificate
		token  string
		reason string
	}{
		{"bad token", nil, badToken, "invalid bearer token"},
		{"expired JWT", nil, expiredJWT, "expired token"},
		{"no credentials", nil, "", "no credentials"},
		{"foreign CA", &strangerCert, "", "certificate signed by unknown authority"},
		{"expired certificate", &expiredCert, "", "certificate expired or not yet valid"},
	}
	for i, c := range cases {
		ua := fmt.Sprintf("probe-%d/1.0 (%s)", i, c.name)
		var line string
		// Sent again until logged: the failures while the authenticator
		// got ready may have used the class's burst.
		eventually(t, c.name+" logged", func() bool {
			if code := e.getWith(c.cert, c.token, ua, "/api/v1/namespaces"); code != 401 {
				t.Fatalf("%s: status %d, want 401", c.name, code)
			}
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, `userAgent="`+ua+`"`) {
					line = l
					return true
				}
			}
			return false
		})
		level := "INFO"
		if c.reason == "no credentials" {
			level = "DEBUG" // what every probe sends: not at info
		}
		want := fmt.Sprintf(`level=%s msg="authentication failed" reason=%q client=127.0.0.1:`, level, c.reason)
		if !strings.Contains(line, want) {
			t.Errorf("%s: line\n%s\nwant %s", c.name, line, want)
		}
	}
	out := logs.String()
	for _, secret := range []string{badToken, expiredJWT, strings.Split(expiredJWT, ".")[1], strings.Split(expiredJWT, ".")[2], "S3CRET"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds credential bytes %q:\n%s", secret, out)
		}
	}
}

// A flood of bad credentials writes a bounded number of lines: the burst,
// then one a second, and the next line counts what it left out.
func TestFailedAuthenticationLogBounded(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	e := startLogged(t, testOptions(t, t.TempDir()), slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	const flood = 200
	began := time.Now()
	for i := 0; i < flood; i++ {
		if r := e.send(req{method: "GET", path: "/api", token: fmt.Sprintf("flood-token-%d", i)}); r.code != 401 {
			t.Fatalf("status %d", r.code)
		}
	}
	elapsed := time.Since(began)
	lines := strings.Count(logs.String(), `msg="authentication failed"`)
	t.Logf("%d failures in %v: %d lines, %d bytes of log", flood, elapsed, lines, len(logs.String()))
	// authFailLogBurst (20) plus one per second of the flood.
	if most := 20 + int(elapsed/time.Second) + 1; lines < 20 || lines > most {
		t.Errorf("%d lines for %d failures in %v, want 20..%d", lines, flood, elapsed, most)
	}
	// Once the limit refills, the next failure's line counts the rest, or
	// the one-shot flush does.
	eventually(t, "a line counting the suppressed failures", func() bool {
		e.send(req{method: "GET", path: "/api", token: "after-the-flood"})
		return strings.Contains(logs.String(), "suppressed=")
	})
	if strings.Contains(logs.String(), "flood-token") {
		t.Error("the log holds a token")
	}
}
