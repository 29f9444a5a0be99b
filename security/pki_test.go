package security

import (
	"bytes"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEnsureCACreateThenLoad(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pki")
	before := time.Now()
	ca, err := EnsureCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := ca.Certificate()
	if !c.IsCA || !strings.HasPrefix(c.Subject.CommonName, "platd-ca@") {
		t.Fatalf("CA subject %q IsCA %v", c.Subject.CommonName, c.IsCA)
	}
	if c.KeyUsage != x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature {
		t.Fatalf("key usage = %v", c.KeyUsage)
	}
	if c.PublicKeyAlgorithm != x509.ECDSA {
		t.Fatalf("key algorithm = %v, want ECDSA", c.PublicKeyAlgorithm)
	}
	if got := c.NotAfter.Sub(before); got < caValidity-time.Minute || got > caValidity+time.Minute {
		t.Fatalf("validity = %v, want about %v", got, caValidity)
	}
	assertMode(t, filepath.Join(dir, "ca.key"), 0o600)
	assertMode(t, filepath.Join(dir, "ca.crt"), 0o644)
	assertNoTempFiles(t, dir)

	again, err := EnsureCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Certificate().Equal(c) || !bytes.Equal(again.CertPEM(), ca.CertPEM()) {
		t.Fatal("second EnsureCA did not load the same CA")
	}
	if again.CertFile() != filepath.Join(dir, "ca.crt") {
		t.Fatalf("CertFile = %q", again.CertFile())
	}
}

func TestEnsureCARefusesBrokenMaterial(t *testing.T) {
	t.Parallel()
	other := mustCA(t)
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{name: "lone key", setup: func(t *testing.T, dir string) {
			copyFile(t, filepath.Join(other, "ca.key"), filepath.Join(dir, "ca.key"))
		}},
		{name: "lone cert", setup: func(t *testing.T, dir string) {
			copyFile(t, filepath.Join(other, "ca.crt"), filepath.Join(dir, "ca.crt"))
		}},
		{name: "mismatched pair", setup: func(t *testing.T, dir string) {
			copyFile(t, filepath.Join(other, "ca.crt"), filepath.Join(dir, "ca.crt"))
			if _, err := EnsureCA(filepath.Join(dir, "x")); err != nil {
				t.Fatal(err)
			}
			copyFile(t, filepath.Join(dir, "x", "ca.key"), filepath.Join(dir, "ca.key"))
		}},
		{name: "garbage key", setup: func(t *testing.T, dir string) {
			copyFile(t, filepath.Join(other, "ca.crt"), filepath.Join(dir, "ca.crt"))
			writeFile(t, filepath.Join(dir, "ca.key"), []byte("not pem"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tt.setup(t, dir)
			if _, err := EnsureCA(dir); !errors.Is(err, ErrKeyMaterial) {
				t.Fatalf("err = %v, want ErrKeyMaterial", err)
			}
		})
	}
}

func TestEnsureServingCert(t *testing.T) {
	t.Parallel()
	caDir := mustCA(t)
	ca, err := EnsureCA(caDir)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "serving.crt"), filepath.Join(dir, "serving.key")
	hosts := []string{"localhost", "127.0.0.1", "::1", "edge-1.example"}
	if err := ca.EnsureServingCert(certFile, keyFile, hosts); err != nil {
		t.Fatal(err)
	}
	leaf := readLeaf(t, certFile)
	if !slices.Equal(leaf.DNSNames, []string{"localhost", "edge-1.example"}) {
		t.Fatalf("DNS SANs = %q", leaf.DNSNames)
	}
	if len(leaf.IPAddresses) != 2 || !leaf.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) || !leaf.IPAddresses[1].Equal(net.IPv6loopback) {
		t.Fatalf("IP SANs = %v", leaf.IPAddresses)
	}
	if !slices.Equal(leaf.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Fatalf("EKU = %v", leaf.ExtKeyUsage)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.CertPool(), DNSName: "edge-1.example"}); err != nil {
		t.Fatalf("serving cert does not verify: %v", err)
	}
	if d := time.Until(leaf.NotAfter); d < leafValidity-2*time.Hour || d > leafValidity {
		t.Fatalf("leaf lifetime %v, want about a year", d)
	}
	assertMode(t, keyFile, 0o600)
	assertMode(t, certFile, 0o644)
	first := readFile(t, certFile)

	// Same or fewer hosts: reused byte for byte.
	if err := ca.EnsureServingCert(certFile, keyFile, hosts[:2]); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFile(t, certFile), first) {
		t.Fatal("covering certificate was reissued")
	}
	// A new host: reissued.
	if err := ca.EnsureServingCert(certFile, keyFile, append(hosts, "10.0.0.7")); err != nil {
		t.Fatal(err)
	}
	if leaf := readLeaf(t, certFile); !certCovers(leaf, "10.0.0.7") || bytes.Equal(readFile(t, certFile), first) {
		t.Fatal("certificate not reissued for a new host")
	}
	assertNoTempFiles(t, dir)
}

