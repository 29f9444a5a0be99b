package bolt

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"
)

// TestTxnInOneBatch queues single writes and transactions behind a stalled
// commit so they share one bbolt transaction: each must be checked against
// the state the ones before it left, and a failing transaction must leave
// no trace for the ones after it.
func TestTxnInOneBatch(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	w, err := db.Watch(context.Background(), "/k/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	release := stallCommitter(t, db, "/k/stall") // revision 1
	bg := context.Background()
	steps := []struct {
		name string
		do   func() ([]KV, error)
		want error
		revs []int64
	}{
		{"create x", func() ([]KV, error) {
			kv, err := db.Create(bg, "/k/x", []byte("x"))
			return []KV{kv}, err
		}, nil, []int64{2}},
		{"txn on x", func() ([]KV, error) {
			return db.Txn(bg, []Op{UpdateOp("/k/x", 2, []byte("x2")), CreateOp("/k/y", []byte("y"))})
		}, nil, []int64{3, 4}},
		{"txn failing on y", func() ([]KV, error) {
			return db.Txn(bg, []Op{CreateOp("/k/z", []byte("z")), DeleteOp("/k/y", 2), CreateOp("/k/w", []byte("w"))})
		}, ErrConflict, nil},
		{"create z", func() ([]KV, error) {
			kv, err := db.Create(bg, "/k/z", []byte("z"))
			return []KV{kv}, err
		}, nil, []int64{5}},
		{"txn deleting y", func() ([]KV, error) {
			return db.Txn(bg, []Op{DeleteOp("/k/y", 4), UpdateOp("/k/z", 5, []byte("z2"))})
		}, nil, []int64{6, 7}},
	}
	type result struct {
		kvs []KV
		err error
	}
	results := make([]chan result, len(steps))
	for i, st := range steps {
		results[i] = make(chan result, 1)
		go func() {
			kvs, err := st.do()
			results[i] <- result{kvs, err}
		}()
		poll(t, st.name+" to be queued", func() bool { return queued(db) == i+1 })
	}
	if _, err := release(); err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		r := <-results[i]
		if !errors.Is(r.err, st.want) || (st.want == nil && r.err != nil) {
			t.Fatalf("%s: %v, want %v", st.name, r.err, st.want)
		}
		var oe *OpError
		if st.want != nil && (!errors.As(r.err, &oe) || oe.Index != 1 || r.kvs != nil) {
			t.Fatalf("%s: %v (%+v), want op 1 named and no results", st.name, r.err, r.kvs)
		}
		for j, rev := range st.revs {
			if r.kvs[j].ModRevision != rev {
				t.Fatalf("%s: result %d at %d, want %d", st.name, j, r.kvs[j].ModRevision, rev)
			}
		}
	}
	for want := int64(1); want <= 7; want++ {
		if ev := <-w.Events(); ev.Revision != want {
			t.Fatalf("event %d, want %d", ev.Revision, want)
		}
	}
	if _, err := db.Get("/k/w"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("op of the failed txn was applied: %v", err)
	}
	// The queued writes are one commit after the stalled one: their
	// events share one commit time, but only transactions are joined.
	db.mu.RLock()
	defer db.mu.RUnlock()
	var joined []int64
	for _, e := range db.hist[1:] {
		if e.at != db.hist[1].at {
			t.Fatalf("event %d committed at another time", e.Revision)
		}
		if e.joined {
			joined = append(joined, e.Revision)
		}
	}
	if len(joined) != 2 || joined[0] != 4 || joined[1] != 7 {
		t.Fatalf("joined events %v, want [4 7]", joined)
	}
}

