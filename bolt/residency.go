package bolt

import (
	"time"

	bbolt "go.etcd.io/bbolt"
)

// releaseInterval is how often the committer drops the file's mapped pages
// from the process's resident set. Reads are served from memory, so the
// map is touched only by commits walking to the pages they change; without
// the drop, copy-on-write page reuse makes every page of the file resident
// over time, doubling the memory the data costs. Once a second bounds the
// page faults that follow each drop to the handful of pages a commit walks.
const releaseInterval = time.Second

// releaseBytes drops the pages sooner under large writes: bbolt rewrites the
// records that share a leaf with the ones a commit changes, reading them
// through the map, so the pages a commit touches grow with what it writes
// (an update of a 1 MiB value touches several MiB). Once this many bytes of
// records are committed the committer drops the pages right after the
// commit, which bounds that growth; small writes still drop only once a
// second.
const releaseBytes = 4 << 20

// releaseMapped drops the mapped pages of the file from the resident set
// when releaseInterval has passed. It must run inside a write transaction,
// before the transaction changes anything: the map can move only while a
// write transaction allocates, and no other write transaction can run.
// The pages stay in the page cache; touching one again is a minor fault.
func (db *DB) releaseMapped(tx *bbolt.Tx) {
	now := time.Now()
	if now.Sub(db.lastRelease) < releaseInterval {
		return
	}
	db.lastRelease, db.unreleased = now, 0
	db.dropResident(tx)
}

// dropResident drops the file's mapped pages from the resident set; tx
// keeps the map in place meanwhile. A failure costs only memory.
func (db *DB) dropResident(tx *bbolt.Tx) {
	if err := dropPages(db.bdb.Info().Data, uintptr(tx.Size())); err != nil {
		db.log.Debug("releasing mapped pages", "err", err)
	}
}

// dropLoaded drops the pages the load read from the resident set, beside
// the start of the engine rather than before it: at scale that is the
// whole file, whose unmapping takes milliseconds a starting server need
// not wait for. A read transaction keeps the map in place meanwhile.
func (db *DB) dropLoaded() {
	db.compactMu.Lock() // not while a rewrite swaps the file
	defer db.compactMu.Unlock()
	db.dropMapped()
}
