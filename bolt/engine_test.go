package bolt

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// testWait bounds every wait in these tests; it only matters on failure.
const testWait = 10 * time.Second

func testStamp(value []byte, rev int64) ([]byte, error) {
	if i := bytes.IndexByte(value, '@'); i >= 0 {
		value = value[:i]
	}
	return strconv.AppendInt(append(append([]byte(nil), value...), '@'), rev, 10), nil
}

// openInternal opens a fresh engine; cleanup closes it and checks that no
// goroutine is left and that the file is consistent.
func openInternal(t *testing.T, opts Options) *DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "e.db")
	opts.Stamp = testStamp
	opts.NoFsync = true
	opts.Logger = slog.New(slog.DiscardHandler)
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
		if n := db.live.Load(); n != 0 {
			t.Errorf("%d goroutines left", n)
		}
		if err := CheckFile(path); err != nil {
			t.Error(err)
		}
	})
	return db
}

func reopen(t *testing.T, db *DB) *DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	next, err := Open(db.path, db.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { next.Close() })
	return next
}

// poll waits until cond holds.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(testWait)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func queued(db *DB) int {
	db.qmu.Lock()
	defer db.qmu.Unlock()
	return len(db.queue)
}

// stallCommitter makes the committer pick up one create and then block
// while publishing it, so later operations stay queued. release lets it go
// on and returns the stalled create's result.
func stallCommitter(t *testing.T, db *DB, key string) (release func() (KV, error)) {
	t.Helper()
	st := db.bdb.Stats()
	writesBefore := st.TxStats.GetWrite()
	db.mu.Lock()
	type result struct {
		kv  KV
		err error
	}
	done := make(chan result, 1)
	go func() {
		kv, err := db.Create(context.Background(), key, []byte("stalled"))
		done <- result{kv, err}
	}()
	// The create leaves the queue when picked up; the committer then waits
	// for db.mu in publish.
	poll(t, "committer to pick up the stalled create", func() bool {
		st := db.bdb.Stats()
		return st.TxStats.GetWrite() > writesBefore && queued(db) == 0
	})
	var once sync.Once
	unlock := func() { once.Do(db.mu.Unlock) }
	t.Cleanup(unlock) // a failing test must not leave the engine stuck
	return func() (KV, error) {
		unlock()
		r := <-done
		return r.kv, r.err
	}
}

func TestCancelledBeforePickup(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	release := stallCommitter(t, db, "/k/a")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := db.Create(ctx, "/k/b", []byte("b"))
		errc <- err
	}()
	poll(t, "create to be queued", func() bool { return queued(db) == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled create: %v", err)
	}
	a, err := release()
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.Create(context.Background(), "/k/c", []byte("c"))
	if err != nil {
		t.Fatal(err)
	}
	if a.ModRevision != 1 || c.ModRevision != 2 {
		t.Fatalf("revisions %d and %d, want 1 and 2 (the cancelled op consumes none)", a.ModRevision, c.ModRevision)
	}
	if _, err := db.Get("/k/b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("cancelled key: %v", err)
	}
}

// TestSameKeyInOneBatch queues several operations on one key behind a
// stalled commit so they share a transaction; each must see the effect of
// the ones before it.
func TestSameKeyInOneBatch(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	w, err := db.Watch(context.Background(), "/k/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	release := stallCommitter(t, db, "/k/stall")
	steps := []struct {
		name string
		do   func() (KV, error)
		want error
	}{
		{"create", func() (KV, error) { return db.Create(context.Background(), "/k/x", []byte("1")) }, nil},
		{"duplicate create", func() (KV, error) { return db.Create(context.Background(), "/k/x", []byte("dup")) }, ErrExists},
		{"update at 2", func() (KV, error) { return db.Update(context.Background(), "/k/x", 2, []byte("2")) }, nil},
		{"stale update", func() (KV, error) { return db.Update(context.Background(), "/k/x", 2, []byte("3")) }, ErrConflict},
		{"delete at 3", func() (KV, error) { return db.Delete(context.Background(), "/k/x", 3) }, nil},
		{"update deleted", func() (KV, error) { return db.Update(context.Background(), "/k/x", 0, []byte("4")) }, ErrNotFound},
	}
	results := make([]chan error, len(steps))
	for i, st := range steps {
		results[i] = make(chan error, 1)
		go func() {
			_, err := st.do()
			results[i] <- err
		}()
		poll(t, st.name+" to be queued", func() bool { return queued(db) == i+1 })
	}
	if _, err := release(); err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		if err := <-results[i]; !errors.Is(err, st.want) {
			t.Fatalf("%s: %v, want %v", st.name, err, st.want)
		}
	}
	evs := make([]Event, 0, 4)
	for len(evs) < 4 {
		evs = append(evs, <-w.Events())
	}
	if evs[1].Type != Put || evs[1].Prev != nil || string(evs[1].KV.Value) != "1@2" ||
		evs[2].Prev == nil || string(evs[2].Prev.Value) != "1@2" || string(evs[2].KV.Value) != "2@3" ||
		evs[3].Type != Delete || string(evs[3].KV.Value) != "2@4" || evs[3].Prev.ModRevision != 3 {
		t.Fatalf("events %+v", evs)
	}
	if db.Revision() != 4 {
		t.Fatalf("revision %d, want 4", db.Revision())
	}
}

