package bolt

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// maxBatchOps caps the writes applied in one bbolt transaction. Every
// waiting operation shares one fsync; the cap only bounds the size of a
// single transaction (and the time readers wait for it to be published)
// when thousands of writers arrive at once. A Txn is never split: a batch
// ends before the op that would pass the cap.
const maxBatchOps = 1000

// An op's state moves once from pending to taken (by the committer) or to
// cancelled (by its caller whose ctx ended first).
const (
	opPending int32 = iota
	opTaken
	opCancelled
)

// op is one queued write: a single Create, Update or Delete, or a Txn. The
// committer applies all its writes or none, fills kvs or err, then closes
// done.
type op struct {
	writes []Op
	txn    bool // err names the failing write (*OpError)
	state  atomic.Int32
	done   chan struct{}
	kvs    []KV // one per write, in order
	err    error
	// one and oneKV back writes and kvs of a single write, so it needs no
	// allocation beyond the op itself.
	one   [1]Op
	oneKV [1]KV
}

// Create implements Store.
func (db *DB) Create(ctx context.Context, key string, value []byte) (KV, error) {
	return db.submitOne(ctx, Op{Kind: OpCreate, Key: key, Value: value})
}

// Update implements Store.
func (db *DB) Update(ctx context.Context, key string, expectedRevision int64, value []byte) (KV, error) {
	return db.submitOne(ctx, Op{Kind: OpUpdate, Key: key, Value: value, ExpectedRevision: expectedRevision})
}

// Delete implements Store.
func (db *DB) Delete(ctx context.Context, key string, expectedRevision int64) (KV, error) {
	return db.submitOne(ctx, Op{Kind: OpDelete, Key: key, ExpectedRevision: expectedRevision})
}

// submitOne queues a single write and returns its result.
func (db *DB) submitOne(ctx context.Context, w Op) (KV, error) {
	if err := checkKey(w.Key); err != nil {
		return KV{}, err
	}
	o := &op{}
	o.one[0] = w
	o.writes, o.kvs = o.one[:], o.oneKV[:]
	if err := db.submit(ctx, o); err != nil {
		return KV{}, err
	}
	return o.kvs[0], nil
}

