package bolt

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	bbolt "go.etcd.io/bbolt"

	"platd/gcpace"
)

// histEvent is an Event with its commit time (unix nanoseconds), which the
// compactor compares against the retention, and whether it continues the
// transaction of the event before it, which lists at past revisions use to
// read whole transactions only.
type histEvent struct {
	Event
	at     int64
	joined bool
}

// firstTxID is the id of the first write transaction on a new file:
// bbolt writes its two meta pages with ids 0 and 1 when it creates one.
const firstTxID = 2

// load creates the buckets of a new file, then reads the meta values, the
// history and the current state into memory. Bytes read from the file are
// copied (the mapping is only valid inside the transaction); a state value
// equal to its key's newest history event shares that event's bytes.
func (db *DB) load() error {
	upgrade := false
	err := db.bdb.Update(func(tx *bbolt.Tx) error {
		if k, _ := tx.Cursor().First(); k == nil && tx.ID() <= firstTxID {
			// A new file: nothing was ever committed to it.
			for _, name := range [][]byte{bucketMeta, bucketState, bucketHistory} {
				if _, err := tx.CreateBucket(name); err != nil {
					return err
				}
			}
		} else if err := checkBuckets(tx); err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		if err := db.checkTag(meta); err != nil {
			return err
		}
		if meta.Get(metaFormat) == nil {
			return meta.Put(metaFormat, u64key(formatVersion))
		}
		form, err := readForm(meta)
		if err != nil {
			return err
		}
		if form.format != formatVersion {
			upgrade = true
			return startUpgrade(meta) // upgrade.go
		}
		upgrade = form.mark != nil
		return nil
	})
	if err == nil && upgrade {
		err = db.upgradeRecords()
	}
	if err != nil {
		return fmt.Errorf("bolt: initialize %s: %w", db.path, err)
	}
	if err := db.readFile(); err != nil {
		return fmt.Errorf("bolt: load %s: %w", db.path, err)
	}
	return nil
}

// checkTag compares Options.Tag with the file's: a file that has never
// held an object records it, one recorded with another is refused, and
// one with objects but no tag is left for the caller (Untagged).
func (db *DB) checkTag(meta *bbolt.Bucket) error {
	want := db.opts.Tag
	if want == "" {
		return nil
	}
	switch have := meta.Get(metaTag); {
	case have != nil && string(have) != want:
		return &TagError{Recorded: string(have), Wanted: want}
	case have != nil:
		return nil
	}
	if rev, err := readMeta(meta, metaRevision); err != nil || rev > 0 {
		db.untagged = err == nil
		return err
	}
	return meta.Put(metaTag, []byte(want))
}

func readMeta(b *bbolt.Bucket, key []byte) (int64, error) {
	v := b.Get(key)
	if v == nil {
		return 0, nil
	}
	return readU64(v)
}

