package bolt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
)

const (
	// DefaultHistoryRetention is how long events stay replayable when
	// Options.HistoryRetention is zero: long enough for clients to ride out
	// a reconnect, short enough that the ring stays small.
	DefaultHistoryRetention = 5 * time.Minute

	// fileLockTimeout bounds the wait for the file lock held by another
	// process, so a second server on the same file fails fast instead of
	// hanging at start-up.
	fileLockTimeout = 2 * time.Second

	// initialMmapSize reserves address space (not memory) so the mapping is
	// not remapped while the file grows through its first tens of megabytes;
	// a remap waits for every open read transaction.
	initialMmapSize = 64 << 20
)

// DB is the bbolt-backed Store. Open returns it; Close releases the file.
// All methods are safe for concurrent use. Get, List and Count are served
// from memory; writes go through one committer goroutine (group commit).
type DB struct {
	path string
	opts Options
	log  *slog.Logger
	// bdb is the open file. An online rewrite replaces it holding both
	// fileMu and compactMu; the committer uses it under fileMu, the
	// compactor under compactMu.
	bdb *bbolt.DB
	// untagged says the file holds objects but no tag (set by load).
	untagged bool
	// stateKeys is the number of state keys the page check counted, 0 if
	// unknown: the load sizes its key map with it.
	stateKeys int
	// lastRelease is when the committer last dropped mapped pages; only
	// the committer (and load, before it starts) touches it.
	lastRelease time.Time
	// unreleased is the bytes of records committed since then (same owner).
	unreleased int64

	// mu guards the in-memory state below. The committer and the compactor
	// take it exclusively only to publish an already-durable change.
	mu   sync.RWMutex
	idx  *index
	hist []histEvent // events with Revision > compacted, ascending
	// histBytes is the memory the events in hist alone keep (eventCost);
	// histTrimmed counts the events trimHistory dropped.
	histBytes   int64
	histTrimmed int64
	// trimTo is the newest revision trimHistory dropped.
	trimTo int64
	// While pinned, pin is the newest revision trimHistory may drop: a
	// file rewrite still replays the events after it from hist.
	pin    int64
	pinned bool
	// corrupt holds the keys whose stored value Open could not read back;
	// nil when there are none, which keeps reads free of the check. Only
	// load and the committer (in publish) change it.
	corrupt map[string]*CorruptError
	// stale holds the keys whose stored value the transformer read as
	// stale at Open; nil when there are none. Changed as corrupt is.
	stale map[string]struct{}
	// damageCut is, from load until the engine starts, the revision the
	// history is cut at for damaged records (damage.go); 0 if none.
	damageCut int64
	watchers  map[*watcher]struct{}
	// watchBytes is watchBufferBytes; tests lower it to reach it quickly.
	watchBytes int64
	watchOff   bool          // set by Close: no new watchers
	revCh      chan struct{} // closed and replaced after each commit
	rev        atomic.Int64  // stored under mu; loaded freely
	compacted  atomic.Int64  // stored under mu; loaded freely

	// The write queue; see commit.go.
	qmu     sync.Mutex
	queue   []*op
	qclosed bool
	wake    chan struct{}

	compactMu sync.Mutex // serializes compaction passes and file rewrites
	// fileCompacted is the revision up to which history records were
	// deleted from the file; trimHistory moves compacted ahead of it and
	// the compactor (woken by trimmed, capacity 1) catches up. Guarded by
	// compactMu.
	fileCompacted int64
	trimmed       chan struct{}
	// fileMu is held by the committer from a batch's transaction until it
	// is published, and by a file rewrite while it swaps files.
	fileMu sync.Mutex

	statMu      sync.Mutex
	defragStats DefragStats
	// defragFailedAt is when the compactor's last rewrite failed; only
	// maybeDefrag touches it, under compactMu.
	defragFailedAt time.Time

	closed    atomic.Bool
	closing   chan struct{} // closed when Close starts
	committed chan struct{} // closed when the committer exits
	closeOnce sync.Once
	closeErr  error

	wg   sync.WaitGroup // every goroutine the DB starts
	live atomic.Int64   // goroutines currently running for this DB
}

