package security

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"platd/config"
)

const saIssuer = "https://issuer.example"

// dom is the plat brand's long domain.
var dom = config.Brands["plat"].LongDomain

// fakeObjects is an in-memory TokenObjects.
type fakeObjects struct {
	mu   sync.Mutex
	objs map[string]*TokenObject
	used []string
}

func objKey(kind TokenObjectKind, ns, name string) string {
	return fmt.Sprint(kind, "/", ns, "/", name)
}

func (f *fakeObjects) put(kind TokenObjectKind, ns, name string, o *TokenObject) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o == nil {
		delete(f.objs, objKey(kind, ns, name))
		return
	}
	f.objs[objKey(kind, ns, name)] = o
}

func (f *fakeObjects) TokenObject(kind TokenObjectKind, ns, name string) (*TokenObject, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o, ok := f.objs[objKey(kind, ns, name)]; ok {
		return o, nil
	}
	return nil, fmt.Errorf("%s %q not found", []string{"serviceaccount", "secret", "pod", "node"}[kind], name)
}

func (f *fakeObjects) LegacyTokenUsed(ns, name, date string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.used = append(f.used, ns+"/"+name+"@"+date)
}

type saFixture struct {
	brand  config.Brand
	signer *TokenSigner
	objs   *fakeObjects
	now    time.Time
	auth   TokenAuthenticator
}

