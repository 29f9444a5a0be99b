package security

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"platd/config"
)

// testIssuer is a real OIDC provider: discovery and JWKS over TLS on
// 127.0.0.1, tokens signed with go-jose.
type testIssuer struct {
	srv       *httptest.Server
	key       *rsa.PrivateKey
	kid       string
	jwksHits  atomic.Int64
	discovery atomic.Int64
	// claimsJWT is what /claims serves to the bearer "at".
	claimsJWT atomic.Value
}

func newTestIssuer(t testing.TB) *testIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ti := &testIssuer{key: key, kid: "k1"}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		ti.discovery.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": ti.url(), "jwks_uri": ti.url() + "/keys"})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		ti.jwksHits.Add(1)
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &ti.key.PublicKey, KeyID: ti.kid, Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("/claims", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer at" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		s, _ := ti.claimsJWT.Load().(string)
		_, _ = io.WriteString(w, s)
	})
	ti.srv = httptest.NewTLSServer(mux)
	t.Cleanup(ti.srv.Close)
	return ti
}

func (ti *testIssuer) url() string { return ti.srv.URL }

func (ti *testIssuer) caPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ti.srv.Certificate().Raw}))
}

// token signs claims; iss, aud and exp default to valid values.
func (ti *testIssuer) token(t *testing.T, claims map[string]any) string {
	t.Helper()
	c := map[string]any{"iss": ti.url(), "aud": "platd", "exp": time.Now().Add(time.Hour).Unix(), "sub": "alice-sub"}
	for k, v := range claims {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return signJWT(t, jose.RS256, ti.key, ti.kid, c)
}

func signJWT(t *testing.T, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// waitReady polls until discovery succeeded.
func waitReady(t *testing.T, s *JWTAuthenticators) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Healthy() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("authenticator not ready: %v", s.Healthy())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func writeAuthnConfig(t testing.TB, path, body string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n"+pad)
}

func fileConfig(ti *testIssuer, rest string) string {
	return `apiVersion: ` + config.AuthenticationConfigAPIVersions(config.Brands["plat"])[0] + `
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ` + ti.url() + `
    certificateAuthority: |
` + indent(ti.caPEM(), 6) + `
    audiences: [platd, other]
    audienceMatchPolicy: MatchAny
` + rest
}

const mappingRules = `  claimValidationRules:
  - claim: hd
    requiredValue: example.com
  - expression: 'claims.?tenant.orValue("") != ""'
    message: a non-empty tenant claim is mandatory
  - expression: 'claims.?email_verified.orValue(false) == true'
    message: email must be verified
  claimMappings:
    username:
      expression: 'claims.email + ":external"'
    groups:
      claim: groups
      prefix: "oidc:"
    uid:
      claim: sub
    extra:
    - key: example.com/tenant
      valueExpression: 'claims.tenant'
    - key: example.com/none
      valueExpression: '[]'
  userValidationRules:
  - expression: "!user.username.startsWith('system:') && !user.groups.exists(x, x.startsWith('system:'))"
    message: identities from this issuer may not claim system names
`

func TestJWTFromFile(t *testing.T) {
	t.Parallel()
	ti := newTestIssuer(t)
	path := filepath.Join(t.TempDir(), "authn.yaml")
	writeAuthnConfig(t, path, fileConfig(ti, mappingRules))
	b := config.Brands["plat"]
	s, err := NewJWTAuthenticatorsFromFile(path, JWTOptions{Brand: b}, discard())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx, time.Hour)
	waitReady(t, s)

	good := map[string]any{"hd": "example.com", "tenant": "acme", "email": "alice@example.com", "email_verified": true,
		"groups": []string{"dev", "ops"}, "jti": "id-1", "aud": []string{"x", "other"}}
	with := func(k string, v any) map[string]any {
		c := map[string]any{}
		for k2, v2 := range good {
			c[k2] = v2
		}
		c[k] = v
		return c
	}
	u, ok, err := s.AuthenticateToken(ctx, ti.token(t, good))
	if err != nil || !ok {
		t.Fatalf("valid token: ok=%v err=%v", ok, err)
	}
	want := &User{Name: "alice@example.com:external", UID: "alice-sub", Groups: []string{"oidc:dev", "oidc:ops"},
		Extra: map[string][]string{CredentialIDKey(b): {"JTI=id-1"}, "example.com/tenant": {"acme"}}}
	if !reflect.DeepEqual(u, want) {
		t.Fatalf("user = %+v, want %+v", u, want)
	}

	cases := []struct {
		name   string
		token  string
		ok     bool
		errSub string
	}{
		{"expired", ti.token(t, with("exp", time.Now().Add(-time.Minute).Unix())), false, "oidc: verify token: oidc: token is expired (Token Expiry: "},
		{"no exp", ti.token(t, with("exp", nil)), false, "oidc: token is expired"},
		{"not yet valid", ti.token(t, with("nbf", time.Now().Add(time.Hour).Unix())), false, "before the nbf (not before) time"},
		{"wrong audience", ti.token(t, with("aud", "someone")), false, `oidc: verify token: oidc: expected audience in ["other" "platd"] got ["someone"]`},
		{"other issuer is not ours", ti.token(t, with("iss", "https://elsewhere.example")), false, ""},
		{"required claim missing", ti.token(t, with("hd", nil)), false, "oidc: required claim hd not present in ID token"},
		{"required claim differs", ti.token(t, with("hd", "evil.com")), false, "oidc: required claim hd value does not match. Got = evil.com, want = example.com"},
		{"claim rule false", ti.token(t, with("tenant", "")), false, `oidc: error evaluating claim validation expression: validation expression 'claims.?tenant.orValue("") != ""' failed: a non-empty tenant claim is mandatory`},
		{"user rule false", ti.token(t, with("email", "system:admin")), false, "oidc: error evaluating user info validation rule: validation expression '!user.username.startsWith('system:') && !user.groups.exists(x, x.startsWith('system:'))' failed: identities from this issuer may not claim system names"},
		{"username expression not a string", ti.token(t, with("email", 7)), false, "oidc: error evaluating username claim expression"},
		{"malformed", "a.b.c", false, ""},
		{"not a jwt", "abc", false, ""},
	}
	for _, tc := range cases {
		u, ok, err := s.AuthenticateToken(ctx, tc.token)
		if ok != tc.ok || u != nil && !tc.ok {
			t.Errorf("%s: ok=%v user=%v", tc.name, ok, u)
		}
		if tc.errSub == "" {
			if err != nil {
				t.Errorf("%s: err = %v, want none (not this issuer's)", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.errSub) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.errSub)
		}
	}

	// A token signed by an unknown key fails after one key refresh.
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	before := ti.jwksHits.Load()
	forged := signJWT(t, jose.RS256, other, ti.kid, map[string]any{"iss": ti.url(), "aud": "platd", "exp": time.Now().Add(time.Hour).Unix()})
	if _, ok, err := s.AuthenticateToken(ctx, forged); ok || err == nil || !strings.Contains(err.Error(), "failed to verify signature") {
		t.Errorf("forged: ok=%v err=%v", ok, err)
	}
	if ti.jwksHits.Load() != before+1 {
		t.Errorf("jwks fetched %d times for an unknown key, want 1", ti.jwksHits.Load()-before)
	}
	// An algorithm that is not configured is refused with upstream's text.
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	es := signJWT(t, jose.ES256, ec, ti.kid, map[string]any{"iss": ti.url(), "aud": "platd", "exp": time.Now().Add(time.Hour).Unix()})
	if _, _, err := s.AuthenticateToken(ctx, es); err == nil || !strings.Contains(err.Error(), `oidc: id token signed with unsupported algorithm, expected ["RS256"] got "ES256"`) {
		t.Errorf("ES256: err=%v", err)
	}
}

func TestJWTFromFlags(t *testing.T) {
	t.Parallel()
	ti := newTestIssuer(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte(ti.caPEM()), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := config.OIDCFlags{IssuerURL: ti.url(), ClientID: "platd", CAFile: ca, UsernameClaim: "sub",
		GroupsClaim: "roles", RequiredClaims: []string{"team=blue"}}
	s, err := NewJWTAuthenticatorsFromFlags(flags, JWTOptions{Brand: config.Brands["plat"]}, discard())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx, 0)
	waitReady(t, s)
	u, ok, err := s.AuthenticateToken(ctx, ti.token(t, map[string]any{"roles": "admin", "team": "blue"}))
	if err != nil || !ok {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	if want := (&User{Name: ti.url() + "#alice-sub", Groups: []string{"admin"}}); !reflect.DeepEqual(u, want) {
		t.Fatalf("user = %+v, want %+v", u, want)
	}
	if _, _, err := s.AuthenticateToken(ctx, ti.token(t, map[string]any{"aud": "x", "team": "blue"})); err == nil ||
		err.Error() != `oidc: verify token: oidc: expected audience "platd" got ["x"]` {
		t.Fatalf("wrong audience: %v", err)
	}
	// Tokens of other issuers are not counted.
	_, _, _ = s.AuthenticateToken(ctx, "not-a-jwt")
	st := s.IssuerStats()
	if len(st) != 1 || st[0].Issuer != ti.url() || st[0].Success != 1 || st[0].Failure != 1 || st[0].SuccessTime <= 0 ||
		!strings.HasPrefix(st[0].IssuerHash, "sha256:") || len(st[0].IssuerHash) != len("sha256:")+64 {
		t.Fatalf("issuer stats %+v", st)
	}
	// email as username: an unverified email is refused, no prefix.
	flags.UsernameClaim = "email"
	s2, err := NewJWTAuthenticatorsFromFlags(flags, JWTOptions{Brand: config.Brands["plat"]}, discard())
	if err != nil {
		t.Fatal(err)
	}
	s2.Start(ctx, 0)
	waitReady(t, s2)
	if _, _, err := s2.AuthenticateToken(ctx, ti.token(t, map[string]any{"email": "a@b.c", "email_verified": false, "team": "blue"})); err == nil || err.Error() != "oidc: email not verified" {
		t.Fatalf("unverified email: %v", err)
	}
	if u, ok, _ := s2.AuthenticateToken(ctx, ti.token(t, map[string]any{"email": "a@b.c", "team": "blue"})); !ok || u.Name != "a@b.c" {
		t.Fatalf("email user: %+v", u)
	}
}

func TestJWTReload(t *testing.T) {
	t.Parallel()
	ti := newTestIssuer(t)
	path := filepath.Join(t.TempDir(), "authn.yaml")
	mapping := func(prefix string) string {
		return "  claimMappings:\n    username:\n      claim: sub\n      prefix: \"" + prefix + "\"\n"
	}
	writeAuthnConfig(t, path, fileConfig(ti, mapping("one:")))
	s, err := NewJWTAuthenticatorsFromFile(path, JWTOptions{Brand: config.Brands["plat"]}, discard())
	if err != nil {
		t.Fatal(err)
	}
	s.updateTimeout = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx, 10*time.Millisecond)
	waitReady(t, s)
	tok := ti.token(t, nil)
	name := func() string {
		u, ok, err := s.AuthenticateToken(ctx, tok)
		if !ok {
			return "error: " + err.Error()
		}
		return u.Name
	}
	if got := name(); got != "one:alice-sub" {
		t.Fatalf("before reload: %s", got)
	}
	writeAuthnConfig(t, path, fileConfig(ti, mapping("two:")))
	deadline := time.Now().Add(10 * time.Second)
	for name() != "two:alice-sub" {
		if time.Now().After(deadline) {
			t.Fatalf("reload not applied: %s", name())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := s.Stats(); st.Success != 1 || st.Failure != 0 {
		t.Fatalf("stats = %+v", st)
	}
	// Invalid content keeps the old configuration and counts a failure.
	writeAuthnConfig(t, path, fileConfig(ti, "  claimMappings:\n    username:\n      claim: sub\n"))
	for s.Stats().Failure == 0 {
		if time.Now().After(deadline) {
			t.Fatal("failed reload not counted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := name(); got != "two:alice-sub" {
		t.Fatalf("after invalid reload: %s", got)
	}
	// The same bad content is tried (and counted) again, as upstream. The
	// periodic check may count one more meanwhile.
	failures := s.Stats().Failure
	if err := s.Reload(); err == nil || s.Stats().Failure < failures+1 {
		t.Fatalf("bad content retried: %v %+v", err, s.Stats())
	}
	// Content whose issuer cannot be discovered is not swapped in.
	writeAuthnConfig(t, path, strings.Replace(fileConfig(ti, mapping("three:")), "certificateAuthority", "discoveryURL: "+ti.url()+"/missing\n    certificateAuthority", 1))
	if err := s.Reload(); err == nil || !strings.Contains(err.Error(), "is not healthy") {
		t.Fatalf("undiscoverable issuer: %v", err)
	}
	if got := name(); got != "two:alice-sub" {
		t.Fatalf("after undiscoverable reload: %s", got)
	}
}

// startFile builds and starts the authenticators of an inline file body.
func startFile(t *testing.T, ti *testIssuer, rest string) *JWTAuthenticators {
	t.Helper()
	path := filepath.Join(t.TempDir(), "authn.yaml")
	writeAuthnConfig(t, path, fileConfig(ti, rest))
	s, err := NewJWTAuthenticatorsFromFile(path, JWTOptions{Brand: config.Brands["plat"]}, discard())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx, time.Hour)
	waitReady(t, s)
	return s
}

func TestJWTMappingRuntime(t *testing.T) {
	t.Parallel()
	ti := newTestIssuer(t)
	s := startFile(t, ti, `  claimMappings:
    username:
      expression: 'claims.?name.orValue(claims.sub)'
    groups:
      expression: 'claims.?g.orValue(null)'
    uid:
      expression: 'claims.?uid.orValue("")'
    extra:
    - key: example.com/x
      valueExpression: 'claims.?x.orValue([])'
  claimValidationRules:
  - expression: 'claims.?loop.orValue(0) == 0 || [1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a+b+c+d+e+f > 0))))))'
    message: expensive
`)
	ctx := context.Background()
	cases := []struct {
		name   string
		claims map[string]any
		want   *User
		errSub string
	}{
		{"null, empty list and empty string are absent", map[string]any{"x": []string{"", "a", ""}},
			&User{Name: "alice-sub", Extra: map[string][]string{"example.com/x": {"a"}}}, ""},
		{"groups from a string", map[string]any{"g": "one", "uid": "u1"}, &User{Name: "alice-sub", UID: "u1", Groups: []string{"one"}}, ""},
		{"groups not strings", map[string]any{"g": []int{1}}, nil, "oidc: error evaluating group claim expression: expression must return a string or a list of strings"},
		{"uid not a string", map[string]any{"uid": 5}, nil, "oidc: error evaluating uid claim expression: uid claim expression must return a string"},
		{"extra not strings", map[string]any{"x": map[string]int{"a": 1}}, nil, "oidc: error evaluating extra claim expression: claims.?x.orValue([]): expression must return a string or a list of strings"},
		{"empty username", map[string]any{"name": ""}, nil, "oidc: empty username via CEL expression is not allowed"},
		{"cost limit", map[string]any{"loop": 1}, nil, "oidc: error evaluating claim validation expression: operation cancelled: actual cost limit exceeded"},
	}
	for _, tc := range cases {
		u, ok, err := s.AuthenticateToken(ctx, ti.token(t, tc.claims))
		if tc.errSub != "" {
			if ok || err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Errorf("%s: ok=%v err=%v, want %q", tc.name, ok, err, tc.errSub)
			}
			continue
		}
		if !ok || err != nil || !reflect.DeepEqual(u, tc.want) {
			t.Errorf("%s: ok=%v err=%v user=%+v, want %+v", tc.name, ok, err, u, tc.want)
		}
	}
}

func TestJWTNotInitialized(t *testing.T) {
	t.Parallel()
	ti := newTestIssuer(t)
	// The issuer's CA is not configured: discovery cannot succeed.
	path := filepath.Join(t.TempDir(), "authn.yaml")
	body := strings.Replace(fileConfig(ti, "  claimMappings:\n    username:\n      claim: sub\n      prefix: \"\"\n"), "certificateAuthority", "discoveryURL: "+ti.url()+"/elsewhere\n    certificateAuthority", 1)
	writeAuthnConfig(t, path, body)
	s, err := NewJWTAuthenticatorsFromFile(path, JWTOptions{Brand: config.Brands["plat"]}, discard())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx, time.Hour)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(fmt.Sprint(s.Healthy()), "404") {
		if time.Now().After(deadline) {
			t.Fatalf("health: %v", s.Healthy())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.HasPrefix(s.Healthy().Error(), `oidc: authenticator for issuer "`+ti.url()+`" is not healthy: `) {
		t.Fatalf("health: %v", s.Healthy())
	}
	if _, ok, err := s.AuthenticateToken(ctx, ti.token(t, nil)); ok || err == nil || err.Error() != "oidc: authenticator not initialized" {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
}

// FuzzJWTAuthenticate feeds arbitrary tokens and arbitrary signed payloads:
// never a panic, a malformed token is never accepted.
func FuzzJWTAuthenticate(f *testing.F) {
	ti := newTestIssuer(f)
	path := filepath.Join(f.TempDir(), "authn.yaml")
	writeAuthnConfig(f, path, fileConfig(ti, mappingRules))
	s, err := NewJWTAuthenticatorsFromFile(path, JWTOptions{Brand: config.Brands["plat"]}, discard())
	if err != nil {
		f.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.Cleanup(cancel)
	s.Start(ctx, time.Hour)
	for deadline := time.Now().Add(10 * time.Second); s.Healthy() != nil && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	f.Add("a.b.c", []byte(`{"iss":"`+ti.url()+`","aud":"platd","exp":1e10,"email":"a","email_verified":true,"tenant":"t","hd":"example.com"}`))
	f.Add("eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOjF9.x", []byte(`{"iss":"`+ti.url()+`","aud":["platd"],"exp":"x","groups":[1]}`))
	f.Add("", []byte(`{"iss":"`+ti.url()+`","aud":"platd","exp":1e300,"nbf":-1e300}`))
	f.Fuzz(func(t *testing.T, token string, payload []byte) {
		if u, ok, _ := s.AuthenticateToken(ctx, token); ok {
			t.Fatalf("arbitrary token %q accepted as %+v", token, u)
		}
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: ti.key, KeyID: ti.kid}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		jws, err := signer.Sign(payload)
		if err != nil {
			return
		}
		signed, _ := jws.CompactSerialize()
		if u, ok, err := s.AuthenticateToken(ctx, signed); ok && (u == nil || u.Name == "" || err != nil) {
			t.Fatalf("accepted without a user: %+v %v", u, err)
		}
	})
}

func TestJWTDistributedGroups(t *testing.T) {
	t.Parallel()
	ti := newTestIssuer(t)
	s := startFile(t, ti, `  claimMappings:
    username:
      claim: sub
      prefix: ""
    groups:
      claim: groups
      prefix: "d:"
`)
	ctx := context.Background()
	dist := func(endpoint, access string) map[string]any {
		return map[string]any{
			"_claim_names":   map[string]string{"groups": "src1"},
			"_claim_sources": map[string]any{"src1": map[string]string{"endpoint": endpoint, "access_token": access}},
		}
	}
	ti.claimsJWT.Store(ti.token(t, map[string]any{"groups": []string{"a", "b"}}))
	u, ok, err := s.AuthenticateToken(ctx, ti.token(t, dist(ti.url()+"/claims", "at")))
	if !ok || err != nil || !reflect.DeepEqual(u.Groups, []string{"d:a", "d:b"}) {
		t.Fatalf("distributed groups: ok=%v err=%v user=%+v", ok, err, u)
	}
	// A token's own groups claim wins; no fetch is needed.
	own := dist("https://127.0.0.1:1/never", "at")
	own["groups"] = "own"
	if u, ok, err := s.AuthenticateToken(ctx, ti.token(t, own)); !ok || err != nil || !reflect.DeepEqual(u.Groups, []string{"d:own"}) {
		t.Fatalf("own groups: ok=%v err=%v user=%+v", ok, err, u)
	}
	for name, tc := range map[string]struct {
		claims map[string]any
		served string
		want   string
	}{
		"endpoint refuses": {dist(ti.url()+"/claims", "wrong"), "", "oidc: could not expand distributed claims: while getting distributed claim \"groups\": 401 Unauthorized"},
		"missing source":   {map[string]any{"_claim_names": map[string]string{"groups": "x"}, "_claim_sources": map[string]any{}}, "", "id token _claim_names contained a source x missing in _claims_sources"},
		"no sources":       {map[string]any{"_claim_names": map[string]string{"groups": "x"}}, "", "oidc: no claim sources"},
		"expired claims":   {dist(ti.url()+"/claims", "at"), ti.token(t, map[string]any{"groups": "a", "exp": 1}), "verify distributed claim token: oidc: token is expired"},
		"claim absent":     {dist(ti.url()+"/claims", "at"), ti.token(t, nil), "did not contain claim: groups"},
	} {
		if tc.served != "" {
			ti.claimsJWT.Store(tc.served)
		}
		_, ok, err := s.AuthenticateToken(ctx, ti.token(t, tc.claims))
		if ok || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ok=%v err=%v, want %q", name, ok, err, tc.want)
		}
	}
}
