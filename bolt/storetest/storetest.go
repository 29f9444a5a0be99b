// Package storetest is the conformance suite every bolt.Store backend runs.
// A backend's test calls RunConformance with an Opener that returns a fresh,
// empty store opened with Stamp as its stamper.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"platd/bolt"
)

// Harness is one fresh, empty store under test.
type Harness struct {
	// Store is the store to exercise; the Opener's cleanup closes it (or
	// the store returned by the last Reopen) and checks its data.
	Store bolt.Store
	// Reopen closes the current store and opens the same data again, as
	// after a process restart. Nil when the backend cannot restart; the
	// restart tests are then skipped.
	Reopen func(t *testing.T) bolt.Store
	// SlowWatcherWrites is a number of events that certainly overflows the
	// buffer of a watcher that never reads. 0 skips the slow-watcher test.
	SlowWatcherWrites int
	// OpenBounded opens another fresh, empty store whose history keeps at
	// most maxBytes of replaced values in memory and compacts its oldest
	// events past that. Nil skips the byte-bound tests.
	OpenBounded func(t *testing.T, maxBytes int64) bolt.Store
	// TxnSharesRevision says every op of a Txn gets the same revision
	// (etcd's transactions) rather than first+i (bolt's). The store
	// contract allows both: a transaction's revisions are equal or
	// ascending by one.
	TxnSharesRevision bool
}

// txnStep is the revision distance between consecutive ops of a Txn.
func (h Harness) txnStep() int64 {
	if h.TxnSharesRevision {
		return 0
	}
	return 1
}

// opRev is the revision of op i of a Txn whose first op is at first.
func (h Harness) opRev(first int64, i int) int64 { return first + h.txnStep()*int64(i) }

// Opener opens a fresh store for test t and registers its cleanup. It is
// called from parallel subtests and must be safe for concurrent use.
type Opener func(t *testing.T) Harness

// waitTimeout bounds every wait for an event or state in the suite; it is
// generous because it only matters when a test is failing.
const waitTimeout = 10 * time.Second

// Stamp is the stamper a backend under test must use: it replaces the
// "@<rev>" suffix of value (appending one if absent), so the suite can
// check which revision was stamped into stored bytes.
func Stamp(value []byte, rev int64) ([]byte, error) {
	if i := bytes.LastIndexByte(value, '@'); i >= 0 {
		value = value[:i]
	}
	if bytes.Contains(value, []byte("!badstamp")) {
		return nil, errors.New("value refused by stamper")
	}
	out := make([]byte, 0, len(value)+21)
	out = append(out, value...)
	out = append(out, '@')
	return strconv.AppendInt(out, rev, 10), nil
}

// stamped is the bytes Stamp gives for payload at rev.
func stamped(payload string, rev int64) string {
	return payload + "@" + strconv.FormatInt(rev, 10)
}

// RunConformance runs every conformance test as a parallel subtest of t.
func RunConformance(t *testing.T, open Opener) {
	tests := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"CreateGet", testCreateGet},
		{"Update", testUpdate},
		{"Delete", testDelete},
		{"StampError", testStampError},
		{"CancelledContext", testCancelledContext},
		{"InvalidArguments", testInvalidArguments},
		{"ListPrefixAndOrder", testListPrefixAndOrder},
		{"ListAtRevision", testListAtRevision},
		{"ListErrors", testListErrors},
		{"ListFilter", testListFilter},
		{"Pagination", testPagination},
		{"WatchFromRevision", testWatchFromRevision},
		{"WatchFromZero", testWatchFromZero},
		{"WatchPrefixIsolation", testWatchPrefixIsolation},
		{"WatchRacingWrites", testWatchRacingWrites},
		{"WatchStop", testWatchStop},
		{"WatchSlowConsumer", testWatchSlowConsumer},
		{"WatchProgress", testWatchProgress},
		{"WaitForRevision", testWaitForRevision},
		{"Compaction", testCompaction},
		{"Restart", testRestart},
		{"HistoryByteBound", testHistoryByteBound},
		{"HistoryByteBoundLargeValue", testHistoryByteBoundLargeValue},
		{"ConcurrentWriters", testConcurrentWriters},
		{"TxnCommit", testTxnCommit},
		{"TxnAtomicity", testTxnAtomicity},
		{"TxnInvalid", testTxnInvalid},
		{"TxnCancelledContext", testTxnCancelledContext},
		{"TxnWatch", testTxnWatch},
		{"TxnListAtRevision", testTxnListAtRevision},
		{"TxnReaders", testTxnReaders},
		{"TxnAllocation", testTxnAllocation},
		{"TxnRestart", testTxnRestart},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, open(t))
		})
	}
}

