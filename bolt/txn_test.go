package bolt

import (
	"context"
	"errors"
	"testing"
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
