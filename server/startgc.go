package server

import (
	"runtime/debug"
	"sync"
	"time"
)

// A start allocates tens of MiB that are garbage soon after (decoded
// descriptors, bootstrap objects, the policy) over a live heap of a few
// MiB; at the default target the collector would trace that small heap
// again every few MiB. While a server starts the target is
// startGCFactor times the configured one; it returns when the server is
// ready (before the start's garbage is handed back to the OS), when New
// fails or Serve ends, and at the latest after startGCMax.
const (
	startGCFactor = 4
	startGCMax    = 10 * time.Second
)

// startGC counts the servers of this process that are starting and keeps
// the setting to restore when the last is done.
var startGC struct {
	sync.Mutex
	starts  int
	percent int
}

// relaxGC raises the collector's target for one start. The returned
// function restores it; it may be called any number of times, from any
// goroutine. An off collector (GOGC=off) stays off, and a memory limit
// (GOMEMLIMIT) still applies.
func relaxGC() (restore func()) {
	startGC.Lock()
	if startGC.starts == 0 {
		startGC.percent = debug.SetGCPercent(-1)
		relaxed := startGC.percent
		if relaxed > 0 {
			relaxed *= startGCFactor
		}
		debug.SetGCPercent(relaxed)
	}
	startGC.starts++
	startGC.Unlock()
	var once sync.Once
	done := func() {
		once.Do(func() {
			startGC.Lock()
			defer startGC.Unlock()
			if startGC.starts--; startGC.starts == 0 {
				debug.SetGCPercent(startGC.percent)
			}
		})
	}
	t := time.AfterFunc(startGCMax, done)
	return func() {
		t.Stop()
		done()
	}
}