func newSAFixture(t *testing.T, key crypto.Signer, lookup bool) *saFixture {
	t.Helper()
	b, _ := config.LookupBrand("plat")
	s, err := NewTokenSigner(b, saIssuer, key)
	if err != nil {
		t.Fatal(err)
	}
	f := &saFixture{brand: b, signer: s, objs: &fakeObjects{objs: map[string]*TokenObject{}}, now: time.Unix(1735689600, 0)}
	f.objs.put(TokenServiceAccount, "default", "robot", &TokenObject{UID: "sa-uid"})
	f.auth, err = NewServiceAccountAuthenticator(ServiceAccountTokenConfig{
		Brand: b, Issuers: []string{"https://old.example", saIssuer}, Keys: []crypto.PublicKey{key.Public()},
		APIAudiences: []string{saIssuer}, Lookup: lookup, Objects: f.objs, Now: func() time.Time { return f.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *saFixture) bound(t *testing.T, mod func(*BoundToken)) string {
	t.Helper()
	bt := BoundToken{Namespace: "default", ServiceAccount: ObjectRef{Name: "robot", UID: "sa-uid"},
		Audiences: []string{saIssuer}, Lifetime: time.Hour, Now: f.now}
	if mod != nil {
		mod(&bt)
	}
	tok, _, err := f.signer.SignBound(bt)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func decodePart(t *testing.T, tok string, i int) map[string]any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[i])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func rawPart(t *testing.T, tok string, i int) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[i])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBoundTokenClaims(t *testing.T) {
	t.Parallel()
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	for _, tc := range []struct {
		key crypto.Signer
		alg string
	}{{rsaKey, "RS256"}, {ecKey, "ES384"}} {
		f := newSAFixture(t, tc.key, true)
		tok := f.bound(t, func(b *BoundToken) {
			b.Pod = &ObjectRef{Name: "web-0", UID: "pod-uid"}
			b.Node = &ObjectRef{Name: "n1", UID: "node-uid"}
			b.WarnAfter = WarnOnlyTokenSeconds * time.Second
		})
		kid, _ := KeyID(tc.key.Public())
		if got, want := rawPart(t, tok, 0), `{"alg":"`+tc.alg+`","kid":"`+kid+`"}`; got != want {
			t.Errorf("header = %s, want %s", got, want)
		}
		payload := rawPart(t, tok, 1)
		var order []string
		for _, k := range []string{`"aud"`, `"exp"`, `"iat"`, `"iss"`, `"jti"`, `"nbf"`, `"` + dom + `"`, `"sub"`} {
			order = append(order, k)
			if !strings.Contains(payload, k) {
				t.Fatalf("payload %s lacks %s", payload, k)
			}
		}
		for i := 1; i < len(order); i++ {
			if strings.Index(payload, order[i-1]) > strings.Index(payload, order[i]) {
				t.Errorf("claims not sorted: %s", payload)
			}
		}
		c := decodePart(t, tok, 1)
		want := map[string]any{
			"aud": []any{saIssuer}, "iss": saIssuer, "sub": "system:serviceaccount:default:robot",
			"iat": 1735689600.0, "nbf": 1735689600.0, "exp": 1735693200.0,
			dom: map[string]any{
				"namespace":      "default",
				"serviceaccount": map[string]any{"name": "robot", "uid": "sa-uid"},
				"pod":            map[string]any{"name": "web-0", "uid": "pod-uid"},
				"node":           map[string]any{"name": "n1", "uid": "node-uid"},
				"warnafter":      1735693207.0,
			},
		}
		jti, _ := c["jti"].(string)
		delete(c, "jti")
		if len(jti) != 36 || !reflect.DeepEqual(c, want) {
			t.Errorf("claims = %v (jti %q), want %v", c, jti, want)
		}
	}
}

func TestLegacyTokenClaims(t *testing.T) {
	t.Parallel()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	f := newSAFixture(t, key, true)
	tok, err := f.signer.SignLegacy(LegacyToken{Namespace: "default", ServiceAccountName: "robot", ServiceAccountUID: "sa-uid", SecretName: "robot-token"})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(`{"iss":"`+f.brand.LegacyTokenIssuer+`","D/serviceaccount/namespace":"default","D/serviceaccount/secret.name":"robot-token",`+
		`"D/serviceaccount/service-account.name":"robot","D/serviceaccount/service-account.uid":"sa-uid","sub":"system:serviceaccount:default:robot"}`, "D/", dom+"/")
	if got := rawPart(t, tok, 1); got != want {
		t.Errorf("legacy claims = %s\nwant %s", got, want)
	}
}

func TestSignBoundOneObject(t *testing.T) {
	t.Parallel()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	f := newSAFixture(t, key, true)
	_, _, err := f.signer.SignBound(BoundToken{Secret: &ObjectRef{Name: "s"}, Pod: &ObjectRef{Name: "p"}})
	if err == nil || err.Error() != "internal error, token can only be bound to one object type" {
		t.Errorf("err = %v", err)
	}
}

func TestBoundTokenAuthentication(t *testing.T) {
	t.Parallel()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	robot := func(extra map[string][]string) *User {
		return &User{Name: "system:serviceaccount:default:robot", UID: "sa-uid",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:default"}, Extra: extra}
	}
	type setup func(f *saFixture)
	tests := []struct {
		name    string
		mod     func(*BoundToken)
		setup   setup
		token   func(t *testing.T, f *saFixture, tok string) string
		ctxAuds []string
		later   time.Duration
		want    *User // with wantErr "" and want nil: ok=false
		wantErr string
	}{
		{name: "valid", want: robot(nil)},
		{name: "second issuer accepted", mod: func(b *BoundToken) {}, want: robot(nil)},
		{name: "pod bound with node", mod: func(b *BoundToken) {
			b.Pod = &ObjectRef{Name: "web-0", UID: "pod-uid"}
			b.Node = &ObjectRef{Name: "n1", UID: "node-uid"}
		}, setup: func(f *saFixture) { f.objs.put(TokenPod, "default", "web-0", &TokenObject{UID: "pod-uid"}) }, want: robot(map[string][]string{
			"authentication." + dom + "/pod-name": {"web-0"}, "authentication." + dom + "/pod-uid": {"pod-uid"},
			"authentication." + dom + "/node-name": {"n1"}, "authentication." + dom + "/node-uid": {"node-uid"},
		})},
		{name: "expired", later: time.Hour + 61*time.Second, wantErr: "service account token has expired"},
		{name: "expiry leeway", later: time.Hour + 59*time.Second, want: robot(nil)},
		{name: "not valid yet", later: -2 * time.Minute, wantErr: "service account token is not valid yet"},
		{name: "wrong audience", mod: func(b *BoundToken) { b.Audiences = []string{"vault"} },
			wantErr: `token audiences ["vault"] is invalid for the target audiences ["https://issuer.example"]`},
		{name: "requested audience", mod: func(b *BoundToken) { b.Audiences = []string{"vault"} }, ctxAuds: []string{"vault"}, want: robot(nil)},
		{name: "valid for the audiences both name", mod: func(b *BoundToken) { b.Audiences = []string{"vault", "db"} }, ctxAuds: []string{"db", "s3"},
			want: func() *User { u := robot(nil); u.Audiences = []string{"db"}; return u }()},
		{name: "sa deleted", setup: func(f *saFixture) { f.objs.put(TokenServiceAccount, "default", "robot", nil) },
			wantErr: `serviceaccount "robot" not found`},
		{name: "sa recreated", setup: func(f *saFixture) { f.objs.put(TokenServiceAccount, "default", "robot", &TokenObject{UID: "new"}) },
			wantErr: "service account UID (new) does not match claim (sa-uid)"},
		{name: "sa terminating long ago", setup: func(f *saFixture) {
			f.objs.put(TokenServiceAccount, "default", "robot", &TokenObject{UID: "sa-uid", Deleted: f.now.Add(-2 * time.Minute)})
		}, wantErr: "service account default/robot has been deleted"},
		{name: "sa terminating just now", setup: func(f *saFixture) {
			f.objs.put(TokenServiceAccount, "default", "robot", &TokenObject{UID: "sa-uid", Deleted: f.now})
		}, want: robot(nil)},
		{name: "bound pod gone", mod: func(b *BoundToken) { b.Pod = &ObjectRef{Name: "web-0", UID: "pod-uid"} },
			wantErr: "service account token has been invalidated"},
		{name: "bound pod recreated", mod: func(b *BoundToken) { b.Pod = &ObjectRef{Name: "web-0", UID: "pod-uid"} },
			setup:   func(f *saFixture) { f.objs.put(TokenPod, "default", "web-0", &TokenObject{UID: "other"}) },
			wantErr: "pod UID (other) does not match service account pod ref claim (pod-uid)"},
		{name: "bound secret gone", mod: func(b *BoundToken) { b.Secret = &ObjectRef{Name: "s", UID: "s-uid"} },
			wantErr: "service account token has been invalidated"},
		{name: "bound secret recreated", mod: func(b *BoundToken) { b.Secret = &ObjectRef{Name: "s", UID: "s-uid"} },
			setup:   func(f *saFixture) { f.objs.put(TokenSecret, "default", "s", &TokenObject{UID: "x"}) },
			wantErr: "secret UID (x) does not match service account secret ref claim (s-uid)"},
		{name: "bound node", mod: func(b *BoundToken) { b.Node = &ObjectRef{Name: "n1", UID: "n-uid"} },
			setup: func(f *saFixture) { f.objs.put(TokenNode, "", "n1", &TokenObject{UID: "n-uid"}) },
			want:  robot(map[string][]string{"authentication." + dom + "/node-name": {"n1"}, "authentication." + dom + "/node-uid": {"n-uid"}})},
		{name: "bound node gone", mod: func(b *BoundToken) { b.Node = &ObjectRef{Name: "n1", UID: "n-uid"} },
			wantErr: "service account token has been invalidated"},
		{name: "other issuer is not ours", token: func(t *testing.T, f *saFixture, _ string) string {
			s, _ := NewTokenSigner(f.brand, "https://elsewhere", key)
			tok, _, _ := s.SignBound(BoundToken{Namespace: "default", Now: f.now, Lifetime: time.Hour})
			return tok
		}},
		{name: "not a jwt", token: func(*testing.T, *saFixture, string) string { return "abc.def" }},
		{name: "json", token: func(*testing.T, *saFixture, string) string { return `{"iss":"x"}.a.b` }},
		{name: "unknown key", token: func(t *testing.T, f *saFixture, _ string) string {
			s, _ := NewTokenSigner(f.brand, saIssuer, other)
			tok, _, _ := s.SignBound(BoundToken{Namespace: "default", Now: f.now, Lifetime: time.Hour})
			return tok
		}, wantErr: "invalid signature, no keys found"},
		{name: "tampered payload", token: func(t *testing.T, f *saFixture, tok string) string {
			p := strings.Split(tok, ".")
			body := strings.Replace(rawPart(t, tok, 1), `"robot"`, `"admin"`, -1)
			return p[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(body)) + "." + p[2]
		}, wantErr: "go-jose/go-jose: error in cryptographic primitive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newSAFixture(t, key, true)
			if tc.setup != nil {
				tc.setup(f)
			}
			tok := f.bound(t, tc.mod)
			if tc.name == "second issuer accepted" {
				s, _ := NewTokenSigner(f.brand, "https://old.example", key)
				tok, _, _ = s.SignBound(BoundToken{Namespace: "default", ServiceAccount: ObjectRef{Name: "robot", UID: "sa-uid"}, Now: f.now, Lifetime: time.Hour})
			}
			if tc.token != nil {
				tok = tc.token(t, f, tok)
			}
			f.now = f.now.Add(tc.later)
			ctx := context.Background()
			if tc.ctxAuds != nil {
				ctx = WithAudiences(ctx, tc.ctxAuds)
			}
			u, ok, err := f.auth.AuthenticateToken(ctx, tok)
			checkAuth(t, u, ok, err, tc.want, tc.wantErr)
		})
	}
}

func checkAuth(t *testing.T, u *User, ok bool, err error, want *User, wantErr string) {
	t.Helper()
	switch {
	case wantErr != "":
		if err == nil || err.Error() != wantErr || ok {
			t.Errorf("got %v, %v, %v; want error %q", u, ok, err, wantErr)
		}
	case want == nil:
		if ok || err != nil {
			t.Errorf("got %v, %v, %v; want not mine", u, ok, err)
		}
	default:
		if err != nil || !ok {
			t.Fatalf("got %v, %v; want %v", ok, err, want)
		}
		if len(u.Extra) == 0 {
			u.Extra = nil
		}
		if cid := u.Extra[CredentialIDKey(config.Brands["plat"])]; len(cid) != 1 || !strings.HasPrefix(cid[0], "JTI=") {
			if u.Extra != nil || want.Extra != nil {
				t.Errorf("credential id = %v", cid)
			}
		} else {
			delete(u.Extra, CredentialIDKey(config.Brands["plat"]))
			if len(u.Extra) == 0 {
				u.Extra = nil
			}
		}
		if want.Audiences == nil {
			// Audiences are checked where a case names them.
			u.Audiences = nil
		}
		if !reflect.DeepEqual(u, want) {
			t.Errorf("user = %+v, want %+v", u, want)
		}
	}
}

// A cached token is checked against its bound objects on every use.
func TestVerifiedCacheRechecksBoundObjects(t *testing.T) {
	t.Parallel()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	f := newSAFixture(t, key, true)
	f.objs.put(TokenPod, "default", "web-0", &TokenObject{UID: "pod-uid"})
	tok := f.bound(t, func(b *BoundToken) { b.Pod = &ObjectRef{Name: "web-0", UID: "pod-uid"} })
	for range 2 {
		if _, ok, err := f.auth.AuthenticateToken(context.Background(), tok); !ok || err != nil {
			t.Fatalf("ok=%v err=%v", ok, err)
		}
	}
	f.objs.put(TokenPod, "default", "web-0", nil)
	if _, _, err := f.auth.AuthenticateToken(context.Background(), tok); err == nil || err.Error() != "service account token has been invalidated" {
		t.Errorf("after the pod's deletion: %v", err)
	}
	f.objs.put(TokenPod, "default", "web-0", &TokenObject{UID: "pod-uid"})
	f.now = f.now.Add(2 * time.Hour)
	if _, _, err := f.auth.AuthenticateToken(context.Background(), tok); err == nil || err.Error() != "service account token has expired" {
		t.Errorf("after expiry: %v", err)
	}
}

func TestVerifiedCacheIsBounded(t *testing.T) {
	t.Parallel()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	f := newSAFixture(t, key, true)
	for range verifiedCacheSize + 10 {
		if _, ok, err := f.auth.AuthenticateToken(context.Background(), f.bound(t, nil)); !ok || err != nil {
			t.Fatal(err)
		}
	}
	a := f.auth.(*saAuthenticator)
	if n := len(a.cache); n > verifiedCacheSize {
		t.Errorf("cache holds %d entries, more than %d", n, verifiedCacheSize)
	}
}

func TestLegacyTokenAuthentication(t *testing.T) {
	t.Parallel()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	robot := &User{Name: "system:serviceaccount:default:robot", UID: "sa-uid",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:default"}}
	tests := []struct {
		name     string
		noLookup bool
		secret   func(tok string) *TokenObject
		sa       *TokenObject
		claims   LegacyToken
		want     *User
		wantErr  string
		wantWarn string
		wantUsed bool
	}{
		{name: "valid", secret: func(tok string) *TokenObject { return &TokenObject{UID: "s", Token: []byte(tok)} }, want: robot, wantUsed: true},
		{name: "used today already", secret: func(tok string) *TokenObject {
			return &TokenObject{UID: "s", Token: []byte(tok), Labels: map[string]string{dom + "/legacy-token-last-used": "2025-01-01"}}
		}, want: robot},
		{name: "auto-generated", sa: &TokenObject{UID: "sa-uid", SecretNames: []string{"robot-token"}},
			secret: func(tok string) *TokenObject { return &TokenObject{UID: "s", Token: []byte(tok)} }, want: robot, wantUsed: true,
			wantWarn: "Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens."},
		{name: "secret gone", wantErr: "Token has been invalidated"},
		{name: "secret gone without lookup", noLookup: true, want: robot},
		{name: "secret terminating", secret: func(tok string) *TokenObject {
			return &TokenObject{UID: "s", Token: []byte(tok), Deleted: time.Unix(1, 0)}
		},
			wantErr: "Token has been invalidated"},
		{name: "secret holds another token", secret: func(string) *TokenObject { return &TokenObject{UID: "s", Token: []byte("x")} },
			wantErr: "Token does not match server's copy"},
		{name: "sa recreated", sa: &TokenObject{UID: "new"}, secret: func(tok string) *TokenObject { return &TokenObject{UID: "s", Token: []byte(tok)} },
			wantErr: "ServiceAccount UID (new) does not match claim (sa-uid)"},
		{name: "sa terminating", sa: &TokenObject{UID: "sa-uid", Deleted: time.Unix(1, 0)}, secret: func(tok string) *TokenObject { return &TokenObject{UID: "s", Token: []byte(tok)} },
			wantErr: "ServiceAccount default/robot has been deleted"},
		{name: "marked invalid", secret: func(tok string) *TokenObject {
			return &TokenObject{UID: "s", Token: []byte(tok), Labels: map[string]string{dom + "/legacy-token-invalid-since": "2024-01-01"}}
		}, wantUsed: true, wantErr: "the token in secret default/robot-token for service account default/robot has been marked invalid. " +
			"Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '" + dom + "/legacy-token-invalid-since' label from the secret to temporarily allow use of this token"},
		{name: "missing secret claim", claims: LegacyToken{Namespace: "default", ServiceAccountName: "robot", ServiceAccountUID: "u"}, wantErr: "secretName claim is missing"},
		{name: "missing uid claim", claims: LegacyToken{Namespace: "default", ServiceAccountName: "robot", SecretName: "s"}, wantErr: "serviceAccountUID claim is missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newSAFixture(t, key, !tc.noLookup)
			claims := tc.claims
			if claims == (LegacyToken{}) {
				claims = LegacyToken{Namespace: "default", ServiceAccountName: "robot", ServiceAccountUID: "sa-uid", SecretName: "robot-token"}
			}
			tok, err := f.signer.SignLegacy(claims)
			if err != nil {
				t.Fatal(err)
			}
			if tc.secret != nil {
				f.objs.put(TokenSecret, "default", "robot-token", tc.secret(tok))
			}
			if tc.sa != nil {
				f.objs.put(TokenServiceAccount, "default", "robot", tc.sa)
			}
			var warned []string
			ctx := WithWarnings(context.Background(), func(m string) { warned = append(warned, m) })
			u, ok, err := f.auth.AuthenticateToken(ctx, tok)
			checkAuth(t, u, ok, err, tc.want, tc.wantErr)
			if tc.wantWarn != "" && (len(warned) != 1 || warned[0] != tc.wantWarn) {
				t.Errorf("warnings = %q, want %q", warned, tc.wantWarn)
			}
			if tc.wantWarn == "" && len(warned) > 0 {
				t.Errorf("unexpected warnings %q", warned)
			}
			if used := len(f.objs.used) > 0; used != tc.wantUsed {
				t.Errorf("last-used stamped = %v (%v), want %v", used, f.objs.used, tc.wantUsed)
			} else if used && f.objs.used[0] != "default/robot-token@2025-01-01" {
				t.Errorf("last-used = %v", f.objs.used)
			}
		})
	}
}

func TestSplitServiceAccountUsername(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"system:serviceaccount:default:robot": "default/robot",
		"system:serviceaccount:default":       "",
		"system:serviceaccount:a:b:c":         "",
		"system:serviceaccount:Bad:robot":     "",
		"alice":                               "",
	} {
		ns, name, err := SplitServiceAccountUsername(in)
		got := ns + "/" + name
		if err != nil {
			got = ""
			if err.Error() != "Username must be in the form system:serviceaccount:namespace:name" {
				t.Errorf("%s: %v", in, err)
			}
		}
		if got != want {
			t.Errorf("%s: got %q, want %q", in, got, want)
		}
	}
}

func TestIssuerDiscovery(t *testing.T) {
	t.Parallel()
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cfg, jwks, err := IssuerDiscovery(saIssuer, "", "10.0.0.1:6443", []crypto.PublicKey{ecKey.Public(), rsaKey.Public(), rsaKey.Public()})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"issuer":"https://issuer.example","jwks_uri":"https://10.0.0.1:6443/openid/v1/jwks","response_types_supported":["id_token"],` +
		`"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256","RS256"]}`
	if string(cfg) != want {
		t.Errorf("config = %s\nwant %s", cfg, want)
	}
	var set struct{ Keys []map[string]any }
	if err := json.Unmarshal(jwks, &set); err != nil || len(set.Keys) != 2 {
		t.Fatalf("jwks = %s (%v)", jwks, err)
	}
	kid, _ := KeyID(rsaKey.Public())
	if k := set.Keys[1]; k["use"] != "sig" || k["kty"] != "RSA" || k["alg"] != "RS256" || k["kid"] != kid || k["e"] != "AQAB" {
		t.Errorf("rsa jwk = %v", k)
	}
	for _, bad := range []string{"http://x", "https://x?a=b", "https://x#f", config.Brands["plat"].LegacyTokenIssuer} {
		if _, _, err := IssuerDiscovery(bad, "", "h", nil); err == nil {
			t.Errorf("issuer %q: discovery not refused", bad)
		}
	}
}

// FuzzServiceAccountToken feeds arbitrary tokens to the JWT path: never a
// panic, and never a user.
func FuzzServiceAccountToken(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	b, _ := config.LookupBrand("plat")
	s, _ := NewTokenSigner(b, saIssuer, key)
	tok, _, _ := s.SignBound(BoundToken{Namespace: "default", ServiceAccount: ObjectRef{Name: "robot", UID: "u"}, Now: time.Now(), Lifetime: time.Hour})
	legacy, _ := s.SignLegacy(LegacyToken{Namespace: "default", ServiceAccountName: "robot", ServiceAccountUID: "u", SecretName: "s"})
	for _, seed := range []string{tok, legacy, "", "a.b.c", "{}", "eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL2lzc3Vlci5leGFtcGxlIn0."} {
		f.Add(seed)
	}
	objs := &fakeObjects{objs: map[string]*TokenObject{}}
	a, err := NewServiceAccountAuthenticator(ServiceAccountTokenConfig{Brand: b, Issuers: []string{saIssuer},
		Keys: []crypto.PublicKey{key.Public()}, APIAudiences: []string{saIssuer}, Lookup: true, Objects: objs})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, token string) {
		u, ok, _ := a.AuthenticateToken(context.Background(), token)
		if ok || u != nil {
			t.Fatalf("token %q authenticated as %v", token, u)
		}
	})
}
