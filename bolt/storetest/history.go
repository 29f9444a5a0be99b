package storetest

import (
	"fmt"
	"strings"
	"testing"

	"platd/bolt"
)

// historyBoundBytes is the history bound the byte-bound tests open a store
// with, and historyValueBytes the size of the values they write: each
// update keeps the value it replaced, so at most eight updates fit.
const (
	historyBoundBytes = 64 << 10
	historyValueBytes = 8 << 10
)

// testHistoryByteBound: a history over its byte bound is compacted from
// its oldest end, and every read below the new compacted revision fails
// exactly as below an explicit compaction, while the retained part replays
// and lists exactly.
func testHistoryByteBound(t *testing.T, h Harness) {
	if h.OpenBounded == nil {
		t.Skip("backend has no history byte bound")
	}
	s := h.OpenBounded(t, historyBoundBytes)
	m := newModel()
	big := func(i int) string { return fmt.Sprintf("%d-%s", i, strings.Repeat("x", historyValueBytes)) }
	for i := 0; i < 4; i++ {
		m.put(mustCreate(t, s, fmt.Sprintf("/hb/ns/k%d", i), big(-i)))
	}
	base := s.Revision()
	w0, err := s.Watch(ctx(t), "/hb/", base)
	if err != nil {
		t.Fatal(err)
	}
	defer w0.Stop()
	var last bolt.KV
	for i := 0; i < 40; i++ {
		key := fmt.Sprintf("/hb/ns/k%d", i%2)
		last = mustUpdate(t, s, key, 0, big(i))
		m.put(last)
		comp, rev := s.CompactedRevision(), s.Revision()
		if comp > rev {
			t.Fatalf("compacted %d above revision %d", comp, rev)
		}
		if kept := rev - max(comp, base); kept > historyBoundBytes/historyValueBytes {
			t.Fatalf("after update %d the history keeps %d updates of %d bytes, bound %d", i, kept, historyValueBytes, historyBoundBytes)
		}
	}
	// A watch opened before the trim is not affected by it.
	live := recv(t, w0, 40)
	if live[0].Revision != base+1 || live[39].Revision != last.ModRevision {
		t.Fatalf("open watch got %d..%d, want %d..%d", live[0].Revision, live[39].Revision, base+1, last.ModRevision)
	}
	comp := s.CompactedRevision()
	if comp <= base {
		t.Fatalf("compacted revision %d: the history was not trimmed past %d", comp, base)
	}
	if s.Revision()-comp < 1 {
		t.Fatalf("the newest update is not replayable: compacted %d, revision %d", comp, s.Revision())
	}

	// Below the trimmed revision: as after Compact.
	_, err = s.Watch(ctx(t), "/hb/", comp-1)
	wantErr(t, "watch below the trimmed history", err, bolt.ErrCompacted)
	_, err = s.List("/hb/", bolt.ListOptions{Revision: comp - 1})
	wantErr(t, "list below the trimmed history", err, bolt.ErrCompacted)
	_, err = s.List("/hb/", bolt.ListOptions{Revision: comp - 1, StartKey: "/hb/ns/k1", Limit: 1})
	wantErr(t, "continued list below the trimmed history", err, bolt.ErrCompacted)
	_, err = s.List("/hb/", bolt.ListOptions{Revision: base})
	wantErr(t, "list at the revision before the burst", err, bolt.ErrCompacted)

	// From the trimmed revision on: exact.
	for _, rev := range []int64{comp, comp + 1, s.Revision()} {
		if rev > s.Revision() {
			continue
		}
		sameKVs(t, fmt.Sprintf("list at %d", rev), mustList(t, s, "/hb/", bolt.ListOptions{Revision: rev}).Items, m.list(t, "/hb/", rev))
		page := mustList(t, s, "/hb/", bolt.ListOptions{Revision: rev, StartKey: "/hb/ns/k1", Limit: 1})
		sameKVs(t, fmt.Sprintf("continued list at %d", rev), page.Items, m.list(t, "/hb/", rev)[1:2])
	}
	w, err := s.Watch(ctx(t), "/hb/", comp)
	if err != nil {
		t.Fatalf("watch from the trimmed revision: %v", err)
	}
	defer w.Stop()
	evs := recv(t, w, int(s.Revision()-comp))
	for _, ev := range evs {
		kv := m.snaps[ev.Revision][ev.KV.Key]
		prev := m.snaps[ev.Revision-1][ev.KV.Key]
		checkEvent(t, ev, bolt.Put, kv, &prev)
	}
	n := mustCreate(t, s, "/hb/ns/after", "n")
	checkEvent(t, recv(t, w, 1)[0], bolt.Put, n, nil)
}

// testHistoryByteBoundLargeValue: a single value larger than the whole
// bound is written, read and watched live; only its history is dropped.
func testHistoryByteBoundLargeValue(t *testing.T, h Harness) {
	if h.OpenBounded == nil {
		t.Skip("backend has no history byte bound")
	}
	s := h.OpenBounded(t, historyBoundBytes)
	huge := strings.Repeat("y", 2*historyBoundBytes)
	c := mustCreate(t, s, "/hl/ns/a", huge)
	w, err := s.Watch(ctx(t), "/hl/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	u := mustUpdate(t, s, "/hl/ns/a", c.ModRevision, huge+"2")
	checkEvent(t, recv(t, w, 1)[0], bolt.Put, u, &c)
	d := mustDelete(t, s, "/hl/ns/a", u.ModRevision)
	ev := recv(t, w, 1)[0]
	checkEvent(t, ev, bolt.Delete, d, &u)
	if got := s.CompactedRevision(); got < u.ModRevision {
		t.Fatalf("compacted %d: an update that replaced %d bytes is still retained under a bound of %d", got, len(huge), historyBoundBytes)
	}
	if _, err := s.Get("/hl/ns/a"); err == nil {
		t.Fatal("deleted key still present")
	}
	sameKVs(t, "list at the current revision", mustList(t, s, "/hl/", bolt.ListOptions{Revision: s.Revision()}).Items, nil)
}
