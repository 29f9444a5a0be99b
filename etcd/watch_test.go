package etcd

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"platd/bolt"
)

// goroutinesIn waits until no goroutine's stack holds any of fns, failing
// after waitTimeout with the stacks that do.
func goroutinesIn(t *testing.T, fns ...string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		buf := make([]byte, 4<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		var left []string
		for _, g := range strings.Split(stacks, "\n\n") {
			for _, fn := range fns {
				if strings.Contains(g, fn) {
					left = append(left, g)
					break
				}
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		runtime.Gosched()
	}
}

// TestCatchUpStopped: a watch from a revision older than the in-memory
// history, stopped (or its ctx ended) before its replay from etcd reaches
// the history, ends: its goroutines exit while the DB stays open, and it
// is never registered with the mirror. A watch from there that is read
// replays every event in order.
func TestCatchUpStopped(t *testing.T) {
	t.Parallel()
	db := openOn(t, shared, newPrefix(), func(o *Options) { o.HistoryMaxBytes = 1 })
	first, err := db.Create(t.Context(), "/k/0", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	var written []bolt.KV // other tests write to the same etcd in between
	for range 20 {
		kv, err := db.Update(t.Context(), "/k/0", 0, []byte("v"))
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, kv)
	}
	db.mu.RLock()
	behind := first.ModRevision < db.ringBase
	db.mu.RUnlock()
	if !behind {
		t.Fatal("the ring still holds the first write: no catch-up to test")
	}
	for _, how := range []string{"stop", "cancel"} {
		ctx, cancel := context.WithCancel(t.Context())
		w, err := db.Watch(ctx, "/k/", first.ModRevision)
		if err != nil {
			t.Fatal(err)
		}
		if how == "stop" {
			w.Stop()
		} else {
			cancel()
		}
		for range w.Events() {
		}
		cancel()
		if err := w.Err(); err != nil {
			t.Errorf("%s: Err %v, want nil", how, err)
		}
	}
	goroutinesIn(t, "platd/etcd.(*DB).catchUp", "platd/etcd.(*DB).replay", "platd/etcd.(*watcher).run")
	db.mu.RLock()
	n := len(db.watchers)
	db.mu.RUnlock()
	if n != 0 {
		t.Fatalf("%d watchers registered after their watches ended", n)
	}

	w, err := db.Watch(t.Context(), "/k/", first.ModRevision)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	prev := first.ModRevision
	for _, kv := range written {
		if ev := nextEvent(t, w); ev.Revision != kv.ModRevision || ev.Prev == nil || ev.Prev.ModRevision != prev {
			t.Fatalf("replayed event at %d (prev %+v), want %d (prev at %d)", ev.Revision, ev.Prev, kv.ModRevision, prev)
		}
		prev = kv.ModRevision
	}
	next, err := db.Update(t.Context(), "/k/0", 0, []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, w); ev.Revision != next.ModRevision {
		t.Fatalf("live event at %d, want %d", ev.Revision, next.ModRevision)
	}
}

// TestProgressOfDroppedWatcher: a watcher that refused an event for
// falling behind claims no progress, even once its queue has drained and
// the mirror has moved past the refused event.
func TestProgressOfDroppedWatcher(t *testing.T) {
	t.Parallel()
	w := &watcher{prefix: "/p/", out: make(chan bolt.Event, 1), done: make(chan struct{}), wake: make(chan struct{}, 1), live: true}
	w.advance(5)
	if p := w.Progress(); p != 5 {
		t.Fatalf("progress %d, want 5", p)
	}
	for i := range watchBuffer + 1 {
		w.push(bolt.Event{Type: bolt.Put, Revision: int64(6 + i), KV: bolt.KV{Key: "/p/k"}})
	}
	if !errors.Is(w.Err(), bolt.ErrWatcherTooSlow) {
		t.Fatalf("err %v", w.Err())
	}
	w.mu.Lock()
	w.queue = nil
	w.mu.Unlock()
	w.advance(int64(6 + watchBuffer))
	if p := w.Progress(); p != 0 {
		t.Errorf("progress %d of a dropped watcher", p)
	}
}

// TestCloseDuringCatchUp: Close ends a watch whose replay from etcd is
// still waiting (here for an event under an empty prefix that never
// comes), and returns; the watch's channel closes.
func TestCloseDuringCatchUp(t *testing.T) {
	t.Parallel()
	s, err := startEtcd()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	seed := openOn(t, s, newPrefix(), nil)
	for range 5 {
		if _, err := seed.Client().Put(t.Context(), "/elsewhere/x", "v"); err != nil {
			t.Fatal(err)
		}
	}
	// An empty prefix: the DB starts at etcd's revision, so a watch from
	// 1 replays etcd's history first.
	db := openOn(t, s, newPrefix(), nil)
	w, err := db.Watch(context.Background(), "/", 1)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Close did not return while a watch was catching up")
	}
	if _, ok := <-w.Events(); ok {
		t.Error("an event after Close")
	}
}
