package bolt

import (
	"bytes"
	"fmt"
	"slices"

	bbolt "go.etcd.io/bbolt"
)

// Records whose checksum fails at Open (see layout.go) are handled here,
// apart from the load itself:
//
//   - A state record becomes a corrupt key (CorruptError): it stays in the
//     store, Get and List over it fail, and a delete with a stand-in value
//     or an update replaces it. Its revisions come from the damaged record
//     when they are plausible, else the revision counter stands in, so the
//     key keeps a revision a delete can name.
//     The history is cut at the key's newest event, so no retained event
//     holds a value that the key's later delete (whose previous state is a
//     stand-in) contradicts.
//   - An event record ends the replayable history as an unreadable value
//     does (loadHistory): it and every event before it are dropped from
//     memory and the compacted revision moves up to it. The history is a
//     record of the past; the state is intact without it, and a watch from
//     before the damage is told to re-list instead of missing an event.
//
// Open then compacts the file up to the cut (compactDamaged): damaged
// bytes never become readable, so the file need not keep them, and a
// check of the file after a start finds none.

// damagedState returns the stand-in of the state record rec of key, whose
// checksum failed with err, and marks key corrupt. rev is the revision
// counter. The record is kept as stored, so that a rewrite of the file
// copies the damage instead of sealing the damaged bytes with a new
// checksum.
func (db *DB) damagedState(key string, rec []byte, rev int64, err error) KV {
	if _, cerr := openRecord(strBytes(key), rec); cerr != nil {
		err = cerr // the cause without the file-level wrapping
	}
	kv, perr := parseState(key, rec[:max(len(rec)-checksumSize, 0)])
	if perr != nil || kv.CreateRevision <= 0 || kv.CreateRevision > kv.ModRevision || kv.ModRevision > rev {
		kv = KV{Key: key, CreateRevision: max(rev, 1), ModRevision: max(rev, 1)}
	}
	kv.Value = bytes.Clone(kv.Value)
	db.markCorrupt(&CorruptError{Key: key, ModRevision: kv.ModRevision, Err: err, record: bytes.Clone(rec)})
	db.log.Warn("damaged value", "key", key, "revision", kv.ModRevision, "err", err)
	return kv
}

// damagedEvent reports the event record of revision r, whose checksum
// failed with err: the history is cut at r.
func (db *DB) damagedEvent(r int64, err error) {
	db.log.Warn("damaged history record", "revision", r, "err", err)
	db.damageCut = max(db.damageCut, r)
}

// markCorrupt records the key of c as one whose stored value cannot be
// served; load only.
func (db *DB) markCorrupt(c *CorruptError) {
	if db.corrupt == nil {
		db.corrupt = make(map[string]*CorruptError)
	}
	db.corrupt[c.Key] = c
}

// compactDamaged compacts the file, and the history in memory, up to the
// damage cut, before the engine starts.
func (db *DB) compactDamaged() error {
	if db.damageCut == 0 {
		return nil
	}
	db.log.Warn("history dropped up to a damaged record", "path", db.path, "revision", db.damageCut)
	return db.compactTo(db.damageCut)
}

// keyOrder checks that the keys a load reads from a bucket ascend, as a
// sound bucket's do: a damaged page that Open did not walk (pages.go) may
// hand out keys in another order, which the index cannot hold.
type keyOrder struct {
	what string
	last []byte // valid for the load's transaction
}

func (o *keyOrder) next(k []byte) error {
	if o.last != nil && bytes.Compare(k, o.last) <= 0 {
		return fmt.Errorf("%w: %s keys out of order at %q: a damaged page", ErrCorrupt, o.what, k)
	}
	o.last = k
	return nil
}

// checkBuckets checks that the file of tx holds exactly the engine's
// three top-level buckets, and nothing else. A damaged byte in a bucket's
// name on the root page leaves a sound tree whose bucket is simply
// missing: creating it anew would start the engine on an empty state or
// history while the old one stays in the file under the damaged name.
func checkBuckets(tx *bbolt.Tx) error {
	var names []string
	_ = tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
		if b == nil {
			name = append(slices.Clip(name), " (not a bucket)"...)
		}
		names = append(names, string(name))
		return nil
	})
	want := []string{string(bucketHistory), string(bucketMeta), string(bucketState)}
	if len(names) == 0 {
		return fmt.Errorf("%w: the file holds no buckets, but transactions were committed to it: a damaged page lost them", ErrCorrupt)
	}
	if !slices.Equal(names, want) {
		return fmt.Errorf("%w: the file's top-level buckets are %q, want %q: a damaged page renamed or lost one", ErrCorrupt, names, want)
	}
	return nil
}
