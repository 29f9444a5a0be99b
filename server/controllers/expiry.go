package controllers

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"platd/bolt"
)

// expiryRetryDelay is how long a removal the store failed (not a lost
// race) waits before it is tried again: such failures are rare (a lost
// etcd), and a second is short beside any TTL.
const expiryRetryDelay = time.Second

// Clock is the time source of a controller that waits for moments: the
// real one is time's; tests move a fake one by hand.
type Clock interface {
	Now() time.Time
	// After delivers on the channel once d has passed. A channel nobody
	// reads any more is collected with its timer.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Deleter removes a key if its last write is expectedRevision (bolt.Store
// provides it); a key rewritten since fails with bolt.ErrConflict.
type Deleter interface {
	Delete(ctx context.Context, key string, expectedRevision int64) (bolt.KV, error)
}

// Expiry removes the objects under Prefixes one TTL after their last
// write, as upstream stores events with an etcd lease (--event-ttl): a
// watcher sees them deleted. It follows the prefixes' watch, so a write
// costs the writer nothing; it keeps one deadline per key in a min-heap
// and one timer, for the earliest. A removal is conditional on the
// revision it was timed from, so an object rewritten meanwhile stays.
//
// It removes the key from storage directly, as the lease's end does: no
// admission, finalizers or grace period apply.
type Expiry struct {
	Source   Source
	Store    Deleter
	Prefixes []string
	// TTL is how long an object is kept after its last write; it must be
	// positive.
	TTL   time.Duration
	Clock Clock // nil: the real clock
	Log   *slog.Logger

	mu    sync.Mutex
	byKey map[string]*deadline
	due   deadlines
	// armed is when the running timer fires (zero: none); a deadline
	// earlier than it wakes the loop to arm an earlier one.
	armed time.Time
	wake  chan struct{}
}

// deadline is when the object at key, as written at rev, goes.
type deadline struct {
	key   string
	rev   int64
	at    time.Time
	index int // in the heap
}

// deadlines is a min-heap by time (container/heap).
type deadlines []*deadline

func (h deadlines) Len() int           { return len(h) }
func (h deadlines) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h deadlines) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *deadlines) Push(x any) {
	d := x.(*deadline)
	d.index = len(*h)
	*h = append(*h, d)
}
func (h *deadlines) Pop() any {
	old := *h
	d := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return d
}

// init prepares the state Run's goroutines share; under mu, as a caller
// may look at it while Run starts.
func (c *Expiry) init() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	c.byKey = map[string]*deadline{}
	c.wake = make(chan struct{}, 1)
}

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *Expiry) Run(ctx context.Context) {
	c.init()
	var wg sync.WaitGroup
	for _, prefix := range c.Prefixes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			follow(ctx, c.Source, prefix, c.Log, func(kvs []bolt.KV) { c.listed(prefix, kvs) }, c.observe)
		}()
	}
	c.expireLoop(ctx)
	wg.Wait()
}

// listed replaces what is known under prefix with a list: an object
// still at the revision already timed keeps its deadline; any other is
// timed from the last write its stored fields record (storedWriteTime).
func (c *Expiry) listed(prefix string, kvs []bolt.KV) {
	now := c.Clock.Now()
	keep := make(map[string]bool, len(kvs))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, kv := range kvs {
		keep[kv.Key] = true
		if d, ok := c.byKey[kv.Key]; ok && d.rev == kv.ModRevision {
			continue
		}
		c.setLocked(kv.Key, kv.ModRevision, storedWriteTime(kv.Value, now).Add(c.TTL))
	}
	for key := range c.byKey {
		if len(key) >= len(prefix) && key[:len(prefix)] == prefix && !keep[key] {
			c.forgetLocked(key)
		}
	}
}

// observe times an object from a write the watch delivers: its deadline
// is one TTL from now.
func (c *Expiry) observe(ev bolt.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.Type == bolt.Delete {
		c.forgetLocked(ev.KV.Key)
		return
	}
	c.setLocked(ev.KV.Key, ev.KV.ModRevision, c.Clock.Now().Add(c.TTL))
}

