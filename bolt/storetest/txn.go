package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"platd/bolt"
)

func mustTxn(t *testing.T, s bolt.Store, ops ...bolt.Op) []bolt.KV {
	t.Helper()
	kvs, err := s.Txn(ctx(t), ops)
	if err != nil {
		t.Fatalf("Txn: %v", err)
	}
	if len(kvs) != len(ops) {
		t.Fatalf("Txn of %d ops returned %d results", len(ops), len(kvs))
	}
	return kvs
}

// wantOpError checks that err is an *bolt.OpError for op index and key
// that wraps want (nil: any cause).
func wantOpError(t *testing.T, what string, err error, index int, key string, want error) {
	t.Helper()
	var oe *bolt.OpError
	if !errors.As(err, &oe) {
		t.Fatalf("%s: error %v is not an *OpError", what, err)
	}
	if oe.Index != index || oe.Key != key {
		t.Fatalf("%s: error names op %d (%s), want %d (%s)", what, oe.Index, oe.Key, index, key)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("op %d", index)) {
		t.Fatalf("%s: message %q does not name op %d", what, err, index)
	}
	if want != nil {
		wantErr(t, what, err, want)
	}
}

// snapshot is every key of s, for comparing states before and after.
func snapshot(t *testing.T, s bolt.Store) []bolt.KV {
	t.Helper()
	return mustList(t, s, "/", bolt.ListOptions{}).Items
}

// testTxnCommit applies a transaction of every kind of op and checks the
// results, their revisions and the stored state.
func testTxnCommit(t *testing.T, h Harness) {
	s := h.Store
	a := mustCreate(t, s, "/t/a", "a")
	b := mustCreate(t, s, "/t/b", "b")
	base := s.Revision()
	kvs := mustTxn(t, s,
		bolt.CreateOp("/t/c", []byte("c")),
		bolt.UpdateOp("/t/a", a.ModRevision, []byte("a2")),
		bolt.DeleteOp("/t/b", b.ModRevision),
		bolt.CreateOp("/u/x", []byte("x")),
	)
	r := func(i int) int64 { return h.opRev(base+1, i) }
	want := []bolt.KV{
		{Key: "/t/c", Value: []byte(stamped("c", r(0))), CreateRevision: r(0), ModRevision: r(0)},
		{Key: "/t/a", Value: []byte(stamped("a2", r(1))), CreateRevision: a.CreateRevision, ModRevision: r(1)},
		{Key: "/t/b", Value: []byte(stamped("b", r(2))), CreateRevision: b.CreateRevision, ModRevision: r(2)},
		{Key: "/u/x", Value: []byte(stamped("x", r(3))), CreateRevision: r(3), ModRevision: r(3)},
	}
	sameKVs(t, "results", kvs, want)
	if s.Revision() != r(3) {
		t.Fatalf("Revision %d, want %d", s.Revision(), r(3))
	}
	for _, kv := range []bolt.KV{want[0], want[1], want[3]} {
		got, err := s.Get(kv.Key)
		if err != nil {
			t.Fatal(err)
		}
		sameKVs(t, "Get "+kv.Key, []bolt.KV{got}, []bolt.KV{kv})
	}
	_, err := s.Get("/t/b")
	wantErr(t, "Get deleted", err, bolt.ErrNotFound)
	if n := s.Count("/t/"); n != 2 {
		t.Fatalf("Count %d, want 2", n)
	}

	// A one-op transaction is the single write.
	one := mustTxn(t, s, bolt.UpdateOp("/t/c", 0, []byte("c2")))
	sameKVs(t, "one-op txn", one, []bolt.KV{{Key: "/t/c", Value: []byte(stamped("c2", r(3)+1)),
		CreateRevision: base + 1, ModRevision: r(3) + 1}})
}

