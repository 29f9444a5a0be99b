package bolt

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// maxBatchOps caps the operations applied in one bbolt transaction. Every
// waiting operation shares one fsync; the cap only bounds the size of a
// single transaction (and the time readers wait for it to be published)
// when thousands of writers arrive at once.
const maxBatchOps = 1000

type opKind uint8

const (
	opCreate opKind = iota
	opUpdate
	opDelete
)

// An op's state moves once from pending to taken (by the committer) or to
// cancelled (by its caller whose ctx ended first).
const (
	opPending int32 = iota
	opTaken
	opCancelled
)

// op is one queued write. The committer fills kv and err, then closes done.
type op struct {
	kind   opKind
	key    string
	value  []byte
	expect int64
	state  atomic.Int32
	done   chan struct{}
	kv     KV
	err    error
}

// Create implements Store.
func (db *DB) Create(ctx context.Context, key string, value []byte) (KV, error) {
	return db.submit(ctx, &op{kind: opCreate, key: key, value: value})
}

// Update implements Store.
func (db *DB) Update(ctx context.Context, key string, expectedRevision int64, value []byte) (KV, error) {
	return db.submit(ctx, &op{kind: opUpdate, key: key, value: value, expect: expectedRevision})
}

// Delete implements Store.
func (db *DB) Delete(ctx context.Context, key string, expectedRevision int64) (KV, error) {
	return db.submit(ctx, &op{kind: opDelete, key: key, expect: expectedRevision})
}

// submit queues o and waits for the committer. A ctx that ends before the
// committer picks o up cancels it; after that o runs to completion.
func (db *DB) submit(ctx context.Context, o *op) (KV, error) {
	if err := checkKey(o.key); err != nil {
		return KV{}, err
	}
	if err := ctx.Err(); err != nil {
		return KV{}, err
	}
	o.done = make(chan struct{})
	db.qmu.Lock()
	if db.qclosed {
		db.qmu.Unlock()
		return KV{}, ErrClosed
	}
	db.queue = append(db.queue, o)
	db.qmu.Unlock()
	db.signal()
	select {
	case <-o.done:
	case <-ctx.Done():
		if o.state.CompareAndSwap(opPending, opCancelled) {
			return KV{}, ctx.Err()
		}
		<-o.done
	}
	return o.kv, o.err
}

// signal wakes the committer without blocking; one pending wake suffices.
func (db *DB) signal() {
	select {
	case db.wake <- struct{}{}:
	default:
	}
}

// historyFill is the page fill of the history bucket. Its keys only ever
// grow, so a split page is never written again: filling it completely
// halves the history's share of the file against bbolt's default of 0.5.
const historyFill = 1.0

// stateFill is the page fill of the state bucket. Names within a namespace
// are mostly created in increasing order, which leaves split pages at the
// fill forever; 0.9 keeps the file (and its mapped, resident pages) small
// while leaving room for values that grow on update.
const stateFill = 0.9

// groupCommitMaxWait caps how long the committer holds a batch back for
// writers it expects. Writers acknowledged by one commit come back while
// others wait for the next, so without waiting N concurrent writers settle
// into two alternating groups of N/2, each paying for its own fsync. Waiting
// up to half a commit's cost (never more than this) merges them again; a
// lone writer never waits because it is the whole expected batch.
const groupCommitMaxWait = time.Millisecond

// commitLoop is the single writer. It drains everything queued, commits it
// in transactions of at most maxBatchOps, and exits once the queue is closed
// and empty.
func (db *DB) commitLoop() {
	defer close(db.committed)
	var (
		spare    []*op
		expected int           // writers seen at the last commit
		cost     time.Duration // duration of the last commit
	)
	hold := time.NewTimer(time.Hour)
	hold.Stop()
	for {
		<-db.wake
		if expected > 1 {
			db.gather(expected, min(groupCommitMaxWait, cost/2), hold)
		}
		db.qmu.Lock()
		batch := db.queue
		db.queue = spare[:0]
		closed := db.qclosed
		db.qmu.Unlock()
		start := time.Now()
		for rest := batch; len(rest) > 0; {
			n := min(len(rest), maxBatchOps)
			db.commitBatch(rest[:n])
			rest = rest[n:]
		}
		cost = time.Since(start)
		db.qmu.Lock()
		expected = len(batch) + len(db.queue)
		db.qmu.Unlock()
		clear(batch)
		spare = batch
		if closed {
			return
		}
	}
}

// gather waits until want operations are queued, wait has passed or the
// queue is closed. A wake it consumes is not lost: the caller takes the
// whole queue next, and later writers signal again.
func (db *DB) gather(want int, wait time.Duration, hold *time.Timer) {
	hold.Reset(wait)
	defer hold.Stop()
	for {
		db.qmu.Lock()
		enough := len(db.queue) >= want || db.qclosed
		db.qmu.Unlock()
		if enough {
			return
		}
		select {
		case <-db.wake:
		case <-hold.C:
			return
		}
	}
}

// change is one op that passed its precondition, with its event.
type change struct {
	o  *op
	ev Event
}