func (c *Expiry) setLocked(key string, rev int64, at time.Time) {
	if d, ok := c.byKey[key]; ok {
		d.rev, d.at = rev, at
		heap.Fix(&c.due, d.index)
	} else {
		d := &deadline{key: key, rev: rev, at: at}
		c.byKey[key] = d
		heap.Push(&c.due, d)
	}
	// Only a deadline before the armed timer needs the loop: a later one
	// is found when the timer fires.
	if c.armed.IsZero() || at.Before(c.armed) {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

func (c *Expiry) forgetLocked(key string) {
	if d, ok := c.byKey[key]; ok {
		heap.Remove(&c.due, d.index)
		delete(c.byKey, key)
	}
}

// takeDue removes and returns the deadlines that have passed, and arms
// the time of the next one (zero when none waits).
func (c *Expiry) takeDue() (due []deadline, next time.Time) {
	now := c.Clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.due) > 0 && !c.due[0].at.After(now) {
		d := heap.Pop(&c.due).(*deadline)
		delete(c.byKey, d.key)
		due = append(due, *d)
	}
	if len(c.due) > 0 {
		next = c.due[0].at
	}
	c.armed = next
	return due, next
}

// expireLoop removes what is due, then waits for the next deadline or an
// earlier one, until ctx ends.
func (c *Expiry) expireLoop(ctx context.Context) {
	for {
		due, next := c.takeDue()
		c.remove(ctx, due)
		var fire <-chan time.Time
		if !next.IsZero() {
			fire = c.Clock.After(next.Sub(c.Clock.Now()))
		}
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-fire:
		}
	}
}

// remove deletes each due object unless it was rewritten or deleted
// since its deadline was set; a removal the store failed is timed again.
func (c *Expiry) remove(ctx context.Context, due []deadline) {
	for _, d := range due {
		if ctx.Err() != nil {
			return
		}
		_, err := c.Store.Delete(ctx, d.key, d.rev)
		switch {
		case err == nil:
			c.Log.Debug("object expired; removed", "key", d.key)
		case errors.Is(err, bolt.ErrConflict), errors.Is(err, bolt.ErrNotFound):
			// Rewritten (the watch times it again) or gone already.
		default:
			c.Log.Warn("removing an expired object failed; retrying", "key", d.key, "err", err)
			c.mu.Lock()
			if _, ok := c.byKey[d.key]; !ok {
				c.setLocked(d.key, d.rev, c.Clock.Now().Add(expiryRetryDelay))
			}
			c.mu.Unlock()
		}
	}
}

// storedTimes are the members of a stored event that record when it was
// written.
type storedTimes struct {
	Metadata struct {
		CreationTimestamp string `json:"creationTimestamp"`
		ManagedFields     []struct {
			Time string `json:"time"`
		} `json:"managedFields"`
	} `json:"metadata"`
	LastTimestamp string `json:"lastTimestamp"`
	EventTime     string `json:"eventTime"`
	Series        struct {
		LastObservedTime string `json:"lastObservedTime"`
	} `json:"series"`
}

// storedWriteTime is the best guess at when a listed object was last
// written, since storage keeps no time per revision: the latest of its
// creationTimestamp, its managedFields times (each write that changes a
// manager's fields stamps its entry), and an event's lastTimestamp,
// eventTime and series.lastObservedTime (which its reporter sets on
// each write of a repeated event). The latter are the client's clock: a
// time past now counts as now, so that a skewed clock cannot keep an
// object longer than one TTL from the list. An object that records no
// time counts as written now.
func storedWriteTime(value []byte, now time.Time) time.Time {
	var s storedTimes
	if err := json.Unmarshal(value, &s); err != nil {
		return now
	}
	var latest time.Time
	consider := func(v string) {
		if v == "" {
			return
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err == nil && t.After(latest) {
			latest = t
		}
	}
	consider(s.Metadata.CreationTimestamp)
	for _, m := range s.Metadata.ManagedFields {
		consider(m.Time)
	}
	consider(s.LastTimestamp)
	consider(s.EventTime)
	consider(s.Series.LastObservedTime)
	if latest.IsZero() || latest.After(now) {
		return now
	}
	return latest
}