// readFile reads the retained history and the current state into memory.
// The history and two halves of the state are read at once, each on its
// own goroutine in its own read transaction (no writer runs yet, so all
// see the same file): at scale a load is mostly the cost of touching the
// file's pages and the new memory the values are copied into, which the
// machine's cores share; the state, whose values are all copied, is the
// larger part. joinHistory then makes the values the two hold in common
// one copy. The collector is paused meanwhile (pauseGC).
func (db *DB) readFile() error {
	defer pauseGC()()
	var txs [3]*bbolt.Tx
	for i := range txs {
		tx, err := db.bdb.Begin(false)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		txs[i] = tx
	}
	meta := txs[0].Bucket(bucketMeta)
	rev, err := readMeta(meta, metaRevision)
	if err != nil {
		return err
	}
	compacted, err := readMeta(meta, metaCompacted)
	if err != nil {
		return err
	}
	split := db.stateSplit(txs[1].Bucket(bucketState))
	km := newKeyMapper(db.stateKeys, 2)
	defer km.wait() // on every return: both halves have ended by then
	var (
		h      loadedHistory
		parts  [2]*index
		edges  [2][]byte  // where each half met the split (loadState)
		partMu sync.Mutex // the rare damaged and stale keys, of both halves
	)
	errs := inParallel(
		func() (err error) {
			h, err = db.readHistory(txs[0].Bucket(bucketHistory), compacted, rev, historyHint(compacted, rev, txs[0].Size()))
			return err
		},
		func() (err error) {
			defer km.finish()
			parts[0], edges[0], err = db.loadState(txs[1].Bucket(bucketState), rev, nil, split, &partMu, km)
			return err
		},
		func() (err error) {
			defer km.finish()
			if split == nil {
				parts[1] = newIndex()
				return nil
			}
			parts[1], edges[1], err = db.loadState(txs[2].Bucket(bucketState), rev, split, nil, &partMu, km)
			return err
		},
	)
	if err := cmp.Or(errs...); err != nil { // the history's first, as before
		return err
	}
	if split != nil && !bytes.Equal(edges[0], edges[1]) {
		// Both are the first key at or after the split, unless a key of
		// the first half was damaged into one past it: the first half then
		// stopped early, and the keys behind the damage were read by
		// neither.
		return fmt.Errorf("%w: state keys out of order at %q: a damaged page", ErrCorrupt, edges[0])
	}
	db.idx.chunks = append(parts[0].chunks, parts[1].chunks...)
	db.idx.byKey = km.wait()
	db.joinHistory(&h)
	if h.cut > 0 {
		db.log.Warn("history cut at an unreadable value", "revision", h.cut)
	}
	db.fileCompacted = compacted
	compacted = max(compacted, h.cut)
	for i := range db.hist {
		db.histBytes += eventCost(&db.hist[i].Event)
	}
	if db.trimHistory() {
		compacted = db.trimTo
		db.trimmed <- struct{}{} // the compactor deletes them from the file
		db.log.Info("history trimmed to its byte bound", "compacted", compacted, "events", len(db.hist), "bytes", db.histBytes)
	}
	db.rev.Store(rev)
	db.compacted.Store(compacted)
	// Everything is in memory now; the pages the load read need not stay
	// resident: Open drops them on a goroutine of their own (dropLoaded).
	db.lastRelease = time.Now()
	return nil
}

// historyHint is the number of events to make room for: one per revision
// above the compacted one, unless the file is too small to hold them (a
// damaged counter must not allocate wildly); an event record takes more
// than 16 bytes.
func historyHint(compacted, rev int64, fileSize int64) int {
	return int(max(0, min(rev-compacted, fileSize/16)))
}

// historyRoom is the room left in the loaded history for the events
// committed after it: the ring is appended to by every commit, under the
// exclusive lock, and without room the first commit after a restart would
// copy the whole history (at scale tens of milliseconds of the writes a
// starting server waits for). The room is not touched until it is used.
func historyRoom(n int) int { return n / 4 }

// loadedHistory is the history as readHistory leaves it for joinHistory.
type loadedHistory struct {
	events []histEvent
	// owned[i] says the value of events[i] is a copy already (or the
	// transformer's), not the file's bytes.
	owned []bool
	// cut is the revision of the newest unreadable event, 0 if none: it and
	// every event before it are left out.
	cut int64
}