var _ Store = (*DB)(nil)

// Open opens or creates the engine file at path and loads its state,
// revision counter, history and compacted revision into memory. The caller
// owns the returned DB and must Close it.
func Open(path string, opts Options) (*DB, error) {
	if opts.Stamp == nil {
		return nil, fmt.Errorf("%w: Options.Stamp is required", ErrInvalid)
	}
	if opts.HistoryRetention <= 0 {
		opts.HistoryRetention = DefaultHistoryRetention
	}
	if opts.HistoryMaxBytes == 0 {
		opts.HistoryMaxBytes = DefaultHistoryMaxBytes
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if opts.DefragThreshold > 0 && opts.DefragThreshold <= 1 {
		return nil, fmt.Errorf("%w: Options.DefragThreshold %g must be above 1", ErrInvalid, opts.DefragThreshold)
	}
	if opts.DefragMinSize <= 0 {
		opts.DefragMinSize = DefaultDefragMinSize
	}
	bdb, wk, err := openVerified(path, opts.NoFsync, log)
	if err != nil {
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	// Holding the file's lock, a leftover of an interrupted rewrite is
	// ours to remove: it never took the engine file's name.
	if err := os.Remove(path + defragSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
		_ = bdb.Close()
		return nil, fmt.Errorf("bolt: open %s: removing an interrupted rewrite: %w", path, err)
	}
	db := &DB{
		path:       path,
		opts:       opts,
		log:        log,
		bdb:        bdb,
		idx:        newIndex(),
		stateKeys:  wk.keys[string(bucketState)],
		watchers:   make(map[*watcher]struct{}),
		watchBytes: watchBufferBytes,
		revCh:      make(chan struct{}),
		wake:       make(chan struct{}, 1),
		trimmed:    make(chan struct{}, 1),
		closing:    make(chan struct{}),
		committed:  make(chan struct{}),
	}
	if err := guard("loading "+path, db.load); err != nil {
		// After a panic inside bbolt, its locks may still be held and
		// Close would wait forever: the file stays open (and locked) in
		// this process, which is about to report the damage and stop.
		panicked := errors.Is(err, errPanicked)
		if !panicked {
			_ = guard("closing", bdb.Close)
		}
		if errors.Is(err, ErrCorrupt) {
			// A walk of every page names a damaged page better than the
			// panic or the disorder it caused.
			if _, werr := verifyPath(path, walkKeys, !panicked); werr != nil {
				err = fmt.Errorf("bolt: open %s: %w", path, werr)
			}
		}
		return nil, err
	}
	// The compaction is the first write to the file: guarded as the load
	// is, for the same reason.
	if err := guard("compacting "+path, db.compactDamaged); err != nil {
		if !errors.Is(err, errPanicked) {
			_ = guard("closing", bdb.Close)
		}
		return nil, err
	}
	// A one-off that ends by itself: Close waits for it, but it is not
	// one of the goroutines live counts, which tests compare over time.
	db.wg.Add(1)
	go func() {
		defer db.wg.Done()
		db.dropLoaded()
	}()
	db.spawn(db.commitLoop)
	db.spawn(db.compactLoop)
	log.Info("open", "path", path, "revision", db.rev.Load(),
		"compacted", db.compacted.Load(), "keys", db.idx.len(), "events", len(db.hist), "historyBytes", db.histBytes)
	return db, nil
}

// openVerified opens the file at path with bbolt, which trusts its pages
// (pages.go): they are checked first, and the open and the check through
// bbolt's map turn every panic or fault into an error. A damaged
// free-page list over a sound page tree is dropped, and bbolt rebuilds it
// from the tree; any other damage is an error.
func openVerified(path string, noFsync bool, log *slog.Logger) (*bbolt.DB, walked, error) {
	for dropped := false; ; dropped = true {
		bdb, wk, err := openChecked(path, noFsync)
		var fe *freelistError
		if dropped || !errors.As(err, &fe) {
			return bdb, wk, err
		}
		log.Warn("rebuilding the damaged free-page list from the page tree", "path", path, "damage", fe.err)
		if err := dropFreelist(path); err != nil {
			return nil, walked{}, fmt.Errorf("dropping the damaged free-page list: %w", err)
		}
	}
}

// openChecked is one attempt of openVerified.
func openChecked(path string, noFsync bool) (*bbolt.DB, walked, error) {
	wk, err := verifyFile(path, walkMeta)
	if err != nil {
		return nil, walked{}, err
	}
	var bdb *bbolt.DB
	err = guard("opening "+path, func() (err error) {
		bdb, err = openFile(path, noFsync)
		return err
	})
	if err == nil && !wk.pages {
		if wk, err = verifyMapped(bdb); err != nil {
			_ = guard("closing", bdb.Close) // no transaction has begun
		}
	}
	if err != nil {
		return nil, walked{}, err
	}
	return bdb, wk, nil
}

// spawn runs fn on a goroutine tracked by wg and live.
func (db *DB) spawn(fn func()) {
	db.wg.Add(1)
	db.live.Add(1)
	go func() {
		defer db.wg.Done()
		defer db.live.Add(-1)
		fn()
	}()
}

// Path is the file the engine was opened on.
func (db *DB) Path() string { return db.path }

// Untagged reports that Options.Tag was given but the file, written
// before tags existed, holds objects and no tag: the caller checks that
// they fit and records the tag with RecordTag.
func (db *DB) Untagged() bool { return db.untagged }

// RecordTag writes Options.Tag into the file (see Untagged).
func (db *DB) RecordTag() error {
	if db.opts.Tag == "" {
		return fmt.Errorf("%w: no Options.Tag to record", ErrInvalid)
	}
	db.compactMu.Lock() // not while a rewrite copies the meta values
	defer db.compactMu.Unlock()
	err := db.bdb.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(metaTag, []byte(db.opts.Tag))
	})
	if err != nil {
		return fmt.Errorf("bolt: recording the tag of %s: %w", db.path, err)
	}
	db.untagged = false
	return nil
}