func TestBatchLen(t *testing.T) {
	t.Parallel()
	ops := func(sizes ...int) []*op {
		out := make([]*op, len(sizes))
		for i, n := range sizes {
			out[i] = &op{writes: make([]Op, n)}
		}
		return out
	}
	singles := func(n int) []*op {
		sizes := make([]int, n)
		for i := range sizes {
			sizes[i] = 1
		}
		return ops(sizes...)
	}
	tests := []struct {
		name  string
		queue []*op
		want  int
	}{
		{"one write", ops(1), 1},
		{"under the cap", ops(400, 600), 2},
		{"a txn is never split", ops(999, 2, 1), 1},
		{"single writes up to the cap", singles(maxBatchOps + 5), maxBatchOps},
		{"an op alone may pass the cap", ops(maxBatchOps+1, 1), 1},
	}
	for _, tc := range tests {
		if got := batchLen(tc.queue); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestProgressNeverInsideTxn holds a watcher's replay back while a
// transaction commits: until the watcher forwards the transaction, its
// progress must stay at the revision before it, not inside it.
func TestProgressNeverInsideTxn(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	bg := context.Background()
	if _, err := db.Create(bg, "/other/x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	const replayed = watchOutBuffer + 4
	for i := 0; i < replayed; i++ {
		if _, err := db.Create(bg, "/w/k"+string(rune('a'+i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	start := db.Revision()
	w, err := db.Watch(bg, "/w/", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// The replay fills Events and blocks; the transaction is queued
	// behind it, its first op outside the prefix.
	kvs, err := db.Txn(bg, []Op{CreateOp("/other/y", []byte("y")), CreateOp("/w/y", []byte("y"))})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < replayed-watchOutBuffer; i++ {
		<-w.Events()
	}
	// Events is full again: the watcher now holds the transaction's event.
	poll(t, "the replay to finish", func() bool { return w.Progress() != 0 })
	if p := w.Progress(); p != start {
		t.Fatalf("progress %d with the txn %d..%d not yet offered, want %d", p, kvs[0].ModRevision, kvs[1].ModRevision, start)
	}
	for i := 0; i < watchOutBuffer; i++ {
		<-w.Events()
	}
	if ev := <-w.Events(); ev.Revision != kvs[1].ModRevision {
		t.Fatalf("event %d, want %d", ev.Revision, kvs[1].ModRevision)
	}
	poll(t, "progress past the txn", func() bool { return w.Progress() == kvs[1].ModRevision })
}

// TestOpenUpgradesFormatV1 opens a file of the layout before transactions
// existed: it is read as is and marked with the current layout version.
func TestOpenUpgradesFormatV1(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	if _, err := db.Create(context.Background(), "/k/a", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	toOldLayout(t, db.path, formatVersionV1)
	db2 := reopen(t, db)
	if kv, err := db2.Get("/k/a"); err != nil || kv.ModRevision != 1 {
		t.Fatalf("state of a version 1 file: %+v, %v", kv, err)
	}
	var f int64
	db2.bdb.View(func(tx *bbolt.Tx) error {
		f, _ = readU64(tx.Bucket(bucketMeta).Get(metaFormat))
		return nil
	})
	if f != formatVersion {
		t.Fatalf("layout version %d after open, want %d", f, formatVersion)
	}
}

// TestCheckFileFindsBrokenTxn damages the events of a committed
// transaction in the ways only a transaction can be broken.
func TestCheckFileFindsBrokenTxn(t *testing.T) {
	t.Parallel()
	rewrite := func(rev int64, change func(h *histEvent)) func(tx *bbolt.Tx) error {
		return func(tx *bbolt.Tx) error {
			b := tx.Bucket(bucketHistory)
			h, err := decodeEvent(rev, b.Get(u64key(rev)))
			if err != nil {
				return err
			}
			change(&h)
			return b.Put(u64key(rev), appendEvent(nil, &h.Event, h.at, h.joined))
		}
	}
	tests := []struct {
		name, want string
		damage     func(tx *bbolt.Tx) error
	}{
		// Revisions: 1 create /k/a, 2 update /k/a, 3-4 txn creating /k/b, /k/c.
		{"committed at two times", "committed at another time",
			rewrite(4, func(h *histEvent) { h.at++ })},
		{"key written twice", "twice in one transaction", func(tx *bbolt.Tx) error {
			one, err := decodeEvent(1, tx.Bucket(bucketHistory).Get(u64key(1)))
			if err != nil {
				return err
			}
			return rewrite(2, func(h *histEvent) { h.joined, h.at = true, one.at })(tx)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "d.db")
			db, err := Open(path, Options{Stamp: testStamp, NoFsync: true, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			bg := context.Background()
			db.Create(bg, "/k/a", []byte("a"))
			db.Update(bg, "/k/a", 0, []byte("a2"))
			if _, err := db.Txn(bg, []Op{CreateOp("/k/b", []byte("b")), CreateOp("/k/c", []byte("c"))}); err != nil {
				t.Fatal(err)
			}
			db.Close()
			if err := CheckFile(path); err != nil {
				t.Fatalf("before damage: %v", err)
			}
			raw, err := bbolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = raw.Update(tc.damage)
			raw.Close()
			if err != nil {
				t.Fatal(err)
			}
			err = CheckFile(path)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckFile after damage: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestProgressAfterOverflow: a watcher dropped for falling behind, caught
// between two batches (the last one forwarded, the queue not yet taken),
// claims no progress, so no bookmark can name the revisions its dropped
// queue held; a watcher that keeps up still counts events outside its
// prefix as seen.
func TestProgressAfterOverflow(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	newWatcher := func() *watcher {
		return &watcher{db: db, ctx: context.Background(), prefix: "/p/", out: make(chan Event, watchOutBuffer),
			signal: make(chan struct{}, 1), stop: make(chan struct{}), exited: make(chan struct{}), replayed: true}
	}
	batch := func(prefix string, from, n int) []Event {
		evs := make([]Event, n)
		for i := range evs {
			r := int64(from + i)
			evs[i] = Event{Type: Put, Revision: r, KV: KV{Key: prefix + strconv.Itoa(i), Value: []byte(`{}`), ModRevision: r, CreateRevision: r}}
		}
		return evs
	}
	w := newWatcher()
	if !w.deliver(batch("/p/", 1, watchBuffer/2+1)) || w.deliver(batch("/p/", watchBuffer/2+2, watchBuffer/2+1)) {
		t.Fatal("the second batch did not overflow the watcher")
	}
	if !errors.Is(w.Err(), ErrWatcherTooSlow) {
		t.Fatalf("err %v", w.Err())
	}
	if p := w.Progress(); p != 0 {
		t.Errorf("progress %d of a watcher whose queue was dropped", p)
	}

	w = newWatcher()
	w.deliver(batch("/other/", 1, 3))
	if p := w.Progress(); p != 3 {
		t.Errorf("progress %d after events outside the prefix, want 3", p)
	}
}
