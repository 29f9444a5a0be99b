package bolt

import (
	"runtime"
	"sync/atomic"
	"time"
)

// collectAfterBytes is the size of a transaction's records from which the
// committer starts a garbage collection once the transaction is done.
//
// Why: a transaction writing large values leaves garbage several times their
// size: bbolt builds every leaf it rewrites in a fresh buffer, and a history
// leaf holds two to four events, each with its value and its previous value,
// so one 1 MiB update releases about 10 MiB of page buffers besides its own
// records. The collector's pacer sets the next heap goal to twice the heap
// it found alive, and a collection triggered by those very allocations finds
// them alive: the goal, and the resident memory after it, grow by twice the
// garbage of one transaction. A collection started right after such a
// transaction finds only what is really alive. Small writes never reach the
// size, so the write path of ordinary objects is unchanged; a large write
// costs one collection of the live heap, which is mostly byte slices the
// collector does not scan.
const collectAfterBytes = 1 << 20

// Forced collections are spaced so that they take at most half of one
// core: the next may start only once as long as the last one took has
// passed since it ended. A small heap is collected in milliseconds, so a
// client writing 1 MiB objects one after the other still gets one after
// each (the 1 MiB-update probe peaks near 130 MB; spaced even 100 ms apart
// it peaks near 150 MB, a second apart 180 MB), while under a fast stream
// of large writes to a large heap the collector does not run back to
// back.
var (
	// collecting is set while a collection started by collectGarbage
	// runs; the heap is the process's, so the state is too.
	collecting atomic.Bool
	// nextCollect is the earliest time (Unix nanoseconds) the next one may
	// start.
	nextCollect atomic.Int64
)

// collectGarbage starts a garbage collection in the background, unless one
// it started is still running or the last one ended too recently. It
// never blocks the caller.
func collectGarbage() {
	if time.Now().UnixNano() < nextCollect.Load() || !collecting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer collecting.Store(false)
		start := time.Now()
		runtime.GC()
		end := time.Now()
		nextCollect.Store(end.Add(end.Sub(start)).UnixNano())
	}()
}