// submit queues o and waits for the committer. A ctx that ends before the
// committer picks o up cancels it; after that o runs to completion.
func (db *DB) submit(ctx context.Context, o *op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	o.done = make(chan struct{})
	db.qmu.Lock()
	if db.qclosed {
		db.qmu.Unlock()
		return ErrClosed
	}
	db.queue = append(db.queue, o)
	db.qmu.Unlock()
	db.signal()
	select {
	case <-o.done:
	case <-ctx.Done():
		if o.state.CompareAndSwap(opPending, opCancelled) {
			return ctx.Err()
		}
		<-o.done
	}
	return o.err
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
			n := batchLen(rest)
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

// batchLen is how many leading ops of queued go into one transaction: as
// many as hold at most maxBatchOps writes, and at least one.
func batchLen(queued []*op) int {
	writes := 0
	for i, o := range queued {
		writes += len(o.writes)
		if writes > maxBatchOps && i > 0 {
			return i
		}
	}
	return len(queued)
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

// change is one write that passed its precondition, with its event.
type change struct {
	o  *op
	ev Event
	// joined marks a write that belongs to the same Txn as the change
	// before it.
	joined bool
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
		// The writes of one op have distinct keys (checkTxn), so none
		// changes what a later one sees: all are checked against the
		// state before the op, and pending is updated only once all pass.
		mark := len(changes)
		for i := range o.writes {
			w := &o.writes[i]
			ev, err := db.apply(w, current(w.Key), next+1+int64(i))
			if err != nil {
				o.err = err
				if o.txn {
					o.err = &OpError{Index: i, Key: w.Key, Err: err}
				}
				changes = changes[:mark]
				break
			}
			changes = append(changes, change{o: o, ev: ev, joined: i > 0})
		}
		if o.err != nil {
			continue
		}
		for i, c := range changes[mark:] {
			o.kvs[i] = c.ev.KV
			if c.ev.Type == Delete {
				pending[c.ev.KV.Key] = nil
			} else {
				kv := c.ev.KV // not &o.kvs[i]: a Txn's caller owns kvs
				pending[c.ev.KV.Key] = &kv
			}
		}
		next += int64(len(o.writes))
	}
	large := false
	if len(changes) > 0 {
		large = batchRecordBytes(changes) >= collectAfterBytes
		at := start.UnixNano()
		db.fileMu.Lock()
		if err := db.bdb.Update(func(tx *bbolt.Tx) error {
			db.releaseMapped(tx)
			return db.writeChanges(tx, changes, next, at)
		}); err != nil {
			db.log.Error("commit", "err", err, "ops", len(changes))
			for _, c := range changes {
				c.o.err = fmt.Errorf("%w: commit: %w", ErrIO, err)
			}
			changes = nil
		} else {
			db.publish(changes, pending, next, at)
		}
		db.fileMu.Unlock()
	}
	for _, o := range taken {
		close(o.done)
	}
	if large && len(changes) > 0 {
		collectGarbage()
	}
	if db.unreleased >= releaseBytes {
		// After large writes, also the pages this commit touched.
		db.fileMu.Lock()
		db.dropMapped()
		db.fileMu.Unlock()
		db.lastRelease, db.unreleased = time.Now(), 0
	}
	if len(changes) > 0 && db.log.Enabled(context.Background(), slog.LevelDebug) {
		db.log.Debug("commit", "ops", len(taken), "changes", len(changes), "revision", next, "took", time.Since(start))
	}
}

// apply checks w's precondition against cur and builds its event at rev.
func (db *DB) apply(w *Op, cur *KV, rev int64) (Event, error) {
	switch w.Kind {
	case OpCreate:
		if cur != nil {
			return Event{}, fmt.Errorf("%w: %s", ErrExists, w.Key)
		}
	default:
		if cur == nil {
			return Event{}, fmt.Errorf("%w: %s", ErrNotFound, w.Key)
		}
		if w.ExpectedRevision != 0 && cur.ModRevision != w.ExpectedRevision {
			return Event{}, fmt.Errorf("%w: %s is at revision %d, not %d", ErrConflict, w.Key, cur.ModRevision, w.ExpectedRevision)
		}
	}
	src, prev := w.Value, cur
	if w.Kind == OpDelete {
		src = cur.Value
	}
	if cur != nil && db.corrupt != nil {
		// Only the committer changes corrupt, so it reads it unlocked. A
		// value written earlier in this batch has a newer revision.
		if bad := db.corrupt[w.Key]; bad != nil && bad.ModRevision == cur.ModRevision {
			if w.Value == nil {
				return Event{}, bad
			}
			stand := *cur
			stand.Value = w.Value
			src, prev = w.Value, &stand
		}
	}
	stamped, err := db.opts.Stamp(src, rev)
	if err != nil {
		return Event{}, fmt.Errorf("bolt: stamp %s: %w", w.Key, err)
	}
	ev := Event{Type: Put, Revision: rev, Prev: prev,
		KV: KV{Key: w.Key, Value: stamped, CreateRevision: rev, ModRevision: rev}}
	if cur != nil {
		ev.KV.CreateRevision = cur.CreateRevision
	}
	if w.Kind == OpDelete {
		ev.Type = Delete
	}
	return ev, nil
}

// writeChanges stores the batch's state changes, events and revision.
// Records are built in one arena because bbolt keeps references to keys
// and values until the transaction commits.
func (db *DB) writeChanges(tx *bbolt.Tx, changes []change, rev, at int64) error {
	state, hist := tx.Bucket(bucketState), tx.Bucket(bucketHistory)
	hist.FillPercent = historyFill
	state.FillPercent = stateFill
	var a arena
	n := batchRecordBytes(changes)
	a.reserve(n)
	db.unreleased += int64(n)
	for i := range changes {
		ev := &changes[i].ev
		if db.opts.Transformer != nil {
			stored, err := db.storedEvent(ev)
			if err != nil {
				return err
			}
			ev = &stored
		}
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
		if err := hist.Put(u64key(ev.Revision), a.take(appendEvent(a.tail(), ev, at, changes[i].joined))); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketMeta).Put(metaRevision, u64key(rev))
}

// storedEvent is ev with its values as the transformer writes them; the
// state record and the event share the new value's bytes.
func (db *DB) storedEvent(ev *Event) (Event, error) {
	out := *ev
	var err error
	if out.KV.Value, err = db.toStorage(ev.KV.Key, ev.KV.Value); err != nil {
		return Event{}, err
	}
	if ev.Prev != nil {
		prev := *ev.Prev
		if prev.Value, err = db.toStorage(ev.KV.Key, prev.Value); err != nil {
			return Event{}, err
		}
		out.Prev = &prev
	}
	return out, nil
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
		db.hist = append(db.hist, histEvent{Event: c.ev, at: at, joined: c.joined})
		db.histBytes += eventCost(&c.ev)
	}
	for key, kv := range final {
		if db.corrupt != nil {
			if delete(db.corrupt, key); len(db.corrupt) == 0 {
				db.corrupt = nil
			}
		}
		if db.stale != nil {
			if delete(db.stale, key); len(db.stale) == 0 {
				db.stale = nil
			}
		}
		if kv == nil {
			db.idx.remove(key)
		} else {
			db.idx.put(*kv)
		}
	}
	db.rev.Store(rev)
	if db.trimHistory() {
		select {
		case db.trimmed <- struct{}{}:
		default:
		}
	}
	for w := range db.watchers {
		if !w.deliver(events) {
			delete(db.watchers, w)
		}
	}
	close(db.revCh)
	db.revCh = make(chan struct{})
}