// testTxnAtomicity runs transactions whose one op fails: nothing may be
// written, no revision consumed, and the error names the op.
func testTxnAtomicity(t *testing.T, h Harness) {
	s := h.Store
	a := mustCreate(t, s, "/t/a", "a")
	b := mustCreate(t, s, "/t/b", "b")
	b2 := mustUpdate(t, s, "/t/b", 0, "b2")
	w, err := s.Watch(ctx(t), "/", s.Revision())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	tests := []struct {
		name  string
		ops   []bolt.Op
		index int
		want  error // nil: any error
	}{
		{"create of an existing key", []bolt.Op{
			bolt.CreateOp("/t/new1", []byte("n")),
			bolt.CreateOp("/t/a", []byte("again")),
			bolt.UpdateOp("/t/b", 0, []byte("b3")),
		}, 1, bolt.ErrExists},
		{"update of a missing key", []bolt.Op{
			bolt.CreateOp("/t/new1", []byte("n")),
			bolt.UpdateOp("/t/none", 0, []byte("x")),
			bolt.DeleteOp("/t/b", 0),
		}, 1, bolt.ErrNotFound},
		{"update at a stale revision", []bolt.Op{
			bolt.UpdateOp("/t/a", a.ModRevision, []byte("a2")),
			bolt.UpdateOp("/t/b", b.ModRevision, []byte("b3")),
			bolt.CreateOp("/t/new1", []byte("n")),
		}, 1, bolt.ErrConflict},
		{"delete of a missing key", []bolt.Op{
			bolt.DeleteOp("/t/a", 0),
			bolt.DeleteOp("/t/none", 0),
			bolt.CreateOp("/t/new1", []byte("n")),
		}, 1, bolt.ErrNotFound},
		{"delete at a stale revision", []bolt.Op{
			bolt.CreateOp("/t/new1", []byte("n")),
			bolt.CreateOp("/t/new2", []byte("n")),
			bolt.DeleteOp("/t/b", b.ModRevision),
		}, 2, bolt.ErrConflict},
		{"first op", []bolt.Op{
			bolt.CreateOp("/t/a", []byte("again")),
			bolt.CreateOp("/t/new1", []byte("n")),
		}, 0, bolt.ErrExists},
		{"value refused by the stamper", []bolt.Op{
			bolt.CreateOp("/t/new1", []byte("n")),
			bolt.CreateOp("/t/new2", []byte("x!badstamp")),
			bolt.UpdateOp("/t/a", 0, []byte("a2")),
		}, 1, nil},
	}
	for _, tc := range tests {
		before, rev := snapshot(t, s), s.Revision()
		kvs, err := s.Txn(ctx(t), tc.ops)
		if kvs != nil {
			t.Fatalf("%s: results %v with error %v", tc.name, keysOf(kvs), err)
		}
		wantOpError(t, tc.name, err, tc.index, tc.ops[tc.index].Key, tc.want)
		if s.Revision() != rev {
			t.Fatalf("%s: failed txn moved the revision from %d to %d", tc.name, rev, s.Revision())
		}
		sameKVs(t, tc.name+": state", snapshot(t, s), before)
	}
	// Nothing was delivered, and the next write takes the next revision.
	marker := mustCreate(t, s, "/t/marker", "m")
	if marker.ModRevision != b2.ModRevision+1 {
		t.Fatalf("write after failed txns at %d, want %d", marker.ModRevision, b2.ModRevision+1)
	}
	expectNext(t, w, "/t/marker")
}

func testTxnInvalid(t *testing.T, h Harness) {
	s := h.Store
	mustCreate(t, s, "/t/a", "a")
	many := make([]bolt.Op, bolt.MaxTxnOps+1)
	for i := range many {
		many[i] = bolt.CreateOp(fmt.Sprintf("/many/k%03d", i), []byte("v"))
	}
	tests := []struct {
		name  string
		ops   []bolt.Op
		index int // -1: the error names no op
		want  error
	}{
		{"nil", nil, -1, bolt.ErrInvalidTxn},
		{"empty", []bolt.Op{}, -1, bolt.ErrInvalidTxn},
		{"too many ops", many, -1, bolt.ErrInvalidTxn},
		{"key twice", []bolt.Op{
			bolt.CreateOp("/t/x", []byte("x")),
			bolt.CreateOp("/t/y", []byte("y")),
			bolt.DeleteOp("/t/x", 0),
		}, 2, bolt.ErrInvalidTxn},
		{"malformed key", []bolt.Op{
			bolt.CreateOp("/t/x", []byte("x")),
			bolt.CreateOp("t/y", []byte("y")),
		}, 1, bolt.ErrInvalid},
		{"create with a revision", []bolt.Op{
			{Kind: bolt.OpCreate, Key: "/t/x", Value: []byte("x"), ExpectedRevision: 1},
		}, 0, bolt.ErrInvalidTxn},
		{"no kind", []bolt.Op{
			bolt.CreateOp("/t/x", []byte("x")),
			{Key: "/t/y", Value: []byte("y")},
		}, 1, bolt.ErrInvalidTxn},
	}
	for _, tc := range tests {
		before, rev := snapshot(t, s), s.Revision()
		_, err := s.Txn(ctx(t), tc.ops)
		if tc.index >= 0 {
			wantOpError(t, tc.name, err, tc.index, tc.ops[tc.index].Key, tc.want)
		} else {
			wantErr(t, tc.name, err, tc.want)
		}
		if s.Revision() != rev {
			t.Fatalf("%s: moved the revision", tc.name)
		}
		sameKVs(t, tc.name+": state", snapshot(t, s), before)
	}
	// MaxTxnOps ops are allowed, at consecutive (or one) revisions.
	base := s.Revision()
	kvs := mustTxn(t, s, many[:bolt.MaxTxnOps]...)
	for i, kv := range kvs {
		if kv.Key != many[i].Key || kv.ModRevision != h.opRev(base+1, i) {
			t.Fatalf("result %d: %s at %d, want %s at %d", i, kv.Key, kv.ModRevision, many[i].Key, h.opRev(base+1, i))
		}
	}
}