// Revision is the revision of the last committed write.
func (db *DB) Revision() int64 { return db.rev.Load() }

// CompactedRevision is the newest revision whose event was dropped from the
// history; a list or watch at this revision still works, one below it is
// ErrCompacted.
func (db *DB) CompactedRevision() int64 { return db.compacted.Load() }

// WaitForRevision blocks until Revision() >= rev, ctx ends (ctx.Err()) or
// the engine closes (ErrClosed). It is woken by commits, never polls.
func (db *DB) WaitForRevision(ctx context.Context, rev int64) error {
	for {
		db.mu.RLock()
		ch := db.revCh
		reached := db.rev.Load() >= rev
		db.mu.RUnlock()
		if reached {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-db.closing:
			return ErrClosed
		}
	}
}

// Close stops accepting writes (they fail with ErrClosed), lets queued and
// in-flight writes finish, ends every watcher (Err reports ErrClosed), stops
// the compactor and closes the file. It waits for every goroutine the DB
// started. Calling it again returns the first call's result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.closed.Store(true)
		db.qmu.Lock()
		db.qclosed = true
		db.qmu.Unlock()
		db.signal()
		<-db.committed
		close(db.closing)
		db.compactMu.Lock() // wait for a running compaction; later ones see closed
		db.compactMu.Unlock()
		db.mu.Lock()
		db.watchOff = true
		for w := range db.watchers {
			w.end(ErrClosed)
		}
		db.mu.Unlock()
		db.wg.Wait()
		db.writeFreelist() // freelist.go
		db.mu.Lock()
		db.idx, db.hist, db.histBytes = newIndex(), nil, 0 // release the state held in memory
		db.mu.Unlock()
		if err := db.bdb.Close(); err != nil {
			db.closeErr = fmt.Errorf("bolt: close %s: %w", db.path, err)
		}
		db.log.Info("close", "path", db.path, "revision", db.rev.Load())
	})
	return db.closeErr
}
