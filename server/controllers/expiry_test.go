package controllers

import (
	"context"
	"sync"
	"testing"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

// fakeClock is a Clock that moves only when the test advances it.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- f.now
		return ch
	}
	f.waiters = append(f.waiters, fakeWaiter{at: f.now.Add(d), ch: ch})
	return ch
}

func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if w.at.After(f.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- f.now
	}
	f.waiters = kept
}

// timedAt reports whether c has a deadline for key from revision rev.
func (c *Expiry) timedAt(key string, rev int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.byKey[key]
	return ok && d.rev == rev
}

func TestEventExpiry(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	ed := e.lookup(t, "", "v1", "events")
	e.createNamespace(t, "ns")
	clock := &fakeClock{now: time.Now()}
	const ttl = time.Hour
	event := func(name, message string) int64 {
		t.Helper()
		obj := registry.Object{
			"metadata":       map[string]any{"name": name, "namespace": "ns"},
			"involvedObject": map[string]any{"kind": "Pod", "name": "p", "namespace": "ns"},
			"reason":         "Tested", "message": message, "type": "Normal",
		}
		_, err := e.api.Create(ctx, ed, obj)
		if apierr.ReasonOf(err) == apierr.ReasonAlreadyExists {
			_, err = e.api.Update(ctx, ed, "ns", name, "", func(old registry.Object) registry.Object {
				old["message"] = message
				return old
			})
		}
		if err != nil {
			t.Fatal(err)
		}
		kv, err := e.store.Get(ed.Key("ns", name))
		if err != nil {
			t.Fatal(err)
		}
		return kv.ModRevision
	}
	present := func(name string) bool {
		_, err := e.api.Get(ed, "ns", name)
		if err != nil && apierr.ReasonOf(err) != apierr.ReasonNotFound {
			t.Fatal(err)
		}
		return err == nil
	}
	gone := func(name string) func() bool { return func() bool { return !present(name) } }

	// Present at start: timed from its stored time, not from the start.
	oldRev := event("old", "before the start")
	clock.Advance(50 * time.Minute)
	c := &Expiry{Source: e.store, Store: e.store, Prefixes: []string{ed.ResourcePrefix()}, TTL: ttl, Clock: clock, Log: e.log}
	e.run(t, c.Run)
	waitFor(t, "the listed event to be timed", func() bool { return c.timedAt(ed.Key("ns", "old"), oldRev) })

	// Written while it runs: timed from the write.
	early := event("early", "first")
	rewritten := event("rewritten", "first")
	waitFor(t, "new events to be timed", func() bool {
		return c.timedAt(ed.Key("ns", "early"), early) && c.timedAt(ed.Key("ns", "rewritten"), rewritten)
	})
	clock.Advance(9 * time.Minute) // 59m: nothing is due
	if !present("old") || !present("early") {
		t.Fatal("an event went before its TTL ran out")
	}
	clock.Advance(2 * time.Minute) // 61m: the listed event's hour is over
	waitFor(t, "the listed event to expire", gone("old"))
	if !present("early") {
		t.Fatal("an event written after the start went with the one listed")
	}

	// A rewrite restarts the TTL.
	clock.Advance(20 * time.Minute) // 81m: 31m after the writes
	again := event("rewritten", "second")
	waitFor(t, "the rewrite to be timed", func() bool { return c.timedAt(ed.Key("ns", "rewritten"), again) })
	clock.Advance(30 * time.Minute) // 111m: 61m after the first writes
	waitFor(t, "the event to expire an hour after its write", gone("early"))
	if !present("rewritten") {
		t.Fatal("a rewritten event went an hour after its first write")
	}
	clock.Advance(31 * time.Minute) // 142m: 61m after the rewrite
	waitFor(t, "the rewritten event to expire an hour after the rewrite", gone("rewritten"))
}

// A removal is conditional on the revision it was timed from: an event
// rewritten between its timing and its removal stays.
func TestEventExpiryKeepsRewritten(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	ed := e.lookup(t, "", "v1", "events")
	e.createNamespace(t, "ns")
	obj := registry.Object{
		"metadata":       map[string]any{"name": "ev", "namespace": "ns"},
		"involvedObject": map[string]any{"kind": "Pod", "name": "p", "namespace": "ns"},
		"reason":         "Tested", "message": "first", "type": "Normal",
	}
	if _, err := e.api.Create(ctx, ed, obj); err != nil {
		t.Fatal(err)
	}
	key := ed.Key("ns", "ev")
	first, err := e.store.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Now()}
	c := &Expiry{Store: e.store, TTL: time.Minute, Clock: clock, Log: e.log}
	c.init()
	c.observe(bolt.Event{Type: bolt.Put, KV: first})
	if _, err := e.api.Update(ctx, ed, "ns", "ev", "", func(o registry.Object) registry.Object {
		o["message"] = "second"
		return o
	}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	due, _ := c.takeDue()
	if len(due) != 1 || due[0].key != key || due[0].rev != first.ModRevision {
		t.Fatalf("due %+v, want %s at %d", due, key, first.ModRevision)
	}
	c.remove(ctx, due)
	got, err := e.api.Get(ed, "ns", "ev")
	if err != nil || got["message"] != "second" {
		t.Fatalf("after the removal of a stale revision: %v, %v", got, err)
	}
}

func TestStoredWriteTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, value string
		want        time.Time
	}{
		{"created", `{"metadata":{"creationTimestamp":"2024-05-01T10:00:00Z"}}`, now.Add(-2 * time.Hour)},
		{"latest managed field", `{"metadata":{"creationTimestamp":"2024-05-01T10:00:00Z","managedFields":[{"time":"2024-05-01T11:00:00Z"},{"time":"2024-05-01T10:30:00Z"}]}}`, now.Add(-time.Hour)},
		{"last seen", `{"metadata":{"creationTimestamp":"2024-05-01T10:00:00Z"},"lastTimestamp":"2024-05-01T11:30:00Z"}`, now.Add(-30 * time.Minute)},
		{"event time", `{"metadata":{"creationTimestamp":"2024-05-01T10:00:00Z"},"eventTime":"2024-05-01T11:40:00.000001Z"}`, now.Add(-20*time.Minute + time.Microsecond)},
		{"series", `{"metadata":{"creationTimestamp":"2024-05-01T10:00:00Z"},"series":{"count":2,"lastObservedTime":"2024-05-01T11:50:00.000000Z"}}`, now.Add(-10 * time.Minute)},
		{"future counts as now", `{"metadata":{"creationTimestamp":"2024-05-01T10:00:00Z"},"lastTimestamp":"2024-05-02T00:00:00Z"}`, now},
		{"no time", `{"metadata":{}}`, now},
		{"not JSON", `garbage`, now},
	} {
		if got := storedWriteTime([]byte(tc.value), now); !got.Equal(tc.want) {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
