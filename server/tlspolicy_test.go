package server_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"platd/config"
)

// tlsDial handshakes with the server as a client limited to versions
// [lowest, highest] and, when given, to suites; it returns the state of
// the connection or the handshake error. On success it also reads
// /version over the connection, so the suite serves requests.
func tlsDial(t *testing.T, e *env, lowest, highest uint16, suites ...uint16) (tls.ConnectionState, error) {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(e.opts.CertDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	addr := strings.TrimPrefix(e.srv.URL(), "https://")
	d := &net.Dialer{Timeout: 10 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{RootCAs: pool, MinVersion: lowest, MaxVersion: highest, CipherSuites: suites, NextProtos: []string{"http/1.1"}})
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "GET /version HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+adminToken+"\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(conn)
	if err != nil || !strings.HasPrefix(string(body), "HTTP/1.1 200 OK") || !strings.Contains(string(body), `"gitVersion"`) {
		t.Fatalf("GET /version over the handshake: %v\n%s", err, body)
	}
	return conn.ConnectionState(), nil
}

// The default TLS policy refuses CBC and SHA-1 suites and TLS below 1.2,
// and still serves TLS 1.2 AEAD suites and TLS 1.3.
func TestTLSDefaultPolicy(t *testing.T) {
	t.Parallel()
	e := start(t)
	for _, cbc := range []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256} {
		if st, err := tlsDial(t, e, tls.VersionTLS12, tls.VersionTLS12, cbc); err == nil {
			t.Errorf("suite %s: handshake succeeded with %s", tls.CipherSuiteName(cbc), tls.CipherSuiteName(st.CipherSuite))
		} else if !strings.Contains(err.Error(), "handshake failure") {
			t.Errorf("suite %s: %v, want a handshake failure", tls.CipherSuiteName(cbc), err)
		}
	}
	if _, err := tlsDial(t, e, tls.VersionTLS11, tls.VersionTLS11); err == nil || !strings.Contains(err.Error(), "protocol version not supported") {
		t.Errorf("TLS 1.1 client: %v, want protocol version not supported", err)
	}
	if _, err := tlsDial(t, e, tls.VersionTLS10, tls.VersionTLS10); err == nil {
		t.Error("TLS 1.0 client: handshake succeeded")
	}
	for _, aead := range []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256} {
		st, err := tlsDial(t, e, tls.VersionTLS12, tls.VersionTLS12, aead)
		if err != nil || st.Version != tls.VersionTLS12 || st.CipherSuite != aead {
			t.Errorf("suite %s: %v, version %x suite %s", tls.CipherSuiteName(aead), err, st.Version, tls.CipherSuiteName(st.CipherSuite))
		}
	}
	if st, err := tlsDial(t, e, 0, 0); err != nil || st.Version != tls.VersionTLS13 {
		t.Errorf("default client: %v, version %x", err, st.Version)
	}
}

// --tls-min-version and --tls-cipher-suites widen the policy to a TLS 1.1
// client and a CBC suite, and narrow it to TLS 1.3.
func TestTLSPolicyFlags(t *testing.T) {
	t.Parallel()
	old := start(t, func(o *config.Options) {
		o.TLSMinVersionName = "VersionTLS11"
		o.TLSCipherSuiteNames = []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"}
	})
	st, err := tlsDial(t, old, tls.VersionTLS11, tls.VersionTLS11)
	if err != nil || st.Version != tls.VersionTLS11 || st.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA {
		t.Errorf("TLS 1.1 client: %v, version %x suite %s", err, st.Version, tls.CipherSuiteName(st.CipherSuite))
	}
	st, err = tlsDial(t, old, tls.VersionTLS12, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA)
	if err != nil || st.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA {
		t.Errorf("CBC client: %v, suite %s", err, tls.CipherSuiteName(st.CipherSuite))
	}
	// Only the suites listed: a default suite left out is refused.
	if _, err := tlsDial(t, old, tls.VersionTLS12, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256); err == nil {
		t.Error("a suite not listed was accepted")
	}
	if _, err := tlsDial(t, old, tls.VersionTLS10, tls.VersionTLS10); err == nil {
		t.Error("TLS 1.0 client accepted with --tls-min-version VersionTLS11")
	}

	modern := start(t, func(o *config.Options) { o.TLSMinVersionName = "VersionTLS13" })
	if _, err := tlsDial(t, modern, tls.VersionTLS12, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256); err == nil || !strings.Contains(err.Error(), "protocol version not supported") {
		t.Errorf("TLS 1.2 client with --tls-min-version VersionTLS13: %v", err)
	}
	if st, err := tlsDial(t, modern, tls.VersionTLS13, tls.VersionTLS13); err != nil || st.Version != tls.VersionTLS13 {
		t.Errorf("TLS 1.3 client: %v, version %x", err, st.Version)
	}
}

// --tls-min-version below TLS 1.2 alone lets those clients in: the
// defaults then add the CBC-SHA suites they need, and TLS 1.2 clients
// still get an AEAD suite.
func TestTLSMinVersionLegacyDefaults(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.TLSMinVersionName = "VersionTLS10" })
	for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
		st, err := tlsDial(t, e, v, v)
		if err != nil || st.Version != v || !strings.Contains(tls.CipherSuiteName(st.CipherSuite), "_CBC_SHA") {
			t.Errorf("TLS %x client: %v, version %x suite %s", v, err, st.Version, tls.CipherSuiteName(st.CipherSuite))
		}
	}
	st, err := tlsDial(t, e, tls.VersionTLS12, tls.VersionTLS12)
	if err != nil || !strings.Contains(tls.CipherSuiteName(st.CipherSuite), "_GCM_") {
		t.Errorf("TLS 1.2 client: %v, suite %s", err, tls.CipherSuiteName(st.CipherSuite))
	}
}
