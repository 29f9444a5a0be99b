package server_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platd/config"
	"platd/security"
	"platd/server"
)

// authzWebhook is a SubjectAccessReview webhook on 127.0.0.1 over TLS with
// its own CA, answering only the client certificate it issued for platd.
// Its verdict is by user: alice allowed, bob denied, broken fails with a
// 400, anyone else no opinion.
type authzWebhook struct {
	kubeconfig string
	mu         sync.Mutex
	calls      map[string]int // by user
	total      atomic.Int32
}

func startAuthzWebhook(t *testing.T) *authzWebhook {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	serverCA, err := security.EnsureCA(filepath.Join(dir, "server-ca"))
	must(err)
	clientCA, err := security.EnsureCA(filepath.Join(dir, "client-ca"))
	must(err)
	must(serverCA.EnsureServingCert(filepath.Join(dir, "hook.crt"), filepath.Join(dir, "hook.key"), []string{"127.0.0.1"}))
	must(clientCA.EnsureClientCert(filepath.Join(dir, "platd.crt"), filepath.Join(dir, "platd.key"), "platd-authz", nil))
	aw := &authzWebhook{calls: map[string]int{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/authorize" || r.TLS.PeerCertificates[0].Subject.CommonName != "platd-authz" {
			http.Error(w, "unexpected call", http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var rv struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Spec       struct {
				User   string   `json:"user"`
				Groups []string `json:"groups"`
			} `json:"spec"`
		}
		_ = json.Unmarshal(b, &rv)
		aw.total.Add(1)
		aw.mu.Lock()
		aw.calls[rv.Spec.User]++
		aw.mu.Unlock()
		status := `{"allowed":false}`
		switch rv.Spec.User {
		case "alice":
			status = `{"allowed":true}`
		case "bob":
			status = `{"allowed":false,"denied":true,"reason":"bob is banned"}`
		case "broken":
			http.Error(w, "broken", http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, `{"apiVersion":"`+rv.APIVersion+`","kind":"`+rv.Kind+`","status":`+status+`}`)
	}))
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "hook.crt"), filepath.Join(dir, "hook.key"))
	must(err)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCA.CertPool()}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	aw.kubeconfig = filepath.Join(dir, "authz.kubeconfig")
	must(os.WriteFile(aw.kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: hook
  cluster:
    server: `+srv.URL+`/authorize
    certificate-authority: server-ca/ca.crt
users:
- name: platd
  user: {client-certificate: platd.crt, client-key: platd.key}
contexts:
- name: authz
  context: {cluster: hook, user: platd}
current-context: authz
`), 0o600))
	return aw
}

func (aw *authzWebhook) callsFor(user string) int {
	aw.mu.Lock()
	defer aw.mu.Unlock()
	return aw.calls[user]
}

// as sends a request as alice, or as admin impersonating user.
func (e *env) as(user, method, path string) *resp {
	e.t.Helper()
	if user == "alice" {
		return e.send(req{method: method, path: path, token: aliceToken})
	}
	return e.do(method, path, nil, "Impersonate-User", user)
}

func TestWebhookAuthorizerFlags(t *testing.T) {
	t.Parallel()
	aw := startAuthzWebhook(t)
	e := start(t, func(o *config.Options) {
		o.AuthorizationModes = []string{config.ModeWebhook}
		o.AuthorizationWebhook = config.AuthorizationWebhook{ConfigFile: aw.kubeconfig, Version: "v1"}
	})
	const cms = "/api/v1/namespaces/default/configmaps"
	e.as("alice", "GET", cms).mustCode(t, 200)
	e.as("alice", "GET", cms).mustCode(t, 200)
	if n := aw.callsFor("alice"); n != 1 {
		t.Errorf("webhook asked %d times about alice's repeated request, want 1 (cached)", n)
	}
	e.as("bob", "GET", cms).mustCode(t, 403).
		mustMessage(t, `configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default": bob is banned`)
	e.as("carol", "GET", cms).mustCode(t, 403).
		mustMessage(t, `configmaps is forbidden: User "carol" cannot list resource "configmaps" in API group "" in the namespace "default"`)
	// Denials are cached too, for the unauthorized TTL.
	e.as("bob", "GET", cms).mustCode(t, 403)
	if n := aw.callsFor("bob"); n != 1 {
		t.Errorf("webhook asked %d times about bob, want 1", n)
	}
	// A webhook that fails: no opinion with an error, so 500.
	r := e.as("broken", "GET", cms).mustCode(t, 500)
	if !strings.HasPrefix(string(r.body), `Internal Server Error: "`+cms+`": `) || !strings.Contains(string(r.body), "status 400") {
		t.Errorf("500 body: %s", r.body)
	}
	// system:masters never reaches the webhook.
	before := aw.total.Load()
	e.do("GET", cms, nil).mustCode(t, 200)
	if aw.total.Load() != before {
		t.Error("the webhook was asked about system:masters")
	}
	m := e.srv.AuthorizationWebhookMetrics()["webhook"]
	if m.Evaluations[security.WebhookResultSuccess] != 3 || m.Evaluations[security.WebhookResultError] != 1 || m.FailOpen[security.WebhookResultError] != 1 {
		t.Errorf("metrics: %+v", m)
	}
	// The same counters, scraped.
	fams := scrape(t, e)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"apiserver_authorization_webhook_evaluations_total", map[string]string{"name": "webhook", "result": security.WebhookResultSuccess}, 3},
		{"apiserver_authorization_webhook_evaluations_total", map[string]string{"name": "webhook", "result": security.WebhookResultError}, 1},
		{"apiserver_authorization_webhook_evaluations_fail_open_total", map[string]string{"name": "webhook", "result": security.WebhookResultError}, 1},
	} {
		if got := value(fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if h := sample(fams, "apiserver_authorization_webhook_duration_seconds", map[string]string{"name": "webhook", "result": security.WebhookResultSuccess}); h == nil || h.Histogram.GetSampleCount() != 3 {
		t.Errorf("apiserver_authorization_webhook_duration_seconds: %v", h)
	}
}

// writeAtomic replaces path's content in one rename, so a reload never
// reads half a file.
func writeAtomic(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func authzFile(b config.Brand, authorizers string) string {
	return "apiVersion: " + b.Group("apiserver.config") + "/v1\nkind: AuthorizationConfiguration\nauthorizers:\n" + authorizers
}

func TestAuthorizationConfigFileReload(t *testing.T) {
	t.Parallel()
	aw := startAuthzWebhook(t)
	b := config.Brands["plat"]
	file := filepath.Join(t.TempDir(), "authz.yaml")
	hook := `- type: Webhook
  name: policy-hook
  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1beta1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: ` + aw.kubeconfig + `}
    matchConditions:
    - expression: has(request.resourceAttributes)
    - expression: request.user != 'carol'
`
	deny := "- {type: AlwaysDeny, name: alwaysdeny}\n"
	writeAtomic(t, file, authzFile(b, hook+deny))
	e := start(t, func(o *config.Options) {
		o.AuthorizationConfigFile, o.AuthorizationModes = file, nil
		o.AuthorizationConfigReloadInterval = 10 * time.Millisecond
	})
	const cms = "/api/v1/namespaces/default/configmaps"
	e.as("alice", "GET", cms).mustCode(t, 200)
	e.as("bob", "GET", cms).mustCode(t, 403).
		mustMessage(t, `configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default": bob is banned`)
	// carol is excluded by a match condition: AlwaysDeny has the word.
	e.as("carol", "GET", cms).mustCode(t, 403).
		mustMessage(t, `configmaps is forbidden: User "carol" cannot list resource "configmaps" in API group "" in the namespace "default": Everything is forbidden.`)
	if aw.callsFor("carol") != 0 {
		t.Error("the webhook was asked about carol")
	}
	// Failure policy Deny: a failing webhook denies with the error: 500.
	e.as("broken", "GET", cms).mustCode(t, 500)

	// A new file lets carol in.
	writeAtomic(t, file, authzFile(b, "- {type: AlwaysAllow, name: alwaysallow}\n"+deny))
	eventually(t, "the reloaded chain", func() bool { return e.as("carol", "GET", cms).code == 200 })
	if st := e.srv.AuthorizationConfigReloads(); st.Success != 1 || st.LastSuccess.IsZero() {
		t.Errorf("reload stats %+v", st)
	}
	// The removed webhook's counters stay.
	if m := e.srv.AuthorizationWebhookMetrics()["policy-hook"]; m.Evaluations[security.WebhookResultSuccess] != 2 || m.Evaluations[security.WebhookResultError] != 1 ||
		m.MatchConditionExclusions < 1 || m.FailOpen[security.WebhookResultError] != 0 { // carol polls until the reload
		t.Errorf("metrics of the removed webhook: %+v", m)
	}

	// Invalid new files keep the chain and count failures.
	failures := e.srv.AuthorizationConfigReloads().Failure
	for _, bad := range []string{
		authzFile(b, "- {type: AlwaysAllow, name: alwaysallow}\n"),                                // AlwaysDeny was there at start
		authzFile(b, "- {type: RBAC, name: rbac}\n"+deny),                                         // RBAC was not
		authzFile(b, "- {type: AlwaysAllow, name: allow}\n"+deny),                                 // wrong name
		"apiVersion: " + b.Group("apiserver.config") + "/v1\nkind: AuthorizationConfiguration\n[", // malformed
	} {
		writeAtomic(t, file, bad)
		eventually(t, "a failed reload", func() bool { return e.srv.AuthorizationConfigReloads().Failure > failures })
		failures = e.srv.AuthorizationConfigReloads().Failure
		e.as("carol", "GET", cms).mustCode(t, 200)
	}
	if st := e.srv.AuthorizationConfigReloads(); st.Success != 1 {
		t.Errorf("reload stats %+v", st)
	}
	// The periodic check retries the bad file and counts again meanwhile:
	// the scraped failures lie between the counts before and after.
	fams := scrape(t, e)
	after := e.srv.AuthorizationConfigReloads().Failure
	for status, want := range map[string]float64{"success": 1, "failure": float64(failures)} {
		f := fams["apiserver_authorization_config_controller_automatic_reloads_total"]
		var got float64 = -1
		for _, m := range f.GetMetric() {
			if len(m.Label) == 2 && m.Label[0].GetName() == "apiserver_id_hash" && strings.HasPrefix(m.Label[0].GetValue(), "sha256:") &&
				m.Label[1].GetName() == "status" && m.Label[1].GetValue() == status {
				got = m.Counter.GetValue()
			}
		}
		if got != want && (status != "failure" || got < want || got > float64(after)) {
			t.Errorf("apiserver_authorization_config_controller_automatic_reloads_total{status=%s} = %v, want %v", status, got, want)
		}
	}
	if f := fams["apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds"]; len(f.GetMetric()) != 2 {
		t.Errorf("reload timestamps: %v", f)
	}
	if got := value(fams, "apiserver_authorization_match_condition_exclusions_total", map[string]string{"type": "Webhook", "name": "policy-hook"}); got < 1 {
		t.Errorf("apiserver_authorization_match_condition_exclusions_total = %v", got)
	}
}

func TestAuthorizationConfigReloadErrors(t *testing.T) {
	t.Parallel()
	b := config.Brands["plat"]
	dir := t.TempDir()
	file := filepath.Join(dir, "authz.yaml")
	writeAtomic(t, file, authzFile(b, "- {type: AlwaysDeny, name: alwaysdeny}\n"))
	o := testOptions(t, t.TempDir(), func(o *config.Options) {
		o.AuthorizationConfigFile, o.AuthorizationModes = file, nil
		o.AuthorizationConfigReloadInterval = time.Hour
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := server.New(ctx, o, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Store().Close() }()
	for _, c := range []struct{ content, want string }{
		{authzFile(b, "- {type: AlwaysAllow, name: alwaysallow}\n"), "invalid authorization configuration: missing required types: [AlwaysDeny]"},
		{authzFile(b, "- {type: Node, name: node}\n- {type: AlwaysDeny, name: alwaysdeny}\n"), "authorizer type Node is not allowed if it was not enabled at initial server startup"},
		{authzFile(b, "- {type: AlwaysDeny, name: deny}\n"), "expected name alwaysdeny for authorizer AlwaysDeny instead of deny"},
	} {
		writeAtomic(t, file, c.content)
		if err := srv.ReloadAuthorizationConfig(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("reload error %v, want %q", err, c.want)
		}
	}
	// Unchanged content and an equal configuration are no-ops.
	writeAtomic(t, file, authzFile(b, "- {type: AlwaysDeny, name: alwaysdeny}\n"))
	if err := srv.ReloadAuthorizationConfig(); err != nil {
		t.Fatal(err)
	}
	writeAtomic(t, file, authzFile(b, "- type: AlwaysDeny\n  name: alwaysdeny\n"))
	if err := srv.ReloadAuthorizationConfig(); err != nil {
		t.Fatal(err)
	}
	writeAtomic(t, file, strings.Replace(authzFile(b, "- {type: AlwaysDeny, name: alwaysdeny}\n"), "/v1\n", "/v1beta1\n", 1))
	if err := srv.ReloadAuthorizationConfig(); err != nil {
		t.Fatal(err)
	}
	if st := srv.AuthorizationConfigReloads(); st.Success != 0 || st.Failure != 3 {
		t.Errorf("reload stats %+v", st)
	}

	// A start with only webhooks may not gain RBAC either.
	aw := startAuthzWebhook(t)
	hookOnly := authzFile(b, `- type: Webhook
  name: hook
  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: `+aw.kubeconfig+`}
`)
	file2 := filepath.Join(dir, "hook.yaml")
	writeAtomic(t, file2, hookOnly)
	o2 := testOptions(t, t.TempDir(), func(o *config.Options) {
		o.AuthorizationConfigFile, o.AuthorizationModes = file2, nil
		o.AuthorizationConfigReloadInterval = time.Hour
	})
	srv2, err := server.New(ctx, o2, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv2.Store().Close() }()
	writeAtomic(t, file2, hookOnly+"- {type: RBAC, name: rbac}\n")
	if err := srv2.ReloadAuthorizationConfig(); err == nil || err.Error() != "authorizer type RBAC is not allowed if it was not enabled at initial server startup" {
		t.Errorf("reload error %v", err)
	}
	writeAtomic(t, file2, hookOnly+"- {type: AlwaysAllow, name: alwaysallow}\n")
	if err := srv2.ReloadAuthorizationConfig(); err != nil {
		t.Errorf("adding AlwaysAllow: %v", err)
	}
	if st := srv2.AuthorizationConfigReloads(); st.Success != 1 || st.Failure != 1 {
		t.Errorf("reload stats %+v", st)
	}
}

func TestAuthorizationConfigFileAtStart(t *testing.T) {
	t.Parallel()
	b := config.Brands["plat"]
	dir := t.TempDir()
	for _, c := range []struct{ name, content, want string }{
		{"malformed", "authorizers: [", "--authorization-config: invalid authorization configuration: " + filepath.Join(dir, "malformed") + ": "},
		{"invalid", authzFile(b, "- {type: Foo, name: foo}\n"),
			`--authorization-config: invalid authorization configuration: ` + filepath.Join(dir, "invalid") + `: authorizers[0].type: Unsupported value: "Foo": supported values: "ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook"`},
		{"bad expression", authzFile(b, `- type: Webhook
  name: w
  webhook:
    timeout: 1s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: `+filepath.Join(dir, "invalid")+`}
    matchConditions: [{expression: request.user}]
`), `authorizers[0].matchConditions[0].expression: Invalid value: "request.user": must evaluate to bool but got string`},
		{"absent", "", "no such file or directory"},
		{"in cluster", authzFile(b, `- type: Webhook
  name: w
  webhook:
    timeout: 1s
    subjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    connectionInfo: {type: InClusterConfig}
`), `--authorization-config: invalid configuration: authorizer "w": connectionInfo.type InClusterConfig is not supported: use KubeConfigFile`},
		{"not a kubeconfig", authzFile(b, `- type: Webhook
  name: w
  webhook:
    timeout: 1s
    subjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: `+filepath.Join(dir, "malformed")+`}
`), `--authorization-config: invalid configuration: authorizer "w": ` + filepath.Join(dir, "malformed") + `: invalid kubeconfig: `},
		{"anonymous", authzFile(b, "- {type: AlwaysAllow, name: alwaysallow}\n"),
			"--anonymous-auth=true cannot be combined with an AlwaysAllow authorizer in --authorization-config: every request without credentials would be allowed"},
	} {
		file := filepath.Join(dir, c.name)
		if c.content != "" {
			writeAtomic(t, file, c.content)
		}
		o := testOptions(t, t.TempDir(), func(o *config.Options) {
			o.AuthorizationConfigFile, o.AuthorizationModes, o.AnonymousAuth = file, nil, c.name == "anonymous"
		})
		_, err := server.New(context.Background(), o, quietLog())
		if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestAuthorizationConfigFileRBAC: RBAC named by the file authorizes (and
// its default policy is written); a reload puts a webhook before it and
// the same RBAC authorizer keeps serving.
func TestAuthorizationConfigFileRBAC(t *testing.T) {
	t.Parallel()
	aw := startAuthzWebhook(t)
	b := config.Brands["plat"]
	file := filepath.Join(t.TempDir(), "authz.yaml")
	rbacOnly := authzFile(b, "- {type: RBAC, name: rbac}\n")
	writeAtomic(t, file, rbacOnly)
	e := rbacEnv{start(t, func(o *config.Options) {
		o.AuthorizationConfigFile, o.AuthorizationModes = file, nil
		o.AuthorizationConfigReloadInterval = 10 * time.Millisecond
	}), b.Group("rbac.authorization")}
	// The default policy is there: readyz waited for it.
	e.do("GET", e.api("", "clusterroles")+"/cluster-admin", nil).mustCode(t, 200)
	e.do("POST", e.api("default", "roles"), e.role("Role", "default", "cm-reader", policy([]string{"list"}, []string{""}, []string{"configmaps"}))).mustCode(t, 201)
	e.do("POST", e.api("default", "rolebindings"), e.binding("RoleBinding", "default", "alice-cm", "Role", "cm-reader", user("alice"))).mustCode(t, 201)
	e.eventuallyCode(t, "GET", "/api/v1/namespaces/default/configmaps", 200)
	e.alice("GET", "/api/v1/namespaces/default/secrets", nil).mustCode(t, 403)
	if aw.total.Load() != 0 {
		t.Fatal("the webhook was asked before it was configured")
	}

	writeAtomic(t, file, authzFile(b, `- type: Webhook
  name: hook
  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: `+aw.kubeconfig+`}
- {type: RBAC, name: rbac}
`))
	e.eventuallyCode(t, "GET", "/api/v1/namespaces/default/secrets", 200)
	// carol: the webhook has no opinion, RBAC (the same, still indexed)
	// decides.
	e.do("POST", e.api("default", "rolebindings"), e.binding("RoleBinding", "default", "carol-cm", "Role", "cm-reader", user("carol"))).mustCode(t, 201)
	eventually(t, "carol allowed by RBAC", func() bool { return e.as("carol", "GET", "/api/v1/namespaces/default/configmaps").code == 200 })
	e.as("carol", "GET", "/api/v1/namespaces/default/secrets").mustCode(t, 403)
	if aw.callsFor("carol") == 0 {
		t.Error("the webhook was not asked about carol")
	}
}
