package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// xorTransformer marks values with a prefix and flips their bits, so no
// plain value is in the file. It writes "x:" ("o:" when old is set) and
// reads both, the other one as stale; it refuses values without either
// and, when refuse is set, values of that key (a lost key).
type xorTransformer struct {
	refuse string
	old    bool
	// failWrite, when set, makes ToStorage fail for values of that key.
	failWrite string
}

var xorPrefix = []byte("x:")

func (x xorTransformer) prefix() []byte {
	if x.old {
		return []byte("o:")
	}
	return xorPrefix
}

func (x xorTransformer) ToStorage(key string, v []byte) ([]byte, error) {
	if key == x.failWrite {
		return nil, errors.New("key unavailable")
	}
	p := x.prefix()
	out := append(bytes.Clone(p), v...)
	for i := len(p); i < len(out); i++ {
		out[i] ^= 0xff
	}
	return out, nil
}

func (x xorTransformer) FromStorage(key string, v []byte) ([]byte, bool, error) {
	if key == x.refuse || len(v) < 2 || (v[0] != 'x' && v[0] != 'o') || v[1] != ':' {
		return nil, false, errors.New("no matching prefix found")
	}
	out := bytes.Clone(v[2:])
	for i := range out {
		out[i] ^= 0xff
	}
	return out, v[0] != x.prefix()[0], nil
}

// fileHolds reports whether any bucket of the closed file at path holds
// needle in a key or value.
func fileHolds(t *testing.T, path string, needle []byte) bool {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(raw, needle)
}