// commitBatch evaluates each op against the state as left by the ops before
// it, writes the passing ones and their events in one transaction, then
// publishes them to memory and watchers and acknowledges every op.
func (db *DB) commitBatch(ops []*op) {
	start := time.Now()
	taken := ops[:0:0]
	var changes []change
	pending := make(map[string]*KV) // state after earlier ops of this batch; nil = deleted
	current := func(key string) *KV {
		if kv, ok := pending[key]; ok {
			return kv
		}
		if kv, ok := db.idx.get(key); ok { // only the committer mutates idx
			return &kv
		}
		return nil
	}
	next := db.rev.Load()
	for _, o := range ops {
		if !o.state.CompareAndSwap(opPending, opTaken) {
			continue
		}
		taken = append(taken, o)
		ev, err := db.apply(o, current(o.key), next+1)
		if err != nil {
			o.err = err
			continue
		}
		next++
		if ev.Type == Delete {
			pending[o.key] = nil
		} else {
			kv := ev.KV
			pending[o.key] = &kv
		}
		changes = append(changes, change{o: o, ev: ev})
	}
	if len(changes) > 0 {
		at := start.UnixNano()
		if err := db.bdb.Update(func(tx *bbolt.Tx) error {
			db.releaseMapped(tx)
			return writeChanges(tx, changes, next, at)
		}); err != nil {
			db.log.Error("commit", "err", err, "ops", len(changes))
			for _, c := range changes {
				c.o.err = fmt.Errorf("bolt: commit: %w", err)
			}
			changes = nil
		} else {
			db.publish(changes, pending, next, at)
		}
	}
	for _, o := range taken {
		close(o.done)
	}
	if len(changes) > 0 && db.log.Enabled(context.Background(), slog.LevelDebug) {
		db.log.Debug("commit", "ops", len(taken), "changes", len(changes), "revision", next, "took", time.Since(start))
	}
}

// apply checks o's precondition against cur and builds its event at rev.
func (db *DB) apply(o *op, cur *KV, rev int64) (Event, error) {
	switch o.kind {
	case opCreate:
		if cur != nil {
			return Event{}, fmt.Errorf("%w: %s", ErrExists, o.key)
		}
	default:
		if cur == nil {
			return Event{}, fmt.Errorf("%w: %s", ErrNotFound, o.key)
		}
		if o.expect != 0 && cur.ModRevision != o.expect {
			return Event{}, fmt.Errorf("%w: %s is at revision %d, not %d", ErrConflict, o.key, cur.ModRevision, o.expect)
		}
	}
	src := o.value
	if o.kind == opDelete {
		src = cur.Value
	}
	stamped, err := db.opts.Stamp(src, rev)
	if err != nil {
		return Event{}, fmt.Errorf("bolt: stamp %s: %w", o.key, err)
	}
	ev := Event{Type: Put, Revision: rev, Prev: cur,
		KV: KV{Key: o.key, Value: stamped, CreateRevision: rev, ModRevision: rev}}
	if cur != nil {
		ev.KV.CreateRevision = cur.CreateRevision
	}
	if o.kind == opDelete {
		ev.Type = Delete
	}
	o.kv = ev.KV
	return ev, nil
}

// writeChanges stores the batch's state changes, events and revision.
// Records are built in one arena because bbolt keeps references to keys
// and values until the transaction commits.
func writeChanges(tx *bbolt.Tx, changes []change, rev, at int64) error {
	state, hist := tx.Bucket(bucketState), tx.Bucket(bucketHistory)
	hist.FillPercent = historyFill
	state.FillPercent = stateFill
	var a arena
	a.reserve(batchRecordBytes(changes))
	for i := range changes {
		ev := &changes[i].ev
		key := a.string(ev.KV.Key)
		var err error
		if ev.Type == Delete {
			err = state.Delete(key)
		} else {
			err = state.Put(key, a.take(appendState(a.tail(), &ev.KV)))
		}
		if err != nil {
			return err
		}
		if err := hist.Put(u64key(ev.Revision), a.take(appendEvent(a.tail(), ev, at))); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketMeta).Put(metaRevision, u64key(rev))
}

// recordOverhead bounds the bytes a state record or an event adds to the
// key and values it carries (revisions, lengths, type).
const recordOverhead = 64

// batchRecordBytes is an upper bound of the bytes writeChanges builds.
func batchRecordBytes(changes []change) int {
	n := 0
	for i := range changes {
		ev := &changes[i].ev
		n += 2*len(ev.KV.Key) + 2*len(ev.KV.Value) + 2*recordOverhead
		if ev.Prev != nil {
			n += len(ev.Prev.Value) + len(ev.Prev.Key)
		}
	}
	return n
}

// publish makes a committed batch visible: index, history, revision,
// watchers and revision waiters, all under one exclusive lock so readers
// and new watchers see either none or all of it.
func (db *DB) publish(changes []change, final map[string]*KV, rev, at int64) {
	events := make([]Event, len(changes))
	db.mu.Lock()
	defer db.mu.Unlock()
	for i, c := range changes {
		events[i] = c.ev
		db.hist = append(db.hist, histEvent{Event: c.ev, at: at})
	}
	for key, kv := range final {
		if kv == nil {
			db.idx.remove(key)
		} else {
			db.idx.put(*kv)
		}
	}
	db.rev.Store(rev)
	for w := range db.watchers {
		if !w.deliver(events) {
			delete(db.watchers, w)
		}
	}
	close(db.revCh)
	db.revCh = make(chan struct{})
}
