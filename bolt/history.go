package bolt

import (
	"slices"
	"unsafe"
)

// DefaultHistoryMaxBytes bounds the memory of the history when
// Options.HistoryMaxBytes is zero. Retention alone lets a burst of large
// objects pin every replaced value for minutes (300 updates of a 1 MiB
// object held 600 MiB). 32 MiB still holds over twenty thousand updates of
// objects of a KiB, thousands of larger ones, so the bound bites only on
// bursts of large values; with Go's collector letting the heap grow to
// twice what is live, it keeps such a burst near 150 MB of RSS (64 MiB took
// it past 250 MB).
const DefaultHistoryMaxBytes = 32 << 20

// histEventOverhead is the memory a retained event takes besides its key
// and values: its slot in the ring and the previous state's KV.
const histEventOverhead = int64(unsafe.Sizeof(histEvent{}) + unsafe.Sizeof(KV{}))

// eventCost is the memory that event e keeps alive only because it is in
// the history. The value an event writes is shared with the index while it
// is the key's current state, and with the next event of the key (as its
// Prev) once replaced, so it is charged to that next event instead: each
// event pays for the value it replaced, which nothing but the history
// holds any more, and a delete also for its tombstone (the last value
// restamped, a copy). The key (usually shared with the index) is counted
// as if it were not. Slow watchers and in-flight responses may keep
// dropped values longer; they are not counted here.
func eventCost(e *Event) int64 {
	n := histEventOverhead + int64(len(e.KV.Key))
	if e.Prev != nil {
		n += int64(cap(e.Prev.Value))
	}
	if e.Type == Delete {
		n += int64(cap(e.KV.Value))
	}
	return n
}

// HistoryStats describes the history held in memory.
type HistoryStats struct {
	// Events is the number of retained events; Bytes what they alone keep
	// in memory (see Options.HistoryMaxBytes), MaxBytes the bound (0: none).
	Events          int
	Bytes, MaxBytes int64
	// Trimmed counts the events dropped to keep Bytes within MaxBytes since
	// Open (before their retention ended).
	Trimmed int64
}

// HistoryStats returns the current size of the in-memory history.
func (db *DB) HistoryStats() HistoryStats {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return HistoryStats{Events: len(db.hist), Bytes: db.histBytes,
		MaxBytes: max(db.opts.HistoryMaxBytes, 0), Trimmed: db.histTrimmed}
}

// trimHistory keeps the history within Options.HistoryMaxBytes: once over
// it, the oldest events are dropped down to seven eighths of it, so the
// ring is copied once per eighth of the bound and not on every commit.
// Dropped events are compacted as by Compact (memory first; the compactor
// deletes them from the file), so a watch or list below them is
// ErrCompacted. A transaction leaves whole, and events a file rewrite has
// yet to replay (above pin) stay. Caller holds mu exclusively. It reports
// whether it dropped events.
func (db *DB) trimHistory() bool {
	limit := db.opts.HistoryMaxBytes
	if limit <= 0 || db.histBytes <= limit {
		return false
	}
	target := limit - limit/8
	n, i := db.histBytes, 0
	for i < len(db.hist) && (n > target || db.hist[i].joined) {
		if db.pinned && db.hist[i].Revision > db.pin {
			break
		}
		n -= eventCost(&db.hist[i].Event)
		i++
	}
	if i == 0 {
		return false
	}
	db.trimTo = db.hist[i-1].Revision
	db.compacted.Store(db.trimTo)
	// A fresh slice: watchers may still be replaying from the old one, and
	// a reslice would keep the dropped values reachable.
	db.hist = slices.Clone(db.hist[i:])
	db.histBytes = n
	db.histTrimmed += int64(i)
	return true
}