func TestWatcherGoroutinesReleased(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	base := db.live.Load()
	ctx, cancel := context.WithCancel(context.Background())
	stopped, _ := db.Watch(context.Background(), "/a/", 0)
	cancelled, _ := db.Watch(ctx, "/a/", 0)
	slow, _ := db.Watch(context.Background(), "/a/", 0)
	if got := db.live.Load(); got != base+3 {
		t.Fatalf("%d goroutines for 3 watchers", got-base)
	}
	stopped.Stop()
	cancel()
	var wg sync.WaitGroup
	for i := 0; i < SlowWatcherEvents; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := db.Create(context.Background(), "/a/k"+strconv.Itoa(i), []byte("v")); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	poll(t, "watcher goroutines to exit", func() bool { return db.live.Load() == base })
	if !errors.Is(slow.Err(), ErrWatcherTooSlow) || cancelled.Err() != nil || stopped.Err() != nil {
		t.Fatalf("errors: slow %v, cancelled %v, stopped %v", slow.Err(), cancelled.Err(), stopped.Err())
	}
	db.mu.RLock()
	n := len(db.watchers)
	db.mu.RUnlock()
	if n != 0 {
		t.Fatalf("%d watchers still registered", n)
	}
}

func TestRetentionCompactsOnTimer(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{HistoryRetention: 20 * time.Millisecond})
	for _, k := range []string{"/k/a", "/k/b", "/k/c"} {
		if _, err := db.Create(context.Background(), k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	poll(t, "the compactor to drop expired events", func() bool { return db.CompactedRevision() == 3 })
	if _, err := db.List("/k/", ListOptions{Revision: 2}); !errors.Is(err, ErrCompacted) {
		t.Fatalf("list below compaction: %v", err)
	}
	res, err := db.List("/k/", ListOptions{Revision: 3})
	if err != nil || len(res.Items) != 3 {
		t.Fatalf("list at the compacted current revision: %d items, %v", len(res.Items), err)
	}
	w, err := db.Watch(context.Background(), "/k/", 3)
	if err != nil {
		t.Fatalf("watch from the current revision after idle compaction: %v", err)
	}
	w.Stop()
	db.mu.RLock()
	n := len(db.hist)
	db.mu.RUnlock()
	if n != 0 {
		t.Fatalf("%d events kept in memory", n)
	}
}

// TestInterruptedCompaction simulates a crash after a compaction recorded
// its revision but before it deleted the events.
func TestInterruptedCompaction(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	for i := 0; i < 5; i++ {
		if _, err := db.Create(context.Background(), "/k/"+strconv.Itoa(i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := bbolt.Open(db.path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = raw.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaCompacted, u64key(3)) })
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckFile(db.path); err != nil {
		t.Fatalf("leftover events must pass the check: %v", err)
	}
	db2 := reopen(t, db)
	if db2.CompactedRevision() != 3 || len(db2.hist) != 2 {
		t.Fatalf("compacted %d with %d events, want 3 and 2", db2.CompactedRevision(), len(db2.hist))
	}
	if err := db2.Compact(context.Background(), 4); err != nil {
		t.Fatal(err)
	}
	var left []int64
	db2.bdb.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketHistory).ForEach(func(k, _ []byte) error {
			r, _ := readU64(k)
			left = append(left, r)
			return nil
		})
	})
	if len(left) != 1 || left[0] != 5 {
		t.Fatalf("history keys after compaction: %v", left)
	}
}

