package server_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"platd/config"
)

// jwtClaims decodes the payload of a compact JWS.
func jwtClaims(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWS: %q", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// requestToken posts a TokenRequest for ns/sa and returns the response.
func (e *env) requestToken(ns, sa string, spec map[string]any) *resp {
	e.t.Helper()
	return e.do("POST", "/api/v1/namespaces/"+ns+"/serviceaccounts/"+sa+"/token", map[string]any{
		"apiVersion": platBrand.Group("authentication") + "/v1", "kind": "TokenRequest", "spec": spec,
	})
}

// token posts a TokenRequest that must succeed and returns the token.
func (e *env) token(ns, sa string, spec map[string]any) string {
	e.t.Helper()
	r := e.requestToken(ns, sa, spec).mustCode(e.t, 201)
	tok, _ := path(r.obj(e.t), "status.token").(string)
	return tok
}

func (e *env) create(t *testing.T, p string, body any) map[string]any {
	t.Helper()
	return e.do("POST", p, body).mustCode(t, 201).obj(t)
}

func TestServiceAccountTokens(t *testing.T) {
	t.Parallel()
	e := start(t)
	issuer := config.DefaultServiceAccountIssuer(platBrand)
	sa := e.create(t, "/api/v1/namespaces/default/serviceaccounts", map[string]any{"metadata": map[string]any{"name": "robot"}})
	saUID := path(sa, "metadata.uid").(string)
	asToken := func(tok, p string) *resp {
		return e.send(req{method: "GET", path: p, token: tok})
	}
	unauthorized := func(t *testing.T, r *resp) {
		t.Helper()
		r.mustCode(t, 401).mustMessage(t, "Unauthorized")
	}
	// reviewError checks a TokenReview's status.error for tok: the
	// authenticator's text (which the 401 does not show) in upstream's
	// aggregate beside the bearer authenticator's own.
	reviewError := func(t *testing.T, tok, want string) {
		t.Helper()
		body := map[string]any{"apiVersion": platBrand.Group("authentication") + "/v1", "kind": "TokenReview", "spec": map[string]any{"token": tok}}
		st := e.do("POST", "/apis/"+platBrand.Group("authentication")+"/v1/tokenreviews", body).mustCode(t, 201).obj(t)["status"].(map[string]any)
		if want = "[invalid bearer token, " + want + "]"; st["error"] != want || st["authenticated"] == true {
			t.Errorf("TokenReview status = %v, want error %q", st, want)
		}
	}

	t.Run("token request", func(t *testing.T) {
		before := time.Now().Truncate(time.Second)
		r := e.requestToken("default", "robot", map[string]any{}).mustCode(t, 201).obj(t)
		if r["kind"] != "TokenRequest" || r["apiVersion"] != platBrand.Group("authentication")+"/v1" {
			t.Errorf("kind/apiVersion: %v %v", r["kind"], r["apiVersion"])
		}
		if path(r, "metadata.name") != "robot" || path(r, "metadata.namespace") != "default" || path(r, "metadata.creationTimestamp") == nil {
			t.Errorf("metadata = %v", r["metadata"])
		}
		spec := r["spec"].(map[string]any)
		// boundObjectRef is written as null when unset, as upstream's
		// field has no omitempty.
		if ref, ok := spec["boundObjectRef"]; !ok || ref != nil || spec["expirationSeconds"] != 3600.0 {
			t.Errorf("spec = %v", spec)
		}
		// The defaulted lifetime is the requester's, as upstream's decoder
		// defaults it before field ownership is recorded.
		mf, _ := path(r, "metadata.managedFields").([]any)
		if len(mf) != 1 || path(mf[0].(map[string]any), "subresource") != "token" || path(mf[0].(map[string]any), "operation") != "Update" ||
			!reflect.DeepEqual(path(mf[0].(map[string]any), "fieldsV1"), map[string]any{"f:spec": map[string]any{"f:expirationSeconds": map[string]any{}}}) {
			t.Errorf("managedFields = %v", mf)
		}
		if auds, _ := spec["audiences"].([]any); len(auds) != 1 || auds[0] != issuer {
			t.Errorf("audiences = %v, want the issuer", spec["audiences"])
		}
		exp, err := time.Parse(time.RFC3339, path(r, "status.expirationTimestamp").(string))
		if err != nil || exp.Before(before.Add(time.Hour)) || exp.After(time.Now().Add(time.Hour+time.Second)) {
			t.Errorf("expirationTimestamp = %v (%v)", exp, err)
		}
		c := jwtClaims(t, path(r, "status.token").(string))
		if c["iss"] != issuer || c["sub"] != "system:serviceaccount:default:robot" || c["exp"].(float64)-c["iat"].(float64) != 3600 {
			t.Errorf("claims = %v", c)
		}
		priv, _ := c[platBrand.LongDomain].(map[string]any)
		if path(priv, "serviceaccount.uid") != saUID || priv["namespace"] != "default" {
			t.Errorf("private claims = %v", priv)
		}
		// The token authenticates as the service account.
		tok := path(r, "status.token").(string)
		asToken(tok, "/api/v1/namespaces/default/configmaps").mustCode(t, 200)
		who := e.send(req{method: "POST", path: "/apis/" + platBrand.Group("authentication") + "/v1/selfsubjectreviews", token: tok,
			body: map[string]any{"apiVersion": platBrand.Group("authentication") + "/v1", "kind": "SelfSubjectReview"}}).mustCode(t, 201).obj(t)
		ui, _ := path(who, "status.userInfo").(map[string]any)
		cred, _ := path(ui, "extra").(map[string]any)["authentication."+platBrand.LongDomain+"/credential-id"].([]any)
		if ui["username"] != "system:serviceaccount:default:robot" || ui["uid"] != saUID || len(cred) != 1 || cred[0] != "JTI="+c["jti"].(string) ||
			strings.Join(strings.Fields(fmt.Sprint(ui["groups"])), " ") != "[system:serviceaccounts system:serviceaccounts:default system:authenticated]" {
			t.Errorf("whoami = %v", ui)
		}
	})

	t.Run("expiration too short", func(t *testing.T) {
		e.requestToken("default", "robot", map[string]any{"expirationSeconds": 60}).mustCode(t, 422).
			mustMessage(t, `TokenRequest.`+platBrand.Group("authentication")+` "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes`)
	})
	t.Run("expiration too long", func(t *testing.T) {
		e.requestToken("default", "robot", map[string]any{"expirationSeconds": int64(1<<32) + 1}).mustCode(t, 422).
			mustMessage(t, `TokenRequest.`+platBrand.Group("authentication")+` "" is invalid: spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds`)
	})
	t.Run("missing service account", func(t *testing.T) {
		e.requestToken("default", "nope", map[string]any{}).mustCode(t, 404).mustMessage(t, `serviceaccounts "nope" not found`)
	})
	t.Run("name mismatch", func(t *testing.T) {
		e.do("POST", "/api/v1/namespaces/default/serviceaccounts/robot/token", map[string]any{
			"apiVersion": platBrand.Group("authentication") + "/v1", "kind": "TokenRequest", "metadata": map[string]any{"name": "other"}, "spec": map[string]any{},
		}).mustCode(t, 422).mustMessage(t, `TokenRequest.`+platBrand.Group("authentication")+` "" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified`)
	})
	t.Run("wrong audience", func(t *testing.T) {
		tok := e.token("default", "robot", map[string]any{"audiences": []string{"vault"}})
		unauthorized(t, asToken(tok, "/api/v1/namespaces/default/configmaps"))
		reviewError(t, tok, `token audiences ["vault"] is invalid for the target audiences ["`+issuer+`"]`)
	})
	t.Run("bound to an unknown kind", func(t *testing.T) {
		e.requestToken("default", "robot", map[string]any{"boundObjectRef": map[string]any{"kind": "ConfigMap", "apiVersion": "v1", "name": "x"}}).
			mustCode(t, 400).mustMessage(t, "cannot bind token to object of type /v1, Kind=ConfigMap")
	})
	t.Run("bound secret revoked by deletion", func(t *testing.T) {
		s := e.create(t, "/api/v1/namespaces/default/secrets", map[string]any{"metadata": map[string]any{"name": "bound"}})
		ref := map[string]any{"kind": "Secret", "apiVersion": "v1", "name": "bound"}
		ref["uid"] = "not-the-uid"
		e.requestToken("default", "robot", map[string]any{"boundObjectRef": ref}).mustCode(t, 409).
			mustMessage(t, `Operation cannot be fulfilled on Secret "bound": the UID in the bound object reference (not-the-uid) does not match the UID in record. The object might have been deleted and then recreated`)
		ref["uid"] = path(s, "metadata.uid")
		tok := e.token("default", "robot", map[string]any{"boundObjectRef": ref})
		if c := jwtClaims(t, tok)[platBrand.LongDomain].(map[string]any); path(c, "secret.uid") != ref["uid"] {
			t.Errorf("secret claim = %v", c)
		}
		asToken(tok, "/api/v1/namespaces/default/configmaps").mustCode(t, 200)
		e.do("DELETE", "/api/v1/namespaces/default/secrets/bound", nil).mustCode(t, 200)
		unauthorized(t, asToken(tok, "/api/v1/namespaces/default/configmaps"))
		reviewError(t, tok, "service account token has been invalidated")
	})
	t.Run("bound pod revoked by deletion", func(t *testing.T) {
		e.create(t, "/api/v1/namespaces/default/pods", map[string]any{
			"metadata": map[string]any{"name": "web"},
			"spec":     map[string]any{"serviceAccountName": "robot", "containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
		})
		e.create(t, "/api/v1/namespaces/default/pods", map[string]any{
			"metadata": map[string]any{"name": "other-sa"},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
		})
		e.requestToken("default", "robot", map[string]any{"boundObjectRef": map[string]any{"kind": "Pod", "apiVersion": "v1", "name": "other-sa"}}).
			mustCode(t, 400).mustMessage(t, `cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.`)
		e.requestToken("default", "robot", map[string]any{"boundObjectRef": map[string]any{"kind": "Pod", "apiVersion": "v1", "name": "absent"}}).
			mustCode(t, 404).mustMessage(t, `pods "absent" not found`)
		r := e.requestToken("default", "robot", map[string]any{"expirationSeconds": 3607,
			"boundObjectRef": map[string]any{"kind": "Pod", "apiVersion": "v1", "name": "web"}}).mustCode(t, 201).obj(t)
		tok := path(r, "status.token").(string)
		c := jwtClaims(t, tok)
		// The extension: a year in the token, the hour in the status.
		priv := c[platBrand.LongDomain].(map[string]any)
		if c["exp"].(float64)-c["iat"].(float64) != 24*365*3600 || priv["warnafter"].(float64)-c["iat"].(float64) != 3607 {
			t.Errorf("extended claims = %v", c)
		}
		if exp, _ := time.Parse(time.RFC3339, path(r, "status.expirationTimestamp").(string)); exp.After(time.Now().Add(3608 * time.Second)) {
			t.Errorf("expirationTimestamp %v is not the requested hour", exp)
		}
		asToken(tok, "/api/v1/namespaces/default/configmaps").mustCode(t, 200)
		e.do("DELETE", "/api/v1/namespaces/default/pods/web?gracePeriodSeconds=0", nil)
		eventually(t, "the pod's token revoked", func() bool {
			return asToken(tok, "/api/v1/namespaces/default/configmaps").code == 401
		})
	})
	t.Run("service account deleted", func(t *testing.T) {
		e.create(t, "/api/v1/namespaces/default/serviceaccounts", map[string]any{"metadata": map[string]any{"name": "shortlived"}})
		tok := e.token("default", "shortlived", map[string]any{})
		asToken(tok, "/api/v1/namespaces/default/configmaps").mustCode(t, 200)
		old := jwtClaims(t, tok)[platBrand.LongDomain].(map[string]any)
		e.do("DELETE", "/api/v1/namespaces/default/serviceaccounts/shortlived", nil).mustCode(t, 200)
		unauthorized(t, asToken(tok, "/api/v1/namespaces/default/configmaps"))
		reviewError(t, tok, `serviceaccount "shortlived" not found`)
		// A new account of the same name does not revive the token.
		sa := e.create(t, "/api/v1/namespaces/default/serviceaccounts", map[string]any{"metadata": map[string]any{"name": "shortlived"}})
		unauthorized(t, asToken(tok, "/api/v1/namespaces/default/configmaps"))
		reviewError(t, tok, fmt.Sprintf("service account UID (%s) does not match claim (%s)", path(sa, "metadata.uid"), path(old, "serviceaccount.uid")))
	})
	t.Run("malformed tokens", func(t *testing.T) {
		for _, tok := range []string{"a.b.c", "eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0.", strings.Repeat("x.", 2) + "y"} {
			unauthorized(t, asToken(tok, "/api/v1/namespaces/default/configmaps"))
		}
	})
	t.Run("issuer discovery", func(t *testing.T) {
		r := e.do("GET", "/.well-known/openid-configuration", nil).mustCode(t, 200)
		if r.header.Get("Content-Type") != "application/json" || r.header.Get("Cache-Control") != "public, max-age=3600" {
			t.Errorf("headers = %v", r.header)
		}
		doc := r.obj(t)
		if doc["issuer"] != issuer || !strings.HasSuffix(doc["jwks_uri"].(string), "/openid/v1/jwks") {
			t.Errorf("configuration = %v", doc)
		}
		if algs, _ := doc["id_token_signing_alg_values_supported"].([]any); len(algs) != 1 || algs[0] != "ES256" {
			t.Errorf("algorithms = %v", doc["id_token_signing_alg_values_supported"])
		}
		j := e.do("GET", "/openid/v1/jwks", nil).mustCode(t, 200)
		if j.header.Get("Content-Type") != "application/jwk-set+json" || j.header.Get("Cache-Control") != "public, max-age=3600" {
			t.Errorf("jwks headers = %v", j.header)
		}
		keys, _ := j.obj(t)["keys"].([]any)
		if len(keys) != 1 || path(keys[0].(map[string]any), "use") != "sig" || path(keys[0].(map[string]any), "kty") != "EC" {
			t.Errorf("keys = %v", keys)
		}
	})
}

// legacySecret creates a token secret for sa and waits for the controller
// to fill it; it returns the token.
func (e *env) legacySecret(t *testing.T, ns, name, sa string) string {
	t.Helper()
	e.create(t, "/api/v1/namespaces/"+ns+"/secrets", map[string]any{
		"metadata": map[string]any{"name": name, "annotations": map[string]any{platBrand.Label("service-account.name"): sa}},
		"type":     platBrand.Label("service-account-token"),
	})
	var tok string
	eventually(t, "the token controller fills "+name, func() bool {
		s := e.do("GET", "/api/v1/namespaces/"+ns+"/secrets/"+name, nil).obj(t)
		enc, _ := path(s, "data.token").(string)
		b, _ := base64.StdEncoding.DecodeString(enc)
		tok = string(b)
		nsb, _ := base64.StdEncoding.DecodeString(strOf(path(s, "data.namespace")))
		return tok != "" && string(nsb) == ns
	})
	return tok
}

func strOf(v any) string {
	s, _ := v.(string)
	return s
}

func TestLegacyServiceAccountTokens(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.create(t, "/api/v1/namespaces/default/serviceaccounts", map[string]any{"metadata": map[string]any{"name": "builder"}})
	tok := e.legacySecret(t, "default", "builder-token", "builder")
	s := e.do("GET", "/api/v1/namespaces/default/secrets/builder-token", nil).obj(t)
	if data, _ := s["data"].(map[string]any); data["ca.crt"] == nil {
		t.Errorf("ca.crt not filled: %v", data)
	}
	c := jwtClaims(t, tok)
	if c["iss"] != platBrand.LegacyTokenIssuer || c[platBrand.Label("serviceaccount/secret.name")] != "builder-token" || c["exp"] != nil || c["aud"] != nil {
		t.Errorf("legacy claims = %v", c)
	}
	get := func(tok string) *resp {
		return e.send(req{method: "GET", path: "/api/v1/namespaces/default/configmaps", token: tok})
	}
	get(tok).mustCode(t, 200)
	eventually(t, "the last-used label", func() bool {
		s := e.do("GET", "/api/v1/namespaces/default/secrets/builder-token", nil).obj(t)
		return path(s, "metadata.labels") != nil && path(s, "metadata.labels").(map[string]any)[platBrand.Label("legacy-token-last-used")] == time.Now().UTC().Format("2006-01-02")
	})
	// Listed in the account's secrets, the token is auto-generated: a warning.
	e.do("PATCH", "/api/v1/namespaces/default/serviceaccounts/builder", `{"secrets":[{"name":"builder-token"}]}`,
		"Content-Type", "application/merge-patch+json").mustCode(t, 200)
	if w := get(tok).mustCode(t, 200).header.Get("Warning"); !strings.Contains(w, "Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens.") {
		t.Errorf("Warning = %q", w)
	}
	// Deleting the secret revokes the token (lookup is on by default).
	e.do("DELETE", "/api/v1/namespaces/default/secrets/builder-token", nil).mustCode(t, 200)
	get(tok).mustCode(t, 401).mustMessage(t, "Unauthorized")

	// Deleting the account deletes its token secrets.
	tok2 := e.legacySecret(t, "default", "builder-token-2", "builder")
	get(tok2).mustCode(t, 200)
	e.do("DELETE", "/api/v1/namespaces/default/serviceaccounts/builder", nil).mustCode(t, 200)
	eventually(t, "the token secret deleted with its account", func() bool {
		return e.do("GET", "/api/v1/namespaces/default/secrets/builder-token-2", nil).code == 404
	})
	get(tok2).mustCode(t, 401)
	// A token secret for an account that does not exist is deleted.
	e.create(t, "/api/v1/namespaces/default/secrets", map[string]any{
		"metadata": map[string]any{"name": "orphan", "annotations": map[string]any{platBrand.Label("service-account.name"): "nobody"}},
		"type":     platBrand.Label("service-account-token"),
	})
	eventually(t, "the orphan token secret deleted", func() bool {
		return e.do("GET", "/api/v1/namespaces/default/secrets/orphan", nil).code == 404
	})
}

// With --service-account-lookup=false a legacy token outlives its secret.
func TestLegacyTokenWithoutLookup(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.ServiceAccounts.NoLookup = true })
	e.create(t, "/api/v1/namespaces/default/serviceaccounts", map[string]any{"metadata": map[string]any{"name": "builder"}})
	tok := e.legacySecret(t, "default", "builder-token", "builder")
	e.do("PUT", "/api/v1/namespaces/default/secrets/builder-token", map[string]any{
		"metadata": map[string]any{"name": "builder-token", "annotations": map[string]any{platBrand.Label("service-account.name"): "builder"}},
		"type":     platBrand.Label("service-account-token"), "data": map[string]any{"token": base64.StdEncoding.EncodeToString([]byte("other"))},
	})
	e.send(req{method: "GET", path: "/api/v1/namespaces/default/configmaps", token: tok}).mustCode(t, 200)
}

// --service-account-max-token-expiration shortens longer requests, with a
// warning, and the extension does not apply to unbound tokens.
func TestTokenRequestMaxExpiration(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.ServiceAccounts.MaxTokenExpiration = 2 * time.Hour })
	e.create(t, "/api/v1/namespaces/default/serviceaccounts", map[string]any{"metadata": map[string]any{"name": "robot"}})
	r := e.requestToken("default", "robot", map[string]any{"expirationSeconds": 10000}).mustCode(t, 201)
	if w := r.header.Get("Warning"); !strings.Contains(w, "requested expiration of 10000 seconds shortened to 7200 seconds") {
		t.Errorf("Warning = %q", w)
	}
	c := jwtClaims(t, path(r.obj(t), "status.token").(string))
	if c["exp"].(float64)-c["iat"].(float64) != 7200 {
		t.Errorf("claims = %v", c)
	}
	c = jwtClaims(t, e.token("default", "robot", map[string]any{"expirationSeconds": 3607}))
	if c["exp"].(float64)-c["iat"].(float64) != 3607 || c[platBrand.LongDomain].(map[string]any)["warnafter"] != nil {
		t.Errorf("an unbound 3607-second token is not extended: %v", c)
	}
}
