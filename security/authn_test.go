package security

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"platd/config"
)

func TestAuthenticationConsequences(t *testing.T) {
	t.Parallel()
	b, err := config.LookupBrand("kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	ca := newTestCA(t, "client-ca")
	other := newTestCA(t, "other-ca")
	goodCert := ca.leaf(t, leafOpts{cn: "carol", orgs: []string{"ops"}})
	expired := ca.leaf(t, leafOpts{cn: "carol", notAfter: time.Now().Add(-time.Minute)})
	unknown := other.leaf(t, leafOpts{cn: "carol"})
	serverEKU := ca.leaf(t, leafOpts{cn: "carol", eku: x509.ExtKeyUsageServerAuth})
	emptyCN := ca.leaf(t, leafOpts{orgs: []string{"ops"}})
	tokens := []config.Token{
		{Token: "s3cr3t", User: "alice", UID: "1001", Groups: []string{"dev", "qa"}},
		{Token: "already", User: "dora", Groups: []string{AllAuthenticated}},
		{Token: "root", User: "admin", UID: "admin-uid", Groups: []string{SystemPrivilegedGroup}},
	}
	anonymous := &User{Name: Anonymous, Groups: []string{AllUnauthenticated}}
	alice := &User{Name: "alice", UID: "1001", Groups: []string{"dev", "qa", AllAuthenticated}}

	tests := []struct {
		name      string
		anonOff   bool
		auth      string
		cert      *x509.Certificate
		path      string
		anonPaths []string
		want      *User // nil with wantErr nil means ok=false
		wantErr   error
		wantWarn  string
	}{
		{name: "no credentials, anonymous on", want: anonymous},
		{name: "no credentials, anonymous off", anonOff: true},
		{name: "bad bearer token", auth: "Bearer nope", wantErr: ErrInvalidBearerToken},
		{name: "bad bearer token on healthz", auth: "Bearer nope", path: "/healthz", wantErr: ErrInvalidBearerToken},
		{name: "basic scheme ignored", auth: "Basic YWxpY2U6cHc=", want: anonymous},
		{name: "other scheme ignored", auth: "Negotiate abc", want: anonymous},
		{name: "bearer without token", auth: "Bearer", want: anonymous},
		{name: "bearer with trailing space only", auth: "Bearer ", want: anonymous},
		{name: "bearer with two spaces", auth: "Bearer  s3cr3t", want: anonymous, wantWarn: BearerExtraSpaceWarning},
		{name: "valid token", auth: "Bearer s3cr3t", want: alice},
		{name: "scheme is case-insensitive", auth: "bearer s3cr3t", want: alice},
		{name: "text after token ignored", auth: "Bearer s3cr3t trailing", want: alice},
		{name: "authenticated group not repeated", auth: "Bearer already", want: &User{Name: "dora", Groups: []string{AllAuthenticated}}},
		{name: "expired cert alone", cert: expired, wantErr: ErrCertificateVerify},
		{name: "unknown CA cert alone", cert: unknown, wantErr: ErrCertificateVerify},
		{name: "wrong EKU cert alone", cert: serverEKU, wantErr: ErrCertificateVerify},
		{name: "bad cert is not downgraded with anonymous off", cert: unknown, anonOff: true, wantErr: ErrCertificateVerify},
		{name: "bad cert plus valid token", cert: expired, auth: "Bearer s3cr3t", want: alice},
		{name: "bad cert plus bad token reports both", cert: expired, auth: "Bearer nope", wantErr: ErrInvalidBearerToken},
		{name: "empty CN falls through to anonymous", cert: emptyCN, want: anonymous},
		{name: "empty CN with anonymous off", cert: emptyCN, anonOff: true},
		{name: "empty CN plus valid token", cert: emptyCN, auth: "Bearer s3cr3t", want: alice},
		{name: "good cert", cert: goodCert, want: &User{Name: "carol", Groups: []string{"ops", AllAuthenticated}, Extra: map[string][]string{CredentialIDKey(b): {credentialID(goodCert)}}}},
		{name: "cert wins over token", cert: goodCert, auth: "Bearer s3cr3t", want: &User{Name: "carol", Groups: []string{"ops", AllAuthenticated}, Extra: map[string][]string{CredentialIDKey(b): {credentialID(goodCert)}}}},
		{name: "loopback token", auth: "Bearer loop-token", want: &User{Name: APIServerUser, Groups: []string{AllAuthenticated, SystemPrivilegedGroup}}},
		{name: "anonymous limited to listed path", path: "/livez", anonPaths: []string{"/livez", "/readyz"}, want: anonymous},
		{name: "anonymous not on other paths", path: "/api", anonPaths: []string{"/livez"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := NewAuthenticator(AuthConfig{
				Brand:          b,
				ClientRoots:    ca.pool,
				LoopbackToken:  "loop-token",
				Tokens:         tokens,
				Anonymous:      !tt.anonOff,
				AnonymousPaths: tt.anonPaths,
			})
			path := tt.path
			if path == "" {
				path = "/api/v1/namespaces"
			}
			r := httptest.NewRequest(http.MethodGet, path, nil)
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			r.TLS = &tls.ConnectionState{}
			if tt.cert != nil {
				r.TLS.PeerCertificates = []*x509.Certificate{tt.cert}
			}
			var warnings []string
			r = r.WithContext(WithWarnings(r.Context(), func(m string) { warnings = append(warnings, m) }))

			u, ok, err := a.AuthenticateRequest(r)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || ok || u != nil {
					t.Fatalf("got %+v, %v, %v; want error %v", u, ok, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if tt.want == nil {
				if ok || u != nil {
					t.Fatalf("got %+v, %v; want ok=false", u, ok)
				}
				return
			}
			if !ok {
				t.Fatalf("ok = false, want %+v", tt.want)
			}
			if tt.want.Name == APIServerUser {
				if len(u.UID) != 36 {
					t.Fatalf("loopback uid %q is not a UUID", u.UID)
				}
				u.UID = ""
			}
			if !reflect.DeepEqual(u, tt.want) {
				t.Fatalf("user = %+v, want %+v", u, tt.want)
			}
			var wantWarnings []string
			if tt.wantWarn != "" {
				wantWarnings = []string{tt.wantWarn}
			}
			if !reflect.DeepEqual(warnings, wantWarnings) {
				t.Fatalf("warnings = %q, want %q", warnings, wantWarnings)
			}
		})
	}
}

func TestAuthenticatorNothingConfigured(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer x")
	if u, ok, err := NewAuthenticator(AuthConfig{}).AuthenticateRequest(r); u != nil || ok || err != nil {
		t.Fatalf("anonymous off: got %v %v %v, want ok=false", u, ok, err)
	}
	u, ok, err := NewAuthenticator(AuthConfig{Anonymous: true}).AuthenticateRequest(r)
	if err != nil || !ok || u.Name != Anonymous {
		t.Fatalf("anonymous on: got %+v %v %v, want anonymous", u, ok, err)
	}
}

func TestTokenAuthenticatorOwnership(t *testing.T) {
	t.Parallel()
	tokens := []config.Token{{Token: "t", User: "alice", Groups: []string{"dev"}}}
	a := NewTokenAuthenticator(tokens)
	tokens[0].Groups[0] = "changed"
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer t")
	u, ok, err := a.AuthenticateRequest(r)
	if !ok || err != nil || !reflect.DeepEqual(u.Groups, []string{"dev"}) {
		t.Fatalf("got %+v %v %v, want groups [dev]", u, ok, err)
	}
	u.Groups[0] = "mutated"
	u2, _, _ := a.AuthenticateRequest(r)
	if u2.Groups[0] != "dev" {
		t.Fatalf("second lookup groups = %q, want [dev]", u2.Groups)
	}
}

func TestBearerUnionOrderAndErrors(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	failing := tokenFunc(func(string) (*User, bool, error) { return nil, false, errBoom })
	mine := tokenFunc(func(tok string) (*User, bool, error) {
		if tok == "mine" {
			return &User{Name: "m"}, true, nil
		}
		return nil, false, nil
	})
	a := NewBearerAuthenticator(failing, mine)
	tests := []struct {
		token    string
		wantUser string
		wantErr  error
	}{
		{token: "mine", wantUser: "m"},
		{token: "other", wantErr: errBoom},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", "Bearer "+tt.token)
		u, ok, err := a.AuthenticateRequest(r)
		if tt.wantErr != nil {
			// Worded as upstream, whose loopback token answers first.
			if !errors.Is(err, tt.wantErr) || err.Error() != "[invalid bearer token, "+tt.wantErr.Error()+"]" {
				t.Fatalf("%s: err = %v, want %v after invalid bearer token", tt.token, err, tt.wantErr)
			}
			continue
		}
		if !ok || err != nil || u.Name != tt.wantUser {
			t.Fatalf("%s: got %+v %v %v", tt.token, u, ok, err)
		}
	}
}

type tokenFunc func(string) (*User, bool, error)

func (f tokenFunc) AuthenticateToken(_ context.Context, tok string) (*User, bool, error) {
	return f(tok)
}

func credentialID(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return "X509SHA256=" + hex.EncodeToString(sum[:])
}
