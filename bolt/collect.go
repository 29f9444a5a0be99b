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

// minCollectInterval spaces the collections collectGarbage starts: under a
// steady stream of large writes, back-to-back collections of the whole
// heap would take a core; one a second keeps the garbage of about one
// second's large writes, which the pacer's goal absorbs.
const minCollectInterval = time.Second

// collecting is set while a collection started by collectGarbage runs, and
// lastCollect holds when the last one started (Unix nanoseconds); the heap
// is the process's, so they are too.
var (
	collecting  atomic.Bool
	lastCollect atomic.Int64
)

// collectGarbage starts a garbage collection in the background, unless one
// it started is still running or started less than minCollectInterval
// ago. It never blocks the caller.
func collectGarbage() {
	now := time.Now().UnixNano()
	if now-lastCollect.Load() < int64(minCollectInterval) || !collecting.CompareAndSwap(false, true) {
		return
	}
	lastCollect.Store(now)
	go func() {
		defer collecting.Store(false)
		runtime.GC()
	}()
}