func TestEnsureServingCertReissues(t *testing.T) {
	t.Parallel()
	ca, err := EnsureCA(mustCA(t))
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := EnsureCA(mustCA(t))
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{"localhost"}
	tests := []struct {
		name  string
		setup func(t *testing.T, certFile, keyFile string)
	}{
		{name: "missing", setup: func(*testing.T, string, string) {}},
		{name: "signed by another CA", setup: func(t *testing.T, certFile, keyFile string) {
			if err := otherCA.EnsureServingCert(certFile, keyFile, hosts); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "expiring within 30 days", setup: func(t *testing.T, certFile, keyFile string) {
			writeLeaf(t, ca, certFile, keyFile, x509.ExtKeyUsageServerAuth, time.Now().Add(10*24*time.Hour))
		}},
		{name: "client certificate in place of a serving one", setup: func(t *testing.T, certFile, keyFile string) {
			if err := ca.EnsureClientCert(certFile, keyFile, "localhost", nil); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "key does not match", setup: func(t *testing.T, certFile, keyFile string) {
			if err := ca.EnsureServingCert(certFile, keyFile, hosts); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := ca.EnsureServingCert(filepath.Join(dir, "c"), filepath.Join(dir, "k"), hosts); err != nil {
				t.Fatal(err)
			}
			copyFile(t, filepath.Join(dir, "k"), keyFile)
		}},
		{name: "truncated certificate", setup: func(t *testing.T, certFile, keyFile string) {
			if err := ca.EnsureServingCert(certFile, keyFile, hosts); err != nil {
				t.Fatal(err)
			}
			data := readFile(t, certFile)
			writeFile(t, certFile, data[:len(data)/2])
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			certFile, keyFile := filepath.Join(dir, "s.crt"), filepath.Join(dir, "s.key")
			tt.setup(t, certFile, keyFile)
			if err := ca.EnsureServingCert(certFile, keyFile, hosts); err != nil {
				t.Fatal(err)
			}
			leaf := readLeaf(t, certFile)
			opts := x509.VerifyOptions{Roots: ca.CertPool(), DNSName: "localhost", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
			if _, err := leaf.Verify(opts); err != nil {
				t.Fatalf("after EnsureServingCert: %v", err)
			}
			if time.Until(leaf.NotAfter) < renewBefore {
				t.Fatalf("NotAfter %v still too soon", leaf.NotAfter)
			}
			if _, err := newCertReloader(certFile, keyFile, 0); err != nil {
				t.Fatalf("pair does not load: %v", err)
			}
		})
	}
}

func TestEnsureClientCert(t *testing.T) {
	t.Parallel()
	ca, err := EnsureCA(mustCA(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "admin.crt"), filepath.Join(dir, "admin.key")
	orgs := []string{SystemPrivilegedGroup, "ops"}
	if err := ca.EnsureClientCert(certFile, keyFile, "admin", orgs); err != nil {
		t.Fatal(err)
	}
	leaf := readLeaf(t, certFile)
	if leaf.Subject.CommonName != "admin" || !slices.Equal(leaf.Subject.Organization, orgs) {
		t.Fatalf("subject = %v", leaf.Subject)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.CertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("client cert does not verify for client auth: %v", err)
	}
	first := readFile(t, certFile)
	if err := ca.EnsureClientCert(certFile, keyFile, "admin", orgs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFile(t, certFile), first) {
		t.Fatal("valid client certificate was reissued")
	}
	if err := ca.EnsureClientCert(certFile, keyFile, "admin", []string{"ops"}); err != nil {
		t.Fatal(err)
	}
	if got := readLeaf(t, certFile).Subject.Organization; !slices.Equal(got, []string{"ops"}) {
		t.Fatalf("after subject change O = %q, want [ops]", got)
	}
	assertMode(t, keyFile, 0o600)
}

func TestDefaultHosts(t *testing.T) {
	t.Parallel()
	got := DefaultHosts()
	if !slices.Equal(got[:3], []string{"localhost", "127.0.0.1", "::1"}) {
		t.Fatalf("DefaultHosts = %q", got)
	}
	if name, err := os.Hostname(); err == nil && name != "" && !slices.Contains(got, name) {
		t.Fatalf("DefaultHosts = %q lacks host name %q", got, name)
	}
}

// writeLeaf writes a pair signed by ca that expires at notAfter.
func writeLeaf(t *testing.T, ca *CA, certFile, keyFile string, eku x509.ExtKeyUsage, notAfter time.Time) {
	t.Helper()
	key := mustKey(t)
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "short"},
		DNSNames:     []string{"localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{eku},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, keyFile, keyPEM)
	writeFile(t, certFile, encodeCert(der))
}

func mustCA(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := EnsureCA(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readLeaf(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	c, err := parseCertPEM(readFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	writeFile(t, to, readFile(t, from))
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Fatalf("%s mode = %o, want %o", path, got, want)
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}
