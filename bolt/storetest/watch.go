package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"platd/bolt"
)

// checkEvent compares one event with the expected type, state and prev.
func checkEvent(t *testing.T, ev bolt.Event, typ bolt.EventType, kv bolt.KV, prev *bolt.KV) {
	t.Helper()
	if ev.Type != typ || ev.Revision != kv.ModRevision {
		t.Fatalf("event %d type %d, want %d type %d", ev.Revision, ev.Type, kv.ModRevision, typ)
	}
	sameKVs(t, fmt.Sprintf("event %d", ev.Revision), []bolt.KV{ev.KV}, []bolt.KV{kv})
	switch {
	case prev == nil && ev.Prev != nil:
		t.Fatalf("event %d has prev %+v, want none", ev.Revision, *ev.Prev)
	case prev != nil && ev.Prev == nil:
		t.Fatalf("event %d has no prev", ev.Revision)
	case prev != nil:
		sameKVs(t, fmt.Sprintf("event %d prev", ev.Revision), []bolt.KV{*ev.Prev}, []bolt.KV{*prev})
	}
}

func testWatchFromRevision(t *testing.T, h Harness) {
	s := h.Store
	base := mustCreate(t, s, "/w/before", "x").ModRevision // 0 would mean "now"
	c := mustCreate(t, s, "/w/ns/a", "one")
	u := mustUpdate(t, s, "/w/ns/a", c.ModRevision, "two")
	d := mustDelete(t, s, "/w/ns/a", u.ModRevision)

	w, err := s.Watch(ctx(t), "/w/", base)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	live := mustCreate(t, s, "/w/ns/b", "live")
	evs := recv(t, w, 4)
	checkEvent(t, evs[0], bolt.Put, c, nil)
	checkEvent(t, evs[1], bolt.Put, u, &c)
	checkEvent(t, evs[2], bolt.Delete, d, &u)
	checkEvent(t, evs[3], bolt.Put, live, nil)

	// From the middle of the history.
	w2, err := s.Watch(ctx(t), "/w/", u.ModRevision)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	evs = recv(t, w2, 2)
	checkEvent(t, evs[0], bolt.Delete, d, &u)
	checkEvent(t, evs[1], bolt.Put, live, nil)
}

func testWatchFromZero(t *testing.T, h Harness) {
	s := h.Store
	mustCreate(t, s, "/w/old", "old")
	w, err := s.Watch(ctx(t), "/w/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	n := mustCreate(t, s, "/w/new", "new")
	checkEvent(t, recv(t, w, 1)[0], bolt.Put, n, nil)
}

func testWatchPrefixIsolation(t *testing.T, h Harness) {
	s := h.Store
	base := s.Revision()
	w, err := s.Watch(ctx(t), "/a/ns/", base)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, key := range []string{"/a/ns2/x", "/ab/ns/x", "/b/ns/x", "/a/nsx", "/a/ns/in"} {
		mustCreate(t, s, key, "v")
	}
	expectNext(t, w, "/a/ns/in")
}

// testWatchRacingWrites opens watches while writers run and checks that
// each sees exactly the revisions after its start: no gap, no duplicate.
func testWatchRacingWrites(t *testing.T, h Harness) {
	s := h.Store
	mustCreate(t, s, "/before", "x") // so no watch below starts at 0 ("now")
	const writers, perWriter = 4, 60
	var wg sync.WaitGroup
	var mu sync.Mutex
	written := map[int64]string{}
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				key := fmt.Sprintf("/race/w%d/k%d", g, i)
				kv, err := s.Create(context.Background(), key, []byte("v"))
				if err != nil {
					t.Errorf("Create: %v", err)
					return
				}
				mu.Lock()
				written[kv.ModRevision] = key
				mu.Unlock()
			}
		}()
	}
	type started struct {
		w    bolt.Watcher
		from int64
	}
	var watches []started
	for len(watches) < 5 {
		from := s.Revision()
		w, err := s.Watch(ctx(t), "/race/", from)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		watches = append(watches, started{w, from})
		if err := s.WaitForRevision(ctx(t), from+1); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	end := s.Revision()
	for _, st := range watches {
		evs := recv(t, st.w, int(end-st.from))
		for i, ev := range evs {
			if want := st.from + 1 + int64(i); ev.Revision != want {
				t.Fatalf("watch from %d: event %d has revision %d, want %d", st.from, i, ev.Revision, want)
			}
			if ev.KV.Key != written[ev.Revision] {
				t.Fatalf("revision %d is %s, want %s", ev.Revision, ev.KV.Key, written[ev.Revision])
			}
		}
	}
	if len(written) != writers*perWriter {
		t.Fatalf("%d distinct revisions for %d writes", len(written), writers*perWriter)
	}
}

