package storetest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"platd/bolt"
)

func testListPrefixAndOrder(t *testing.T, h Harness) {
	s := h.Store
	m := newModel()
	keys := []string{
		"/pods/ns2/b", "/pods/ns1/z", "/pods/ns1/a", "/pods/ns10/a", "/pods/ns1/m",
		"/podsx/ns1/a", "/pod/ns1/a", "/nodes/n1", "/nodes/n0",
	}
	for _, i := range rand.Perm(len(keys)) {
		m.put(mustCreate(t, s, keys[i], "p"+keys[i]))
	}
	for _, prefix := range []string{"/", "/pods/", "/pods/ns1/", "/pods/ns10/", "/nodes/", "/pod/", "/none/"} {
		t.Run(prefix, func(t *testing.T) {
			res := mustList(t, s, prefix, bolt.ListOptions{})
			sameKVs(t, "List "+prefix, res.Items, m.list(t, prefix, 0))
			if res.Revision != s.Revision() || res.More || res.Remaining != 0 {
				t.Fatalf("revision %d (store %d), more %v, remaining %d", res.Revision, s.Revision(), res.More, res.Remaining)
			}
			if n := s.Count(prefix); n != int64(len(res.Items)) {
				t.Fatalf("Count %d, list has %d", n, len(res.Items))
			}
		})
	}
}

func testListAtRevision(t *testing.T, h Harness) {
	s := h.Store
	m := newModel()
	rng := rand.New(rand.NewPCG(1, 2))
	start := s.Revision()
	m.snap(start)
	for i := 0; i < 120; i++ {
		key := fmt.Sprintf("/cms/ns%d/k%02d", rng.IntN(2), rng.IntN(15))
		if cur, ok := m.cur[key]; !ok {
			m.put(mustCreate(t, s, key, fmt.Sprintf("c%d", i)))
		} else if rng.IntN(3) == 0 {
			m.del(mustDelete(t, s, key, cur.ModRevision))
		} else {
			m.put(mustUpdate(t, s, key, cur.ModRevision, fmt.Sprintf("u%d", i)))
		}
	}
	for _, rev := range m.revisions() {
		if rev == 0 {
			continue // 0 asks for the current revision
		}
		for _, prefix := range []string{"/cms/", "/cms/ns1/"} {
			res := mustList(t, s, prefix, bolt.ListOptions{Revision: rev})
			if res.Revision != rev {
				t.Fatalf("list at %d reports revision %d", rev, res.Revision)
			}
			sameKVs(t, fmt.Sprintf("List %s at %d", prefix, rev), res.Items, m.list(t, prefix, rev))
		}
	}
	// Pages at a past revision, with Remaining counted at that revision.
	rev := m.revisions()[len(m.revisions())/2]
	want := m.list(t, "/cms/", rev)
	var got []bolt.KV
	opts := bolt.ListOptions{Revision: rev, Limit: 4}
	for {
		res := mustList(t, s, "/cms/", opts)
		got = append(got, res.Items...)
		if !res.More {
			break
		}
		if left := int64(len(want) - len(got)); res.Remaining != left {
			t.Fatalf("page at %d: remaining %d, want %d", rev, res.Remaining, left)
		}
		opts.StartKey = res.Items[len(res.Items)-1].Key + "\x00"
	}
	sameKVs(t, "paged past list", got, want)
}

func testListErrors(t *testing.T, h Harness) {
	s := h.Store
	mustCreate(t, s, "/things/a", "a")
	_, err := s.List("/things/", bolt.ListOptions{Revision: s.Revision() + 1})
	wantErr(t, "future revision", err, bolt.ErrFutureRevision)
	res := mustList(t, s, "/things/", bolt.ListOptions{StartKey: "/things/b"})
	if len(res.Items) != 0 || res.More {
		t.Fatalf("start key past the end: %v", keysOf(res.Items))
	}
	res = mustList(t, s, "/things/", bolt.ListOptions{StartKey: "/a"})
	if len(res.Items) != 1 {
		t.Fatalf("start key before the prefix: %v", keysOf(res.Items))
	}
}

func testListFilter(t *testing.T, h Harness) {
	s := h.Store
	for i := 0; i < 10; i++ {
		mustCreate(t, s, fmt.Sprintf("/things/k%d", i), fmt.Sprintf("v%d", i%2))
	}
	even := func(kv *bolt.KV) bool { return kv.Value[1] == '0' }
	res := mustList(t, s, "/things/", bolt.ListOptions{Filter: even, Limit: 3})
	if got := keysOf(res.Items); fmt.Sprint(got) != "[/things/k0 /things/k2 /things/k4]" {
		t.Fatalf("filtered page %v", got)
	}
	// Remaining counts every key after the last item, filtered or not.
	if !res.More || res.Remaining != 5 {
		t.Fatalf("more %v remaining %d, want true 5", res.More, res.Remaining)
	}
	res = mustList(t, s, "/things/", bolt.ListOptions{Filter: even})
	if len(res.Items) != 5 || res.More {
		t.Fatalf("filtered full list %v more %v", keysOf(res.Items), res.More)
	}
}

// testPagination pages through a range at the first page's revision while
// other writers change it; the pages together must equal the snapshot.
func testPagination(t *testing.T, h Harness) {
	s := h.Store
	m := newModel()
	for i := 0; i < 25; i++ {
		m.put(mustCreate(t, s, fmt.Sprintf("/cms/ns/k%02d", i), "v"))
	}
	first := mustList(t, s, "/cms/", bolt.ListOptions{Limit: 10})
	want := m.list(t, "/cms/", 0)
	if !first.More || first.Remaining != 15 || len(first.Items) != 10 {
		t.Fatalf("first page: %d items, more %v, remaining %d", len(first.Items), first.More, first.Remaining)
	}
	got := append([]bolt.KV(nil), first.Items...)
	next := first
	for page := 1; next.More; page++ {
		// Writes between pages: delete an unseen key, add one, update one.
		mustDelete(t, s, fmt.Sprintf("/cms/ns/k%02d", 10*page+3), 0)
		mustCreate(t, s, fmt.Sprintf("/cms/ns/k%02da", 10*page+1), "new")
		mustUpdate(t, s, fmt.Sprintf("/cms/ns/k%02d", 10*page+2), 0, "changed")
		last := next.Items[len(next.Items)-1].Key
		next = mustList(t, s, "/cms/", bolt.ListOptions{Limit: 10, StartKey: last + "\x00", Revision: first.Revision})
		if next.Revision != first.Revision {
			t.Fatalf("page %d at %d, want %d", page, next.Revision, first.Revision)
		}
		got = append(got, next.Items...)
		if next.More && next.Remaining != int64(len(want)-len(got)) {
			t.Fatalf("page %d remaining %d, want %d", page, next.Remaining, len(want)-len(got))
		}
	}
	sameKVs(t, "pages", got, want)
	if cur := mustList(t, s, "/cms/", bolt.ListOptions{}); len(cur.Items) != 25 {
		t.Fatalf("current list has %d items, want 25 (2 deleted, 2 added)", len(cur.Items))
	}
}
