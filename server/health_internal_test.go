package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"platd/config"
	"platd/health"
)

// healthServer is a Server with only what its health checks read: no
// start-up hook has finished. The storage check is left out of probes.
func healthServer(grace time.Duration) *Server {
	return &Server{opts: config.Options{LivezGracePeriod: grace, AuthorizationModes: []string{config.ModeRBAC}},
		log: slog.New(slog.NewTextHandler(io.Discard, nil)), logWatch: health.NewLogWatch(),
		rbacDone: make(chan struct{}), shuttingDown: make(chan struct{})}
}

// testHooks are the start-up checks the tests of healthServer register.
var testHooks = []string{hookNamespaces, rbacBootstrapHook, hookPriorityClasses, hookFlowControl, hookBootstrap, hookAPIServiceRegistration,
	hookAutoregistration, autoregisterCompletion}

// probe answers one health request without the storage checks.
func probe(hr *health.Registry, endpoint string) (int, string) {
	target := "/" + endpoint + "?verbose&exclude=etcd"
	if endpoint == health.Readyz {
		target += "&exclude=etcd-readiness"
	}
	w := httptest.NewRecorder()
	hr.Handler(endpoint).ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	return w.Code, w.Body.String()
}

// During --livez-grace-period /livez reports unfinished start-up hooks as
// passing while /readyz and /healthz fail on them; after it, livez fails
// too, and once the hooks finish every endpoint passes.
func TestLivezGracePeriod(t *testing.T) {
	t.Parallel()
	const hooks = "[+]poststarthook/start-system-namespaces-controller ok\n[+]poststarthook/rbac/bootstrap-roles ok\n" +
		"[+]poststarthook/scheduling/bootstrap-system-priority-classes ok\n[+]poststarthook/priority-and-fairness-config-producer ok\n" +
		"[+]poststarthook/bootstrap-controller ok\n[+]poststarthook/apiservice-registration-controller ok\n[+]poststarthook/kube-apiserver-autoregistration ok\n[+]autoregister-completion ok\n"
	const head = "[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n"
	const readyHead = head + "[+]etcd-readiness excluded: ok\n[+]informer-sync ok\n"

	s := healthServer(time.Hour)
	hr := s.healthChecks(testHooks)
	if code, body := probe(hr, health.Livez); code != http.StatusOK || body != head+hooks+"livez check passed\n" {
		t.Errorf("livez within grace: %d\n%s", code, body)
	}
	for _, ep := range []string{health.Readyz, health.Healthz} {
		if code, body := probe(hr, ep); code != http.StatusInternalServerError || !strings.Contains(body, "[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n") ||
			!strings.Contains(body, "[-]autoregister-completion failed: reason withheld\n") {
			t.Errorf("%s within livez grace: %d\n%s", ep, code, body)
		}
	}

	// Without grace livez fails as readyz does.
	if code, body := probe(healthServer(0).healthChecks(testHooks), health.Livez); code != http.StatusInternalServerError ||
		!strings.Contains(body, "[-]poststarthook/start-system-namespaces-controller failed: reason withheld\n") {
		t.Errorf("livez without grace: %d\n%s", code, body)
	}

	// A short grace runs out.
	s = healthServer(20 * time.Millisecond)
	hr = s.healthChecks(testHooks)
	deadline := time.Now().Add(10 * time.Second)
	for code, _ := probe(hr, health.Livez); code != http.StatusInternalServerError; code, _ = probe(hr, health.Livez) {
		if time.Now().After(deadline) {
			t.Fatal("livez still passes 10s after a 20ms grace")
		}
		time.Sleep(5 * time.Millisecond)
	}

	// Finished hooks pass everywhere; shutdown is readyz's alone.
	s.hooks.finish(hookNamespaces, hookPriorityClasses, hookFlowControl, hookBootstrap)
	if code, body := probe(hr, health.Readyz); code != http.StatusInternalServerError || !strings.Contains(body, "[-]autoregister-completion failed") {
		t.Errorf("readyz before the APIServices: %d\n%s", code, body)
	}
	s.hooks.finish(hookAutoregistration)
	close(s.rbacDone)
	for ep, want := range map[string]string{
		health.Livez:   head + hooks + "livez check passed\n",
		health.Healthz: head + hooks + "healthz check passed\n",
		health.Readyz:  readyHead + hooks + "[+]shutdown ok\nreadyz check passed\n",
	} {
		if code, body := probe(hr, ep); code != http.StatusOK || body != want {
			t.Errorf("%s after the hooks: %d\n%s", ep, code, body)
		}
	}
}

// informer-sync fails, naming the caches, until each follows the store.
func TestInformerSync(t *testing.T) {
	t.Parallel()
	s := healthServer(0)
	s.informers.ch(crdInformer)
	s.informers.ch(rbacInformer)
	hr := s.healthChecks(nil)
	for _, tc := range []struct {
		finish string
		code   int
		body   string
	}{
		{"", 500, "internal server error: 2 informers not started yet: [customresourcedefinitions rbac-policy]\n"},
		{crdInformer, 500, "internal server error: 1 informers not started yet: [rbac-policy]\n"},
		{rbacInformer, 200, "ok"},
	} {
		if tc.finish != "" {
			s.informers.finish(tc.finish)
		}
		w := httptest.NewRecorder()
		hr.Handler(health.Readyz).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz/informer-sync", nil))
		if w.Code != tc.code || w.Body.String() != tc.body {
			t.Errorf("after %q: %d %q, want %d %q", tc.finish, w.Code, w.Body, tc.code, tc.body)
		}
	}
}

// The HTTP server bounds slow and idle clients as upstream's does; the
// drain and the Retry-After layer exist only when their flags ask.
func TestServerTimeouts(t *testing.T) {
	t.Parallel()
	b, _ := config.LookupBrand("plat")
	for _, tc := range []struct {
		retryAfter bool
		grace      time.Duration
		drain      bool
	}{
		{false, 0, false},
		{true, 0, true},
		{false, time.Second, true},
	} {
		dir := t.TempDir()
		o := config.Options{DataDir: dir, BindAddress: "127.0.0.1", Brand: b, HistoryRetention: config.DefaultHistoryRetention, UnsafeNoFsync: true,
			AuthorizationModes: []string{config.ModeAlwaysAllow}, ShutdownSendRetryAfter: tc.retryAfter, ShutdownWatchTerminationGracePeriod: tc.grace}
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		s, err := New(ctx, o, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if s.http.ReadHeaderTimeout != 32*time.Second || s.http.IdleTimeout != 90*time.Second || s.http.MaxHeaderBytes != 1<<20 {
			t.Errorf("read header timeout %s, idle timeout %s, max header bytes %d; want 32s, 1m30s, 1MiB",
				s.http.ReadHeaderTimeout, s.http.IdleTimeout, s.http.MaxHeaderBytes)
		}
		if (s.drain != nil) != tc.drain {
			t.Errorf("retry-after %v, watch grace %s: drain %v, want %v", tc.retryAfter, tc.grace, s.drain != nil, tc.drain)
		}
		_ = s.ln.Close()
		_ = s.store.Close()
		cancel()
	}
}
