package bolt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	bbolt "go.etcd.io/bbolt"
)

// DefragFile rewrites the engine file at path, which no process may have
// open (ErrLocked otherwise) and whose pages must be sound (ErrCorrupt
// otherwise), into a compact file and gives it the same
// name. The file is copied record by record, without loading it; history
// left over from an interrupted compaction is dropped. progress, when not
// nil, is called after each transaction of the copy with the records
// copied and the records to copy. It returns the file's size before and
// after. A crash at any point leaves the old or the new file complete
// under path; Open removes a leftover copy.
func DefragFile(path string, progress func(done, total int64)) (before, after int64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, fmt.Errorf("bolt: defrag: %w", err) // never create a file here
	}
	// bbolt walks a file without a free-page list on its own goroutine,
	// where a damaged page panics beyond recovery (pages.go).
	// The copy reads only the page tree: a damaged free-page list is
	// dropped, as Open drops it.
	_, err = verifyFile(path, walkKeys)
	var fe *freelistError
	if errors.As(err, &fe) {
		if err = dropFreelist(path); err == nil {
			_, err = verifyFile(path, walkKeys)
		}
	}
	if err != nil {
		return 0, 0, fmt.Errorf("bolt: defrag %s: %w", path, err)
	}
	src, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:        fileLockTimeout,
		NoFreelistSync: true,
		FreelistType:   bbolt.FreelistMapType,
	})
	if errors.Is(err, bbolt.ErrTimeout) {
		return 0, 0, fmt.Errorf("%w: %s", ErrLocked, path)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("bolt: defrag: open %s: %w", path, err)
	}
	defer src.Close()
	tmp := path + defragSuffix
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, 0, fmt.Errorf("bolt: defrag: %w", err)
	}
	ndb, err := openFile(tmp, true)
	if err != nil {
		return 0, 0, fmt.Errorf("bolt: defrag: %w", err)
	}
	renamed := false
	defer func() {
		if !renamed {
			_ = ndb.Close()
			_ = os.Remove(tmp)
		}
	}()
	w := newFileWriter(ndb)
	defer w.rollback()
	// The source transaction stays open until the last commit, so the
	// records put, which alias its pages, stay valid until written.
	err = src.View(func(tx *bbolt.Tx) error {
		if err := checkBuckets(tx); err != nil {
			return err
		}
		meta, state, hist := tx.Bucket(bucketMeta), tx.Bucket(bucketState), tx.Bucket(bucketHistory)
		if _, err := readForm(meta); err != nil {
			return err // records are copied as they are, in any known form
		}
		comp, err := readMeta(meta, metaCompacted)
		if err != nil {
			return err
		}
		total := int64(meta.Stats().KeyN + state.Stats().KeyN + hist.Stats().KeyN)
		if progress != nil {
			w.onCommit = func(done int64) { progress(done, total) }
		}
		for _, b := range []struct {
			name []byte
			c    *bbolt.Cursor
			from []byte
		}{{bucketMeta, meta.Cursor(), nil}, {bucketState, state.Cursor(), nil}, {bucketHistory, hist.Cursor(), u64key(comp + 1)}} {
			k, v := b.c.First()
			if b.from != nil {
				k, v = b.c.Seek(b.from)
			}
			for ; k != nil; k, v = b.c.Next() {
				if err := w.put(b.name, k, v); err != nil {
					return err
				}
			}
		}
		return w.commit()
	})
	if err != nil {
		return 0, 0, fmt.Errorf("bolt: defrag %s: %w", path, err)
	}
	if err := ndb.Sync(); err != nil {
		return 0, 0, fmt.Errorf("bolt: defrag: sync: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, 0, fmt.Errorf("bolt: defrag: %w", err)
	}
	renamed = true
	cerr := ndb.Close()
	if err := syncDir(filepath.Dir(path)); err != nil {
		return 0, 0, fmt.Errorf("bolt: defrag: syncing the directory: %w", err)
	}
	if cerr != nil {
		return 0, 0, fmt.Errorf("bolt: defrag: %w", cerr)
	}
	nfi, err := os.Stat(path)
	if err != nil {
		return 0, 0, fmt.Errorf("bolt: defrag: %w", err)
	}
	return fi.Size(), nfi.Size(), nil
}
