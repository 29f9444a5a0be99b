package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Online defragmentation. bbolt reuses freed pages but never shrinks its
// file: a burst of writes (a large history) or long churn leaves the file
// at its high-water mark. When the file is much larger than its live data,
// the engine writes a fresh file from memory, which holds everything the
// file holds, while writes go on; then it replays the writes made during
// the copy and swaps the files under a short lock. See README.md.
const (
	// DefaultDefragThreshold is the ratio of the file's size to its live
	// data above which the file is rewritten: at twice the live data half
	// the disk it takes is free, while a rewrite costs a copy of the live
	// data only.
	DefaultDefragThreshold = 2.0

	// DefaultDefragMinSize is the file size below which the file is never
	// rewritten online: what a smaller file could give back is not worth
	// even a short write pause. 4 MiB still keeps a small install (a few
	// thousand objects) within the threshold.
	DefaultDefragMinSize = 4 << 20

	// fileGrowStep is how much bbolt extends the file when it runs out of
	// pages (its default is 16 MiB). Each extension costs a truncate and an
	// fsync; 1 MiB keeps a small file small while a growing file pays one
	// extra fsync per MiB.
	fileGrowStep = 1 << 20

	// defragTxBytes bounds the record bytes of one transaction writing the
	// new file: bbolt holds a transaction's pages in memory until commit.
	defragTxBytes = 8 << 20

	// defragLockEvents is how few writes made during the copy may be left
	// for the final replay, which runs while writes wait. The catch-up
	// replays without the lock until at most this many remain, so the
	// pause is one small transaction, a rename and a directory sync.
	defragLockEvents = 64

	// defragCatchUpRounds bounds the catch-up rounds: under a write rate
	// the copy cannot outrun, the last replay runs under the lock anyway.
	defragCatchUpRounds = 16

	// defragRetryAfter is how long the compactor waits after a failed
	// rewrite before it tries again: the cause (a full disk, say) rarely
	// goes away by the next pass, and each attempt copies the live data.
	defragRetryAfter = 10 * time.Minute

	// defragSuffix names the new file, beside the engine file so that the
	// rename is atomic. Open removes a leftover one: it is only ever
	// renamed once complete, so a leftover is an interrupted copy.
	defragSuffix = ".defrag"
)

// DefragStats counts the online rewrites of an engine file since Open.
type DefragStats struct {
	// Runs is the number of completed rewrites; Failures those abandoned
	// on an error (the old file stays in use).
	Runs, Failures int64
	// PauseTotal and PauseMax are the time writes waited: for the copy
	// of the index that starts a rewrite, and for the swap that ends it.
	PauseTotal, PauseMax time.Duration
}

// DefragStats returns the online rewrite counters.
func (db *DB) DefragStats() DefragStats {
	db.statMu.Lock()
	defer db.statMu.Unlock()
	return db.defragStats
}

// defragStep names the points of a rewrite a crash test stops at.
type defragStep int

const (
	stepCopying defragStep = iota // the new file is partly written
	stepCopied                    // the snapshot is written, not the replay
	stepLocked                    // writes wait; the new file lacks the last ones
	stepDurable                   // the new file is complete and synced
	stepRenamed                   // the new file has the engine file's name
	stepSwapped                   // commits go to the new file
)

// defragHook, when set (by tests), runs at each step of a rewrite.
var defragHook func(defragStep)

func atStep(s defragStep) {
	if defragHook != nil {
		defragHook(s)
	}
}

// fileUsage returns the file's size and its live data: the pages in use,
// that is the high-water mark less the free and pending pages.
func (db *DB) fileUsage() (file, live int64, err error) {
	fi, err := os.Stat(db.path)
	if err != nil {
		return 0, 0, err
	}
	var hwm int64
	if err := db.bdb.View(func(tx *bbolt.Tx) error { hwm = tx.Size(); return nil }); err != nil {
		return 0, 0, err
	}
	st := db.bdb.Stats()
	live = hwm - int64(st.FreePageN+st.PendingPageN)*int64(db.bdb.Info().PageSize)
	return fi.Size(), live, nil
}

// maybeDefrag rewrites the file when it is above the minimum size and
// more than the threshold times its live data. The compactor calls it
// after each pass, when history deletion has just freed pages.
func (db *DB) maybeDefrag() {
	if db.opts.DefragThreshold <= 0 {
		return
	}
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	if db.closed.Load() {
		return
	}
	file, live, err := db.fileUsage()
	if err != nil {
		db.log.Error("defrag", "err", err)
		return
	}
	if file < db.opts.DefragMinSize || float64(file) <= db.opts.DefragThreshold*float64(live) {
		return
	}
	if time.Since(db.defragFailedAt) < defragRetryAfter {
		return
	}
	if _, err := db.defrag(); err != nil && !errors.Is(err, ErrClosed) {
		db.defragFailedAt = time.Now()
		db.log.Error("defrag", "path", db.path, "err", err, "retry in", defragRetryAfter)
	}
}

