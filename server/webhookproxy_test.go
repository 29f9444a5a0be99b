package server_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"platd/config"
	"platd/security"
)

const unauthorizedBody = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n"

// tokenWebhook is a TokenReview webhook on 127.0.0.1 over TLS with its own
// CA, answering only the client certificate it issued for platd.
type tokenWebhook struct {
	calls      atomic.Int32
	kubeconfig string
	lastReview atomic.Value // string
}

func startTokenWebhook(t *testing.T, answer map[string]string) *tokenWebhook {
	t.Helper()
	dir := t.TempDir()
	serverCA, err := security.EnsureCA(filepath.Join(dir, "server-ca"))
	if err != nil {
		t.Fatal(err)
	}
	clientCA, err := security.EnsureCA(filepath.Join(dir, "client-ca"))
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(serverCA.EnsureServingCert(filepath.Join(dir, "hook.crt"), filepath.Join(dir, "hook.key"), []string{"127.0.0.1"}))
	must(clientCA.EnsureClientCert(filepath.Join(dir, "platd.crt"), filepath.Join(dir, "platd.key"), "platd-authn", nil))
	tw := &tokenWebhook{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/review" || r.TLS.PeerCertificates[0].Subject.CommonName != "platd-authn" {
			http.Error(w, "unexpected call", http.StatusBadRequest)
			return
		}
		tw.calls.Add(1)
		b, _ := io.ReadAll(r.Body)
		tw.lastReview.Store(string(b))
		var rv struct {
			APIVersion string `json:"apiVersion"`
			Spec       struct {
				Token string `json:"token"`
			} `json:"spec"`
		}
		_ = json.Unmarshal(b, &rv)
		status, ok := answer[rv.Spec.Token]
		if !ok {
			http.Error(w, "broken", http.StatusBadRequest)
			return
		}
		if !strings.HasPrefix(status, "{") {
			_, _ = io.WriteString(w, status) // a malformed answer
			return
		}
		_, _ = io.WriteString(w, `{"apiVersion":"`+rv.APIVersion+`","kind":"TokenReview","status":`+status+`}`)
	}))
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "hook.crt"), filepath.Join(dir, "hook.key"))
	must(err)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCA.CertPool()}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tw.kubeconfig = filepath.Join(dir, "webhook.kubeconfig")
	kc := `apiVersion: v1
kind: Config
clusters:
- name: hook
  cluster:
    server: ` + srv.URL + `/review
    certificate-authority: server-ca/ca.crt
users:
- name: platd
  user:
    client-certificate: platd.crt
    client-key: platd.key
contexts:
- name: webhook
  context: {cluster: hook, user: platd}
current-context: webhook
`
	must(os.WriteFile(tw.kubeconfig, []byte(kc), 0o600))
	return tw
}