// ctx returns a context that ends with the test.
func ctx(t *testing.T) context.Context { return t.Context() }

func mustCreate(t *testing.T, s bolt.Store, key, payload string) bolt.KV {
	t.Helper()
	kv, err := s.Create(ctx(t), key, []byte(payload))
	if err != nil {
		t.Fatalf("Create %s: %v", key, err)
	}
	return kv
}

func mustUpdate(t *testing.T, s bolt.Store, key string, expect int64, payload string) bolt.KV {
	t.Helper()
	kv, err := s.Update(ctx(t), key, expect, []byte(payload))
	if err != nil {
		t.Fatalf("Update %s: %v", key, err)
	}
	return kv
}

func mustDelete(t *testing.T, s bolt.Store, key string, expect int64) bolt.KV {
	t.Helper()
	kv, err := s.Delete(ctx(t), key, expect)
	if err != nil {
		t.Fatalf("Delete %s: %v", key, err)
	}
	return kv
}

func mustList(t *testing.T, s bolt.Store, prefix string, opts bolt.ListOptions) bolt.ListResult {
	t.Helper()
	res, err := s.List(prefix, opts)
	if err != nil {
		t.Fatalf("List %s %+v: %v", prefix, opts, err)
	}
	return res
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want %v", what, err, want)
	}
}

// keysOf is the keys of kvs, in order.
func keysOf(kvs []bolt.KV) []string {
	out := make([]string, len(kvs))
	for i, kv := range kvs {
		out[i] = kv.Key
	}
	return out
}

// sameKVs compares two lists exactly (keys, revisions, bytes).
func sameKVs(t *testing.T, what string, got, want []bolt.KV) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d items %v, want %d %v", what, len(got), keysOf(got), len(want), keysOf(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Key != w.Key || g.CreateRevision != w.CreateRevision || g.ModRevision != w.ModRevision || !bytes.Equal(g.Value, w.Value) {
			t.Fatalf("%s: item %d = %s %d/%d %q, want %s %d/%d %q", what, i,
				g.Key, g.CreateRevision, g.ModRevision, g.Value, w.Key, w.CreateRevision, w.ModRevision, w.Value)
		}
	}
}

// recv reads n events from w, failing on close or timeout.
func recv(t *testing.T, w bolt.Watcher, n int) []bolt.Event {
	t.Helper()
	out := make([]bolt.Event, 0, n)
	timeout := time.NewTimer(waitTimeout)
	defer timeout.Stop()
	for len(out) < n {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				t.Fatalf("watch closed after %d of %d events: %v", len(out), n, w.Err())
			}
			out = append(out, ev)
		case <-timeout.C:
			t.Fatalf("timed out after %d of %d events", len(out), n)
		}
	}
	return out
}

// expectClosed drains w until its channel closes, returning what it read.
func expectClosed(t *testing.T, w bolt.Watcher) []bolt.Event {
	t.Helper()
	var out []bolt.Event
	timeout := time.NewTimer(waitTimeout)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout.C:
			t.Fatalf("watch not closed after %d events", len(out))
		}
	}
}

// expectNext checks that the next event w delivers is for key; tests write
// a marker key to prove nothing unwanted was delivered before it.
func expectNext(t *testing.T, w bolt.Watcher, key string) {
	t.Helper()
	ev := recv(t, w, 1)[0]
	if ev.KV.Key != key {
		t.Fatalf("next event is for %s (rev %d), want %s", ev.KV.Key, ev.Revision, key)
	}
}

// pollInterval is how often eventually re-checks a condition that no
// event announces (such as a watcher being dropped by another goroutine).
const pollInterval = time.Millisecond

// eventually waits until cond holds, failing after waitTimeout.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("timed out waiting for: %s", what)
		}
	}
}
