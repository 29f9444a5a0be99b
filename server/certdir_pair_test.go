package server_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"platd/config"
)

// TestCertDirPairServedAsIs: a serving pair another tool wrote to
// <cert-dir>/apiserver.crt and apiserver.key (controller-runtime's envtest
// does) is served as it is, as upstream does, rather than replaced by one
// of platd's CA.
func TestCertDirPairServedAsIs(t *testing.T) {
	t.Parallel()
	certDir := t.TempDir()
	caPEM, certPEM, keyPEM := foreignServingPair(t)
	certFile, keyFile := filepath.Join(certDir, "apiserver.crt"), filepath.Join(certDir, "apiserver.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(certDir, testServingCA), caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	e := start(t, func(o *config.Options) { o.CertDir = certDir })
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer c.CloseIdleConnections()
	res, err := c.Get(e.srv.URL() + "/version")
	if err != nil {
		t.Fatalf("the pair in the cert directory is not served: %v", err)
	}
	res.Body.Close()
	if got := res.TLS.PeerCertificates[0].Subject.CommonName; got != "envtest-serving" {
		t.Errorf("served %q", got)
	}
	if got, _ := os.ReadFile(certFile); !bytes.Equal(got, certPEM) {
		t.Errorf("apiserver.crt was rewritten")
	}
}

// testServingCA is the file a test writes the CA of a serving pair it
// put in the cert directory to, for the harness to trust.
const testServingCA = "test-serving-ca.crt"

// foreignServingPair is a CA and a serving pair for 127.0.0.1 it signed,
// as PEM, made without platd.
func foreignServingPair(t *testing.T) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "envtest-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "envtest-serving"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames: []string{"localhost"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caTmpl, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}