func TestTransformerKeepsPlainValuesOutOfTheFile(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t, Options{Transformer: xorTransformer{}})
	if _, err := db.Create(ctx, "/s/a", []byte("topsecret")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Update(ctx, "/s/a", 0, []byte("topsecret2")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Create(ctx, "/s/b", []byte("topsecret3")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Delete(ctx, "/s/b", 0); err != nil {
		t.Fatal(err)
	}
	if kv, err := db.Get("/s/a"); err != nil || string(kv.Value) != "topsecret2@2" {
		t.Fatalf("Get: %q %v", kv.Value, err)
	}
	db = reopen(t, db)
	if kv, err := db.Get("/s/a"); err != nil || string(kv.Value) != "topsecret2@2" {
		t.Fatalf("Get after reopen: %q %v", kv.Value, err)
	}
	l, err := db.List("/s/", ListOptions{Revision: 1})
	if err != nil || len(l.Items) != 1 || string(l.Items[0].Value) != "topsecret@1" {
		t.Fatalf("List at 1 after reopen: %+v %v", l, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if fileHolds(t, db.path, []byte("topsecret")) {
		t.Error("the file holds a plain value")
	}
	if err := CheckFileWith(db.path, xorTransformer{}); err != nil {
		t.Error(err)
	}
	if err := CheckFileWith(db.path, xorTransformer{refuse: "/s/a"}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("CheckFileWith a lost key: %v", err)
	}
}

// openDamaged opens a fresh engine whose file the test damages, so its
// cleanup does not check the file.
func openDamaged(t *testing.T, opts Options) *DB {
	t.Helper()
	opts.Stamp, opts.NoFsync, opts.Logger = testStamp, true, slog.New(slog.DiscardHandler)
	db, err := Open(filepath.Join(t.TempDir(), "e.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestCorruptValues(t *testing.T) {
	ctx := context.Background()
	db := openDamaged(t, Options{Transformer: xorTransformer{}})
	for _, k := range []string{"/s/a", "/s/b", "/s/c", "/t/a"} {
		if _, err := db.Create(ctx, k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	// The key of /s/b is lost, and /s/c does not pass Verify.
	db.opts.Transformer = xorTransformer{refuse: "/s/b"}
	db.opts.Verify = func(key string, v []byte) error {
		if key == "/s/c" {
			return errors.New("not an object")
		}
		return nil
	}
	db = reopen(t, db)
	if kv, err := db.Get("/s/a"); err != nil || string(kv.Value) != "v@1" {
		t.Errorf("Get of a sound key: %q %v", kv.Value, err)
	}
	var ce *CorruptError
	if _, err := db.Get("/s/b"); !errors.As(err, &ce) || !errors.Is(err, ErrCorruptValue) || !ce.Untransformable || ce.ModRevision != 2 || ce.Key != "/s/b" {
		t.Errorf("Get of a lost key: %v", err)
	}
	if _, err := db.Get("/s/c"); !errors.As(err, &ce) || ce.Untransformable || ce.Err.Error() != "not an object" {
		t.Errorf("Get of an unverified key: %v", err)
	}
	if l, err := db.List("/s/", ListOptions{}); err != nil || len(l.Items) != 1 || l.Items[0].Key != "/s/a" {
		t.Errorf("List leaving corrupt keys out: %+v %v", l, err)
	}
	var le *CorruptListError
	if _, err := db.List("/s/", ListOptions{ReportCorrupt: true}); !errors.As(err, &le) || len(le.Keys) != 2 || le.Keys[0].Key != "/s/b" || le.Keys[1].Key != "/s/c" {
		t.Errorf("List: %v", err)
	}
	if l, err := db.List("/t/", ListOptions{}); err != nil || len(l.Items) != 1 {
		t.Errorf("List of another prefix: %+v %v", l, err)
	}
	if n := db.Count("/s/"); n != 3 {
		t.Errorf("Count = %d", n)
	}
	// The history up to the last unreadable event is gone from memory.
	if c := db.CompactedRevision(); c != 3 {
		t.Errorf("compacted = %d, want 3", c)
	}
	if _, err := db.Delete(ctx, "/s/b", 0); !errors.As(err, &ce) {
		t.Errorf("Delete without a stand-in: %v", err)
	}
	w, err := db.Watch(ctx, "/s/", db.Revision())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	kvs, err := db.Txn(ctx, []Op{{Kind: OpDelete, Key: "/s/b", Value: []byte("stand-in")}, UpdateOp("/s/c", 0, []byte("new"))})
	if err != nil {
		t.Fatal(err)
	}
	if string(kvs[0].Value) != "stand-in@5" || string(kvs[1].Value) != "new@6" {
		t.Errorf("txn results %q %q", kvs[0].Value, kvs[1].Value)
	}
	for _, want := range []string{"Delete stand-in@5 prev stand-in", "Put new@6 prev new"} {
		ev := <-w.Events()
		got := fmt.Sprintf("%s %s prev %s", map[EventType]string{Put: "Put", Delete: "Delete"}[ev.Type], ev.KV.Value, ev.Prev.Value)
		if got != want {
			t.Errorf("event %q, want %q", got, want)
		}
	}
	if _, err := db.Get("/s/b"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after delete: %v", err)
	}
	if l, err := db.List("/s/", ListOptions{}); err != nil || len(l.Items) != 2 {
		t.Errorf("List after repair: %+v %v", l, err)
	}
	db.opts.Verify = nil
	db = reopen(t, db)
	if kv, err := db.Get("/s/c"); err != nil || string(kv.Value) != "new@6" {
		t.Errorf("Get after reopen: %q %v", kv.Value, err)
	}
	if err := db.Close(); err != nil {
		t.Error(err)
	}
}

// TestCorruptHistoryEvent damages one event's bytes: Open drops the
// history up to it instead of refusing the file.
func TestCorruptHistoryEvent(t *testing.T) {
	ctx := context.Background()
	db := openDamaged(t, Options{Transformer: xorTransformer{}})
	for i := range 4 {
		if _, err := db.Update(ctx, "/s/a", 0, fmt.Appendf(nil, "v%d", i)); err != nil && i > 0 {
			t.Fatal(err)
		} else if i == 0 {
			if _, err := db.Create(ctx, "/s/a", []byte("v0")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	damageValue(t, db.path, bucketHistory, u64key(2))
	next, err := Open(db.path, db.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if c := next.CompactedRevision(); c != 2 {
		t.Errorf("compacted = %d, want 2", c)
	}
	if kv, err := next.Get("/s/a"); err != nil || string(kv.Value) != "v3@4" {
		t.Errorf("Get: %q %v", kv.Value, err)
	}
	if _, err := next.Watch(ctx, "/s/", 1); !errors.Is(err, ErrCompacted) {
		t.Errorf("watch from before the damage: %v", err)
	}
}

// damageValue rewrites the record under key so the transformer's prefix
// no longer matches.
func damageValue(t *testing.T, path string, bucket, key []byte) {
	t.Helper()
	b, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = b.Update(func(tx *bbolt.Tx) error {
		bk := tx.Bucket(bucket)
		v := bytes.Clone(bk.Get(key))
		i := bytes.Index(v, xorPrefix)
		if i < 0 {
			i = bytes.Index(v, []byte("o:"))
		}
		if i < 0 {
			return fmt.Errorf("no value in %q", key)
		}
		v[i] = '?'
		return bk.Put(key, v)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOverwriteStored(t *testing.T) {
	ctx := context.Background()
	db := openDamaged(t, Options{Transformer: xorTransformer{}, Verify: func(_ string, v []byte) error {
		if !bytes.HasPrefix(v, []byte("v")) {
			return errors.New("not a v")
		}
		return nil
	}})
	for _, k := range []string{"/s/a", "/s/b"} {
		if _, err := db.Create(ctx, k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := ReadStored(db.path, "/s/a")
	if err != nil || !bytes.HasPrefix(raw, xorPrefix) {
		t.Fatalf("ReadStored: %q %v", raw, err)
	}
	if _, err := ReadStored(db.path, "/s/c"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadStored of a missing key: %v", err)
	}
	bad, _ := xorTransformer{}.ToStorage("/s/b", []byte("garbage"))
	if err := OverwriteStored(db.path, "/s/b", bad); err != nil {
		t.Fatal(err)
	}
	if err := CheckFileWith(db.path, xorTransformer{}); err != nil {
		t.Errorf("check after overwrite: %v", err)
	}
	next, err := Open(db.path, db.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	var ce *CorruptError
	if _, err := next.Get("/s/b"); !errors.As(err, &ce) || ce.Untransformable || ce.ModRevision != 2 {
		t.Errorf("Get of the overwritten key: %v", err)
	}
	if kv, err := next.Get("/s/a"); err != nil || string(kv.Value) != "v@1" {
		t.Errorf("Get of the other key: %q %v", kv.Value, err)
	}
}

func TestStaleValues(t *testing.T) {
	ctx := context.Background()
	db := openDamaged(t, Options{Transformer: xorTransformer{old: true}, Verify: func(string, []byte) error { return nil }})
	for _, k := range []string{"/s/a", "/s/b", "/s/c"} {
		if _, err := db.Create(ctx, k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if db.Stale("/s/a") {
		t.Error("stale before a key change")
	}
	db.opts.Transformer = xorTransformer{}
	db = reopen(t, db)
	for _, k := range []string{"/s/a", "/s/b", "/s/c"} {
		if !db.Stale(k) {
			t.Errorf("%s not stale after the key change", k)
		}
	}
	if _, err := db.Update(ctx, "/s/a", 0, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if db.Stale("/s/a") || !db.Stale("/s/b") {
		t.Error("a rewrite did not clear staleness, or cleared another key's")
	}
	db = reopen(t, db)
	if db.Stale("/s/a") || !db.Stale("/s/b") {
		t.Error("after reopen: /s/a stale or /s/b not")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Without history the state record alone says it.
	raw, _ := ReadStored(db.path, "/s/b")
	if err := OverwriteStored(db.path, "/s/b", raw); err != nil {
		t.Fatal(err)
	}
	if err := CheckFileWith(db.path, xorTransformer{}); err != nil {
		t.Error(err)
	}
	db = reopen(t, db)
	if !db.Stale("/s/b") || db.Stale("/s/a") {
		t.Error("from state records: /s/b not stale or /s/a stale")
	}
}

// TestDefragTransforms: an online rewrite writes values from memory
// through the transformer (nothing plain reaches the new file) and keeps
// a corrupt key's stored bytes as they were.
func TestDefragTransforms(t *testing.T) {
	ctx := context.Background()
	db := openDamaged(t, Options{Transformer: xorTransformer{}})
	for i := range 50 {
		if _, err := db.Create(ctx, fmt.Sprintf("/s/k%02d", i), []byte("plainvalue")); err != nil {
			t.Fatal(err)
		}
	}
	db.opts.Transformer = xorTransformer{refuse: "/s/k07"}
	db = reopen(t, db)
	if _, err := db.Update(ctx, "/s/k01", 0, []byte("plainvalue2")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Defrag(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Update(ctx, "/s/k02", 0, []byte("plainvalue3")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if fileHolds(t, db.path, []byte("plainvalue")) {
		t.Error("the rewritten file holds a plain value")
	}
	db = reopen(t, db)
	if kv, err := db.Get("/s/k01"); err != nil || string(kv.Value) != "plainvalue2@51" {
		t.Errorf("Get after the rewrite: %q %v", kv.Value, err)
	}
	var ce *CorruptError
	if _, err := db.Get("/s/k07"); !errors.As(err, &ce) {
		t.Errorf("the corrupt key after the rewrite: %v", err)
	}
	db.opts.Transformer = xorTransformer{}
	db = reopen(t, db)
	if kv, err := db.Get("/s/k07"); err != nil || string(kv.Value) != "plainvalue@8" {
		t.Errorf("the corrupt key's bytes, kept: %q %v", kv.Value, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CheckFileWith(db.path, xorTransformer{}); err != nil {
		t.Error(err)
	}
}

// A rewrite that fails halfway gives up cleanly: the engine keeps serving
// from its file, and closes.
func TestDefragFailureReleasesTheNewFile(t *testing.T) {
	ctx := context.Background()
	db := openDamaged(t, Options{Transformer: xorTransformer{}})
	for i := range 20 {
		if _, err := db.Create(ctx, fmt.Sprintf("/s/k%02d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	db.opts.Transformer = xorTransformer{failWrite: "/s/k10"}
	done := make(chan error, 1)
	go func() { _, _, err := db.Defrag(ctx); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "key unavailable") {
			t.Fatalf("Defrag: %v, want the transformer's error", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Defrag did not return after its copy failed")
	}
	if _, err := os.Stat(db.path + defragSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed copy was left behind: %v", err)
	}
	if kv, err := db.Get("/s/k03"); err != nil || string(kv.Value) != "v@4" {
		t.Errorf("Get after the failed rewrite: %q %v", kv.Value, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRecheckStale(t *testing.T) {
	ctx := context.Background()
	db := openDamaged(t, Options{Transformer: xorTransformer{old: true}})
	defer db.Close()
	for _, k := range []string{"/s/a", "/s/b"} {
		if _, err := db.Create(ctx, k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	stale := func(key string, stored []byte) bool { return stored[0] == 'o' }
	if err := db.RecheckStale(stale); err != nil {
		t.Fatal(err)
	}
	if !db.Stale("/s/a") || !db.Stale("/s/b") {
		t.Error("values of the old prefix not stale")
	}
	db.opts.Transformer = xorTransformer{}
	if _, err := db.Update(ctx, "/s/a", 0, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := db.RecheckStale(stale); err != nil {
		t.Fatal(err)
	}
	if db.Stale("/s/a") || !db.Stale("/s/b") {
		t.Error("after a rewrite: /s/a stale or /s/b not")
	}
}

// A commit the file layer could not write wraps ErrIO, whatever the
// underlying error: the caller can tell it from a refusal without its
// text.
func TestCommitFailureWrapsErrIO(t *testing.T) {
	ctx := context.Background()
	db := openDamaged(t, Options{Transformer: xorTransformer{failWrite: "/s/bad"}})
	defer db.Close()
	if _, err := db.Create(ctx, "/s/ok", []byte("v")); err != nil {
		t.Fatal(err)
	}
	_, err := db.Create(ctx, "/s/bad", []byte("v"))
	if !errors.Is(err, ErrIO) || !strings.Contains(err.Error(), "key unavailable") {
		t.Fatalf("failed commit: %v, want ErrIO wrapping the cause", err)
	}
	if _, err := db.Get("/s/bad"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after the failed commit: %v", err)
	}
}
