package server_test

import (
	"crypto/x509"
	"encoding/pem"
	"slices"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"platd/config"
	"platd/security"
)

// tokenCacheSlack is how long an authenticated token may be remembered
// (upstream's token cache keeps successes for 10s).
const tokenCacheSlack = 10 * time.Second

func withBootstrapTokenAuth(o *config.Options) { o.EnableBootstrapTokenAuth = true }

// bootstrapSecret is a bootstrap token secret body for token id.secret.
func bootstrapSecret(b config.Brand, id, secret string, data map[string]string) map[string]any {
	sd := map[string]string{"token-id": id, "token-secret": secret}
	for k, v := range data {
		sd[k] = v
	}
	return map[string]any{"apiVersion": "v1", "kind": "Secret", "type": b.BootstrapTokenType(),
		"metadata": map[string]any{"name": "bootstrap-token-" + id}, "stringData": sd}
}

func secretsPath(b config.Brand) string {
	return "/api/v1/namespaces/" + b.SystemNamespace + "/secrets"
}

// codeAs sends GET path with a bearer token and returns the status code.
func (e *env) codeAs(token, path string) int {
	e.t.Helper()
	return e.send(req{method: "GET", path: path, token: token}).code
}

// refusedSoon waits until token is refused, allowing for a cache of
// accepted tokens.
func (e *env) refusedSoon(token, what string) {
	e.t.Helper()
	deadline := time.Now().Add(10*time.Second + tokenCacheSlack)
	for e.codeAs(token, "/api") != 401 {
		if time.Now().After(deadline) {
			e.t.Fatalf("%s is still accepted", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBootstrapTokenAuthentication(t *testing.T) {
	t.Parallel()
	// The cleaner stays off: the authenticator alone must refuse an
	// expired token.
	e := start(t, withBootstrapTokenAuth, withControllers(append(slices.Clone(quietControllers), "-"+config.ControllerTokenCleaner)...))
	b := e.opts.Brand
	auth := map[string]string{"usage-bootstrap-authentication": "true"}
	e.do("POST", secretsPath(b), bootstrapSecret(b, "abc123", "0123456789abcdef", auth)).mustCode(t, 201)
	e.do("POST", secretsPath(b), bootstrapSecret(b, "sign00", "0123456789abcdef", map[string]string{"usage-bootstrap-signing": "true"})).mustCode(t, 201)
	soon := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	e.do("POST", secretsPath(b), bootstrapSecret(b, "exp000", "0123456789abcdef", map[string]string{
		"usage-bootstrap-authentication": "true", "expiration": soon,
	})).mustCode(t, 201)
	// A token secret outside the system namespace is not a token.
	other := bootstrapSecret(b, "dflt00", "0123456789abcdef", auth)
	e.do("POST", "/api/v1/namespaces/default/secrets", other).mustCode(t, 201)

	if c := e.codeAs("abc123.0123456789abcdef", "/api"); c != 200 {
		t.Fatalf("valid bootstrap token: %d", c)
	}
	// Who the token is: its user, the groups sorted, then the
	// authenticated group; no uid, no extra.
	e.do("PATCH", secretsPath(b)+"/bootstrap-token-abc123", `{"stringData":{"auth-extra-groups":"system:bootstrappers:z,system:bootstrappers:a,system:bootstrappers:z"}}`,
		"Content-Type", "application/merge-patch+json").mustCode(t, 200)
	ssr := e.send(req{method: "POST", path: "/apis/" + b.Group("authentication") + "/v1/selfsubjectreviews", token: "abc123.0123456789abcdef",
		body: `{"apiVersion":"` + b.Group("authentication") + `/v1","kind":"SelfSubjectReview"}`}).mustCode(t, 201).obj(t)
	if got, want := jsonOf(t, ssr["status"]), `{"userInfo":{"groups":["system:bootstrappers","system:bootstrappers:a","system:bootstrappers:z","system:authenticated"],"username":"system:bootstrap:abc123"}}`; got != want {
		t.Errorf("SelfSubjectReview status %s, want %s", got, want)
	}
	unauthorized := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n"
	for _, tok := range []string{
		"abc123.0123456789abcdee", // wrong secret
		"abc124.0123456789abcdef", // no such token
		"sign00.0123456789abcdef", // no authentication usage
		"dflt00.0123456789abcdef", // not in the system namespace
	} {
		r := e.send(req{method: "GET", path: "/api", token: tok})
		if r.code != 401 || string(r.body) != unauthorized {
			t.Errorf("%s: %d %s, want 401 Unauthorized", tok, r.code, r.body)
		}
	}
	if c := e.codeAs("exp000.0123456789abcdef", "/api"); c != 200 {
		t.Fatalf("token before its expiration: %d", c)
	}
	e.refusedSoon("exp000.0123456789abcdef", "the expired token")
	// Its secret is still there: only the cleaner deletes.
	e.do("GET", secretsPath(b)+"/bootstrap-token-exp000", nil).mustCode(t, 200)

	// A secret being deleted no longer authenticates.
	e.do("PATCH", secretsPath(b)+"/bootstrap-token-abc123", `{"metadata":{"finalizers":["example.com/hold"]}}`,
		"Content-Type", "application/merge-patch+json").mustCode(t, 200)
	e.do("DELETE", secretsPath(b)+"/bootstrap-token-abc123", nil).mustCode(t, 200)
	e.refusedSoon("abc123.0123456789abcdef", "the token of a secret being deleted")
	e.do("PATCH", secretsPath(b)+"/bootstrap-token-abc123", `{"metadata":{"finalizers":null}}`,
		"Content-Type", "application/merge-patch+json").mustCode(t, 200)
}

func TestBootstrapTokenAuthenticationOff(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.opts.Brand
	e.do("POST", secretsPath(b), bootstrapSecret(b, "abc123", "0123456789abcdef", map[string]string{"usage-bootstrap-authentication": "true"})).mustCode(t, 201)
	if c := e.codeAs("abc123.0123456789abcdef", "/api"); c != 401 {
		t.Fatalf("bootstrap token without --enable-bootstrap-token-auth: %d", c)
	}
}

func TestBootstrapTokenSecretValidation(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.opts.Brand
	bad := bootstrapSecret(b, "abc123", "short", map[string]string{"auth-extra-groups": "system:masters", "usage-bootstrap-everything": "true"})
	r := e.do("POST", secretsPath(b), bad).mustCode(t, 422)
	r.mustMessage(t, `Secret "bootstrap-token-abc123" is invalid: [`+
		`data[token-secret]: Invalid value: "<secret contents redacted>": must match [a-z0-9]{16}, `+
		`data[auth-extra-groups]: Invalid value: "system:masters": bootstrap group "system:masters" is invalid (must match \Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z), `+
		`data[usage-bootstrap-everything]: Invalid value: "usage-bootstrap-everything": invalid bootstrap token usage string: everything, valid usage options: signing,authentication]`)
	causes, _ := path(r.obj(t), "details.causes").([]any)
	if len(causes) != 3 || path(causes[0].(map[string]any), "field") != "data[token-secret]" {
		t.Errorf("causes: %v", causes)
	}
	misnamed := bootstrapSecret(b, "abc123", "0123456789abcdef", nil)
	misnamed["metadata"] = map[string]any{"name": "my-token"}
	e.do("POST", secretsPath(b), misnamed).mustCode(t, 422).mustMessage(t,
		`Secret "my-token" is invalid: metadata.name: Invalid value: "my-token": must be bootstrap-token-abc123, the name of the secret of token abc123`)
	// Updates are checked too.
	e.do("POST", secretsPath(b), bootstrapSecret(b, "abc123", "0123456789abcdef", nil)).mustCode(t, 201)
	e.do("PATCH", secretsPath(b)+"/bootstrap-token-abc123", `{"stringData":{"expiration":"tomorrow"}}`,
		"Content-Type", "application/merge-patch+json").mustCode(t, 422).mustMessage(t,
		`Secret "bootstrap-token-abc123" is invalid: data[expiration]: Invalid value: "tomorrow": must be a time in RFC3339 format (e.g. 2006-01-02T15:04:05Z)`)
}

func TestTokenCleaner(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.opts.Brand
	// Written while the cleaner already runs; the first is expired from
	// the start, the second expires in a moment, the third never.
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	soon := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	e.do("POST", secretsPath(b), bootstrapSecret(b, "past00", "0123456789abcdef", map[string]string{"expiration": past})).mustCode(t, 201)
	e.do("POST", secretsPath(b), bootstrapSecret(b, "soon00", "0123456789abcdef", map[string]string{"expiration": later})).mustCode(t, 201)
	e.do("POST", secretsPath(b), bootstrapSecret(b, "never0", "0123456789abcdef", nil)).mustCode(t, 201)
	// An expired secret of another type is not the cleaner's.
	e.do("POST", secretsPath(b), map[string]any{"metadata": map[string]any{"name": "bootstrap-token-opaque"},
		"stringData": map[string]string{"expiration": past}}).mustCode(t, 201)
	gone := func(name string) func() bool {
		return func() bool { return e.do("GET", secretsPath(b)+"/"+name, nil).code == 404 }
	}
	eventually(t, "the expired token to be deleted", gone("bootstrap-token-past00"))
	// Moving the expiration closer resets its timer.
	e.do("PATCH", secretsPath(b)+"/bootstrap-token-soon00", map[string]any{"stringData": map[string]string{"expiration": soon}},
		"Content-Type", "application/merge-patch+json").mustCode(t, 200)
	e.do("GET", secretsPath(b)+"/bootstrap-token-soon00", nil).mustCode(t, 200)
	eventually(t, "the token to be deleted when it expires", gone("bootstrap-token-soon00"))
	e.do("GET", secretsPath(b)+"/bootstrap-token-never0", nil).mustCode(t, 200)
	e.do("GET", secretsPath(b)+"/bootstrap-token-opaque", nil).mustCode(t, 200)
}

func TestClusterInfoSigning(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := e.opts.Brand
	cmPath := "/api/v1/namespaces/" + b.PublicNamespace + "/configmaps/cluster-info"
	info := e.do("GET", cmPath, nil).mustCode(t, 200).obj(t)
	kc, _ := path(info, "data.kubeconfig").(string)
	var parsed struct {
		Clusters []struct {
			Cluster struct {
				Server string `json:"server"`
				CAData []byte `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"clusters"`
	}
	if err := yaml.Unmarshal([]byte(kc), &parsed); err != nil || len(parsed.Clusters) != 1 {
		t.Fatalf("cluster-info kubeconfig %q: %v", kc, err)
	}
	if got := parsed.Clusters[0].Cluster.Server; got != e.srv.URL() {
		t.Errorf("server %q, want %q", got, e.srv.URL())
	}
	block, _ := pem.Decode(parsed.Clusters[0].Cluster.CAData)
	if block == nil {
		t.Fatalf("no CA in cluster-info: %q", parsed.Clusters[0].Cluster.CAData)
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		t.Fatal(err)
	}

	e.do("POST", secretsPath(b), bootstrapSecret(b, "sign01", "0123456789abcdef", map[string]string{"usage-bootstrap-signing": "true"})).mustCode(t, 201)
	e.do("POST", secretsPath(b), bootstrapSecret(b, "auth01", "0123456789abcdef", map[string]string{"usage-bootstrap-authentication": "true"})).mustCode(t, 201)
	var sig string
	eventually(t, "cluster-info to be signed", func() bool {
		sig, _ = path(e.do("GET", cmPath, nil).obj(t), "data.jws-kubeconfig-sign01").(string)
		return sig != ""
	})
	if err := security.VerifyDetachedJWS(sig, []byte(kc), "sign01", "0123456789abcdef"); err != nil {
		t.Fatalf("signature %q does not verify: %v", sig, err)
	}
	data, _ := path(e.do("GET", cmPath, nil).obj(t), "data").(map[string]any)
	if len(data) != 2 {
		t.Errorf("cluster-info data %v: want the kubeconfig and one signature (auth01 cannot sign)", data)
	}
	// A signature nobody made is dropped; the token's goes with it.
	e.do("PATCH", cmPath, `{"data":{"jws-kubeconfig-forged":"x..y"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	eventually(t, "the forged signature to be dropped", func() bool {
		return path(e.do("GET", cmPath, nil).obj(t), "data.jws-kubeconfig-forged") == nil
	})
	e.do("DELETE", secretsPath(b)+"/bootstrap-token-sign01", nil).mustCode(t, 200)
	eventually(t, "the signature to be removed", func() bool {
		return path(e.do("GET", cmPath, nil).obj(t), "data.jws-kubeconfig-sign01") == nil
	})
}

// TestClusterInfoWrittenOnce: cluster-info is written at the first start
// only; what an operator changed in it survives a restart.
func TestClusterInfoWrittenOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir))
	cmPath := "/api/v1/namespaces/" + e.opts.Brand.PublicNamespace + "/configmaps/cluster-info"
	e.do("PATCH", cmPath, `{"data":{"kubeconfig":"edited"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	e.stop()
	e2 := startWith(t, testOptions(t, dir))
	if got := path(e2.do("GET", cmPath, nil).mustCode(t, 200).obj(t), "data.kubeconfig"); got != "edited" {
		t.Fatalf("cluster-info kubeconfig after a restart: %v", got)
	}
}