func testTxnCancelledContext(t *testing.T, h Harness) {
	s := h.Store
	c, cancel := context.WithCancel(ctx(t))
	cancel()
	_, err := s.Txn(c, []bolt.Op{bolt.CreateOp("/t/a", []byte("a")), bolt.CreateOp("/t/b", []byte("b"))})
	wantErr(t, "Txn", err, context.Canceled)
	if n := s.Count("/"); n != 0 {
		t.Fatalf("cancelled txn left %d keys", n)
	}
}

// testTxnWatch checks delivery of a transaction: each watcher gets the
// events under its prefix, in op order, live and replayed from history.
func testTxnWatch(t *testing.T, h Harness) {
	s := h.Store
	z := mustCreate(t, s, "/t/z", "z")
	a := mustCreate(t, s, "/t/a", "a")
	base := a.ModRevision
	watch := func(prefix string, from int64) bolt.Watcher {
		w, err := s.Watch(ctx(t), prefix, from)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w
	}
	all, tw, uw := watch("/", base), watch("/t/", base), watch("/u/", base)
	kvs := mustTxn(t, s,
		bolt.CreateOp("/u/1", []byte("u1")),
		bolt.UpdateOp("/t/a", a.ModRevision, []byte("a2")),
		bolt.CreateOp("/t/b", []byte("b")),
		bolt.DeleteOp("/t/z", 0),
	)
	mustCreate(t, s, "/t/marker", "m")
	mustCreate(t, s, "/u/marker", "m")
	check := func(what string, evs []bolt.Event, idx ...int) {
		t.Helper()
		prev := map[string]*bolt.KV{"/t/a": &a, "/t/z": &z}
		for i := range kvs {
			kv := kvs[i]
			if len(idx) > 0 && idx[0] == i {
				ev := evs[0]
				evs, idx = evs[1:], idx[1:]
				typ := bolt.Put
				if i == 3 {
					typ = bolt.Delete
				}
				checkEvent(t, ev, typ, kv, prev[kv.Key])
			}
			prev[kv.Key] = &kv
		}
	}
	check("all", recv(t, all, 4), 0, 1, 2, 3)
	check("/t/", recv(t, tw, 3), 1, 2, 3)
	check("/u/", recv(t, uw, 1), 0)
	expectNext(t, tw, "/t/marker")
	expectNext(t, uw, "/u/marker")

	// The same events replay from history, also from inside the txn.
	check("replay", recv(t, watch("/", base), 4), 0, 1, 2, 3)
	if !h.TxnSharesRevision { // no revision lies inside a txn otherwise
		check("replay from inside", recv(t, watch("/", base+2), 2), 2, 3)
	}
}

// span is the first and last revision of a transaction.
type span struct{ first, last int64 }

