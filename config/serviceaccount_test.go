package config

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writePEM(t *testing.T, typ string, der []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServiceAccountOptions(t *testing.T) {
	t.Parallel()
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 1024)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	ecDER, _ := x509.MarshalECPrivateKey(ecKey)
	pubDER, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	p224DER, _ := x509.MarshalECPrivateKey(p224)
	edDER, _ := x509.MarshalPKCS8PrivateKey(edKey)
	rsaFile := writePEM(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey))
	garbage := writePEM(t, "CERTIFICATE REQUEST", []byte("x"))
	tests := []struct {
		name    string
		o       ServiceAccountOptions
		wantErr string
		keys    int
	}{
		{name: "defaults"},
		{name: "signing key and public key", o: ServiceAccountOptions{SigningKeyFile: writePEM(t, "EC PRIVATE KEY", ecDER), KeyFiles: []string{writePEM(t, "PUBLIC KEY", pubDER), rsaFile}}, keys: 3},
		{name: "missing file", o: ServiceAccountOptions{KeyFiles: []string{"/nonexistent/sa.pub"}}, wantErr: "--service-account-key-file /nonexistent/sa.pub: open /nonexistent/sa.pub: no such file or directory"},
		{name: "no key", o: ServiceAccountOptions{KeyFiles: []string{garbage}}, wantErr: "--service-account-key-file " + garbage + ": no RSA or ECDSA key found in the PEM data"},
		{name: "bad curve", o: ServiceAccountOptions{SigningKeyFile: writePEM(t, "EC PRIVATE KEY", p224DER)}, wantErr: "unknown private key curve, must be 256, 384, or 521"},
		{name: "ed25519", o: ServiceAccountOptions{KeyFiles: []string{writePEM(t, "PRIVATE KEY", edDER)}}, wantErr: "only RSA and ECDSA keys are supported"},
		{name: "public key cannot sign", o: ServiceAccountOptions{SigningKeyFile: writePEM(t, "PUBLIC KEY", pubDER)}, wantErr: "no RSA or ECDSA private key found in the PEM data"},
		{name: "duplicate issuer", o: ServiceAccountOptions{Issuers: []string{"https://a", "https://a"}}, wantErr: `--service-account-issuer "https://a" is already specified`},
		{name: "max expiration too short", o: ServiceAccountOptions{MaxTokenExpiration: time.Minute}, wantErr: "the --service-account-max-token-expiration must be between 1 hour and 2^32 seconds"},
		{name: "jwks uri not https", o: ServiceAccountOptions{JWKSURI: "http://x/jwks"}, wantErr: "--service-account-jwks-uri requires https scheme"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.o.validate(Brands["plat"])
			got := strings.Join(errs, "; ")
			if tc.wantErr == "" && got != "" || !strings.Contains(got, tc.wantErr) {
				t.Fatalf("errors = %q, want %q", got, tc.wantErr)
			}
			if tc.wantErr == "" && len(tc.o.VerifyKeys) != tc.keys {
				t.Errorf("%d verify keys, want %d", len(tc.o.VerifyKeys), tc.keys)
			}
		})
	}
	o := ServiceAccountOptions{}
	o.validate(Brands["kubernetes"])
	if want := "https://" + Brands["kubernetes"].APIServiceName + ".default.svc.cluster.local"; o.SignIssuer() != want || o.Audiences()[0] != want {
		t.Errorf("default issuer/audiences: %v %v", o.SignIssuer(), o.Audiences())
	}
	o = ServiceAccountOptions{Issuers: []string{"https://a", "https://b"}, APIAudiences: []string{"api"}}
	o.validate(Brands["plat"])
	if o.SignIssuer() != "https://a" || len(o.AllIssuers()) != 2 || o.Audiences()[0] != "api" {
		t.Errorf("issuers/audiences: %v %v", o.AllIssuers(), o.Audiences())
	}
}
