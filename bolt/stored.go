package bolt

import (
	"bytes"
	"fmt"

	bbolt "go.etcd.io/bbolt"
)

// ReadStored returns the bytes stored for key in the closed engine file at
// path, as written (transformed, when a transformer was set). It is for
// inspection tools and tests; the file is opened read-only.
func ReadStored(path, key string) ([]byte, error) {
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: fileLockTimeout})
	if err != nil {
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	defer bdb.Close()
	var out []byte
	err = bdb.View(func(tx *bbolt.Tx) error {
		rec := tx.Bucket(bucketState).Get([]byte(key))
		if rec == nil {
			return fmt.Errorf("%w: %s", ErrNotFound, key)
		}
		kv, err := decodeState(key, rec)
		if err != nil {
			return err
		}
		out = bytes.Clone(kv.Value)
		return nil
	})
	return out, err
}

// OverwriteStored replaces the bytes stored for key in the closed engine
// file at path, keeping its revisions, and drops the retained history as a
// compaction would (its events hold the old bytes). It damages a file on
// purpose, for tests of what a server does with values it cannot read.
func OverwriteStored(path, key string, stored []byte) error {
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: fileLockTimeout})
	if err != nil {
		return fmt.Errorf("bolt: open %s: %w", path, err)
	}
	defer bdb.Close()
	return bdb.Update(func(tx *bbolt.Tx) error {
		state := tx.Bucket(bucketState)
		rec := state.Get([]byte(key))
		if rec == nil {
			return fmt.Errorf("%w: %s", ErrNotFound, key)
		}
		kv, err := decodeState(key, rec)
		if err != nil {
			return err
		}
		kv.Value = stored
		if err := state.Put([]byte(key), appendState(nil, &kv)); err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		rev, err := readMeta(meta, metaRevision)
		if err != nil {
			return err
		}
		if err := tx.DeleteBucket(bucketHistory); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketHistory); err != nil {
			return err
		}
		return meta.Put(metaCompacted, u64key(rev))
	})
}