// checkListsAtRevisions lists prefix at every revision from first to last
// and compares with the model; a revision inside one of txns must read as
// that transaction's last.
func checkListsAtRevisions(t *testing.T, s bolt.Store, m *model, prefix string, first, last int64, txns []span) {
	t.Helper()
	for rev := first; rev <= last; rev++ {
		want := rev
		for _, tx := range txns {
			if tx.first <= rev && rev <= tx.last {
				want = tx.last
			}
		}
		res := mustList(t, s, prefix, bolt.ListOptions{Revision: rev})
		if res.Revision != want {
			t.Fatalf("list at %d reads revision %d, want %d", rev, res.Revision, want)
		}
		sameKVs(t, fmt.Sprintf("list at %d", rev), res.Items, m.list(t, prefix, want))
		// Pages of one item at the reported revision give the same.
		var got []bolt.KV
		opts := bolt.ListOptions{Revision: rev, Limit: 1}
		for {
			page := mustList(t, s, prefix, opts)
			if page.Revision != want {
				t.Fatalf("page at %d reads revision %d, want %d", rev, page.Revision, want)
			}
			got = append(got, page.Items...)
			if !page.More {
				break
			}
			opts.StartKey = page.Items[0].Key + "\x00"
		}
		sameKVs(t, fmt.Sprintf("pages at %d", rev), got, m.list(t, prefix, want))
	}
}

// txnModel records the results of a transaction in m, which snapshots only
// the end: no state inside a transaction is ever readable.
func txnModel(m *model, ops []bolt.Op, kvs []bolt.KV) span {
	for i, kv := range kvs {
		if ops[i].Kind == bolt.OpDelete {
			delete(m.cur, kv.Key)
		} else {
			m.cur[kv.Key] = kv
		}
	}
	end := kvs[len(kvs)-1].ModRevision
	m.snap(end)
	return span{kvs[0].ModRevision, end}
}

// testTxnListAtRevision lists at every revision around transactions: a
// revision inside one reads as its last, whole pages included.
func testTxnListAtRevision(t *testing.T, h Harness) {
	s := h.Store
	m := newModel()
	first := mustCreate(t, s, "/l/a", "a")
	m.put(first)
	m.put(mustCreate(t, s, "/l/b", "b"))
	m.put(mustCreate(t, s, "/l/c", "c"))
	var txns []span
	txn := func(ops ...bolt.Op) {
		txns = append(txns, txnModel(m, ops, mustTxn(t, s, ops...)))
	}
	txn(bolt.UpdateOp("/l/a", 0, []byte("a2")), bolt.DeleteOp("/l/b", 0), bolt.CreateOp("/l/d", []byte("d")))
	m.put(mustUpdate(t, s, "/l/c", 0, "c2"))
	txn(bolt.CreateOp("/l/b", []byte("b2")), bolt.CreateOp("/other/x", []byte("x")), bolt.DeleteOp("/l/a", 0))
	m.put(mustCreate(t, s, "/l/e", "e"))
	last := s.Revision()
	checkListsAtRevisions(t, s, m, "/l/", first.ModRevision, last, txns)

	// Compacted to a revision inside a transaction: listing at it still
	// reads the whole transaction.
	inside := txns[1].first
	if err := s.Compact(ctx(t), inside); err != nil {
		t.Fatal(err)
	}
	checkListsAtRevisions(t, s, m, "/l/", inside, last, txns)
}

// testTxnReaders writes transactions that each replace one pair of keys by
// the next, while readers check that every list shows exactly one whole
// pair and every watcher sees whole pairs.
func testTxnReaders(t *testing.T, h Harness) {
	s := h.Store
	const txns, readers = 40, 2
	pair := func(i int) (string, string) { return fmt.Sprintf("/pair/a/%03d", i), fmt.Sprintf("/pair/b/%03d", i) }
	base := s.Revision()
	w, err := s.Watch(ctx(t), "/pair/", base)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	done := make(chan struct{})
	var wg sync.WaitGroup
	for r := 0; r < readers; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				res, err := s.List("/pair/", bolt.ListOptions{})
				if err != nil {
					t.Errorf("List: %v", err)
					return
				}
				if n := len(res.Items); n == 2 {
					a, b := res.Items[0].Key, res.Items[1].Key
					if strings.TrimPrefix(a, "/pair/a/") != strings.TrimPrefix(b, "/pair/b/") {
						t.Errorf("list at %d shows %s and %s", res.Revision, a, b)
						return
					}
				} else if n != 0 || res.Revision > base {
					t.Errorf("list at %d shows %v", res.Revision, keysOf(res.Items))
					return
				}
			}
		}()
	}
	var revs []int64 // every op's revision, in commit order
	for i := 0; i < txns; i++ {
		a, b := pair(i)
		ops := []bolt.Op{bolt.CreateOp(a, []byte("v")), bolt.CreateOp(b, []byte("v"))}
		if i > 0 {
			pa, pb := pair(i - 1)
			ops = append(ops, bolt.DeleteOp(pa, 0), bolt.DeleteOp(pb, 0))
		}
		kvs := mustTxn(t, s, ops...)
		for j := 1; j < len(kvs); j++ {
			if kvs[j].ModRevision != kvs[j-1].ModRevision+h.txnStep() {
				t.Fatalf("txn %d: revisions %d then %d", i, kvs[j-1].ModRevision, kvs[j].ModRevision)
			}
		}
		for _, kv := range kvs {
			revs = append(revs, kv.ModRevision)
		}
	}
	close(done)
	wg.Wait()
	evs := recv(t, w, len(revs))
	for i, ev := range evs {
		if ev.Revision != revs[i] {
			t.Fatalf("event %d at %d, want %d", i, ev.Revision, revs[i])
		}
	}
}

