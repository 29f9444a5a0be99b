package controllers

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"platd/bolt"
)

// fakeSource serves one list and then watches scripted per start: each
// watch delivers its events and ends with its error.
type fakeSource struct {
	mu      sync.Mutex
	lists   int
	froms   []int64
	watches []fakeWatch
}

type fakeWatch struct {
	events []bolt.Event
	err    error
}

func (f *fakeSource) List(string, bolt.ListOptions) (bolt.ListResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	return bolt.ListResult{Revision: 10}, nil
}

func (f *fakeSource) Watch(ctx context.Context, _ string, from int64) (bolt.Watcher, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.froms = append(f.froms, from)
	ch := make(chan bolt.Event, 8)
	w := &fakeWatcher{ch: ch}
	if len(f.watches) == 0 {
		// The last watch stays open until the test ends.
		go func() { <-ctx.Done(); close(ch) }()
		return w, nil
	}
	fw := f.watches[0]
	f.watches = f.watches[1:]
	for _, ev := range fw.events {
		ch <- ev
	}
	w.err = fw.err
	close(ch)
	return w, nil
}

type fakeWatcher struct {
	ch  chan bolt.Event
	err error
}

func (w *fakeWatcher) Events() <-chan bolt.Event { return w.ch }
func (w *fakeWatcher) Err() error                { return w.err }
func (w *fakeWatcher) Progress() int64           { return 0 }
func (w *fakeWatcher) Stop()                     {}

func TestFollowResumesAfterFallingBehind(t *testing.T) {
	t.Parallel()
	src := &fakeSource{watches: []fakeWatch{
		{events: []bolt.Event{{Revision: 11}, {Revision: 12}}, err: bolt.ErrWatcherTooSlow},
	}}
	var mu sync.Mutex
	var seen []int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		follow(ctx, src, "/", slog.New(slog.DiscardHandler), func([]bolt.KV) {}, func(ev bolt.Event) {
			mu.Lock()
			seen = append(seen, ev.Revision)
			mu.Unlock()
		})
	}()
	waitFor(t, "the second watch", func() bool {
		src.mu.Lock()
		defer src.mu.Unlock()
		return len(src.froms) == 2
	})
	cancel()
	<-done
	if src.lists != 1 || !slices.Equal(src.froms, []int64{10, 12}) || !slices.Equal(seen, []int64{11, 12}) {
		t.Errorf("lists %d, watches from %v, events %v", src.lists, src.froms, seen)
	}
}
