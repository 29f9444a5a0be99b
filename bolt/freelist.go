package bolt

import bbolt "go.etcd.io/bbolt"

// bbolt keeps a list of the file's free pages. Commits leave it out of the
// file (NoFreelistSync: each would otherwise write the whole list), so an
// open must rebuild it, and bbolt does so inside its Open by walking every
// page of the file, serially, before the engine can read anything. A clean
// Close therefore writes the list once, in a last empty transaction, and
// the next Open reads it instead of walking; the engine's load then touches
// the pages itself (load.go). Open's own first transaction (load) marks the
// file as without a list again (bbolt frees the list's pages and records
// none), so a crash from then on cannot leave a stale list behind: the open
// after a crash walks the file as before.

// writeFreelist writes the free-page list in an empty transaction. It runs
// in Close once the committer and the compactor have stopped. A failure
// only costs the next Open its walk, so it is logged, not returned.
func (db *DB) writeFreelist() {
	db.bdb.NoFreelistSync = false
	err := db.bdb.Update(func(*bbolt.Tx) error { return nil })
	db.bdb.NoFreelistSync = true
	if err != nil {
		db.log.Warn("writing the free-page list at close", "path", db.path, "err", err)
	}
}