func TestTokenWebhook(t *testing.T) {
	t.Parallel()
	hook := startTokenWebhook(t, map[string]string{
		"hook-jane":    `{"authenticated":true,"user":{"username":"jane","uid":"j-1","groups":["dev"]}}`,
		"hook-master":  `{"authenticated":true,"user":{"username":"root","groups":["system:masters"]}}`,
		"hook-denied":  `{"authenticated":false}`,
		"hook-expired": `{"authenticated":false,"error":"token expired"}`,
		"hook-garbage": `not json`,
	})
	e := start(t, func(o *config.Options) {
		o.AuthorizationModes = []string{config.ModeAlwaysDeny}
		o.TokenWebhook = config.TokenWebhook{ConfigFile: hook.kubeconfig, CacheTTL: config.DefaultTokenWebhookCacheTTL, Version: "v1"}
	})
	path := "/api/v1/namespaces/default/configmaps"
	// A webhook user is the webhook's user: AlwaysDeny names it.
	r := e.send(req{method: "GET", path: path, token: "hook-jane"}).mustCode(t, 403)
	r.mustMessage(t, `configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "default": Everything is forbidden.`)
	// It is asked for the API audiences (by default the service-account
	// issuer), as upstream asks.
	auds, _ := json.Marshal(e.opts.ServiceAccounts.Audiences())
	wantReview := `{"apiVersion":"` + platBrand.Group("authentication") + `/v1","kind":"TokenReview","metadata":{"creationTimestamp":null},"spec":{"token":"hook-jane","audiences":` + string(auds) + `},"status":{"user":{}}}`
	if got, _ := hook.lastReview.Load().(string); got != wantReview {
		t.Errorf("review sent\n got %s\nwant %s", got, wantReview)
	}
	// Its groups are taken as given.
	e.send(req{method: "GET", path: path, token: "hook-master"}).mustCode(t, 200)
	// Static tokens come first and never reach the webhook.
	before := hook.calls.Load()
	e.send(req{method: "GET", path: path, token: adminToken}).mustCode(t, 200)
	if hook.calls.Load() != before {
		t.Errorf("a static token was sent to the webhook")
	}
	for _, tok := range []string{"hook-denied", "hook-expired", "hook-garbage", "hook-unknown"} {
		r := e.send(req{method: "GET", path: path, token: tok}).mustCode(t, 401)
		if string(r.body) != unauthorizedBody {
			t.Errorf("%s: body %s", tok, r.body)
		}
	}
	// Answers are cached: repeating a token does not call the webhook,
	// for acceptances and rejections alike; errors are asked again.
	before = hook.calls.Load()
	e.send(req{method: "GET", path: path, token: "hook-jane"}).mustCode(t, 403)
	e.send(req{method: "GET", path: path, token: "hook-master"}).mustCode(t, 200)
	e.send(req{method: "GET", path: path, token: "hook-denied"}).mustCode(t, 401)
	if got := hook.calls.Load() - before; got != 0 {
		t.Errorf("cached tokens made %d webhook calls", got)
	}
	e.send(req{method: "GET", path: path, token: "hook-unknown"}).mustCode(t, 401)
	if got := hook.calls.Load() - before; got != 1 {
		t.Errorf("a failed call was cached: %d calls", got)
	}
}

// The default review version is v1beta1.
func TestTokenWebhookV1beta1(t *testing.T) {
	t.Parallel()
	hook := startTokenWebhook(t, map[string]string{"hook-root": `{"authenticated":true,"user":{"username":"root","groups":["system:masters"]}}`})
	e := start(t, func(o *config.Options) {
		o.TokenWebhook = config.TokenWebhook{ConfigFile: hook.kubeconfig}
	})
	e.send(req{method: "GET", path: "/api/v1/namespaces", token: "hook-root"}).mustCode(t, 200)
	if got, _ := hook.lastReview.Load().(string); !strings.HasPrefix(got, `{"apiVersion":"`+platBrand.Group("authentication")+`/v1beta1","kind":"TokenReview"`) {
		t.Errorf("review sent: %s", got)
	}
}

// proxyPKI is an authenticating proxy's CA and client certificates.
type proxyPKI struct {
	caFile string
	caPEM  []byte
	certs  map[string]tls.Certificate
}

func newProxyPKI(t *testing.T, names ...string) *proxyPKI {
	t.Helper()
	dir := t.TempDir()
	ca, err := security.EnsureCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxyPKI{caFile: ca.CertFile(), caPEM: ca.CertPEM(), certs: map[string]tls.Certificate{}}
	for _, n := range names {
		c, k := filepath.Join(dir, n+".crt"), filepath.Join(dir, n+".key")
		if err := ca.EnsureClientCert(c, k, n, nil); err != nil {
			t.Fatal(err)
		}
		pair, err := tls.LoadX509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		p.certs[n] = pair
	}
	return p
}

// clientWith returns e's client presenting cert.
func (e *env) clientWith(cert tls.Certificate) *http.Client {
	tr := e.client.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.Certificates = []tls.Certificate{cert}
	return &http.Client{Transport: tr}
}

