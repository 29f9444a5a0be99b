package etcd

import (
	"errors"
	"testing"
	"time"

	"platd/bolt"
)

// nextEvent is the watcher's next event, failing after waitTimeout.
func nextEvent(t *testing.T, w bolt.Watcher) bolt.Event {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		if !ok {
			t.Fatalf("watch ended: %v", w.Err())
		}
		return ev
	case <-time.After(waitTimeout):
		t.Fatal("no event")
	}
	return bolt.Event{}
}

// TestQuietCompaction: a cluster idle for two compaction intervals (the
// compactor's own writes are the only ones in etcd) still serves a list
// then a watch from its revision. A replica opened after the compaction
// cannot tell whether a delete lay between the last write and the
// compaction, so it serves from the compaction on: from there, watches
// on both replicas agree.
func TestQuietCompaction(t *testing.T) {
	t.Parallel()
	s, err := startEtcd() // compaction cuts every prefix's history
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	prefix := newPrefix()
	a := openOn(t, s, prefix, nil)
	kv, err := a.Create(t.Context(), "/k/1", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	v, r, err := a.compactOnce(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err = a.compactOnce(v, r); err != nil {
		t.Fatal(err)
	}
	if r <= kv.ModRevision {
		t.Fatalf("compacted at %d, not past the last write %d", r, kv.ModRevision)
	}
	if err := a.WaitForRevision(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	res, err := a.List("/k/", bolt.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != kv.ModRevision || a.Revision() != kv.ModRevision || a.CompactedRevision() != kv.ModRevision {
		t.Fatalf("list at %d, revision %d, compacted %d; want all %d", res.Revision, a.Revision(), a.CompactedRevision(), kv.ModRevision)
	}
	now, err := a.Watch(t.Context(), "/k/", 0)
	if err != nil {
		t.Fatalf("watch from now: %v", err)
	}
	defer now.Stop()
	fromList, err := a.Watch(t.Context(), "/k/", res.Revision)
	if err != nil {
		t.Fatalf("watch from the list's revision: %v", err)
	}
	defer fromList.Stop()
	if _, err := a.Watch(t.Context(), "/k/", kv.ModRevision-1); err == nil {
		t.Fatal("watch from below the compaction: no error")
	}

	b := openOn(t, s, prefix, nil)
	if b.Revision() != r || b.CompactedRevision() != r {
		t.Fatalf("replica opened later: revision %d compacted %d, want both %d", b.Revision(), b.CompactedRevision(), r)
	}
	if w, err := b.Watch(t.Context(), "/k/", res.Revision); !errors.Is(err, bolt.ErrCompacted) {
		if err == nil {
			w.Stop()
		}
		t.Fatalf("watch on the later replica from before its start: %v, want ErrCompacted", err)
	}
	onB, err := b.Watch(t.Context(), "/k/", b.Revision())
	if err != nil {
		t.Fatalf("watch on the later replica from its revision: %v", err)
	}
	defer onB.Stop()
	onA, err := a.Watch(t.Context(), "/k/", b.Revision())
	if err != nil {
		t.Fatalf("watch on the first replica from the later one's revision: %v", err)
	}
	defer onA.Stop()

	up, err := a.Update(t.Context(), "/k/1", kv.ModRevision, []byte("v2"))
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]bolt.Watcher{"now": now, "from list": fromList, "later replica": onB, "first replica from the later's revision": onA} {
		ev := nextEvent(t, w)
		if ev.Type != bolt.Put || ev.Revision != up.ModRevision || ev.KV.Key != "/k/1" || string(ev.KV.Value) != string(up.Value) {
			t.Errorf("watch %s: %v %s at %d %q, want the update at %d", name, ev.Type, ev.KV.Key, ev.Revision, ev.KV.Value, up.ModRevision)
		}
		if ev.Prev == nil || ev.Prev.ModRevision != kv.ModRevision {
			t.Errorf("watch %s: previous state %+v, want the create at %d", name, ev.Prev, kv.ModRevision)
		}
	}
}

// TestRestartAfterCompactedDelete: a delete newer than every key left,
// compacted away before a restart, cannot be replayed; the reopened DB
// does not go back in revision, and refuses lists and watches from before
// the compaction (410) rather than serve them without the delete.
func TestRestartAfterCompactedDelete(t *testing.T) {
	t.Parallel()
	s, err := startEtcd()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	prefix := newPrefix()
	db := openOn(t, s, prefix, nil)
	ctx := t.Context()
	if _, err := db.Create(ctx, "/cm/ns/a", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	b, err := db.Create(ctx, "/cm/ns/b", []byte(`{"b":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Delete(ctx, "/cm/ns/b", 0); err != nil {
		t.Fatal(err)
	}
	before := db.Revision()
	if err := db.Compact(ctx, before); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = openOn(t, s, prefix, nil)
	if got := db.Revision(); got < before {
		t.Errorf("revision went back from %d to %d", before, got)
	}
	if _, err := db.List("/", bolt.ListOptions{Revision: b.ModRevision}); !errors.Is(err, bolt.ErrCompacted) {
		t.Errorf("list at %d, before the compacted delete: %v, want ErrCompacted", b.ModRevision, err)
	}
	if w, err := db.Watch(ctx, "/", b.ModRevision); !errors.Is(err, bolt.ErrCompacted) {
		if err == nil {
			w.Stop()
		}
		t.Errorf("watch from %d, before the compacted delete: %v, want ErrCompacted", b.ModRevision, err)
	}
	res, err := db.List("/", bolt.ListOptions{})
	if err != nil || len(res.Items) != 1 || res.Items[0].Key != "/cm/ns/a" || res.Revision < before {
		t.Errorf("list: %+v %v", res, err)
	}
}
