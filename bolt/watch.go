package bolt

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
)

const (
	// watchBuffer is how many live events may wait for one watcher beyond
	// the batch it is delivering. A healthy consumer drains a commit batch
	// in microseconds; a thousand events is seconds of burst at the write
	// rates this engine sees, so only a stuck or far slower client hits it.
	watchBuffer = 1000

	// watchBufferBytes bounds the values those events may hold (counted
	// in full, though they are shared with the history, the index and other
	// watchers: a watcher keeps them alive after both moved on). A thousand
	// 1 MiB objects would otherwise pin a gigabyte per stalled client;
	// 32 MiB is seconds of transfer at the speed of a client that keeps up.
	// A delivery to an empty queue is always taken, so an object larger
	// than the bound can still be watched.
	watchBufferBytes = 32 << 20

	// watchOutBuffer is the capacity of the channel handed to the consumer:
	// a little slack so the forwarding goroutine and the consumer do not
	// hand off one event at a time.
	watchOutBuffer = 16
)

// Slow-consumer policy: the committer never waits for a watcher. Each
// watcher gets a queue bounded in events and in bytes; a commit that would
// overflow it ends that watcher instead (Events is closed, Err reports
// ErrWatcherTooSlow). Writers and every other watcher keep their pace, and
// the dropped client re-watches from the last revision it saw, which the
// history replays without a gap as long as it is retained (otherwise it
// gets ErrCompacted and re-lists).
// Blocking the committer would let one stalled client stop all writes;
// dropping events silently would break the no-gap guarantee.

// watcher is one open watch. The committer appends to queue under mu; the
// watcher's own goroutine forwards the replay and then the queue to out.
type watcher struct {
	db     *DB
	ctx    context.Context
	prefix string
	from   int64       // deliver only revisions above this
	replay []histEvent // history snapshot, read only by run

	out    chan Event
	signal chan struct{} // capacity 1: queue has new events
	stop   chan struct{} // closed by end
	exited chan struct{} // closed when run returns

	mu       sync.Mutex
	queue    []Event
	qbytes   int64 // eventBytes of queue
	err      error
	ended    bool
	stopOnce sync.Once
	// seen is the newest revision published while the watch was open,
	// whether or not it matched the prefix.
	seen int64
	// sent is a revision up to which every matching event is in out.
	sent int64
	// busy is set while run forwards a batch taken from queue.
	busy bool
	// replayed is set once the history replay is in out.
	replayed bool
	// start is the revision current when the watch opened: the replay
	// covers everything up to it, and, being the end of a commit, it never
	// falls inside a transaction.
	start int64
}

