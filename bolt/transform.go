package bolt

import (
	"errors"
	"fmt"

	bbolt "go.etcd.io/bbolt"
	"maps"
	"slices"
	"strings"
)

// Transformer turns a value into the bytes written to the file and back;
// encryption at rest is one. It is applied here, where values meet the
// file, and nowhere else: memory holds the plain values, so reads, lists
// and watches cost nothing extra, and every record that carries a value
// (an object's state, a history event and its previous state) is covered,
// which a transformer in the server, which never sees the history
// records, could not promise. It runs on the committer for writes and at
// Open for reads; nil (no Options.Transformer) skips it entirely.
type Transformer interface {
	// ToStorage returns the bytes to write for value stored under key.
	// It must neither modify nor retain value.
	ToStorage(key string, value []byte) ([]byte, error)
	// FromStorage returns the value of stored, read under key. stored is
	// valid only during the call: the result must not alias it. Open calls
	// it from two goroutines at once (the history and the state load
	// together), so it must be safe for concurrent use. stale
	// reports that ToStorage would now write the value differently (it was
	// written with a key that no longer comes first), so rewriting it is
	// not a no-op.
	FromStorage(key string, stored []byte) (value []byte, stale bool, err error)
}

// CorruptError is a value in the file that Open could not read back: its
// transformer failed, or Options.Verify refused the result. The key stays
// in the store (it counts, and its revision is kept) but Get, List and
// writes that need its value fail with this error until it is deleted or
// replaced. errors.Is(err, ErrCorruptValue) holds.
type CorruptError struct {
	Key string
	// ModRevision is the key's revision.
	ModRevision int64
	// Untransformable says the transformer failed; otherwise Verify did.
	Untransformable bool
	Err             error
	// record is the state record as stored when its checksum failed
	// (ErrChecksum): a rewrite of the file copies it as it is.
	record []byte
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("bolt: corrupt value of %s at revision %d: %v", e.Key, e.ModRevision, e.Err)
}

// Unwrap returns ErrCorruptValue and the transformer's or Verify's error.
func (e *CorruptError) Unwrap() []error { return []error{ErrCorruptValue, e.Err} }

// CorruptListError is a List over keys whose values are corrupt: Keys
// holds one CorruptError per such key in the listed range, in key order.
// errors.Is(err, ErrCorruptValue) holds.
type CorruptListError struct {
	Keys []*CorruptError
}

func (e *CorruptListError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bolt: %d corrupt values:", len(e.Keys))
	for _, c := range e.Keys {
		b.WriteString(" ")
		b.WriteString(c.Key)
	}
	return b.String()
}

// Unwrap returns ErrCorruptValue.
func (e *CorruptListError) Unwrap() error { return ErrCorruptValue }

// toStorage is value as written to the file.
func (db *DB) toStorage(key string, value []byte) ([]byte, error) {
	if db.opts.Transformer == nil {
		return value, nil
	}
	out, err := db.opts.Transformer.ToStorage(key, value)
	if err != nil {
		return nil, fmt.Errorf("bolt: transform %s: %w", key, err)
	}
	return out, nil
}

// fromStorage reads a value of the file back into memory, as a copy owned
// by the caller (rec is only valid inside the transaction), and says
// whether the transformer found it stale.
func (db *DB) fromStorage(key string, modRev int64, rec []byte) ([]byte, bool, *CorruptError) {
	var (
		v     []byte
		stale bool
	)
	if t := db.opts.Transformer; t == nil {
		v = slices.Clone(rec)
	} else {
		out, st, err := t.FromStorage(key, rec)
		if err != nil {
			return nil, false, &CorruptError{Key: key, ModRevision: modRev, Untransformable: true, Err: err}
		}
		v, stale = out, st
	}
	if db.opts.Verify != nil {
		if err := db.opts.Verify(key, v); err != nil {
			return nil, false, &CorruptError{Key: key, ModRevision: modRev, Err: err}
		}
	}
	return v, stale, nil
}

// Stale reports whether key's stored value was written with a transformer
// key that no longer comes first (see Transformer): an update that leaves
// the object unchanged should still be written, to re-encrypt it.
func (db *DB) Stale(key string) bool {
	db.mu.RLock()
	defer db.mu.RUnlock()
	_, ok := db.stale[key]
	return ok
}

// corruptIn returns the corrupt keys in [from, end), in key order. Caller
// holds mu.
func (db *DB) corruptIn(from, end string) []*CorruptError {
	var out []*CorruptError
	for _, k := range slices.Sorted(maps.Keys(db.corrupt)) {
		if k >= from && k < end {
			out = append(out, db.corrupt[k])
		}
	}
	return out
}

// RecheckStale recomputes which keys are stale (see Stale) from the stored
// bytes in the file, after the transformer's keys changed while the
// engine runs: stale says, for a key and its stored bytes, whether the
// transformer would now write them differently. A write racing the scan
// may leave its key marked stale, which costs at most one extra rewrite.
func (db *DB) RecheckStale(stale func(key string, stored []byte) bool) error {
	next := make(map[string]struct{})
	// compactMu keeps an online rewrite from swapping the file meanwhile.
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	if db.closed.Load() {
		return ErrClosed
	}
	err := db.bdb.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketState).ForEach(func(k, v []byte) error {
			kv, err := decodeState(string(k), v)
			if errors.Is(err, ErrChecksum) {
				return nil // a corrupt key, never stale
			}
			if err != nil {
				return err
			}
			if stale(kv.Key, kv.Value) {
				next[kv.Key] = struct{}{}
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("bolt: recheck stale values: %w", err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	for k := range db.corrupt {
		delete(next, k)
	}
	if len(next) == 0 {
		next = nil
	}
	db.stale = next
	return nil
}
