package storetest

import (
	"fmt"
	"testing"

	"platd/bolt"
)

func testCompaction(t *testing.T, h Harness) {
	s := h.Store
	m := newModel()
	for i := 0; i < 10; i++ {
		m.put(mustCreate(t, s, fmt.Sprintf("/c/k%d", i), "v"))
	}
	for i := 0; i < 10; i += 2 {
		m.put(mustUpdate(t, s, fmt.Sprintf("/c/k%d", i), 0, "v2"))
	}
	revs := m.revisions()
	mid := revs[len(revs)/2]
	if err := s.Compact(ctx(t), mid); err != nil {
		t.Fatal(err)
	}
	if got := s.CompactedRevision(); got != mid {
		t.Fatalf("CompactedRevision %d, want %d", got, mid)
	}
	_, err := s.List("/c/", bolt.ListOptions{Revision: mid - 1})
	wantErr(t, "list below compaction", err, bolt.ErrCompacted)
	_, err = s.Watch(ctx(t), "/c/", mid-1)
	wantErr(t, "watch below compaction", err, bolt.ErrCompacted)

	res := mustList(t, s, "/c/", bolt.ListOptions{Revision: mid})
	sameKVs(t, "list at the compacted revision", res.Items, m.list(t, "/c/", mid))
	w, err := s.Watch(ctx(t), "/c/", mid)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	evs := recv(t, w, int(s.Revision()-mid))
	if evs[0].Revision != mid+1 {
		t.Fatalf("watch from the compacted revision starts at %d", evs[0].Revision)
	}
	// Current reads are unaffected.
	sameKVs(t, "current list", mustList(t, s, "/c/", bolt.ListOptions{}).Items, m.list(t, "/c/", 0))

	wantErr(t, "compact in the future", s.Compact(ctx(t), s.Revision()+1), bolt.ErrFutureRevision)
	if err := s.Compact(ctx(t), mid-1); err != nil {
		t.Fatalf("compacting an already compacted revision: %v", err)
	}
	if got := s.CompactedRevision(); got != mid {
		t.Fatalf("CompactedRevision moved back to %d", got)
	}
	// Everything compacted: the current revision still lists and watches.
	cur := s.Revision()
	if err := s.Compact(ctx(t), cur); err != nil {
		t.Fatal(err)
	}
	res = mustList(t, s, "/c/", bolt.ListOptions{Revision: cur})
	if len(res.Items) != 10 {
		t.Fatalf("list at fully compacted revision: %d items", len(res.Items))
	}
	w2, err := s.Watch(ctx(t), "/c/", cur)
	if err != nil {
		t.Fatalf("watch from fully compacted revision: %v", err)
	}
	defer w2.Stop()
	n := mustCreate(t, s, "/c/after", "x")
	checkEvent(t, recv(t, w2, 1)[0], bolt.Put, n, nil)
}

func testRestart(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("backend cannot restart")
	}
	s := h.Store
	m := newModel()
	base := s.Revision()
	for i := 0; i < 6; i++ {
		m.put(mustCreate(t, s, fmt.Sprintf("/r/ns/k%d", i), fmt.Sprintf("v%d", i)))
	}
	m.put(mustUpdate(t, s, "/r/ns/k1", 0, "v1b"))
	m.del(mustDelete(t, s, "/r/ns/k2", 0))
	if err := s.Compact(ctx(t), base+2); err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx(t), "/r/", base+2)
	if err != nil {
		t.Fatal(err)
	}
	before := recv(t, w, int(s.Revision()-base-2))
	w.Stop()
	rev := s.Revision()

	s = h.Reopen(t)
	if s.Revision() != rev || s.CompactedRevision() != base+2 {
		t.Fatalf("after restart: revision %d compacted %d, want %d %d", s.Revision(), s.CompactedRevision(), rev, base+2)
	}
	sameKVs(t, "state after restart", mustList(t, s, "/r/", bolt.ListOptions{}).Items, m.list(t, "/r/", 0))
	mid := base + 4
	sameKVs(t, "past list after restart", mustList(t, s, "/r/", bolt.ListOptions{Revision: mid}).Items, m.list(t, "/r/", mid))
	_, err = s.Watch(ctx(t), "/r/", base+1)
	wantErr(t, "watch below compaction after restart", err, bolt.ErrCompacted)

	w, err = s.Watch(ctx(t), "/r/", base+2)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	after := recv(t, w, len(before))
	for i := range before {
		b, a := before[i], after[i]
		checkEvent(t, a, b.Type, b.KV, b.Prev)
	}
	n := mustCreate(t, s, "/r/ns/new", "n")
	if n.ModRevision <= rev {
		t.Fatalf("first write after restart at %d, last before %d", n.ModRevision, rev)
	}
	checkEvent(t, recv(t, w, 1)[0], bolt.Put, n, nil)
}

// testConcurrentWriters: every acknowledged write has a unique revision,
// each writer's revisions increase, and every write is visible.
func testConcurrentWriters(t *testing.T, h Harness) {
	s := h.Store
	const writers, perWriter = 16, 40
	kvs := writeConcurrently(t, s, "/cc/", writers*perWriter, writers)
	seen := map[int64]bool{}
	for i, kv := range kvs {
		if seen[kv.ModRevision] {
			t.Fatalf("revision %d assigned twice", kv.ModRevision)
		}
		seen[kv.ModRevision] = true
		if i >= writers && kv.ModRevision <= kvs[i-writers].ModRevision {
			t.Fatalf("writer %d: revision %d after %d", i%writers, kv.ModRevision, kvs[i-writers].ModRevision)
		}
		got, err := s.Get(kv.Key)
		if err != nil {
			t.Fatal(err)
		}
		sameKVs(t, "acked write", []bolt.KV{got}, []bolt.KV{kv})
	}
	res := mustList(t, s, "/cc/", bolt.ListOptions{})
	if len(res.Items) != writers*perWriter || s.Count("/cc/") != int64(writers*perWriter) {
		t.Fatalf("list %d count %d, want %d", len(res.Items), s.Count("/cc/"), writers*perWriter)
	}
	var maxRev int64
	for r := range seen {
		maxRev = max(maxRev, r)
	}
	if s.Revision() != maxRev {
		t.Fatalf("Revision %d, newest write %d", s.Revision(), maxRev)
	}
}
