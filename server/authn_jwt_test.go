package server_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"platd/config"
	"platd/server"
)

// oidcProvider is a real OpenID provider in the test process: discovery
// and JWKS over TLS on 127.0.0.1, tokens signed with go-jose.
type oidcProvider struct {
	srv *httptest.Server
	key *rsa.PrivateKey
}

func newOIDCProvider(t *testing.T) *oidcProvider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &oidcProvider{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": p.srv.URL, "jwks_uri": p.srv.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k", Algorithm: "RS256", Use: "sig"}}})
	})
	p.srv = httptest.NewTLSServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *oidcProvider) caPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw}))
}

func (p *oidcProvider) token(t *testing.T, claims map[string]any) string {
	t.Helper()
	c := map[string]any{"iss": p.srv.URL, "aud": "platd", "exp": time.Now().Add(time.Hour).Unix(), "sub": "alice"}
	for k, v := range claims {
		c[k] = v
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: p.key, KeyID: "k"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(c)
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := jws.CompactSerialize()
	return s
}

// config is an authentication configuration file for p whose user names
// get prefix; groups come unprefixed from the groups claim.
func (p *oidcProvider) config(prefix string) string {
	ca := "      " + strings.ReplaceAll(strings.TrimSpace(p.caPEM()), "\n", "\n      ")
	return "apiVersion: " + config.AuthenticationConfigAPIVersions(platBrand)[0] + `
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ` + p.srv.URL + `
    audiences: [platd]
    certificateAuthority: |
` + ca + `
  claimValidationRules:
  - expression: 'claims.?tenant.orValue("") == "acme" && isURL(claims.iss)'
    message: tenant must be acme
  claimMappings:
    username:
      claim: sub
      prefix: "` + prefix + `"
    groups:
      claim: groups
      prefix: ""
`
}

func writeFileAtomic(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

func TestJWTAuthenticationConfig(t *testing.T) {
	t.Parallel()
	p := newOIDCProvider(t)
	file := filepath.Join(t.TempDir(), "authn.yaml")
	writeFileAtomic(t, file, p.config("one:"))
	// AlwaysDeny: only system:masters passes, and the 403 names the user.
	e := start(t, func(o *config.Options) {
		o.AuthenticationConfigFile = file
		o.AuthenticationConfigReloadInterval = 20 * time.Millisecond
		o.AuthorizationModes = []string{config.ModeAlwaysDeny}
	})
	const path = "/api/v1/namespaces/default/configmaps"
	get := func(token string) *resp {
		return e.send(req{method: "GET", path: path, token: token})
	}
	forbidden := func(user string) string {
		return `configmaps is forbidden: User "` + user + `" cannot list resource "configmaps" in API group "" in the namespace "default": Everything is forbidden.`
	}
	good := map[string]any{"tenant": "acme"}
	// Discovery runs in the background: poll until the issuer is known.
	eventually(t, "JWT authenticator ready", func() bool { return get(p.token(t, good)).code == 403 })
	get(p.token(t, good)).mustCode(t, 403).mustMessage(t, forbidden("one:alice"))
	get(p.token(t, map[string]any{"tenant": "acme", "groups": []string{"system:masters"}})).mustCode(t, 200)

	for name, claims := range map[string]map[string]any{
		"expired":            {"tenant": "acme", "exp": time.Now().Add(-time.Minute).Unix()},
		"wrong audience":     {"tenant": "acme", "aud": "other"},
		"wrong issuer":       {"tenant": "acme", "iss": "https://elsewhere.example"},
		"failing claim rule": {"tenant": "other"},
	} {
		if r := get(p.token(t, claims)); r.code != 401 {
			t.Errorf("%s: status %d, body %s", name, r.code, r.body)
		}
	}
	if r := get("e30.e30.e30"); r.code != 401 {
		t.Errorf("malformed token: status %d", r.code)
	}

	// A changed file takes effect without a restart.
	writeFileAtomic(t, file, p.config("two:"))
	eventually(t, "reloaded prefix", func() bool {
		return strings.Contains(string(get(p.token(t, good)).body), `User \"two:alice\"`)
	})
	// Invalid new content is refused and the previous configuration stays.
	writeFileAtomic(t, file, strings.Replace(p.config("three:"), "audiences: [platd]", "audiences: []", 1))
	eventually(t, "failed reload counted", func() bool { return e.srv.AuthenticationConfigReloads().Failure >= 1 })
	if r := get(p.token(t, good)); !strings.Contains(string(r.body), `User \"two:alice\"`) {
		t.Fatalf("invalid reload changed the configuration: %d %s", r.code, r.body)
	}
	if st := e.srv.AuthenticationConfigReloads(); st.Success != 1 {
		t.Errorf("reloads = %+v, want one success", st)
	}
}

func TestJWTOIDCFlags(t *testing.T) {
	t.Parallel()
	p := newOIDCProvider(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	writeFileAtomic(t, ca, p.caPEM())
	e := start(t, func(o *config.Options) {
		o.OIDC = config.OIDCFlags{IssuerURL: p.srv.URL, ClientID: "platd", CAFile: ca, UsernameClaim: "sub", GroupsClaim: "groups"}
		o.AuthorizationModes = []string{config.ModeAlwaysDeny}
	})
	get := func(token string) *resp {
		return e.send(req{method: "GET", path: "/api/v1/namespaces", token: token})
	}
	eventually(t, "OIDC authenticator ready", func() bool { return get(p.token(t, nil)).code == 403 })
	get(p.token(t, nil)).mustCode(t, 403).mustMessage(t, `namespaces is forbidden: User "`+p.srv.URL+`#alice" cannot list resource "namespaces" in API group "" at the cluster scope: Everything is forbidden.`)
	get(p.token(t, map[string]any{"groups": "system:masters"})).mustCode(t, 200)
	if r := get(p.token(t, map[string]any{"aud": "x"})); r.code != 401 {
		t.Errorf("wrong audience: %d", r.code)
	}
}

func TestJWTInvalidConfigStopsStart(t *testing.T) {
	t.Parallel()
	p := newOIDCProvider(t)
	file := filepath.Join(t.TempDir(), "authn.yaml")
	writeFileAtomic(t, file, strings.Replace(p.config(""), `claims.?tenant.orValue("") == "acme"`, `claims.tenant +`, 1))
	dir := filepath.Join(t.TempDir(), "data")
	o := testOptions(t, dir, func(o *config.Options) { o.AuthenticationConfigFile = file })
	_, err := server.New(context.Background(), o, quietLog())
	if !errors.Is(err, config.ErrInvalid) {
		t.Fatalf("err = %v, want a configuration error (exit 2)", err)
	}
	want := "--authentication-config: invalid authentication configuration: " + file + `: invalid authentication config: jwt[0].claimValidationRules[0].expression: Invalid value: "claims.tenant + && isURL(claims.iss)": compilation failed: ERROR: <input>:1:17: Syntax error:`
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v\nwant it to contain %s", err, want)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("data directory written before the configuration was checked: %v", err)
	}
}

func TestAnonymousFromAuthenticationConfig(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "authn.yaml")
	writeFileAtomic(t, file, "apiVersion: "+config.AuthenticationConfigAPIVersions(platBrand)[0]+`
kind: AuthenticationConfiguration
anonymous:
  enabled: true
  conditions:
  - path: /livez
`)
	e := start(t, func(o *config.Options) {
		o.AuthenticationConfigFile = file
		o.AuthorizationModes = []string{config.ModeAlwaysDeny}
	})
	// Anonymous is let in on /livez only: elsewhere no credential is 401.
	e.send(req{method: "GET", path: "/api/v1/namespaces"}).mustCode(t, 401)
	e.send(req{method: "GET", path: "/livez"}).mustCode(t, 403).mustMessage(t, `forbidden: User "system:anonymous" cannot get path "/livez": Everything is forbidden.`)
}

// TestJWTSelfSubjectReview checks the whole mapping as the server reports
// it: user name, uid, groups with the prefix and system:authenticated, and
// the extras with the token's credential id.
func TestJWTSelfSubjectReview(t *testing.T) {
	t.Parallel()
	p := newOIDCProvider(t)
	file := filepath.Join(t.TempDir(), "authn.yaml")
	writeFileAtomic(t, file, strings.Replace(p.config("oidc:"), "    groups:\n      claim: groups\n      prefix: \"\"\n",
		"    groups:\n      claim: groups\n      prefix: \"g:\"\n    uid:\n      expression: '\"uid-\" + claims.sub'\n    extra:\n    - key: example.com/tenant\n      valueExpression: claims.tenant\n", 1))
	e := start(t, func(o *config.Options) { o.AuthenticationConfigFile = file })
	ssr := "/apis/" + platBrand.Group("authentication") + "/v1/selfsubjectreviews"
	tok := p.token(t, map[string]any{"tenant": "acme", "groups": []string{"dev", "ops"}, "jti": "j-1"})
	eventually(t, "JWT authenticator ready", func() bool {
		return e.send(req{method: "POST", path: ssr, body: `{}`, token: tok}).code == 201
	})
	got := e.send(req{method: "POST", path: ssr, body: `{}`, token: tok}).mustCode(t, 201).obj(t)
	want := map[string]any{
		"username": "oidc:alice", "uid": "uid-alice",
		"groups": []string{"g:dev", "g:ops", "system:authenticated"},
		"extra": map[string][]string{
			"authentication." + platBrand.LongDomain + "/credential-id": {"JTI=j-1"},
			"example.com/tenant": {"acme"},
		},
	}
	if g, w := jsonOf(t, path(got, "status.userInfo")), jsonOf(t, want); g != w {
		t.Errorf("userInfo = %s\nwant       %s", g, w)
	}
}
