// Package controllers holds the server's in-process controllers. Each is
// driven by the store's watch, never by polling, and changes objects only
// through the same rules as the API (the Objects interface).
package controllers

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"platd/bolt"
	"platd/server/registry"
)

// Objects is the in-process API the controllers change objects through:
// the rules of the HTTP verbs, addressed by descriptor (rest.Handler).
// Errors are Status errors.
type Objects interface {
	Get(d *registry.Descriptor, ns, name string) (registry.Object, error)
	List(d *registry.Descriptor, ns string) ([]registry.Object, int64, error)
	Create(ctx context.Context, d *registry.Descriptor, obj registry.Object) (registry.Object, error)
	// CreateOnly is Create for a caller that has no use for the created
	// object, which then is not decoded back.
	CreateOnly(ctx context.Context, d *registry.Descriptor, obj registry.Object) error
	Update(ctx context.Context, d *registry.Descriptor, ns, name, sub string, change func(old registry.Object) registry.Object) (registry.Object, error)
	Delete(ctx context.Context, d *registry.Descriptor, ns, name string, opts registry.DeleteOptions) (gone bool, err error)
}

// Source is the store's change feed: a list, then a watch from its
// revision (bolt.Store provides it).
type Source interface {
	List(prefix string, opts bolt.ListOptions) (bolt.ListResult, error)
	Watch(ctx context.Context, prefix string, fromRevision int64) (bolt.Watcher, error)
}

// restartDelay is how long a controller waits before listing again after
// its watch ended with an error other than falling behind (the history it
// needed was compacted, say). Such ends are rare; when the store keeps
// failing (a lost etcd) the wait doubles up to maxRestartDelay, so that
// every controller does not list each second, and falls back to
// restartDelay once a watch delivers again.
const (
	restartDelay    = time.Second
	maxRestartDelay = 30 * time.Second
)

// follow lists the keys under prefix, hands them to initial, then hands
// every later event to event, until ctx ends. A watch that fell behind
// resumes after the last event handed on, from the history; any other
// failure starts over from a fresh list.
func follow(ctx context.Context, src Source, prefix string, log *slog.Logger, initial func([]bolt.KV), event func(bolt.Event)) {
	followWith(ctx, src, prefix, bolt.ListOptions{}, 0, log, initial, event)
}

// followFrom is follow for a controller that listed already: it watches
// from revision from, and lists again (handing the list to initial) only
// after a failure it cannot resume from.
func followFrom(ctx context.Context, src Source, prefix string, from int64, log *slog.Logger, initial func([]bolt.KV), event func(bolt.Event)) {
	followWith(ctx, src, prefix, bolt.ListOptions{}, from, log, initial, event)
}

// followChanges hands only the events after the start to event: for
// controllers that learn the initial state elsewhere. The list that sets
// the watch's start keeps no objects. started runs each time the watch
// starts from a list, before any event: first is false when it starts over
// after a failure, when events may have been missed.
func followChanges(ctx context.Context, src Source, prefix string, log *slog.Logger, started func(first bool), event func(bolt.Event)) {
	none := bolt.ListOptions{Filter: func(*bolt.KV) bool { return false }}
	first := true
	followWith(ctx, src, prefix, none, 0, log, func([]bolt.KV) {
		started(first)
		first = false
	}, event)
}

func followWith(ctx context.Context, src Source, prefix string, opts bolt.ListOptions, from int64, log *slog.Logger, initial func([]bolt.KV), event func(bolt.Event)) {
	rev := from // the last revision handed on; 0 lists first
	delay := restartDelay
	handed := false
	counted := func(ev bolt.Event) {
		handed = true
		event(ev)
	}
	for ctx.Err() == nil {
		var err error
		handed = false
		rev, err = followOnce(ctx, src, prefix, opts, rev, func(kvs []bolt.KV, _ int64) { initial(kvs) }, counted)
		if err == nil || ctx.Err() != nil {
			return
		}
		if rev > 0 && errors.Is(err, bolt.ErrWatcherTooSlow) {
			log.Warn("controller watch resuming", "prefix", prefix, "revision", rev)
			continue
		}
		if handed {
			delay = restartDelay
		}
		rev = 0
		log.Warn("controller watch restarting", "prefix", prefix, "err", err, "after", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, maxRestartDelay)
	}
}