// readHistory reads the events above compacted (those at or below it are
// left over from an interrupted compaction and are skipped), n of them
// expected. A previous state written by an event read before shares that
// event's value (and is not read again), which is copied then: it is not
// its key's newest. Every other value still aliases the file for
// joinHistory, which copies what the state does not hold; with a
// transformer the values are those it read back. The keys are copied
// into slabs, packed (the join looks each up), or one by one with a
// transformer, which may keep them. An event whose value cannot be read back
// (see readStored), or whose record is damaged, ends the replayable
// history: it and every event before it are dropped, and the compacted
// revision in memory moves up to it, so no watch or past list ever serves
// a value that could not be read; a watch from before it is told to
// re-list.
func (db *DB) readHistory(b *bbolt.Bucket, compacted, rev int64, n int) (loadedHistory, error) {
	h := loadedHistory{events: make([]histEvent, 0, n+historyRoom(n)), owned: make([]bool, 0, n)}
	prefaultSlice(h.events[:n])          // the room stays untouched
	copied := db.opts.Transformer != nil // readStored makes copies
	var sl slab
	var keys *slab
	if !copied {
		keys = new(slab)
	}
	c := b.Cursor()
	order := keyOrder{what: "history"}
	// cutAt drops every event read so far: the history starts after r.
	cutAt := func(r int64) {
		h.cut = r
		h.events, h.owned = h.events[:0], h.owned[:0]
	}
	for k, v := c.First(); k != nil; k, v = c.Next() {
		r, err := readU64(k)
		if err == nil {
			err = order.next(k) // damage.go
		}
		if err != nil {
			return h, err
		}
		if r <= compacted {
			// Left by a compaction that was cut short: only its keys are
			// read, for their order, as bbolt's later deletes rely on it.
			continue
		}
		if r > rev {
			return h, fmt.Errorf("%w: event %d above revision counter %d", ErrCorrupt, r, rev)
		}
		ev, err := decodeEventIn(r, v, keys)
		if errors.Is(err, ErrChecksum) {
			db.damagedEvent(r, err) // damage.go
			cutAt(r)
			continue
		}
		if err != nil {
			return h, err
		}
		j := h.writer(&ev.Event)
		if !db.readEvent(&ev.Event, j >= 0) {
			cutAt(r)
			continue
		}
		if p := ev.Prev; p != nil {
			switch {
			case j >= 0:
				if !h.owned[j] {
					h.events[j].KV.Value = sl.bytes(h.events[j].KV.Value)
					h.owned[j] = true
				}
				p.Value = h.events[j].KV.Value
			case !copied:
				p.Value = sl.bytes(p.Value)
			}
		}
		h.events = append(h.events, ev)
		h.owned = append(h.owned, copied)
	}
	return h, nil
}

// writer returns the index of the event read before ev that wrote ev's
// previous state (a put of its key at that state's revision), -1 if none
// was read. Each revision has one event, in order, so it is found by its
// revision, at an offset from the first unless events are missing.
func (h *loadedHistory) writer(ev *Event) int {
	p := ev.Prev
	if p == nil || len(h.events) == 0 {
		return -1
	}
	i := p.ModRevision - h.events[0].Revision
	if i < 0 || i >= int64(len(h.events)) || h.events[i].Revision != p.ModRevision {
		i = int64(sort.Search(len(h.events), func(j int) bool { return h.events[j].Revision >= p.ModRevision }))
		if i == int64(len(h.events)) || h.events[i].Revision != p.ModRevision {
			return -1
		}
	}
	if w := &h.events[i].Event; w.Type != Put || w.KV.Key != ev.KV.Key {
		return -1
	}
	return int(i)
}

// readEvent reads ev's values back (readStored), leaving out the previous
// state when it is shared. It reports false when a value cannot be read.
func (db *DB) readEvent(ev *Event, prevShared bool) bool {
	v, _, cerr := db.readStored(ev.KV.Key, ev.KV.ModRevision, ev.KV.Value)
	if cerr != nil {
		return false
	}
	ev.KV.Value = v
	if ev.Prev != nil && !prevShared {
		if ev.Prev.Value, _, cerr = db.readStored(ev.KV.Key, ev.Prev.ModRevision, ev.Prev.Value); cerr != nil {
			return false
		}
	}
	return true
}

// readStored reads a value of the file back as fromStorage does, but
// without a transformer the result is rec itself, valid only inside the
// transaction, which the caller copies once it knows it must.
func (db *DB) readStored(key string, modRev int64, rec []byte) ([]byte, bool, *CorruptError) {
	if db.opts.Transformer != nil {
		return db.fromStorage(key, modRev, rec)
	}
	if db.opts.Verify != nil {
		if err := db.opts.Verify(key, rec); err != nil {
			return nil, false, &CorruptError{Key: key, ModRevision: modRev, Err: err}
		}
	}
	return rec, false, nil
}

