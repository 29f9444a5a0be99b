package server

import (
	"time"

	"platd/gcpace"
)

// A start allocates tens of MiB that are garbage soon after (decoded
// descriptors, bootstrap objects, the policy) over a live heap of a few
// MiB; at the default target the collector would trace that small heap
// again every few MiB. While a server starts the target is
// startGCFactor times the configured one; it returns when the default
// policy is written and the controllers start (before the start's garbage
// is handed back to the OS), when New fails or Serve ends, and at the
// latest after startGCMax (a replica that runs no controllers).
const (
	startGCFactor = 4
	startGCMax    = 10 * time.Second
)

// relaxGC raises the collector's target for one start (gcpace owns the
// setting, so a store load that pauses the collector meanwhile composes
// with it). The returned function restores it; it may be called any
// number of times, from any goroutine.
func relaxGC() (restore func()) {
	done := gcpace.Relax(startGCFactor)
	t := time.AfterFunc(startGCMax, done)
	return func() {
		t.Stop()
		done()
	}
}
