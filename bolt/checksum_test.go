package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	bbolt "go.etcd.io/bbolt"
)

// toOldLayout rewrites the closed file at path into the layout version v
// (1 or 2): records without checksums.
func toOldLayout(t *testing.T, path string, v int64) {
	t.Helper()
	raw, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	err = raw.Update(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketState, bucketHistory} {
			b := tx.Bucket(name)
			var recs [][2][]byte
			err := b.ForEach(func(k, v []byte) error {
				if _, err := openRecord(k, v); err != nil {
					return err
				}
				recs = append(recs, [2][]byte{bytes.Clone(k), bytes.Clone(v[:len(v)-checksumSize])})
				return nil
			})
			if err != nil {
				return err
			}
			for _, r := range recs {
				if err := b.Put(r[0], r[1]); err != nil {
					return err
				}
			}
		}
		return tx.Bucket(bucketMeta).Put(metaFormat, u64key(v))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRecordChecksum(t *testing.T) {
	t.Parallel()
	kv := KV{Key: "/x/y", Value: []byte(`{"a":1}`), CreateRevision: 3, ModRevision: 300}
	rec := appendState(nil, &kv)
	ev := Event{Type: Put, Revision: 300, KV: kv, Prev: &KV{Key: kv.Key, Value: []byte(`{"a":0}`), CreateRevision: 3, ModRevision: 3}}
	erec := appendEvent(nil, &ev, 99, false)
	for i := range rec {
		bad := bytes.Clone(rec)
		bad[i] ^= 0x10
		if _, err := decodeState(kv.Key, bad); !errors.Is(err, ErrChecksum) || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("state byte %d flipped: %v", i, err)
		}
	}
	for i := range erec {
		bad := bytes.Clone(erec)
		bad[i] ^= 0x01
		if _, err := decodeEvent(ev.Revision, bad); !errors.Is(err, ErrChecksum) {
			t.Fatalf("event byte %d flipped: %v", i, err)
		}
	}
	// The key is covered: a record under another key fails.
	if _, err := decodeState("/x/z", rec); !errors.Is(err, ErrChecksum) {
		t.Fatalf("state under another key: %v", err)
	}
	if _, err := decodeEvent(301, erec); !errors.Is(err, ErrChecksum) {
		t.Fatalf("event under another revision: %v", err)
	}
	for _, n := range []int{0, 3} {
		if _, err := decodeState(kv.Key, rec[:n]); !errors.Is(err, ErrChecksum) {
			t.Fatalf("record of %d bytes: %v", n, err)
		}
	}
}