// joinHistory makes h the history in memory. readHistory left the values
// of each key's newest event aliasing the file: the newest
// event of a key whose state is at its revision shares the state's key and
// value (the records' checksums vouch for the bytes), and the others are
// copied. The two halves of the history are joined on two goroutines (each
// a lookup per event in the index's map, which neither changes).
func (db *DB) joinHistory(h *loadedHistory) {
	half := len(h.events) / 2
	var cuts [2]int64
	_ = inParallel(
		func() error { cuts[0] = db.joinEvents(h, 0, half); return nil },
		func() error { cuts[1] = db.joinEvents(h, half, len(h.events)); return nil },
	)
	db.damageCut = max(db.damageCut, cuts[0], cuts[1]) // damage.go
	db.hist = h.events
}

// joinEvents joins the events [from, to) of h and returns the newest
// revision of a key whose state record is damaged, 0 if none.
func (db *DB) joinEvents(h *loadedHistory, from, to int) (cut int64) {
	var sl slab
	for i := from; i < to; i++ {
		ev := &h.events[i].Event
		if ev.Type == Put {
			if c := db.corrupt[ev.KV.Key]; c != nil && c.record != nil {
				cut = max(cut, ev.KV.ModRevision)
			}
			if kv, ok := db.idx.get(ev.KV.Key); ok && kv.ModRevision == ev.KV.ModRevision && db.corrupt[kv.Key] == nil {
				ev.KV.Key, ev.KV.Value = kv.Key, kv.Value
				if ev.Prev != nil {
					ev.Prev.Key = kv.Key
				}
				continue
			}
		}
		if !h.owned[i] {
			ev.KV.Value = sl.bytes(ev.KV.Value)
		}
	}
	return cut
}

// loadState reads the state records with keys in [from, to) (nil: no
// bound) into the ordered chunks of a new index, in key order (the
// bucket's order), each value copied into memory. A value that cannot be
// read back is kept as stored and its key marked corrupt; mu guards the
// DB's record of such keys, which another part's load may share. edge is
// where the read met its bound: with from, the first key read; with to,
// the key at or after to that ended it (nil at the bucket's end). Two
// halves split at one key must meet at the same edge.
func (db *DB) loadState(b *bbolt.Bucket, rev int64, from, to []byte, mu *sync.Mutex, km *keyMapper) (ix *index, edge []byte, err error) {
	ix = newIndex()
	copied := db.opts.Transformer != nil
	// Keys and values go to slabs of their own: the keys stay packed for
	// the lookups of the key map.
	var keys, vals slab
	// sent is how many chunks km has: all but the one being filled.
	sent := 0
	defer func() {
		if err == nil {
			for ; sent < len(ix.chunks); sent++ {
				km.add(ix.chunks[sent])
			}
		}
	}()
	order := keyOrder{what: "state"}
	c := b.Cursor()
	k, v := c.First()
	if from != nil {
		k, v = c.Seek(from)
		edge = bytes.Clone(k)
	}
	defer func() {
		if to != nil && err == nil {
			edge = bytes.Clone(k)
		}
	}()
	for ; k != nil && (to == nil || bytes.Compare(k, to) < 0); k, v = c.Next() {
		if len(ix.chunks)-1 > sent {
			km.add(ix.chunks[sent])
			sent++
		}
		if err := order.next(k); err != nil { // damage.go
			return ix, nil, err
		}
		kv, err := decodeState(keys.string(k), v)
		if errors.Is(err, ErrChecksum) {
			// joinHistory cuts the history at the key's newest event.
			mu.Lock()
			ix.appendSorted(db.damagedState(string(k), v, rev, err)) // damage.go
			mu.Unlock()
			continue
		}
		if err != nil {
			return ix, nil, err
		}
		if kv.ModRevision > rev || kv.CreateRevision > kv.ModRevision {
			return ix, nil, fmt.Errorf("%w: state %q revisions %d/%d, counter %d",
				ErrCorrupt, kv.Key, kv.CreateRevision, kv.ModRevision, rev)
		}
		val, stale, cerr := db.readStored(kv.Key, kv.ModRevision, kv.Value)
		switch {
		case cerr != nil:
			mu.Lock()
			db.markCorrupt(cerr)
			mu.Unlock()
			db.log.Warn("corrupt value", "key", kv.Key, "revision", kv.ModRevision, "err", cerr.Err)
			val = bytes.Clone(kv.Value)
		case !copied:
			val = vals.bytes(val)
		}
		kv.Value = val
		if stale {
			mu.Lock()
			if db.stale == nil {
				db.stale = make(map[string]struct{})
			}
			db.stale[kv.Key] = struct{}{}
			mu.Unlock()
		}
		ix.appendSorted(kv)
	}
	return ix, edge, nil
}