// Watch implements Store. fromRevision 0 starts after the current revision;
// a fromRevision above the current revision delivers events once they pass
// it; one below CompactedRevision is ErrCompacted. The returned watcher's
// goroutine runs until Stop, ctx end, a too-slow consumer or Close.
func (db *DB) Watch(ctx context.Context, prefix string, fromRevision int64) (Watcher, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	if fromRevision < 0 {
		return nil, fmt.Errorf("%w: revision %d", ErrInvalid, fromRevision)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &watcher{
		db:     db,
		ctx:    ctx,
		prefix: prefix,
		out:    make(chan Event, watchOutBuffer),
		signal: make(chan struct{}, 1),
		stop:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	db.mu.Lock()
	if db.watchOff {
		db.mu.Unlock()
		return nil, ErrClosed
	}
	cur, comp := db.rev.Load(), db.compacted.Load()
	if fromRevision == 0 {
		fromRevision = cur
	}
	if fromRevision < comp {
		db.mu.Unlock()
		return nil, fmt.Errorf("%w: watch from %d, compacted at %d", ErrCompacted, fromRevision, comp)
	}
	w.from = fromRevision
	w.start = cur
	w.seen = max(cur, fromRevision)
	i := sort.Search(len(db.hist), func(i int) bool { return db.hist[i].Revision > fromRevision })
	w.replay = db.hist[i:len(db.hist):len(db.hist)]
	db.watchers[w] = struct{}{}
	db.wg.Add(1) // under mu, so Close's Wait cannot start before it
	db.live.Add(1)
	db.mu.Unlock()
	// Logged before the watcher runs: run drops its replay.
	if db.log.Enabled(ctx, slog.LevelDebug) {
		db.log.Debug("watch start", "prefix", prefix, "from", fromRevision, "replay", len(w.replay))
	}
	go func() {
		defer db.wg.Done()
		defer db.live.Add(-1)
		w.run()
	}()
	return w, nil
}

// Events implements Watcher.
func (w *watcher) Events() <-chan Event { return w.out }

// Progress implements Watcher: with nothing queued or being forwarded,
// every revision published so far is covered. An ended watch covers
// nothing: its queue, and the revisions in it, may have been dropped.
func (w *watcher) Progress() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.replayed || w.ended {
		return 0
	}
	if !w.busy && len(w.queue) == 0 {
		return w.seen
	}
	return w.sent
}

// Err implements Watcher.
func (w *watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stop implements Watcher. It returns after the watcher's goroutine exited.
func (w *watcher) Stop() {
	w.end(nil)
	<-w.exited
}

// end records why the watch ends and tells run to stop; the first reason
// wins.
func (w *watcher) end(err error) {
	w.stopOnce.Do(func() {
		w.mu.Lock()
		w.err = err
		w.ended = true
		w.queue, w.qbytes = nil, 0
		w.mu.Unlock()
		close(w.stop)
	})
}

// deliver queues the events under the watcher's prefix. It is called by
// the committer with db.mu held and never blocks. It returns false when the
// watcher is finished (already ended, or ended now for overflowing its
// queue) and should be dropped from the DB.
func (w *watcher) deliver(events []Event) bool {
	w.mu.Lock()
	if w.ended {
		w.mu.Unlock()
		return false
	}
	n, size := 0, int64(0)
	for i := range events {
		if strings.HasPrefix(events[i].KV.Key, w.prefix) {
			n++
			size += eventBytes(&events[i])
		}
	}
	if n > 0 && (len(w.queue)+n > watchBuffer || (len(w.queue) > 0 && w.qbytes+size > w.db.watchBytes)) {
		w.mu.Unlock()
		w.end(ErrWatcherTooSlow)
		w.db.log.Warn("watch dropped", "prefix", w.prefix, "reason", ErrWatcherTooSlow)
		return false
	}
	// Only events the watcher keeps count as seen.
	if len(events) > 0 {
		w.seen = max(w.seen, events[len(events)-1].Revision)
	}
	if n == 0 {
		w.mu.Unlock()
		return true
	}
	for i := range events {
		if strings.HasPrefix(events[i].KV.Key, w.prefix) {
			w.queue = append(w.queue, events[i])
		}
	}
	w.qbytes += size
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
	return true
}

// run forwards the replay, then live events, to out; it owns out and
// closes it on exit.
func (w *watcher) run() {
	defer func() {
		w.db.mu.Lock()
		delete(w.db.watchers, w)
		w.db.mu.Unlock()
		close(w.out)
		close(w.exited)
	}()
	for i := range w.replay {
		if strings.HasPrefix(w.replay[i].KV.Key, w.prefix) && !w.send(w.replay[i].Event) {
			return
		}
	}
	w.replay = nil
	// The replay held everything up to the revision current at Watch. With
	// live events queued, progress stays there rather than just before the
	// first of them, which may be inside a transaction.
	w.mu.Lock()
	if len(w.queue) == 0 {
		w.sent = w.seen
	} else {
		w.sent = max(w.from, w.start)
	}
	w.replayed = true
	w.mu.Unlock()
	var spare []Event
	for {
		select {
		case <-w.signal:
		case <-w.stop:
			return
		case <-w.ctx.Done():
			w.end(nil)
			return
		}
		w.mu.Lock()
		batch := w.queue
		w.queue, w.qbytes = spare[:0], 0
		upTo := w.seen
		w.busy = len(batch) > 0
		w.mu.Unlock()
		for i := range batch {
			if !w.send(batch[i]) {
				return
			}
		}
		w.mu.Lock()
		w.busy = false
		w.sent = max(w.sent, upTo)
		w.mu.Unlock()
		clear(batch)
		spare = batch
	}
}

// send hands ev to the consumer unless the watch ends first.
func (w *watcher) send(ev Event) bool {
	if ev.Revision <= w.from {
		return true
	}
	select {
	case w.out <- ev:
		return true
	case <-w.stop:
		return false
	case <-w.ctx.Done():
		w.end(nil)
		return false
	}
}

// eventBytes is the size of the values ev holds, for watchBufferBytes.
func eventBytes(ev *Event) int64 {
	n := int64(cap(ev.KV.Value))
	if ev.Prev != nil {
		n += int64(cap(ev.Prev.Value))
	}
	return n
}
