package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/bolt"
)

// watcher is one open watch: the mirror (or a catch-up from etcd) queues
// its events, its goroutine moves them to out.
type watcher struct {
	db     *DB
	prefix string
	// from: only events after it are queued.
	from int64
	// epoch is the mirror's relist count when the watch began.
	epoch int64
	out   chan bolt.Event
	done  chan struct{}
	once  sync.Once

	mu      sync.Mutex
	queue   []bolt.Event
	wake    chan struct{}
	sending bool
	sent    int64 // revision of the last event handed to out
	seen    int64 // the mirror's revision when the queue was last filled
	live    bool  // registered with the mirror (the replay is done)
	err     error
}

// Watch implements bolt.Store. A watch from a revision the in-memory
// history covers replays it and follows the mirror; an older one (not
// compacted) replays etcd's history with a watch of its own first.
func (db *DB) Watch(ctx context.Context, prefix string, from int64) (bolt.Watcher, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &watcher{db: db, prefix: prefix, out: make(chan bolt.Event, watchChan),
		done: make(chan struct{}), wake: make(chan struct{}, 1)}
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil, bolt.ErrClosed
	}
	if from == 0 {
		from = db.rev
	}
	if from < db.compacted {
		c := db.compacted
		db.mu.Unlock()
		return nil, fmt.Errorf("%w: watch from %d, compacted %d", bolt.ErrCompacted, from, c)
	}
	w.from, w.epoch = from, db.epoch
	// The goroutines are added under mu while open, so that Close's
	// wg.Wait counts them.
	if from >= db.rev || from >= db.ringBase {
		db.wg.Add(1)
		db.register(w)
		db.mu.Unlock()
	} else {
		db.wg.Add(2)
		db.mu.Unlock()
		go db.catchUp(ctx, w)
	}
	go w.run(ctx)
	return w, nil
}

// register replays the ring after w.from and adds w to the mirror's
// watchers; mu held for writing.
func (db *DB) register(w *watcher) {
	if w.epoch != db.epoch {
		w.fail(fmt.Errorf("%w: the mirror of %s relisted during the watch's replay", bolt.ErrCompacted, db.prefix))
		return
	}
	w.mu.Lock()
	if w.err != nil { // stopped during its replay
		w.mu.Unlock()
		return
	}
	for i := range db.ring {
		if ev := &db.ring[i].ev; ev.Revision > w.from && strings.HasPrefix(ev.KV.Key, w.prefix) {
			w.queue = append(w.queue, *ev)
		}
	}
	w.live = true
	w.seen = db.rev
	w.mu.Unlock()
	w.signal()
	db.watchers[w] = struct{}{}
}

// errReplayEnded: a replay ended because its watcher did (stopped, its
// ctx ended, or dropped as too slow) or the DB closed.
var errReplayEnded = errors.New("etcd: replay ended")

// catchUp replays etcd's history after w.from up to the mirror's revision
// when it started, then hands w to the mirror. Revision is the revision
// of an event under the prefix (or where the mirror started: replay stops
// at the first event past it), so the replay knows when it is done.
func (db *DB) catchUp(ctx context.Context, w *watcher) {
	defer db.wg.Done()
	for {
		db.mu.RLock()
		target := db.rev
		db.mu.RUnlock()
		if err := db.replay(ctx, w, target); err != nil {
			if err == errReplayEnded {
				// Ended by its caller or by Close, it stops as Close
				// stops the registered ones; dropped, it has failed.
				if ctx.Err() != nil || db.ctx.Err() != nil {
					w.Stop()
				}
				return
			}
			w.fail(err)
			return
		}
		select {
		case <-w.done:
			return
		default:
		}
		db.mu.Lock()
		if db.closed {
			db.mu.Unlock()
			w.Stop()
			return
		}
		if w.from >= db.ringBase {
			db.register(w)
			db.mu.Unlock()
			return
		}
		db.mu.Unlock() // the ring moved on meanwhile: replay more
	}
}

