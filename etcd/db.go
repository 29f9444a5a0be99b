package etcd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"platd/bolt"
)

// Timing and paging policy.
const (
	// readTimeout bounds each step of a read that has no context of its
	// own (Get, List, Count): a fetch of etcd's revision (a reader may wait
	// for the one in flight, then its own) and the wait for the mirror to
	// reach it. Past it the read fails instead of hanging on an absent etcd.
	readTimeout = 10 * time.Second
	// writeTimeout bounds a write's etcd transaction once it is picked up
	// (the caller's ctx no longer ends it): an absent etcd fails the
	// write with ErrIO instead of hanging it.
	writeTimeout = 10 * time.Second
	// progressRetry is how soon an unanswered progress request is sent
	// again: etcd answers only once every watch of the stream is synced.
	progressRetry = 50 * time.Millisecond
	// listPage is the number of keys one range request reads, at Open and
	// for lists older than the in-memory history.
	listPage = 1000
	// watchBuffer is how many events a watcher may have queued before it
	// is dropped with bolt.ErrWatcherTooSlow (as bolt's).
	watchBuffer = 1000
	// watchChan is the buffer of a watcher's Events channel.
	watchChan = 16
)

// ErrMirrorDown: the in-memory mirror of etcd is not following it (etcd
// ended its watch and it is relisting); Healthy reports it.
var ErrMirrorDown = errors.New("etcd: the mirror is down")

// compactKey is the key, under the prefix, that coordinates compaction
// between replicas (its version) and records the last compacted revision
// (its value). It is not a platd key: the mirror skips it and writes to it
// are refused.
const compactKey = "/compact_rev_key"

// DB is a bolt.Store on etcd. Its methods are safe for concurrent use.
type DB struct {
	opts Options
	cli  *clientv3.Client
	// readTimeout and writeTimeout are the constants; tests shorten them.
	readTimeout, writeTimeout time.Duration
	prefix                    string // etcd key prefix, without the trailing slash
	log                       *slog.Logger

	// mirrorW carries the mirror's watch alone, so progress requests on
	// it concern that watch only; catchW carries watches that replay
	// history older than the in-memory ring.
	mirrorW, catchW clientv3.Watcher

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu sync.RWMutex
	// idx is the current state under the prefix. A key whose stored value
	// could not be read is in idx without a value and in corrupt.
	idx     *bolt.Index
	corrupt map[string]*bolt.CorruptError
	// rev is the revision of the last event under the prefix (or where the
	// mirror started): Revision. applied is the etcd revision up to which
	// every event has been applied (>= rev; progress notifications move it
	// past writes elsewhere in etcd).
	rev, applied int64
	// compacted is the compacted revision platd reports: etcdCompacted
	// (what etcd holds) clamped to rev. No event under the prefix lies
	// between rev and etcd's compaction, so a watch or list from rev must
	// not be refused because a write elsewhere in etcd was compacted.
	compacted, etcdCompacted int64
	compactPending           bool // compacted is not settled yet
	// ring holds the events after ringBase, oldest first.
	ring      []histEvent
	ringBase  int64
	ringBytes int64
	watchers  map[*watcher]struct{}
	// changed is closed and replaced whenever rev or applied moves.
	changed chan struct{}
	// mirrorErr is set while the mirror is down (its watch ended, it is
	// relisting): Healthy reports it. Reads wait for the mirror meanwhile.
	mirrorErr error
	// standIns holds, during its delete, the stand-in of a corrupt value
	// this replica deletes (Op.Value): its own mirror publishes it as the
	// deleted state. Other replicas cannot learn it (it is never in etcd).
	standIns map[string][]byte
	// epoch counts relists: a watch that began in an older one has missed
	// events and ends with ErrCompacted.
	epoch  int64
	closed bool

	revs     fetcher
	progress struct {
		sync.Mutex
		sentAt  time.Time
		pending bool // a request is unanswered
	}
}

// entry is a decoded etcd KV: kv, or corrupt when its stored value could
// not be read.
type entry struct {
	kv      bolt.KV
	corrupt *bolt.CorruptError
}

var _ bolt.Store = (*DB)(nil)