func testWatchStop(t *testing.T, h Harness) {
	s := h.Store
	w, err := s.Watch(ctx(t), "/w/", 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	w.Stop()
	expectClosed(t, w)
	if w.Err() != nil {
		t.Fatalf("Err after Stop: %v", w.Err())
	}

	c, cancel := context.WithCancel(ctx(t))
	w, err = s.Watch(c, "/w/", 0)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	expectClosed(t, w)
	if w.Err() != nil {
		t.Fatalf("Err after context end: %v", w.Err())
	}
	w.Stop()
}

// testWatchSlowConsumer leaves a watcher unread while writes overflow its
// buffer: the watch must end with ErrWatcherTooSlow while writes proceed,
// and a new watch from the last delivered revision resumes without a gap.
func testWatchSlowConsumer(t *testing.T, h Harness) {
	if h.SlowWatcherWrites == 0 {
		t.Skip("backend sets no slow-watcher bound")
	}
	s := h.Store
	base := mustCreate(t, s, "/before", "x").ModRevision // 0 would mean "now"
	slow, err := s.Watch(ctx(t), "/slow/", base)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Stop()
	type collected struct {
		evs []bolt.Event
		err error
	}
	fastDone := make(chan collected, 1)
	go func() {
		evs, err := follow(ctx(t), s, "/slow/", base, h.SlowWatcherWrites)
		fastDone <- collected{evs, err}
	}()
	writeConcurrently(t, s, "/slow/", h.SlowWatcherWrites, 8)

	eventually(t, "slow watcher dropped", func() bool { return slow.Err() != nil })
	wantErr(t, "slow watcher", slow.Err(), bolt.ErrWatcherTooSlow)
	got := expectClosed(t, slow)
	last := base
	for _, ev := range got {
		if ev.Revision != last+1 {
			t.Fatalf("slow watcher: revision %d after %d", ev.Revision, last)
		}
		last = ev.Revision
	}
	fastGot := <-fastDone
	if fastGot.err != nil {
		t.Fatalf("reading watcher: %v", fastGot.err)
	}
	for i, ev := range fastGot.evs {
		if ev.Revision != base+1+int64(i) {
			t.Fatalf("reading watcher: event %d has revision %d", i, ev.Revision)
		}
	}
	// Re-watch from the last revision seen: the rest arrives without a gap.
	again, err := s.Watch(ctx(t), "/slow/", last)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Stop()
	rest := recv(t, again, int(s.Revision()-last))
	if rest[0].Revision != last+1 || rest[len(rest)-1].Revision != s.Revision() {
		t.Fatalf("re-watch from %d got %d..%d", last, rest[0].Revision, rest[len(rest)-1].Revision)
	}
}

// follow reads n events under prefix after from, as a client does: when
// its watch is dropped for falling behind (a loaded machine can starve the
// reader), it re-watches from the last revision it saw. waitTimeout bounds
// the wait for each event, not the whole read: a slow engine (the race
// detector on a loaded machine) delivers thousands of events slowly but
// steadily.
func follow(c context.Context, s bolt.Store, prefix string, from int64, n int) ([]bolt.Event, error) {
	var out []bolt.Event
	timeout := time.NewTimer(waitTimeout)
	defer timeout.Stop()
	for len(out) < n {
		w, err := s.Watch(c, prefix, from)
		if err != nil {
			return out, err
		}
		for len(out) < n {
			var ev bolt.Event
			var ok bool
			select {
			case ev, ok = <-w.Events():
			case <-timeout.C:
				w.Stop()
				return out, fmt.Errorf("timed out after %d of %d events", len(out), n)
			}
			if !ok {
				break
			}
			out = append(out, ev)
			from = ev.Revision
			timeout.Reset(waitTimeout) // Go 1.23+: no stale tick to drain
		}
		w.Stop()
		if err := w.Err(); len(out) < n && !errors.Is(err, bolt.ErrWatcherTooSlow) {
			return out, fmt.Errorf("watch ended after %d of %d events: %v", len(out), n, err)
		}
	}
	return out, nil
}

// writeConcurrently creates n keys under prefix from the given number of
// goroutines and returns the created KVs.
func writeConcurrently(t *testing.T, s bolt.Store, prefix string, n, workers int) []bolt.KV {
	t.Helper()
	out := make([]bolt.KV, n)
	var wg sync.WaitGroup
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += workers {
				kv, err := s.Create(context.Background(), fmt.Sprintf("%sk%06d", prefix, i), []byte(fmt.Sprintf("v%d", i)))
				if err != nil {
					t.Errorf("Create: %v", err)
					return
				}
				out[i] = kv
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return out
}

func testWaitForRevision(t *testing.T, h Harness) {
	s := h.Store
	target := s.Revision() + 2
	done := make(chan error, 1)
	go func() { done <- s.WaitForRevision(ctx(t), target) }()
	mustCreate(t, s, "/wait/a", "a")
	select {
	case err := <-done:
		t.Fatalf("returned before the revision was reached: %v", err)
	default:
	}
	mustCreate(t, s, "/wait/b", "b")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("WaitForRevision did not return")
	}
	if s.Revision() < target {
		t.Fatalf("revision %d < %d", s.Revision(), target)
	}
	c, cancel := context.WithTimeout(ctx(t), time.Millisecond)
	defer cancel()
	wantErr(t, "unreached revision", s.WaitForRevision(c, target+100), context.DeadlineExceeded)
}

// testWatchProgress checks that Progress covers writes outside the
// watched prefix once the watcher has nothing pending, and never passes an
// event the consumer has not been offered.
func testWatchProgress(t *testing.T, h Harness) {
	s := h.Store
	mustCreate(t, s, "/p/a", "v")
	w, err := s.Watch(ctx(t), "/p/", s.Revision())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// Writes elsewhere move the progress of this quiet watch.
	var last bolt.KV
	for i := 0; i < 3; i++ {
		last = mustCreate(t, s, fmt.Sprintf("/q/%d", i), "v")
	}
	waitFor(t, "progress past writes elsewhere", func() bool { return w.Progress() >= last.ModRevision })
	// A matching write: until it is offered on Events, progress stays
	// below it; once it is, progress may reach it.
	mine := mustCreate(t, s, "/p/b", "v")
	if p := w.Progress(); p >= mine.ModRevision {
		select {
		case ev := <-w.Events():
			if ev.Revision != mine.ModRevision {
				t.Fatalf("event %d, want %d", ev.Revision, mine.ModRevision)
			}
		default:
			t.Fatalf("progress %d covers revision %d that was never offered", p, mine.ModRevision)
		}
	} else {
		ev := <-w.Events()
		if ev.Revision != mine.ModRevision {
			t.Fatalf("event %d, want %d", ev.Revision, mine.ModRevision)
		}
	}
	waitFor(t, "progress at the matching write", func() bool { return w.Progress() >= mine.ModRevision })
}

// waitFor polls cond until it holds or the test's deadline nears.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
