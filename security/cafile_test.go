package security

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCAFileReload(t *testing.T) {
	t.Parallel()
	pemOf := func(c *testCA) []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.cert.Raw}) }
	a, b := newTestCA(t, "a"), newTestCA(t, "b")
	path := filepath.Join(t.TempDir(), "ca.crt")
	write := func(data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(pemOf(a))
	f, err := LoadCAFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.interval = 0
	first := f.Pool()
	if f.Pool() != first || !bytes.Equal(f.PEM(), pemOf(a)) {
		t.Fatalf("an unchanged file gave a new pool")
	}
	leafB := b.leaf(t, leafOpts{cn: "x"})
	write(append(pemOf(a), pemOf(b)...))
	second := f.Pool()
	if second == first || !bytes.Equal(f.PEM(), append(pemOf(a), pemOf(b)...)) {
		t.Fatalf("the changed file was not reloaded")
	}
	if _, err := leafB.Verify(x509VerifyClient(second)); err != nil {
		t.Errorf("the reloaded pool does not hold the new CA: %v", err)
	}
	// A broken rewrite keeps the last good bundle.
	write([]byte(strings.Repeat("not a certificate ", 200)))
	if f.Pool() != second {
		t.Errorf("a broken bundle replaced the good one")
	}
	write([]byte("nothing"))
	if _, err := LoadCAFile(path); !errors.Is(err, ErrNoCertificates) {
		t.Errorf("loading a file without certificates: %v", err)
	}
}

func x509VerifyClient(pool *x509.CertPool) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
}