// replay queues the events under the prefix in (w.from, target] from an
// etcd watch. It returns errReplayEnded when the watcher or the DB ends
// first.
func (db *DB) replay(ctx context.Context, w *watcher, target int64) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(db.ctx, cancel)
	defer stop()
	go func() {
		select {
		case <-w.done:
			cancel()
		case <-cctx.Done():
		}
	}()
	wch := db.catchW.Watch(cctx, db.prefix+"/", clientv3.WithPrefix(), clientv3.WithRev(w.from+1), clientv3.WithPrevKV())
	for w.from < target {
		resp, ok := <-wch
		if !ok {
			if cctx.Err() != nil {
				return errReplayEnded
			}
			return fmt.Errorf("%w: replay watch ended", bolt.ErrIO)
		}
		if err := resp.Err(); err != nil {
			if cctx.Err() != nil {
				return errReplayEnded
			}
			if resp.CompactRevision != 0 || errors.Is(err, rpctypes.ErrCompacted) {
				return fmt.Errorf("%w: watch from %d: %v", bolt.ErrCompacted, w.from, err)
			}
			return fmt.Errorf("%w: replay watch: %v", bolt.ErrIO, err)
		}
		for _, ev := range resp.Events {
			rev := ev.Kv.ModRevision
			if rev > target {
				// target is not an event under the prefix (the mirror
				// started at etcd's revision): nothing lies between.
				w.from = target
				return nil
			}
			key := string(ev.Kv.Key[len(db.prefix):])
			if key != compactKey && strings.HasPrefix(key, w.prefix) {
				if !w.push(db.convert(key, ev)) {
					return errReplayEnded
				}
			}
			w.from = rev
		}
	}
	return nil
}

// convert makes a bolt event of an etcd event read outside the mirror.
func (db *DB) convert(key string, ev *clientv3.Event) bolt.Event {
	rev := ev.Kv.ModRevision
	var prev *bolt.KV
	if p := ev.PrevKv; p != nil {
		prev = db.prevKV(key, p.CreateRevision, p.ModRevision, p.Value)
	}
	if ev.Type == clientv3.EventTypeDelete {
		kv := bolt.KV{Key: key, ModRevision: rev}
		if prev != nil {
			kv.CreateRevision = prev.CreateRevision
			kv.Value, _ = db.opts.Stamp(prev.Value, rev)
		}
		return bolt.Event{Type: bolt.Delete, Revision: rev, KV: kv, Prev: prev}
	}
	e := db.decode(key, ev.Kv)
	if ev.IsCreate() {
		prev = nil
	}
	return bolt.Event{Type: bolt.Put, Revision: rev, KV: e.kv, Prev: prev}
}

// offer queues ev if w wants it; called by the mirror under db.mu.
func (w *watcher) offer(ev *bolt.Event) {
	if ev.Revision <= w.from || !strings.HasPrefix(ev.KV.Key, w.prefix) {
		return
	}
	w.push(*ev)
}

// push queues ev, or drops the watcher when its queue is full. It reports
// whether the watcher is still open.
func (w *watcher) push(ev bolt.Event) bool {
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return false
	}
	if len(w.queue) >= watchBuffer {
		w.mu.Unlock()
		w.fail(bolt.ErrWatcherTooSlow)
		return false
	}
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	w.signal()
	return true
}

// advance records the mirror's revision for Progress; under db.mu.
func (w *watcher) advance(rev int64) {
	w.mu.Lock()
	w.seen = rev
	w.mu.Unlock()
}

func (w *watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// run moves queued events to out until the watch ends.
func (w *watcher) run(ctx context.Context) {
	defer w.db.wg.Done()
	defer close(w.out)
	defer w.unregister()
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			w.mu.Unlock()
			select {
			case <-w.wake:
				continue
			case <-w.done:
				return
			case <-ctx.Done():
				w.Stop()
				return
			}
		}
		ev := w.queue[0]
		w.queue[0] = bolt.Event{}
		w.queue = w.queue[1:]
		if len(w.queue) == 0 {
			w.queue = nil
		}
		w.sending = true
		w.mu.Unlock()
		select {
		case w.out <- ev:
			w.mu.Lock()
			w.sent, w.sending = ev.Revision, false
			w.mu.Unlock()
		case <-w.done:
			return
		case <-ctx.Done():
			w.Stop()
			return
		}
	}
}

func (w *watcher) unregister() {
	w.db.mu.Lock()
	delete(w.db.watchers, w)
	w.db.mu.Unlock()
}

// fail ends the watch with err.
func (w *watcher) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
	w.once.Do(func() { close(w.done) })
}

// Events implements bolt.Watcher.
func (w *watcher) Events() <-chan bolt.Event { return w.out }

// Err implements bolt.Watcher.
func (w *watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == errStopped {
		return nil
	}
	return w.err
}

// errStopped marks a watch ended by Stop or its context.
var errStopped = errors.New("etcd: watch stopped")

// Stop implements bolt.Watcher.
func (w *watcher) Stop() { w.fail(errStopped) }

// Progress implements bolt.Watcher: with nothing queued, the mirror's
// revision; otherwise the last event handed to Events.
func (w *watcher) Progress() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.live || w.err != nil {
		// An ended watch covers nothing: an event it refused may lie
		// below what the mirror has seen.
		return 0
	}
	if len(w.queue) == 0 && !w.sending {
		return max(w.seen, w.sent)
	}
	return w.sent
}