func TestRequestHeaderProxy(t *testing.T) {
	t.Parallel()
	proxy := newProxyPKI(t, "front-proxy", "other-proxy")
	e := start(t, func(o *config.Options) {
		o.AuthorizationModes = []string{config.ModeAlwaysDeny}
		o.RequestHeader = config.RequestHeader{
			ClientCAFile: proxy.caFile, AllowedNames: []string{"front-proxy"},
			UsernameHeaders: []string{"X-Remote-User"}, GroupHeaders: []string{"X-Remote-Group"}, ExtraHeadersPrefix: []string{"X-Remote-Extra-"},
		}
	})
	// A client certificate of platd's own CA, as an ordinary user.
	carolDir := t.TempDir()
	ca, err := security.EnsureCA(e.opts.CertDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ca.EnsureClientCert(filepath.Join(carolDir, "c.crt"), filepath.Join(carolDir, "c.key"), "carol", nil); err != nil {
		t.Fatal(err)
	}
	carol, err := tls.LoadX509KeyPair(filepath.Join(carolDir, "c.crt"), filepath.Join(carolDir, "c.key"))
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/namespaces/default/configmaps"
	forbidden := func(user string) string {
		return `configmaps is forbidden: User "` + user + `" cannot list resource "configmaps" in API group "" in the namespace "default": Everything is forbidden.`
	}
	get := func(c *http.Client, header map[string]string) (int, string) {
		t.Helper()
		rq, _ := http.NewRequest("GET", e.srv.URL()+path, nil)
		for k, v := range header {
			rq.Header.Set(k, v)
		}
		res, err := c.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var st struct{ Message string }
		_ = json.Unmarshal(b, &st)
		if res.StatusCode == 401 && string(b) != unauthorizedBody {
			t.Errorf("401 body %s", b)
		}
		return res.StatusCode, st.Message
	}
	trusted := e.clientWith(proxy.certs["front-proxy"])
	bob := map[string]string{"X-Remote-User": "bob", "X-Remote-Group": "dev"}
	masters := map[string]string{"X-Remote-User": "bob", "X-Remote-Group": "system:masters"}
	cases := []struct {
		name   string
		client *http.Client
		header map[string]string
		code   int
		msg    string
	}{
		{"trusted proxy names the user", trusted, bob, 403, forbidden("bob")},
		{"trusted proxy names the groups", trusted, masters, 200, ""},
		{"trusted proxy without a user header", trusted, map[string]string{"X-Remote-Group": "system:masters"}, 401, ""},
		{"wrong common name", e.clientWith(proxy.certs["other-proxy"]), masters, 401, ""},
		{"untrusted client certificate", e.clientWith(carol), masters, 403, forbidden("carol")},
		{"bearer token", nil, masters, 403, forbidden("alice")},
	}
	for _, c := range cases {
		var code int
		var msg string
		if c.client == nil {
			r := e.send(req{method: "GET", path: path, token: aliceToken, header: c.header})
			code, msg = r.code, string(r.body)
			if code == 403 {
				msg = r.obj(t)["message"].(string)
			}
		} else {
			code, msg = get(c.client, c.header)
		}
		if code != c.code || (c.msg != "" && msg != c.msg) {
			t.Errorf("%s: %d %q, want %d %q", c.name, code, msg, c.code, c.msg)
		}
	}
}

// A rotated proxy CA file is picked up without a restart, in the TLS
// handshake and in verification alike.
func TestRequestHeaderProxyCARotation(t *testing.T) {
	t.Parallel()
	oldProxy, newProxy := newProxyPKI(t, "front-proxy"), newProxyPKI(t, "front-proxy")
	caFile := filepath.Join(t.TempDir(), "proxy-ca.crt")
	if err := os.WriteFile(caFile, oldProxy.caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	e := start(t, func(o *config.Options) {
		o.AuthorizationModes = []string{config.ModeAlwaysDeny}
		o.RequestHeader = config.RequestHeader{ClientCAFile: caFile, UsernameHeaders: []string{"X-Remote-User"}}
	})
	asBob := func(cert tls.Certificate) int {
		c := e.clientWith(cert)
		defer c.CloseIdleConnections()
		rq, _ := http.NewRequest("GET", e.srv.URL()+"/api/v1/namespaces/default/configmaps", nil)
		rq.Header.Set("X-Remote-User", "bob")
		res, err := c.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := asBob(oldProxy.certs["front-proxy"]); code != 403 {
		t.Fatalf("old proxy before rotation: %d", code)
	}
	if code := asBob(newProxy.certs["front-proxy"]); code != 401 {
		t.Fatalf("new proxy before rotation: %d", code)
	}
	if err := os.WriteFile(caFile, append(append([]byte{}, newProxy.caPEM...), oldProxy.caPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new proxy CA is trusted", func() bool { return asBob(newProxy.certs["front-proxy"]) == 403 })
}

func TestAuthenticationConfigMap(t *testing.T) {
	t.Parallel()
	proxy := newProxyPKI(t)
	e := start(t, func(o *config.Options) {
		o.RequestHeader = config.RequestHeader{
			ClientCAFile: proxy.caFile, AllowedNames: []string{"front-proxy", "aggregator"},
			UsernameHeaders: []string{"X-Remote-User"}, UIDHeaders: []string{"X-Remote-Uid"},
			GroupHeaders: []string{"X-Remote-Group"}, ExtraHeadersPrefix: []string{"X-Remote-Extra-"},
		}
	})
	caPEM, err := os.ReadFile(filepath.Join(e.opts.CertDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	r := e.do("GET", "/api/v1/namespaces/"+platBrand.SystemNamespace+"/configmaps/extension-apiserver-authentication", nil).mustCode(t, 200)
	data, _ := r.obj(t)["data"].(map[string]any)
	want := map[string]string{
		"client-ca-file":                     string(caPEM),
		"requestheader-client-ca-file":       string(proxy.caPEM),
		"requestheader-allowed-names":        `["front-proxy","aggregator"]`,
		"requestheader-username-headers":     `["X-Remote-User"]`,
		"requestheader-uid-headers":          `["X-Remote-Uid"]`,
		"requestheader-group-headers":        `["X-Remote-Group"]`,
		"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
	}
	if len(data) != len(want) {
		t.Errorf("keys: %v", data)
	}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("%s = %q, want %q", k, data[k], v)
		}
	}
	// The object is kept: deleted, it comes back; changed, it is repaired.
	cmPath := "/api/v1/namespaces/" + platBrand.SystemNamespace + "/configmaps/extension-apiserver-authentication"
	restored := func() bool {
		r := e.do("GET", cmPath, nil)
		if r.code != 200 {
			return false
		}
		data, _ := r.obj(t)["data"].(map[string]any)
		return data["requestheader-allowed-names"] == want["requestheader-allowed-names"] && len(data) == len(want)
	}
	e.do("DELETE", cmPath, nil).mustCode(t, 200)
	eventually(t, "the deleted ConfigMap is created again", restored)
	e.do("PATCH", cmPath, `{"data":{"requestheader-allowed-names":"[\"mallory\"]","extra":"x"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	eventually(t, "the changed ConfigMap is repaired", restored)
}

// Without a request-header CA only the client CA is published (a proxy
// client certificate given alone makes no front-proxy CA).
func TestAuthenticationConfigMapClientCAOnly(t *testing.T) {
	t.Parallel()
	e := start(t, withProxyClient(t))
	r := e.do("GET", "/api/v1/namespaces/"+platBrand.SystemNamespace+"/configmaps/extension-apiserver-authentication", nil).mustCode(t, 200)
	data, _ := r.obj(t)["data"].(map[string]any)
	caPEM, _ := os.ReadFile(filepath.Join(e.opts.CertDir, "ca.crt"))
	if len(data) != 1 || data["client-ca-file"] != string(caPEM) {
		t.Errorf("data = %v", data)
	}
}
