package etcd

import (
	"errors"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/bolt"
)

// TestExternalCompactionOpen: a replica opens on an etcd that another
// tool compacted past its newest write (etcd's auto-compaction, etcdctl
// compact), which the compaction key does not record.
func TestExternalCompactionOpen(t *testing.T) {
	s, err := startEtcd() // compaction cuts every prefix's history
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	p := newPrefix()
	a := openOn(t, s, p, nil)
	kv, err := a.Create(t.Context(), "/k/1", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	var head int64
	for _, v := range []string{"x", "y", "z"} {
		resp, err := a.cli.Put(t.Context(), "/other", v)
		if err != nil {
			t.Fatal(err)
		}
		head = resp.Header.Revision
	}
	if _, err := a.cli.Compact(t.Context(), head); err != nil {
		t.Fatal(err)
	}
	b := openOn(t, s, p, nil)
	if err := b.Healthy(); err != nil {
		t.Fatalf("Healthy after Open: %v", err)
	}
	got, err := b.Get("/k/1")
	if err != nil || got.ModRevision != kv.ModRevision || string(got.Value) != string(kv.Value) {
		t.Fatalf("Get on the new replica: %+v, %v; want %+v", got, err, kv)
	}
	if b.Revision() != kv.ModRevision || b.CompactedRevision() > b.Revision() {
		t.Fatalf("new replica: revision %d compacted %d, want revision %d", b.Revision(), b.CompactedRevision(), kv.ModRevision)
	}
	w, err := b.Watch(t.Context(), "/k/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	up, err := a.Update(t.Context(), "/k/1", 0, []byte("v2"))
	if err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, w); ev.Revision != up.ModRevision || string(ev.KV.Value) != string(up.Value) {
		t.Fatalf("event %d %q, want the update %d %q", ev.Revision, ev.KV.Value, up.ModRevision, up.Value)
	}
}

// TestMirrorRelists: when etcd ends the mirror's watch because it is
// compacted past it, the replica reports unhealthy, lists again, ends
// its watches with ErrCompacted (clients list again, as upstream), then
// serves the writes it missed, and new watches follow it; it is healthy
// again.
func TestMirrorRelists(t *testing.T) {
	s, err := startEtcd()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	// The first mirror watch is cut (held) when the test says so: writes
	// then pass by the mirror, as during a partition.
	cut := make(chan struct{})
	wrapped := false
	mirrorWatchHook = func(in clientv3.WatchChan) clientv3.WatchChan {
		if wrapped {
			return in
		}
		wrapped = true
		out := make(chan clientv3.WatchResponse)
		go func() {
			defer close(out)
			for {
				select {
				case resp, ok := <-in:
					if !ok {
						return
					}
					select {
					case out <- resp:
					case <-cut:
						return
					}
				case <-cut:
					return
				}
			}
		}()
		return out
	}
	t.Cleanup(func() { mirrorWatchHook = nil })
	prefix := newPrefix()
	db := openOn(t, s, prefix, nil)
	mirrorWatchHook = nil
	other := openOn(t, s, prefix, nil)
	gone, err := db.Create(t.Context(), "/k/gone", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	live, err := db.Watch(t.Context(), "/k/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Stop()

	close(cut) // the mirror watch ends without an error: relist
	kept, err := other.Create(t.Context(), "/k/kept", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	del, err := other.Delete(t.Context(), "/k/gone", gone.ModRevision)
	if err != nil {
		t.Fatal(err)
	}
	// The mirror relists and watches again on its own time: the
	// compaction below comes once it has seen the writes, or it could
	// fall on the new watch before etcd has it (another relist, a
	// legitimate one this test does not look at).
	if err := db.WaitForRevision(t.Context(), del.ModRevision); err != nil {
		t.Fatal(err)
	}
	resp, err := other.cli.Put(t.Context(), "/other", "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.cli.Compact(t.Context(), resp.Header.Revision); err != nil {
		t.Fatal(err)
	}

	for ev := range live.Events() {
		t.Fatalf("event %v %s at %d, want the watch ended", ev.Type, ev.KV.Key, ev.Revision)
	}
	if err := live.Err(); !errors.Is(err, bolt.ErrCompacted) {
		t.Fatalf("live watch ended with %v, want ErrCompacted", err)
	}
	if err := db.Healthy(); err != nil {
		t.Fatalf("Healthy after the relist: %v", err)
	}
	res, err := db.List("/k/", bolt.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 || res.Items[0].Key != "/k/kept" || res.Items[0].ModRevision != kept.ModRevision {
		t.Fatalf("list after the relist: %+v, want /k/kept at %d", res.Items, kept.ModRevision)
	}
	if res.Revision < del.ModRevision-1 || res.Revision > del.ModRevision {
		t.Fatalf("list after the relist at %d; the last writes at %d and %d", res.Revision, kept.ModRevision, del.ModRevision)
	}
	w, err := db.Watch(t.Context(), "/k/", res.Revision)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	up, err := other.Update(t.Context(), "/k/kept", 0, []byte("v2"))
	if err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, w); ev.Revision != up.ModRevision || ev.KV.Key != "/k/kept" || ev.Prev == nil || ev.Prev.ModRevision != kept.ModRevision {
		t.Fatalf("event after the relist: %v %s at %d prev %+v, want the update at %d", ev.Type, ev.KV.Key, ev.Revision, ev.Prev, up.ModRevision)
	}
	if got, err := db.Get("/k/kept"); err != nil || got.ModRevision != up.ModRevision {
		t.Fatalf("Get after the relist: %+v, %v", got, err)
	}
}
