package server_test

import (
	"runtime"
	"testing"
	"time"
)

// TestStopLeavesNoGoroutines runs alone (not parallel): a server that served
// requests and an open watch must leave no goroutine behind once stopped.
func TestStopLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	e := start(t, withControllers("*"))
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
