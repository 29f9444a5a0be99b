package security

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"platd/config"
)

func TestX509Authenticator(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "client-ca")
	other := newTestCA(t, "other-ca")
	inter := ca.intermediate(t, "intermediate")

	good := ca.leaf(t, leafOpts{cn: "alice", orgs: []string{"dev", "qa"}})
	viaInter := inter.leaf(t, leafOpts{cn: "bob", orgs: []string{"ops"}})
	tests := []struct {
		name      string
		chain     []*x509.Certificate
		brand     string
		wantUser  string
		wantGroup []string
		wantErr   string // substring; implies ErrCertificateVerify
		wantOK    bool
	}{
		{name: "good certificate", chain: []*x509.Certificate{good}, brand: "kubernetes", wantOK: true, wantUser: "alice", wantGroup: []string{"dev", "qa"}},
		{name: "good certificate plat brand", chain: []*x509.Certificate{good}, brand: "plat", wantOK: true, wantUser: "alice", wantGroup: []string{"dev", "qa"}},
		{name: "intermediate from presented chain", chain: []*x509.Certificate{viaInter, inter.cert}, brand: "plat", wantOK: true, wantUser: "bob", wantGroup: []string{"ops"}},
		{name: "intermediate missing", chain: []*x509.Certificate{viaInter}, brand: "plat", wantErr: "x509: certificate signed by unknown authority"},
		{name: "unknown CA", chain: []*x509.Certificate{other.leaf(t, leafOpts{cn: "mallory"})}, brand: "plat", wantErr: "x509: certificate signed by unknown authority"},
		{name: "expired", chain: []*x509.Certificate{ca.leaf(t, leafOpts{cn: "alice", notAfter: time.Now().Add(-time.Minute)})}, brand: "plat", wantErr: "x509: certificate has expired or is not yet valid"},
		{name: "server EKU only", chain: []*x509.Certificate{ca.leaf(t, leafOpts{cn: "alice", eku: x509.ExtKeyUsageServerAuth})}, brand: "plat", wantErr: "x509: certificate specifies an incompatible key usage"},
		{name: "empty CN", chain: []*x509.Certificate{ca.leaf(t, leafOpts{orgs: []string{"dev"}})}, brand: "plat"},
		{name: "no client certificate", chain: nil, brand: "plat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := config.LookupBrand(tt.brand)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/api", nil)
			r.TLS = &tls.ConnectionState{PeerCertificates: tt.chain}
			u, ok, err := NewDynamicX509Authenticator(ca.pool, b).AuthenticateRequest(r)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrCertificateVerify) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrCertificateVerify containing %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "verifying certificate SN=") {
					t.Fatalf("err = %v, want the certificate identified", err)
				}
				return
			}
			if err != nil || ok != tt.wantOK {
				t.Fatalf("ok, err = %v, %v; want %v, nil", ok, err, tt.wantOK)
			}
			if !ok {
				if u != nil {
					t.Fatalf("user = %+v, want nil", u)
				}
				return
			}
			sum := sha256.Sum256(tt.chain[0].Raw)
			want := &User{
				Name:   tt.wantUser,
				Groups: tt.wantGroup,
				Extra:  map[string][]string{"authentication." + b.LongDomain + "/credential-id": {"X509SHA256=" + hex.EncodeToString(sum[:])}},
			}
			if !reflect.DeepEqual(u, want) {
				t.Fatalf("user = %+v, want %+v", u, want)
			}
		})
	}
}

func TestCredentialIDKey(t *testing.T) {
	t.Parallel()
	b, err := config.LookupBrand("kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	want := "authentication." + b.LongDomain + "/credential-id"
	if got := CredentialIDKey(b); got != want || !strings.HasSuffix(got, ".io/credential-id") {
		t.Fatalf("CredentialIDKey = %q, want %q", got, want)
	}
}

func TestDynamicX509Authenticator(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "rotating")
	b, _ := config.LookupBrand("plat")
	var pool *x509.CertPool
	a := NewDynamicX509Authenticator(func() *x509.CertPool { return pool }, b)
	r := httptest.NewRequest("GET", "/", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{ca.leaf(t, leafOpts{cn: "carol"})}}
	if u, ok, err := a.AuthenticateRequest(r); ok || err != nil || u != nil {
		t.Fatalf("no pool: got %v %v %v, want not ok", u, ok, err)
	}
	pool = ca.pool()
	u, ok, err := a.AuthenticateRequest(r)
	if !ok || err != nil || u.Name != "carol" {
		t.Fatalf("with pool: got %+v %v %v, want carol", u, ok, err)
	}
}