// fillForUpgrade writes objects with updates, deletes and a transaction,
// and returns the state it expects.
func fillForUpgrade(t *testing.T, db *DB) map[string]string {
	t.Helper()
	ctx := context.Background()
	want := map[string]string{}
	for i := range 20 {
		key := fmt.Sprintf("/k/%02d", i)
		kv, err := db.Create(ctx, key, []byte("v"))
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if kv, err = db.Update(ctx, key, kv.ModRevision, []byte("w")); err != nil {
				t.Fatal(err)
			}
		}
		want[key] = string(kv.Value)
	}
	if _, err := db.Delete(ctx, "/k/05", 0); err != nil {
		t.Fatal(err)
	}
	delete(want, "/k/05")
	kvs, err := db.Txn(ctx, []Op{{Kind: OpCreate, Key: "/t/a", Value: []byte("a")}, {Kind: OpCreate, Key: "/t/b", Value: []byte("b")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range kvs {
		want[kv.Key] = string(kv.Value)
	}
	return want
}

func sameState(t *testing.T, db *DB, want map[string]string) {
	t.Helper()
	for key, v := range want {
		kv, err := db.Get(key)
		if err != nil || string(kv.Value) != v {
			t.Fatalf("%s: %q, %v; want %q", key, kv.Value, err, v)
		}
	}
	if n := db.idx.len(); n != len(want) {
		t.Fatalf("%d keys, want %d", n, len(want))
	}
}

func fileForm(t *testing.T, path string) layoutForm {
	t.Helper()
	raw, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: testWait})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var f layoutForm
	err = raw.View(func(tx *bbolt.Tx) error {
		f, err = readForm(tx.Bucket(bucketMeta))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestOpenUpgradesLayout opens files of layout versions 1 and 2: Open
// seals every record with its checksum, marks the file version 3 and
// serves the same state and history; CheckFile reads the old forms too.
func TestOpenUpgradesLayout(t *testing.T) {
	t.Parallel()
	for _, v := range []int64{formatVersionV1, formatVersionV2} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			t.Parallel()
			db := openInternal(t, Options{})
			want := fillForUpgrade(t, db)
			rev := db.Revision()
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			toOldLayout(t, db.path, v)
			if err := CheckFile(db.path); err != nil {
				t.Fatalf("check of the old layout: %v", err)
			}
			db2 := reopen(t, db)
			sameState(t, db2, want)
			if db2.Revision() != rev || len(db2.hist) != int(rev) {
				t.Fatalf("revision %d, %d events; want %d", db2.Revision(), len(db2.hist), rev)
			}
			if err := db2.Close(); err != nil {
				t.Fatal(err)
			}
			if f := fileForm(t, db.path); f.format != formatVersion || f.mark != nil {
				t.Fatalf("form after open: %+v", f)
			}
			if err := CheckFile(db.path); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestOpenResumesUpgrade: an upgrade interrupted after its first
// transaction (the version is 3, the progress names the last state key
// rewritten) is finished by the next Open, and CheckFile reads the file
// in between, each record in its form.
func TestOpenResumesUpgrade(t *testing.T) {
	t.Parallel()
	for _, at := range []string{"/k/00", "/k/13", "/t/b", "h"} {
		t.Run(at, func(t *testing.T) {
			t.Parallel()
			db := openInternal(t, Options{})
			want := fillForUpgrade(t, db)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			toOldLayout(t, db.path, formatVersionV2)
			raw, err := bbolt.Open(db.path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = raw.Update(func(tx *bbolt.Tx) error {
				mark := []byte{upgradeState}
				if at == "h" {
					mark = []byte{upgradeHistory}
				} else {
					mark = append(mark, at...)
				}
				form := layoutForm{format: formatVersion, mark: mark}
				state := tx.Bucket(bucketState)
				var recs [][2][]byte
				_ = state.ForEach(func(k, v []byte) error {
					if form.sealed(upgradeState, k) {
						recs = append(recs, [2][]byte{bytes.Clone(k), binary32(bytes.Clone(v), recordSum(k, v))})
					}
					return nil
				})
				for _, r := range recs {
					if err := state.Put(r[0], r[1]); err != nil {
						return err
					}
				}
				if err := tx.Bucket(bucketMeta).Put(metaFormat, u64key(formatVersion)); err != nil {
					return err
				}
				return tx.Bucket(bucketMeta).Put(metaUpgrade, mark)
			})
			raw.Close()
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckFile(db.path); err != nil {
				t.Fatalf("check midway: %v", err)
			}
			db2 := reopen(t, db)
			sameState(t, db2, want)
			if err := db2.Close(); err != nil {
				t.Fatal(err)
			}
			if f := fileForm(t, db.path); f.mark != nil {
				t.Fatalf("progress left: %q", f.mark)
			}
			if err := CheckFile(db.path); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func binary32(b []byte, v uint32) []byte {
	return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// flipRecord flips one bit of the record under key in bucket of the closed
// file at path, at offset from the record's end (past its checksum).
func flipRecord(t *testing.T, path string, bucket, key []byte, fromEnd int) {
	t.Helper()
	raw, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: testWait})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	err = raw.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucket)
		rec := bytes.Clone(b.Get(key))
		if rec == nil {
			return fmt.Errorf("no record %q", key)
		}
		rec[len(rec)-checksumSize-fromEnd] ^= 0x04
		return b.Put(key, rec)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOpenDamagedRecords: a state record whose checksum fails is a
// corrupt key (Get, List, delete with a stand-in, an online rewrite keeps
// it damaged); an event record whose checksum fails cuts the history
// there. CheckFile names both.
func TestOpenDamagedRecords(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	want := fillForUpgrade(t, db)
	bad := "/k/07"
	badRev := int64(9) // an event well inside the history
	badKV, err := db.Get(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	flipRecord(t, db.path, bucketState, []byte(bad), 1)
	flipRecord(t, db.path, bucketHistory, u64key(badRev), 2)
	err = CheckFile(db.path)
	for _, w := range []string{`state "/k/07": bolt: checksum mismatch`, "event 9: bolt: checksum mismatch"} {
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(w)) {
			t.Errorf("check: %v; want %q", err, w)
		}
	}
	db2 := reopen(t, db)
	_, err = db2.Get(bad)
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrChecksum) || ce.Key != bad || ce.Untransformable {
		t.Fatalf("get of the damaged key: %v", err)
	}
	if want, _ := db2.idx.get(bad); ce.ModRevision != want.ModRevision {
		t.Fatalf("corrupt revision %d, index %d", ce.ModRevision, want.ModRevision)
	}
	var cl *CorruptListError
	if _, err := db2.List("/k/", ListOptions{ReportCorrupt: true}); !errors.As(err, &cl) || len(cl.Keys) != 1 || cl.Keys[0].Key != bad {
		t.Fatalf("list over the damaged key: %v", err)
	}
	// The history is cut at the damaged event or the damaged key's last
	// event, whichever is newer, in memory and in the file.
	if got, want := db2.CompactedRevision(), max(badRev, badKV.ModRevision); got != want || db2.hist[0].Revision != want+1 {
		t.Fatalf("compacted %d, history from %d; want %d", got, db2.hist[0].Revision, want)
	}
	delete(want, bad)
	for key, v := range want {
		if kv, err := db2.Get(key); err != nil || string(kv.Value) != v {
			t.Fatalf("%s: %q, %v; want %q", key, kv.Value, err, v)
		}
	}
	// A rewrite of the file copies the damaged record as it is.
	if _, _, err := db2.Defrag(context.Background()); err != nil {
		t.Fatal(err)
	}
	db3 := reopen(t, db2)
	if _, err := db3.Get(bad); !errors.Is(err, ErrChecksum) {
		t.Fatalf("after a rewrite: %v", err)
	}
	if _, err := db3.Txn(context.Background(), []Op{{Kind: OpDelete, Key: bad, Value: []byte("stand-in"), ExpectedRevision: ce.ModRevision}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db3.Get(bad); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after the delete: %v", err)
	}
	if _, err := db3.List("/k/", ListOptions{ReportCorrupt: true}); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusesSealedRecordsOfOlderLayout: a version 3 file whose
// layout version was damaged to 2 is refused, not sealed a second time.
func TestOpenRefusesSealedRecordsOfOlderLayout(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	fillForUpgrade(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	setFormat := func(v int64) {
		raw, err := bbolt.Open(db.path, 0o600, &bbolt.Options{Timeout: testWait})
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if err := raw.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaFormat, u64key(v)) }); err != nil {
			t.Fatal(err)
		}
	}
	setFormat(formatVersionV2)
	_, err := Open(db.path, db.opts)
	if !errors.Is(err, ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte(`an older layout version, but record "/k/00" carries a checksum: the meta bucket is damaged`)) {
		t.Fatalf("open: %v", err)
	}
	setFormat(formatVersion) // for the cleanup's check
}
