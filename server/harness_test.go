package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"platd/config"
	"platd/server"
)

// Tokens of the test users.
const (
	adminToken = "admin-token"
	aliceToken = "alice-token"
)

// platBrand is the default brand test servers run with.
var platBrand, _ = config.LookupBrand("plat")

// env is one platd serving on 127.0.0.1:0 with a temporary data directory.
type env struct {
	t      *testing.T
	srv    *server.Server
	opts   config.Options
	client *http.Client
	cancel context.CancelFunc
	done   chan error
}

// option changes the options a test server starts with.
type option func(*config.Options)

func withBrand(name string) option {
	return func(o *config.Options) { o.Brand, _ = config.LookupBrand(name) }
}

func withDataDir(dir string) option { return func(o *config.Options) { o.DataDir = dir } }

// withControllers picks the controllers the server runs (--controllers).
func withControllers(list ...string) option {
	return func(o *config.Options) { o.Controllers = list }
}

// quietControllers are the controllers test servers run unless a test asks
// for others: the root CA publisher, which writes into every namespace,
// stays off, so tests that list a namespace see only what they created.
// The default service accounts are made, as a pod cannot be created
// without its account.
var quietControllers = []string{"*", "-" + config.ControllerRootCA}

// testOptions are the options of a test server in dir.
func testOptions(t testing.TB, dir string, mods ...option) config.Options {
	t.Helper()
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	csv := adminToken + ",admin,admin-uid,\"system:masters\"\n" + aliceToken + ",alice,alice-uid\n"
	if err := os.WriteFile(tokens, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := config.LookupBrand("plat")
	o := config.Options{
		DataDir: dir, SecurePort: 0, BindAddress: "127.0.0.1", TokenAuthFile: tokens,
		AuthorizationModes: []string{config.ModeAlwaysAllow}, Brand: b,
		HistoryRetention: config.DefaultHistoryRetention, UnsafeNoFsync: true, WriteKubeconfig: true,
		Controllers: quietControllers, RequestTimeout: config.DefaultRequestTimeout,
		MaxRequestsInFlight: config.DefaultMaxRequestsInFlight, MaxMutatingRequestsInFlight: config.DefaultMaxMutatingRequestsInFlight,
	}
	for _, m := range mods {
		m(&o)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	return o
}

// quietLog drops server logs below warnings so test output stays readable.
func quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// start runs a server for the test and stops it when the test ends.
func start(t *testing.T, mods ...option) *env {
	t.Helper()
	return startWith(t, testOptions(t, t.TempDir(), mods...))
}

func startWith(t *testing.T, o config.Options) *env {
	t.Helper()
	return startLogged(t, o, quietLog())
}

// startLogged is startWith with the server logging to log.
func startLogged(t *testing.T, o config.Options, log *slog.Logger) *env {
	t.Helper()
	return launch(t, o, func(ctx context.Context) (*server.Server, error) { return server.New(ctx, o, log) })
}

// launch serves the server newServer makes, with options o, until the test
// ends.
func launch(t *testing.T, o config.Options, newServer func(context.Context) (*server.Server, error)) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := newServer(ctx)
	if err != nil {
		cancel()
		t.Fatalf("starting platd: %v", err)
	}
	e := &env{t: t, srv: srv, opts: o, cancel: cancel, done: make(chan error, 1)}
	go func() { e.done <- srv.Serve(ctx) }()
	caPEM, err := os.ReadFile(filepath.Join(o.CertDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	// A serving pair a test put in the cert directory is trusted through
	// the CA it writes beside it.
	if other, err := os.ReadFile(filepath.Join(o.CertDir, testServingCA)); err == nil {
		pool.AppendCertsFromPEM(other)
	}
	if o.TLSCertFile != "" {
		// An operator's serving pair is trusted through its own CA.
		if op, err := os.ReadFile(filepath.Join(filepath.Dir(o.TLSCertFile), "ca.crt")); err == nil {
			pool.AppendCertsFromPEM(op)
		}
	}
	e.client = &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2: true,
	}}
	t.Cleanup(e.stop)
	e.waitReady()
	return e
}

// stop shuts the server down and waits for it.
func (e *env) stop() {
	if e.cancel == nil {
		return
	}
	e.cancel()
	e.cancel = nil
	select {
	case err := <-e.done:
		if err != nil {
			e.t.Errorf("platd stopped with: %v", err)
		}
	case <-time.After(30 * time.Second):
		e.t.Errorf("platd did not stop within 30s")
	}
	e.client.CloseIdleConnections()
}

// waitReady polls /readyz until it answers ok.
func (e *env) waitReady() {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r := e.do("GET", "/readyz", nil)
		if r.code == 200 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.t.Fatal("platd did not become ready within 10s")
}

// resp is a finished response.
type resp struct {
	code   int
	header http.Header
	body   []byte
}

// obj decodes the body as a JSON object.
func (r *resp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("decoding %q: %v", r.body, err)
	}
	return m
}

// req is one request to send.
type req struct {
	method, path string
	body         any
	token        string
	header       map[string]string
}

// do sends a request as admin. body may be nil, a string, []byte or a
// value to encode as JSON.
func (e *env) do(method, path string, body any, header ...string) *resp {
	e.t.Helper()
	h := map[string]string{}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	return e.send(req{method: method, path: path, body: body, token: adminToken, header: h})
}

func (e *env) send(rq req) *resp {
	e.t.Helper()
	var rd io.Reader
	switch b := rq.body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	r, err := http.NewRequest(rq.method, e.srv.URL()+rq.path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rq.token != "" {
		r.Header.Set("Authorization", "Bearer "+rq.token)
	}
	r.Header.Set("User-Agent", "platd-test/1.0")
	if rd != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range rq.header {
		r.Header.Set(k, v)
	}
	res, err := e.client.Do(r)
	if err != nil {
		e.t.Fatalf("%s %s: %v", rq.method, rq.path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return &resp{code: res.StatusCode, header: res.Header, body: b}
}

// mustCode fails the test unless the response has the code.
func (r *resp) mustCode(t *testing.T, code int) *resp {
	t.Helper()
	if r.code != code {
		t.Fatalf("status %d, want %d; body: %s", r.code, code, r.body)
	}
	return r
}

// mustMessage fails the test unless the response is a Status whose
// message is want: an error's code alone does not tell which rule refused.
func (r *resp) mustMessage(t *testing.T, want string) *resp {
	t.Helper()
	if got, _ := r.obj(t)["message"].(string); got != want {
		t.Errorf("Status message:\n got  %s\n want %s", got, want)
	}
	return r
}

// path reads a value at a dotted path of a decoded JSON object.
func path(m map[string]any, p string) any {
	var cur any = m
	for _, k := range strings.Split(p, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

// cm is a ConfigMap body.
func cm(name string, data map[string]string, labels map[string]string) map[string]any {
	md := map[string]any{"name": name}
	if labels != nil {
		md["labels"] = labels
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestMain(m *testing.M) {
	// Packages below the server log through the default logger; keep test
	// output to warnings and errors.
	slog.SetDefault(quietLog())
	code := m.Run()
	stopSharedEtcd()
	os.Exit(code)
}
