package server_test

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"platd/config"
)

// TestStopLeavesNoGoroutines runs alone (not parallel): a server that served
// requests and an open watch must leave no goroutine behind once stopped.
func TestStopLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	// RBAC follows the store too: its watches must end with the rest.
	e := start(t, withControllers("*"), withRBAC)
	e.do("POST", "/api/v1/namespaces/default/configmaps", cm("leak", nil, nil)).mustCreated(t)
	w := e.watch("/api/v1/namespaces/default/configmaps?watch=1")
	w.expect("ADDED", "leak")
	e.stop()
	w.stop()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines after stop, %d before:\n%s", runtime.NumGoroutine(), before, buf[:n])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStopLeavesNoGoroutinesAuthzFile: the reload loop of
// --authorization-config and the webhook's connections end with the server.
func TestStopLeavesNoGoroutinesAuthzFile(t *testing.T) {
	aw := startAuthzWebhook(t)
	file := filepath.Join(t.TempDir(), "authz.yaml")
	writeAtomic(t, file, authzFile(config.Brands["plat"], `- type: Webhook
  name: hook
  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: `+aw.kubeconfig+`}
`))
	before := runtime.NumGoroutine()
	e := start(t, func(o *config.Options) {
		o.AuthorizationConfigFile, o.AuthorizationModes = file, nil
		o.AuthorizationConfigReloadInterval = 5 * time.Millisecond
	})
	e.as("alice", "GET", "/api/v1/namespaces/default/configmaps").mustCode(t, 200)
	e.stop()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines after stop, %d before:\n%s", runtime.NumGoroutine(), before, buf[:n])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStopLeavesNoGoroutinesAggregated: the connections to an extension
// API server, those of proxied requests and of discovery checks, end with
// the server.
func TestStopLeavesNoGoroutinesAggregated(t *testing.T) {
	x := startExtensionServer(t, "wardle", "api", "wardle.example.com", "v1alpha1")
	before := runtime.NumGoroutine()
	e := start(t, withProxyClient(t))
	namespace, service, endpoints, apiService := x.backing("wardle", "api", e.opts.Brand)
	e.do("POST", "/api/v1/namespaces", namespace).mustCreated(t)
	e.do("POST", "/api/v1/namespaces/wardle/services", service).mustCreated(t)
	e.do("POST", "/api/v1/namespaces/wardle/endpoints", endpoints).mustCreated(t)
	e.do("POST", groupPath(e.opts.Brand.Group("apiregistration"), "v1", "", "apiservices"), apiService).mustCreated(t)
	eventually(t, "a proxied request", func() bool {
		return e.do("GET", "/apis/wardle.example.com/v1alpha1/namespaces/x/flunders", nil).code == 200
	})
	e.stop()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines after stop, %d before:\n%s", runtime.NumGoroutine(), before, buf[:n])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