// followOnce watches from revision from, or lists first when from is 0.
// It returns the last revision handed on.
func followOnce(ctx context.Context, src Source, prefix string, opts bolt.ListOptions, from int64, initial func([]bolt.KV, int64), event func(bolt.Event)) (int64, error) {
	var w bolt.Watcher
	if from == 0 {
		// Not List then Watch(res.Revision): an empty store lists at 0,
		// which Watch reads as "from now" (see bolt.ListWatch).
		res, lw, err := bolt.ListWatch(ctx, src, prefix, opts)
		if err != nil {
			return 0, err
		}
		w, from = lw, res.Revision
		initial(res.Items, res.Revision)
	} else {
		var err error
		if w, err = src.Watch(ctx, prefix, from); err != nil {
			return from, err
		}
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return from, nil
		case ev, ok := <-w.Events():
			if !ok {
				if err := w.Err(); err != nil {
					return from, err
				}
				return from, errors.New("watch closed")
			}
			event(ev)
			from = ev.Revision
		}
	}
}

// queue is a set of keys waiting to be worked on: a key added while it
// waits is not added twice. It is safe for concurrent use.
type queue struct {
	mu      sync.Mutex
	pending []string
	queued  map[string]bool
	wake    chan struct{}
}

func newQueue() *queue {
	return &queue{queued: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// add queues key unless it is already waiting.
func (q *queue) add(key string) {
	q.mu.Lock()
	if !q.queued[key] {
		q.queued[key] = true
		q.pending = append(q.pending, key)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take removes and returns the oldest key, or "" when none waits.
func (q *queue) take() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 {
		return "", false
	}
	key := q.pending[0]
	q.pending = q.pending[1:]
	delete(q.queued, key)
	return key, true
}

// work hands queued keys to fn one at a time until ctx ends; a key whose
// fn fails is queued again after retry.
func (q *queue) work(ctx context.Context, log *slog.Logger, retry time.Duration, fn func(ctx context.Context, key string) error) {
	for {
		key, ok := q.take()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-q.wake:
				continue
			}
		}
		if err := fn(ctx, key); err != nil && ctx.Err() == nil {
			log.Warn("controller sync failed; retrying", "key", key, "err", err)
			time.AfterFunc(retry, func() {
				if ctx.Err() == nil {
					q.add(key)
				}
			})
		}
	}
}

// workWhile runs q's worker (fn, a failure retried after retry) beside
// feed, which follows the store and fills q until ctx ends. It returns once
// both have stopped, so that a controller's Run leaves no goroutine behind.
func (q *queue) workWhile(ctx context.Context, log *slog.Logger, retry time.Duration, fn func(context.Context, string) error, feed func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		q.work(ctx, log, retry, fn)
	}()
	feed()
	wg.Wait()
}

// asPuts hands each object of a full list to observe as a Put event, for a
// controller that treats the objects it starts with as changes.
func asPuts(observe func(bolt.Event)) func([]bolt.KV) {
	return func(kvs []bolt.KV) {
		for _, kv := range kvs {
			observe(bolt.Event{Type: bolt.Put, KV: kv})
		}
	}
}

// expiryTimers holds one timer per key whose object is due later (an
// expiry, the end of a grace period); a timer hands its key back to the
// queue when it fires.
type expiryTimers struct {
	mu     sync.Mutex
	timers map[string]*time.Timer
	fire   func(name string)
}

// newExpiryTimers returns an empty set whose timers hand their key to
// fire.
func newExpiryTimers(fire func(name string)) *expiryTimers {
	return &expiryTimers{timers: map[string]*time.Timer{}, fire: fire}
}

// schedule (re)sets name's timer to fire after d.
func (t *expiryTimers) schedule(name string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.timers[name]; old != nil {
		old.Stop()
	}
	t.timers[name] = time.AfterFunc(d, func() { t.fire(name) })
}

// scheduleAt (re)sets name's timer to fire at the given time; the zero
// time cancels it.
func (t *expiryTimers) scheduleAt(name string, at time.Time) {
	if at.IsZero() {
		t.cancel(name)
		return
	}
	t.schedule(name, time.Until(at))
}

func (t *expiryTimers) cancel(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.timers[name]; old != nil {
		old.Stop()
		delete(t.timers, name)
	}
}

func (t *expiryTimers) stopAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for name, tm := range t.timers {
		tm.Stop()
		delete(t.timers, name)
	}
}

// waitClosed waits until ch is closed, at once for a nil ch; false when ctx
// ends first. Controllers whose writes are no part of a start wait so for
// the start's end.
func waitClosed(ctx context.Context, ch <-chan struct{}) bool {
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}