// Defrag rewrites the engine file now, whatever its size, while writes go
// on; they wait only for the final swap. It returns the file's size
// before and after.
func (db *DB) Defrag(ctx context.Context) (before, after int64, err error) {
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	if db.closed.Load() {
		return 0, 0, ErrClosed
	}
	fi, err := os.Stat(db.path)
	if err != nil {
		return 0, 0, fmt.Errorf("bolt: defrag: %w", err)
	}
	after, err = db.defrag()
	return fi.Size(), after, err
}

// defrag writes a new file from memory and swaps it in. Caller holds
// compactMu, so the history is not trimmed meanwhile. It returns the new
// file's size.
func (db *DB) defrag() (int64, error) {
	start := time.Now()
	tmp := db.path + defragSuffix
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, db.defragFailed(fmt.Errorf("bolt: defrag: %w", err))
	}
	// Without fsync while copying: only the final state is synced, once,
	// before the file may take the engine file's name.
	ndb, err := openFile(tmp, true)
	if err != nil {
		return 0, db.defragFailed(fmt.Errorf("bolt: defrag: %w", err))
	}
	swapped := false
	defer func() {
		if !swapped {
			_ = ndb.Close()
			_ = os.Remove(tmp)
		}
	}()

	// The snapshot: the state at one revision and the history up to it.
	// Commits wait to publish while the index is copied (56 bytes a key).
	db.mu.RLock()
	snapStart := time.Now()
	rev, comp := db.rev.Load(), db.compacted.Load()
	state, _ := db.idx.appendRange(make([]KV, 0, db.idx.len()), "/", prefixEnd("/"), 0)
	hist := db.hist
	corrupt := maps.Clone(db.corrupt) // their values are held as stored
	// The catch-up replays the events after rev from the history: none
	// may be trimmed meanwhile. Only this rewrite (under compactMu) writes
	// pin, and trimHistory reads it under the exclusive lock.
	db.pin, db.pinned = rev, true
	snapPause := time.Since(snapStart)
	db.mu.RUnlock()
	defer db.unpin()

	w := newFileWriter(ndb)
	defer w.rollback()
	w.abort = db.closed.Load
	if db.opts.Transformer != nil {
		w.transform = db.storedEvent
	}
	meta, err := db.readMetaBucket()
	if err != nil {
		return 0, db.defragFailed(err)
	}
	if err := w.meta(meta, rev, comp); err != nil {
		return 0, db.defragFailed(err)
	}
	for i := range state {
		kv := &state[i]
		if bad := corrupt[kv.Key]; db.opts.Transformer != nil && (bad == nil || bad.ModRevision != kv.ModRevision) {
			stored := *kv
			if stored.Value, err = db.toStorage(kv.Key, kv.Value); err != nil {
				return 0, db.defragFailed(err)
			}
			kv = &stored
		}
		rec := appendState(nil, kv)
		if bad := corrupt[kv.Key]; bad != nil && bad.record != nil && bad.ModRevision == kv.ModRevision {
			rec = bad.record // a damaged record stays damaged
		}
		if err := w.put(bucketState, []byte(kv.Key), rec); err != nil {
			return 0, db.defragFailed(err)
		}
	}
	if err := w.commit(); err != nil {
		return 0, db.defragFailed(err)
	}
	atStep(stepCopying)
	if err := w.events(hist, rev); err != nil {
		return 0, db.defragFailed(err)
	}
	if err := w.commit(); err != nil {
		return 0, db.defragFailed(err)
	}
	atStep(stepCopied)

	// Catch up with the writes made meanwhile, without stopping them.
	done := rev
	for range defragCatchUpRounds {
		if db.closed.Load() {
			return 0, db.defragFailed(ErrClosed)
		}
		evs := db.eventsAfter(done)
		if len(evs) <= defragLockEvents {
			break
		}
		if done, err = w.replay(evs); err != nil {
			return 0, db.defragFailed(err)
		}
		db.mu.Lock()
		db.pin = done
		db.mu.Unlock()
	}
	if !db.opts.NoFsync {
		if err := ndb.Sync(); err != nil {
			return 0, db.defragFailed(fmt.Errorf("bolt: defrag: sync: %w", err))
		}
	}

	// The swap: writes wait from here. Every commit has been published
	// when fileMu is free, so the history holds every write to replay.
	db.fileMu.Lock()
	locked := time.Now()
	atStep(stepLocked)
	ndb.NoSync, ndb.NoGrowSync = db.opts.NoFsync, db.opts.NoFsync
	if evs := db.eventsAfter(done); len(evs) > 0 {
		if done, err = w.replay(evs); err != nil {
			db.fileMu.Unlock()
			return 0, db.defragFailed(err)
		}
	}
	atStep(stepDurable)
	if err := os.Rename(tmp, db.path); err != nil {
		db.fileMu.Unlock()
		return 0, db.defragFailed(fmt.Errorf("bolt: defrag: %w", err))
	}
	atStep(stepRenamed)
	// From the rename on the new file is the engine file, whatever
	// happens next: commits must go to it.
	var dirErr error
	if !db.opts.NoFsync {
		dirErr = syncDir(filepath.Dir(db.path))
	}
	old := db.bdb
	ndb.AllocSize = fileGrowStep
	db.bdb = ndb
	db.fileCompacted = comp // the rewrite holds the events above it
	swapped = true
	pause := time.Since(locked)
	db.fileMu.Unlock()
	atStep(stepSwapped)

	if err := old.Close(); err != nil {
		db.log.Warn("defrag", "msg", "closing the replaced file", "err", err)
	}
	if dirErr != nil {
		// Rare and not fatal: a machine crash before the directory is
		// written out could bring the old name back with older data.
		db.log.Error("defrag", "msg", "syncing the data directory", "err", dirErr)
	}
	size := int64(0)
	if fi, err := os.Stat(db.path); err == nil {
		size = fi.Size()
	}
	db.statMu.Lock()
	db.defragStats.Runs++
	db.defragStats.PauseTotal += pause + snapPause
	db.defragStats.PauseMax = max(db.defragStats.PauseMax, pause, snapPause)
	db.statMu.Unlock()
	db.log.Info("defrag", "path", db.path, "revision", done, "size", size, "pause", pause, "snapshot", snapPause, "took", time.Since(start))
	return size, nil
}

