package server_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"platd/config"
	"platd/security"
)

// TestOperatorKeyMaterial serves with an operator's serving pair and trusts
// an operator's client CA besides the data directory's own.
func TestOperatorKeyMaterial(t *testing.T) {
	t.Parallel()
	opDir := t.TempDir()
	opCA, err := security.EnsureCA(opDir)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(opDir, "serving.crt"), filepath.Join(opDir, "serving.key")
	if err := opCA.EnsureServingCert(certFile, keyFile, []string{"127.0.0.1", "localhost"}); err != nil {
		t.Fatal(err)
	}
	clientCert, clientKey := filepath.Join(opDir, "bob.crt"), filepath.Join(opDir, "bob.key")
	if err := opCA.EnsureClientCert(clientCert, clientKey, "bob", []string{"system:masters"}); err != nil {
		t.Fatal(err)
	}
	e := start(t, func(o *config.Options) {
		o.TLSCertFile, o.TLSPrivateKeyFile = certFile, keyFile
		o.ClientCAFile = filepath.Join(opDir, "ca.crt")
	})
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(filepath.Join(opDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(caPEM)
	pair, err := tls.LoadX509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}, ForceAttemptHTTP2: true}}
	defer c.CloseIdleConnections()
	res, err := c.Get(e.srv.URL() + "/api/v1/namespaces")
	if err != nil {
		t.Fatalf("serving certificate of the operator not used: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.ProtoMajor != 2 || res.TLS.Version < tls.VersionTLS12 {
		t.Errorf("status %d, proto %d, tls %x", res.StatusCode, res.ProtoMajor, res.TLS.Version)
	}
	// The kubeconfig trusts the CA next to the operator's certificate.
	kc, err := os.ReadFile(e.srv.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kc), base64.StdEncoding.EncodeToString(caPEM)) {
		t.Errorf("kubeconfig does not carry the operator's CA:\n%s", kc)
	}
}
