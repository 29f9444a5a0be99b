package bolt

import (
	"errors"
	"hash/fnv"
	"io"
	"os"

	bbolt "go.etcd.io/bbolt"
)

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

// dropFreelist marks the engine file at path as holding no free-page
// list, as a crash leaves it, so that bbolt rebuilds the list from the
// page tree when it opens the file: the way out of a damaged list
// (freelistError). It commits as bbolt commits a meta page, holding the
// file's exclusive lock: a copy of the newest valid meta page without the
// list and with the next transaction id goes into the other meta slot.
// A torn write leaves that slot failing its checksum and the newest meta
// page as it was, so the next open finds the list and drops it again.
func dropFreelist(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lockExclusive(f, fileLockTimeout); err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	head := make([]byte, min(fi.Size(), maxPageSize+pageHeaderSize+metaSize))
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	m, at, pageSize, err := newestMeta(head[:n])
	if err != nil {
		return err
	}
	slot := uint64(0)
	if at == 0 {
		slot = 1
	}
	page := make([]byte, pageHeaderSize+metaSize)
	ne.PutUint64(page, slot)
	ne.PutUint16(page[8:], metaPageFlag)
	meta := page[pageHeaderSize:]
	copy(meta, head[at+pageHeaderSize:at+pageHeaderSize+metaSize])
	ne.PutUint64(meta[32:], noFreelist)
	ne.PutUint64(meta[48:], m.txid+1)
	h := fnv.New64a()
	h.Write(meta[:metaSumOffset])
	ne.PutUint64(meta[metaSumOffset:], h.Sum64())
	if _, err := f.WriteAt(page, int64(slot*pageSize)); err != nil {
		return err
	}
	return f.Sync()
}