// unpin lets trimHistory drop any event again, once a rewrite ends.
func (db *DB) unpin() {
	db.mu.Lock()
	db.pin, db.pinned = 0, false
	db.mu.Unlock()
}

// defragFailed counts a failed rewrite and returns err. One abandoned
// because the engine closes is not a failure.
func (db *DB) defragFailed(err error) error {
	if errors.Is(err, ErrClosed) {
		return err
	}
	db.statMu.Lock()
	db.defragStats.Failures++
	db.statMu.Unlock()
	return err
}

// eventsAfter returns the retained events above rev. The events are never
// modified; later commits append beyond the returned slice.
func (db *DB) eventsAfter(rev int64) []histEvent {
	db.mu.RLock()
	defer db.mu.RUnlock()
	i := sort.Search(len(db.hist), func(i int) bool { return db.hist[i].Revision > rev })
	return db.hist[i:]
}

// openFile opens (creating it) an engine file with the engine's bbolt
// options; noSync is for a file being filled that is synced once at the end.
func openFile(path string, noSync bool) (*bbolt.DB, error) {
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:         fileLockTimeout,
		NoSync:          noSync,
		NoGrowSync:      noSync,
		NoFreelistSync:  true, // the freelist is rebuilt at open; commits write less
		FreelistType:    bbolt.FreelistMapType,
		InitialMmapSize: initialMmapSize,
	})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("%w: %s", ErrLocked, path)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	case err != nil:
		return nil, err
	}
	bdb.AllocSize = fileGrowStep
	return bdb, nil
}

// fileWriter fills a new engine file in transactions of about
// defragTxBytes of records, keys in ascending order per bucket.
type fileWriter struct {
	bdb   *bbolt.DB
	tx    *bbolt.Tx
	bytes int
	// abort, when set, is asked before each transaction whether to stop
	// (with ErrClosed): Close need not wait for a long copy.
	abort func() bool
	// transform, when set, gives an event's values as the file holds
	// them (see Transformer); memory holds them plain.
	transform func(*Event) (Event, error)
	// records counts the records put; onCommit, if set, gets it after
	// each commit.
	records  int64
	onCommit func(records int64)
}

func newFileWriter(bdb *bbolt.DB) *fileWriter { return &fileWriter{bdb: bdb} }

// rollback abandons the open transaction, if any: an error midway leaves
// one open, and closing the file would wait for it forever.
func (w *fileWriter) rollback() {
	if w.tx != nil {
		_ = w.tx.Rollback()
		w.tx = nil
	}
}