// testTxnAllocation is the case transactions exist for: objects that each
// claim one address from a small pool, the object and the address record
// written together. No address may be held twice or leak.
func testTxnAllocation(t *testing.T, h Harness) {
	s := h.Store
	const claimants = 12
	const pool = claimants + 2
	var wg sync.WaitGroup
	got := make([]int, claimants)
	for c := 0; c < claimants; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			obj := fmt.Sprintf("/svc/s%02d", c)
			for ip := 0; ip < pool; ip++ {
				rec := fmt.Sprintf("/ips/%02d", ip)
				kvs, err := s.Txn(context.Background(), []bolt.Op{
					bolt.CreateOp(obj, []byte(rec)),
					bolt.CreateOp(rec, []byte(obj)),
				})
				var oe *bolt.OpError
				if errors.As(err, &oe) && oe.Index == 1 && errors.Is(err, bolt.ErrExists) {
					continue // address taken: try the next
				}
				if err != nil {
					t.Errorf("%s: %v", obj, err)
					return
				}
				if kvs[1].ModRevision != kvs[0].ModRevision+h.txnStep() {
					t.Errorf("%s: revisions %d and %d", obj, kvs[0].ModRevision, kvs[1].ModRevision)
				}
				got[c] = ip
				return
			}
			t.Errorf("%s: pool exhausted", obj)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	objs := mustList(t, s, "/svc/", bolt.ListOptions{}).Items
	recs := mustList(t, s, "/ips/", bolt.ListOptions{}).Items
	if len(objs) != claimants || len(recs) != claimants {
		t.Fatalf("%d objects and %d address records, want %d each", len(objs), len(recs), claimants)
	}
	owner := map[string]string{}
	for _, r := range recs {
		owner[r.Key] = strings.Split(string(r.Value), "@")[0]
	}
	for i, o := range objs {
		rec := strings.Split(string(o.Value), "@")[0]
		if owner[rec] != o.Key || rec != fmt.Sprintf("/ips/%02d", got[i]) {
			t.Fatalf("%s holds %s, which records %q", o.Key, rec, owner[rec])
		}
	}
}

// testTxnRestart checks that a committed transaction, its history and its
// boundaries survive a restart.
func testTxnRestart(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("backend cannot restart")
	}
	s := h.Store
	m := newModel()
	a := mustCreate(t, s, "/r/a", "a")
	m.put(a)
	ops := []bolt.Op{
		bolt.CreateOp("/r/b", []byte("b")),
		bolt.UpdateOp("/r/a", a.ModRevision, []byte("a2")),
		bolt.CreateOp("/r/c", []byte("c")),
	}
	tx := txnModel(m, ops, mustTxn(t, s, ops...))
	end := tx.last
	w, err := s.Watch(ctx(t), "/r/", a.ModRevision)
	if err != nil {
		t.Fatal(err)
	}
	before := recv(t, w, len(ops))
	w.Stop()

	s = h.Reopen(t)
	if s.Revision() != end {
		t.Fatalf("revision after restart %d, want %d", s.Revision(), end)
	}
	checkListsAtRevisions(t, s, m, "/r/", a.ModRevision, end, []span{tx})
	w, err = s.Watch(ctx(t), "/r/", a.ModRevision)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i, ev := range recv(t, w, len(before)) {
		checkEvent(t, ev, before[i].Type, before[i].KV, before[i].Prev)
	}
	next := mustTxn(t, s, bolt.DeleteOp("/r/b", 0), bolt.CreateOp("/r/d", []byte("d")))
	if next[0].ModRevision != end+1 {
		t.Fatalf("first txn after restart at %d, want %d", next[0].ModRevision, end+1)
	}
}
