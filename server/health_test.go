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
	crdHooks := ok("poststarthook/start-apiextensions-informers", "poststarthook/start-apiextensions-controllers",
		"poststarthook/crd-informer-synced", "poststarthook/start-system-namespaces-controller",
		"poststarthook/start-cluster-authentication-info-controller")
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