// put stores k and v, which must stay unchanged until commit, in bucket
// name.
func (w *fileWriter) put(name, k, v []byte) error {
	b, err := w.bucket(name, len(k)+len(v))
	if err != nil {
		return err
	}
	return b.Put(k, v)
}

// del deletes k from bucket name.
func (w *fileWriter) del(name, k []byte) error {
	b, err := w.bucket(name, len(k))
	if err != nil {
		return err
	}
	return b.Delete(k)
}

// bucket returns bucket name in the open transaction, committing it first
// and beginning another when n more bytes would pass defragTxBytes.
func (w *fileWriter) bucket(name []byte, n int) (*bbolt.Bucket, error) {
	if w.tx != nil && w.bytes+n > defragTxBytes {
		if err := w.commit(); err != nil {
			return nil, err
		}
	}
	if w.tx == nil {
		if w.abort != nil && w.abort() {
			return nil, ErrClosed
		}
		tx, err := w.bdb.Begin(true)
		if err != nil {
			return nil, fmt.Errorf("bolt: defrag: %w", err)
		}
		for _, n := range [][]byte{bucketMeta, bucketState, bucketHistory} {
			if _, err := tx.CreateBucketIfNotExists(n); err != nil {
				_ = tx.Rollback()
				return nil, fmt.Errorf("bolt: defrag: %w", err)
			}
		}
		w.tx, w.bytes = tx, 0
	}
	w.bytes += n
	w.records++
	b := w.tx.Bucket(name)
	switch string(name) {
	case string(bucketState):
		b.FillPercent = stateFill
	case string(bucketHistory):
		b.FillPercent = historyFill
	}
	return b, nil
}

// commit ends the open transaction, if any.
func (w *fileWriter) commit() error {
	if w.tx == nil {
		return nil
	}
	tx := w.tx
	w.tx = nil
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("bolt: defrag: commit: %w", err)
	}
	if w.onCommit != nil {
		w.onCommit(w.records)
	}
	return nil
}

// meta writes the file's meta values as read by readMetaBucket, with the
// revision and the compacted revision of the snapshot.
func (w *fileWriter) meta(kvs [][2][]byte, rev, comp int64) error {
	for _, kv := range kvs {
		if err := w.put(bucketMeta, kv[0], kv[1]); err != nil {
			return err
		}
	}
	if err := w.put(bucketMeta, metaRevision, u64key(rev)); err != nil {
		return err
	}
	return w.put(bucketMeta, metaCompacted, u64key(comp))
}

// readMetaBucket copies the file's meta values other than the revisions,
// which memory holds: the layout version, the tag and any later one.
// Caller holds compactMu, which every other writer of meta values takes.
func (db *DB) readMetaBucket() ([][2][]byte, error) {
	var kvs [][2][]byte
	err := db.bdb.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketMeta).ForEach(func(k, v []byte) error {
			if string(k) != string(metaRevision) && string(k) != string(metaCompacted) {
				kvs = append(kvs, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: defrag: reading meta values: %w", err)
	}
	return kvs, nil
}

// stored is ev as the file holds it.
func (w *fileWriter) stored(ev *Event) (*Event, error) {
	if w.transform == nil {
		return ev, nil
	}
	out, err := w.transform(ev)
	return &out, err
}

// events writes the history records of evs up to revision upTo.
func (w *fileWriter) events(evs []histEvent, upTo int64) error {
	for i := range evs {
		h := &evs[i]
		if h.Revision > upTo {
			break
		}
		ev, err := w.stored(&h.Event)
		if err != nil {
			return err
		}
		if err := w.put(bucketHistory, u64key(h.Revision), appendEvent(nil, ev, h.at, h.joined)); err != nil {
			return err
		}
	}
	return nil
}

// replay applies committed events to the file as the committer did: the
// state change, the event and the revision, then commits. It returns the
// last revision replayed.
func (w *fileWriter) replay(evs []histEvent) (int64, error) {
	for i := range evs {
		h := &evs[i]
		ev, err := w.stored(&h.Event)
		if err != nil {
			return 0, err
		}
		if ev.Type == Put {
			err = w.put(bucketState, []byte(ev.KV.Key), appendState(nil, &ev.KV))
		} else {
			err = w.del(bucketState, []byte(ev.KV.Key))
		}
		if err != nil {
			return 0, err
		}
		if err := w.put(bucketHistory, u64key(h.Revision), appendEvent(nil, ev, h.at, h.joined)); err != nil {
			return 0, err
		}
	}
	last := evs[len(evs)-1].Revision
	if err := w.put(bucketMeta, metaRevision, u64key(last)); err != nil {
		return 0, err
	}
	return last, w.commit()
}
