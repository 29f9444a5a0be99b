package rest

import (
	"context"
	"sync"
	"testing"
	"time"

	"platd/bolt"
)

// endFirstWatch is a Storage whose first watch ends at once as a dropped
// one does; later watches are the store's.
type endFirstWatch struct {
	Storage
	mu      sync.Mutex
	watches int
}

func (s *endFirstWatch) Watch(ctx context.Context, prefix string, from int64) (bolt.Watcher, error) {
	s.mu.Lock()
	s.watches++
	n := s.watches
	s.mu.Unlock()
	if n > 1 {
		return s.Storage.Watch(ctx, prefix, from)
	}
	return &endedWatcher{ch: make(chan bolt.Event)}, nil
}

func (s *endFirstWatch) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watches
}

type endedWatcher struct {
	ch   chan bolt.Event
	once sync.Once
}

func (w *endedWatcher) Events() <-chan bolt.Event {
	w.once.Do(func() { close(w.ch) })
	return w.ch
}
func (w *endedWatcher) Err() error      { return bolt.ErrWatcherTooSlow }
func (w *endedWatcher) Progress() int64 { return 0 }
func (w *endedWatcher) Stop()           {}

// TestProtoCacheWatchEnds: when the invalidation watch ends the cache
// forgets every entry (changes may have been missed) and the next put
// watches again, whose events drop entries as before.
func TestProtoCacheWatchEnds(t *testing.T) {
	t.Parallel()
	_, _, store := newTestHandler(t, Config{})
	src := &endFirstWatch{Storage: store}
	done := make(chan struct{})
	defer close(done)
	c := newProtoCache(src, done)
	c.put(nil, "/x/a", 1, []byte("pb-a"))
	poll(t, "the cache to forget after its watch ended", func() bool {
		_, n := c.size()
		return n == 0 && !c.watching.Load()
	})
	c.put(nil, "/x/b", 1, []byte("pb-b"))
	if src.count() != 2 || !c.watching.Load() {
		t.Fatalf("watches %d, watching %v: want a second watch", src.count(), c.watching.Load())
	}
	if pb, ok := c.get(nil, "/x/b", 1); !ok || string(pb) != "pb-b" {
		t.Fatalf("get = %q, %v", pb, ok)
	}
	if _, err := store.Create(context.Background(), "/x/b", []byte(`{"metadata":{"resourceVersion":""}}`)); err != nil {
		t.Fatal(err)
	}
	poll(t, "the write to drop the entry", func() bool {
		_, ok := c.get(nil, "/x/b", 1)
		return !ok
	})
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