// Open connects to etcd, loads the state under opts.Prefix into memory and
// follows it with one watch. ctx bounds the connection and the load. The
// DB owns the client; Close closes both.
func Open(ctx context.Context, opts Options) (*DB, error) {
	if len(opts.Endpoints) == 0 {
		return nil, fmt.Errorf("%w: no etcd endpoints", bolt.ErrInvalid)
	}
	if opts.Stamp == nil {
		return nil, fmt.Errorf("%w: no stamper", bolt.ErrInvalid)
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = DefaultDialTimeout
	}
	if opts.HistoryRetention <= 0 {
		opts.HistoryRetention = bolt.DefaultHistoryRetention
	}
	if opts.HistoryMaxBytes == 0 {
		opts.HistoryMaxBytes = bolt.DefaultHistoryMaxBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   opts.Endpoints,
		TLS:         opts.TLS,
		DialTimeout: opts.DialTimeout,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd: connect to %v: %w", opts.Endpoints, err)
	}
	rctx, cancel := context.WithCancel(context.Background())
	db := &DB{
		opts:     opts,
		cli:      cli,
		prefix:   trimSlash(opts.Prefix),
		log:      opts.Logger,
		mirrorW:  clientv3.NewWatcher(cli),
		catchW:   clientv3.NewWatcher(cli),
		ctx:      rctx,
		cancel:   cancel,
		idx:      bolt.NewIndex(),
		corrupt:  map[string]*bolt.CorruptError{},
		watchers: map[*watcher]struct{}{},
		standIns: map[string][]byte{},
		changed:  make(chan struct{}),

		readTimeout:  readTimeout,
		writeTimeout: writeTimeout,
	}
	db.revs.db = db
	lctx, lcancel := context.WithTimeout(ctx, opts.DialTimeout)
	defer lcancel()
	if err := db.checkTag(lctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.load(lctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func trimSlash(p string) string {
	for len(p) > 0 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	return p
}

// load lists the prefix at one revision R, starts the mirror's watch and
// waits until it has applied R. The watch starts after the newest
// revision in the listing (not after R), so that the deletes between it
// and R arrive as events: Revision is then the revision of the last write
// under the prefix, the same on every replica, whatever else etcd holds.
func (db *DB) load(ctx context.Context) error {
	start := time.Now()
	st, r0, maxMod, err := db.list(ctx)
	if err != nil {
		return err
	}
	c, err := db.compactedIn(ctx, r0)
	if err != nil {
		return err
	}
	db.idx, db.corrupt = st.idx, st.corrupt
	db.etcdCompacted = c
	rev := maxMod
	if db.idx.Len() == 0 {
		// Nothing to catch up with: an empty prefix starts at etcd's
		// revision, so the first list of a new cluster is not at 0.
		rev = r0
	}
	// Revision is the newest listed write, so that every replica reports
	// the same revision for the same state; but a delete after it that
	// etcd has compacted away is in the listing and can never be replayed:
	// then the state is served from the compaction on, and nothing before
	// it can be listed or watched.
	rev = max(rev, c)
	db.rev, db.applied, db.ringBase = rev, rev, rev
	db.compacted = min(db.etcdCompacted, rev)
	// A compaction by another tool that the key does not record makes
	// this watch fail: the mirror then relists (follow).
	wch := db.watchMirror(max(rev, db.etcdCompacted) + 1)
	db.wg.Add(1)
	go db.follow(wch)
	if err := db.waitApplied(ctx, r0); err != nil {
		return fmt.Errorf("etcd: catch up with revision %d: %w", r0, err)
	}
	if db.opts.CompactionInterval > 0 {
		db.wg.Add(1)
		go db.compactor(db.opts.CompactionInterval)
	}
	db.log.Info("open", "prefix", db.prefix, "keys", db.idx.Len(), "revision", db.Revision(),
		"compacted", db.compacted, "took", time.Since(start))
	return nil
}

// listing is the state under the prefix at one revision (DB.idx and
// DB.corrupt).
type listing struct {
	idx     *bolt.Index
	corrupt map[string]*bolt.CorruptError
}

// list reads every key under the prefix at one revision.
func (db *DB) list(ctx context.Context) (st listing, rev, maxMod int64, err error) {
	st.idx, st.corrupt = bolt.NewIndex(), map[string]*bolt.CorruptError{}
	defer st.idx.MapKeys() // etcd returns keys in order: AppendSorted
	from, end := db.prefix+"/", clientv3.GetPrefixRangeEnd(db.prefix+"/")
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(listPage)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := db.cli.Get(ctx, from, opts...)
		if err != nil {
			return listing{}, 0, 0, fmt.Errorf("etcd: list %s: %w", db.prefix, err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			key := string(kv.Key[len(db.prefix):])
			if key == compactKey {
				continue
			}
			e := db.decode(key, kv)
			st.idx.AppendSorted(e.kv)
			if e.corrupt != nil {
				st.corrupt[key] = e.corrupt
			}
			maxMod = max(maxMod, kv.ModRevision)
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return st, rev, maxMod, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// compactedIn is the compacted revision the compaction key records at rev.
func (db *DB) compactedIn(ctx context.Context, rev int64) (int64, error) {
	ck, err := db.cli.Get(ctx, db.prefix+compactKey, clientv3.WithRev(rev))
	if err != nil {
		return 0, fmt.Errorf("etcd: read %s: %w", db.prefix+compactKey, err)
	}
	var c int64
	if len(ck.Kvs) == 1 {
		c, _ = strconv.ParseInt(string(ck.Kvs[0].Value), 10, 64)
	}
	return c, nil
}

// mirrorWatchHook, when set (by tests), wraps every mirror watch.
var mirrorWatchHook func(clientv3.WatchChan) clientv3.WatchChan

// watchMirror starts the mirror's watch at etcd revision from.
func (db *DB) watchMirror(from int64) clientv3.WatchChan {
	// The watch's context carries no metadata: RequestProgress finds its
	// stream by the metadata of its own context, which has none either.
	wch := db.mirrorW.Watch(db.ctx, db.prefix+"/",
		clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithPrevKV(), clientv3.WithProgressNotify())
	if mirrorWatchHook != nil {
		wch = mirrorWatchHook(wch)
	}
	return wch
}

// Healthy reports why the DB cannot serve current data: the mirror is
// down (relisting after etcd ended its watch), or the DB is closed.
func (db *DB) Healthy() error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return bolt.ErrClosed
	}
	return db.mirrorErr
}

// decode turns a stored etcd KV into an entry: the transformer's inverse,
// Verify, and the stamp of its mod revision.
func (db *DB) decode(key string, kv *mvccpb.KeyValue) *entry {
	val, cerr := db.plain(key, kv.Value, kv.ModRevision)
	if cerr != nil {
		return &entry{kv: bolt.KV{Key: key, CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision}, corrupt: cerr}
	}
	stamped, err := db.opts.Stamp(val, kv.ModRevision)
	if err != nil {
		return &entry{kv: bolt.KV{Key: key, CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision},
			corrupt: &bolt.CorruptError{Key: key, ModRevision: kv.ModRevision, Err: err}}
	}
	return &entry{kv: bolt.KV{Key: key, Value: stamped, CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision}}
}

// plain is the value of stored bytes: transformed back and verified.
func (db *DB) plain(key string, stored []byte, rev int64) ([]byte, *bolt.CorruptError) {
	val := stored
	if t := db.opts.Transformer; t != nil {
		v, _, err := t.FromStorage(key, stored)
		if err != nil {
			return nil, &bolt.CorruptError{Key: key, ModRevision: rev, Untransformable: true, Err: err}
		}
		val = v
	}
	if db.opts.Verify != nil {
		if err := db.opts.Verify(key, val); err != nil {
			return nil, &bolt.CorruptError{Key: key, ModRevision: rev, Err: err}
		}
	}
	return val, nil
}

// Client returns the etcd client the DB uses (leader election, allocators).
// It is closed by Close.
func (db *DB) Client() *clientv3.Client { return db.cli }

// Revision implements bolt.Store: the revision of the last write under the
// prefix. Writes elsewhere in etcd take revisions too, so revisions under
// one prefix ascend with gaps.
func (db *DB) Revision() int64 {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.rev
}

// CompactedRevision implements bolt.Store: etcd's compacted revision, as
// recorded by the replicas' compactions.
func (db *DB) CompactedRevision() int64 {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.compacted
}

// WaitForRevision implements bolt.Store: it waits until the mirror has
// applied etcd's revision rev, which may be a write elsewhere in etcd (a
// revision another replica reported); List accepts it from then on.
func (db *DB) WaitForRevision(ctx context.Context, rev int64) error {
	return db.waitApplied(ctx, rev)
}

// waitApplied waits until the mirror has applied etcd revision rev,
// asking etcd for a progress notification when no event brings it there.
func (db *DB) waitApplied(ctx context.Context, rev int64) error {
	var retry *time.Timer
	for {
		db.mu.RLock()
		ok, ch, closed := db.applied >= rev, db.changed, db.closed
		db.mu.RUnlock()
		switch {
		case ok:
			if retry != nil {
				retry.Stop()
			}
			return nil
		case closed:
			return bolt.ErrClosed
		}
		db.requestProgress(ctx)
		if retry == nil {
			retry = time.NewTimer(progressRetry)
		} else {
			retry.Reset(progressRetry)
		}
		select {
		case <-ch:
		case <-retry.C:
		case <-ctx.Done():
			retry.Stop()
			return ctx.Err()
		}
	}
}

// requestProgress asks etcd to report the mirror watch's revision: one
// request at a time (every waiter shares its answer), sent again when
// unanswered after progressRetry.
func (db *DB) requestProgress(ctx context.Context) {
	db.progress.Lock()
	if db.progress.pending && time.Since(db.progress.sentAt) < progressRetry {
		db.progress.Unlock()
		return
	}
	db.progress.sentAt, db.progress.pending = time.Now(), true
	db.progress.Unlock()
	if err := db.mirrorW.RequestProgress(ctx); err != nil && ctx.Err() == nil {
		db.log.Debug("progress request", "err", err)
	}
}

// Close implements bolt.Store: it ends the mirror, every watcher and the
// client. Writes in flight fail with the client's error.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	ws := make([]*watcher, 0, len(db.watchers))
	for w := range db.watchers {
		ws = append(ws, w)
	}
	db.broadcast()
	db.mu.Unlock()
	for _, w := range ws {
		w.Stop()
	}
	db.cancel()
	err := errors.Join(db.mirrorW.Close(), db.catchW.Close())
	db.wg.Wait()
	err = errors.Join(err, db.cli.Close())
	db.log.Info("close", "prefix", db.prefix)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// broadcast wakes every waiter; called with mu held for writing.
func (db *DB) broadcast() {
	close(db.changed)
	db.changed = make(chan struct{})
}
