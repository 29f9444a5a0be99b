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
// (freelistError). It rewrites the list pointer and the checksum of the
// newest valid meta page in place, holding the file's exclusive lock. A
// torn write fails that page's checksum, and bbolt then reads the other
// meta page, which describes the commit before and is valid too.
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
	_, at, _, err := newestMeta(head[:n])
	if err != nil {
		return err
	}
	meta := head[at+pageHeaderSize : at+pageHeaderSize+metaSize]
	ne.PutUint64(meta[32:], noFreelist)
	h := fnv.New64a()
	h.Write(meta[:metaSumOffset])
	ne.PutUint64(meta[metaSumOffset:], h.Sum64())
	if _, err := f.WriteAt(meta, int64(at+pageHeaderSize)); err != nil {
		return err
	}
	return f.Sync()
}
