package server_test

import (
	"strings"
	"testing"

	"platd/config"
)

// The health endpoints list upstream's checks, in upstream's order, for
// the start-up work platd does: the storage check is "etcd" whatever the
// engine, and RBAC adds its hook (and the Node authorizer nothing but a
// cache behind informer-sync).
func TestHealthVerboseBodies(t *testing.T) {
	t.Parallel()
	ok := func(names ...string) string {
		var b strings.Builder
		for _, n := range names {
			b.WriteString("[+]" + n + " ok\n")
		}
		return b.String()
	}
	crdHooks := ok("poststarthook/priority-and-fairness-config-consumer", "poststarthook/start-apiextensions-informers", "poststarthook/start-apiextensions-controllers",
		"poststarthook/crd-informer-synced", "poststarthook/start-system-namespaces-controller",
		"poststarthook/start-cluster-authentication-info-controller", "poststarthook/start-legacy-token-tracking-controller")
	tailHooks := ok("poststarthook/scheduling/bootstrap-system-priority-classes", "poststarthook/priority-and-fairness-config-producer",
		"poststarthook/bootstrap-controller", "poststarthook/apiservice-registration-controller", "poststarthook/kube-apiserver-autoregistration", "autoregister-completion")
	for _, srv := range []struct {
		name  string
		mods  []option
		hooks string
	}{
		{"plat AlwaysAllow", nil, crdHooks + tailHooks},
		{"kubernetes Node,RBAC", []option{withBrand("kubernetes"), func(o *config.Options) {
			o.AuthorizationModes = []string{config.ModeNode, config.ModeRBAC}
		}}, crdHooks + ok("poststarthook/rbac/bootstrap-roles") + tailHooks},
	} {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, srv.mods...)
			live := ok("ping", "log", "etcd") + srv.hooks
			ready := ok("ping", "log", "etcd", "etcd-readiness", "informer-sync") + srv.hooks + ok("shutdown")
			for _, tc := range []struct {
				path string
				code int
				body string
			}{
				{"/livez?verbose", 200, live + "livez check passed\n"},
				{"/healthz?verbose", 200, live + "healthz check passed\n"},
				{"/readyz?verbose", 200, ready + "readyz check passed\n"},
				{"/readyz?verbose&exclude=etcd", 200, strings.Replace(ready, "[+]etcd ok", "[+]etcd excluded: ok", 1) + "readyz check passed\n"},
				{"/livez?verbose&exclude=etcd&exclude=storage", 200, strings.Replace(live, "[+]etcd ok", "[+]etcd excluded: ok", 1) +
					"warn: some health checks cannot be excluded: no matches for \"storage\"\nlivez check passed\n"},
				{"/readyz?exclude=etcd", 200, "ok"},
				{"/readyz/etcd", 200, "ok"},
				{"/livez/etcd", 200, "ok"},
				{"/healthz/etcd", 200, "ok"},
				{"/readyz/etcd-readiness", 200, "ok"},
				{"/livez/etcd-readiness", 404, "404 page not found\n"},
				{"/readyz/informer-sync", 200, "ok"},
				{"/readyz/log", 200, "ok"},
				{"/readyz/autoregister-completion", 200, "ok"},
				{"/readyz/storage", 404, "404 page not found\n"},
			} {
				r := e.do("GET", tc.path, nil)
				if r.code != tc.code || string(r.body) != tc.body {
					t.Errorf("%s: %d\n%s\nwant %d\n%s", tc.path, r.code, r.body, tc.code, tc.body)
				}
			}
		})
	}
}

// The health endpoints answer every method, as upstream's path mux does:
// what a method may do there is the authorizer's question, and the
// default policy lets anonymous users only GET them.
func TestHealthAnyMethod(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"), func(o *config.Options) {
		o.AuthorizationModes = []string{config.ModeNode, config.ModeRBAC}
		o.AnonymousAuth = true
	})
	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{"POST", "/healthz", 200, "ok"},
		{"PUT", "/livez", 200, "ok"},
		{"DELETE", "/readyz", 200, "ok"},
		{"OPTIONS", "/readyz", 200, "ok"},
		{"PATCH", "/livez/ping", 200, "ok"},
		{"POST", "/readyz/etcd", 200, "ok"},
		{"POST", "/readyz/storage", 404, "404 page not found\n"},
		{"POST", "/healthz/", 404, "404 page not found\n"},
	} {
		r := e.do(tc.method, tc.path, "{}")
		if r.code != tc.code || string(r.body) != tc.body {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, r.code, r.body, tc.code, tc.body)
		}
	}
	if r := e.do("POST", "/readyz?verbose", nil).mustCode(t, 200); !strings.HasSuffix(string(r.body), "[+]shutdown ok\nreadyz check passed\n") {
		t.Errorf("POST /readyz?verbose:\n%s", r.body)
	}
	if r := e.send(req{method: "GET", path: "/healthz"}).mustCode(t, 200); string(r.body) != "ok" {
		t.Errorf("anonymous GET /healthz: %q", r.body)
	}
	st := e.send(req{method: "POST", path: "/healthz"}).mustCode(t, 403).obj(t)
	if want := `forbidden: User "system:anonymous" cannot post path "/healthz"`; st["message"] != want {
		t.Errorf("anonymous POST /healthz: %v, want %q", st["message"], want)
	}
}