// keyMapQueue is how many filled chunks of the index may wait for the key
// map's goroutine.
const keyMapQueue = 64

// keyMapper builds the index's map of keys on a goroutine of its own while
// the state is read, from the chunks the readers fill, so that it is not
// a step of its own after them, on one core. It is sized once with the
// number of keys the page check counted (a map grown entry by entry costs
// twice as much).
type keyMapper struct {
	chunks chan []KV
	// left is the number of readers that have not finished.
	left atomic.Int32
	done chan struct{}
	m    map[string]KV
}

// newKeyMapper starts the map of about hint keys, filled by readers
// readers, each of which must call finish when it ends.
func newKeyMapper(hint, readers int) *keyMapper {
	km := &keyMapper{chunks: make(chan []KV, keyMapQueue), done: make(chan struct{})}
	km.left.Store(int32(readers))
	go func() {
		defer close(km.done)
		m := make(map[string]KV, hint)
		for ch := range km.chunks {
			for _, kv := range ch {
				m[kv.Key] = kv
			}
		}
		km.m = m
	}()
	return km
}

// add hands the map a chunk that no longer changes.
func (km *keyMapper) add(ch []KV) { km.chunks <- ch }

// finish says a reader has handed every chunk it will.
func (km *keyMapper) finish() {
	if km.left.Add(-1) == 0 {
		close(km.chunks)
	}
}

// wait returns the map once every reader has finished.
func (km *keyMapper) wait() map[string]KV {
	<-km.done
	return km.m
}

// stateSplit returns a key that divides the state bucket b into two parts
// of about as many leaf pages, read from the branch pages under its root,
// or nil when the bucket is too small to split. The page check at open
// has walked these pages (pages.go).
func (db *DB) stateSplit(b *bbolt.Bucket) []byte {
	root := uint64(b.Root())
	if root == 0 { // an inline bucket
		return nil
	}
	info := db.bdb.Info()
	base := *(*unsafe.Pointer)(unsafe.Pointer(&info.Data)) // the map is not Go memory
	size := uint64(b.Tx().Size())
	w := &pageWalker{data: unsafe.Slice((*byte)(base), size), pageSize: uint64(info.PageSize), highWater: size / uint64(info.PageSize)}
	w.seen = make([]uint64, (w.highWater+63)/64)
	keys, err := w.branchKeys(root, 2)
	if err != nil || len(keys) < 2 {
		return nil
	}
	return bytes.Clone(keys[len(keys)/2])
}

// inParallel runs each fn on its own goroutine and returns their errors
// when all have returned. A damaged page makes bbolt panic (or fault): a
// panic is raised again on the caller's goroutine, where it can be
// handled, not on the one it happened on, where it would end the process;
// every read transaction stays open until all have returned.
func inParallel(fns ...func() error) []error {
	errs := make([]error, len(fns))
	panics := make([]any, len(fns))
	faultPanic := debug.SetPanicOnFault(false)
	debug.SetPanicOnFault(faultPanic)
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			debug.SetPanicOnFault(faultPanic)
			defer func() { panics[i] = recover() }()
			errs[i] = fn()
		}()
	}
	wg.Wait()
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
	return errs
}

// pauseGC turns the garbage collector off until the returned function is
// called. A load allocates mostly what it keeps, sized up front, so
// collections during it would only trace the growing state again and
// again; the one that follows traces it once. Without a transformer the
// load leaves little garbage; with one, a value the history and the state
// both hold is read back twice and one copy is garbage until then. A
// memory limit (GOMEMLIMIT) still makes the collector run.
func pauseGC() (restore func()) { return gcpace.Pause() }