func TestReloadSharesValueBytes(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	if _, err := db.Create(context.Background(), "/k/a", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Update(context.Background(), "/k/a", 0, []byte("two")); err != nil {
		t.Fatal(err)
	}
	db2 := reopen(t, db)
	kv, err := db2.Get("/k/a")
	if err != nil {
		t.Fatal(err)
	}
	last := db2.hist[len(db2.hist)-1]
	if &kv.Value[0] != &last.KV.Value[0] || last.Prev == nil || &last.Prev.Value[0] != &db2.hist[0].KV.Value[0] {
		t.Fatal("reloaded state and history hold separate copies of the same bytes")
	}
}

func TestClosedEngine(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	w, err := db.Watch(context.Background(), "/k/", 0)
	if err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- db.WaitForRevision(context.Background(), 100) }()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-w.Events(); ok || !errors.Is(w.Err(), ErrClosed) {
		t.Fatalf("watcher after Close: open %v, err %v", ok, w.Err())
	}
	if err := <-waitErr; !errors.Is(err, ErrClosed) {
		t.Fatalf("WaitForRevision: %v", err)
	}
	checks := map[string]error{}
	_, checks["Create"] = db.Create(context.Background(), "/k/a", nil)
	_, checks["Get"] = db.Get("/k/a")
	_, checks["List"] = db.List("/k/", ListOptions{})
	_, checks["Watch"] = db.Watch(context.Background(), "/k/", 0)
	checks["Compact"] = db.Compact(context.Background(), 0)
	for name, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestOpenRejects(t *testing.T) {
	t.Parallel()
	if _, err := Open(filepath.Join(t.TempDir(), "x.db"), Options{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no stamper: %v", err)
	}
	path := filepath.Join(t.TempDir(), "future.db")
	raw, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw.Update(func(tx *bbolt.Tx) error {
		b, _ := tx.CreateBucket(bucketMeta)
		return b.Put(metaFormat, u64key(formatVersion+1))
	})
	raw.Close()
	if _, err := Open(path, Options{Stamp: testStamp, Logger: slog.New(slog.DiscardHandler)}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("newer layout: %v", err)
	}
}

func TestCheckFileFindsDamage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		damage func(tx *bbolt.Tx) error
	}{
		{"state lost", func(tx *bbolt.Tx) error { return tx.Bucket(bucketState).Delete([]byte("/k/a")) }},
		{"state without event", func(tx *bbolt.Tx) error {
			kv := KV{Key: "/k/z", Value: []byte("z"), CreateRevision: 3, ModRevision: 3}
			return tx.Bucket(bucketState).Put([]byte(kv.Key), appendState(nil, &kv))
		}},
		{"state differs", func(tx *bbolt.Tx) error {
			kv := KV{Key: "/k/a", Value: []byte("other"), CreateRevision: 1, ModRevision: 2}
			return tx.Bucket(bucketState).Put([]byte(kv.Key), appendState(nil, &kv))
		}},
		{"counter behind history", func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaRevision, u64key(1)) }},
		{"history gap", func(tx *bbolt.Tx) error { return tx.Bucket(bucketHistory).Delete(u64key(2)) }},
		{"garbled event", func(tx *bbolt.Tx) error { return tx.Bucket(bucketHistory).Put(u64key(3), []byte{9}) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "d.db")
			db, err := Open(path, Options{Stamp: testStamp, NoFsync: true, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			db.Create(context.Background(), "/k/a", []byte("a"))
			db.Update(context.Background(), "/k/a", 0, []byte("a2"))
			db.Create(context.Background(), "/k/b", []byte("b"))
			db.Close()
			if err := CheckFile(path); err != nil {
				t.Fatalf("before damage: %v", err)
			}
			raw, err := bbolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := raw.Update(tc.damage); err != nil {
				t.Fatal(err)
			}
			raw.Close()
			if err := CheckFile(path); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("CheckFile after damage: %v", err)
			}
		})
	}
}
