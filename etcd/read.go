package etcd

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/bolt"
)

// fetcher reads etcd's current revision for consistent reads. Readers that
// arrive while a fetch is in flight share the next one (a fetch that began
// before them could miss a write they must see), so a burst of reads costs
// two round trips, not one each. The next fetch is taken for sending only
// once the goroutines already runnable have had their turn.
type fetcher struct {
	db      *DB
	mu      sync.Mutex
	running bool
	next    *fetch
}

// fetch is one read of etcd's revision.
type fetch struct {
	done chan struct{}
	rev  int64
	err  error
}

// current returns an etcd revision at least as new as every write
// acknowledged before the call. Each fetch ends within readTimeout, so a
// reader waits at most for the one in flight and its own: it needs no
// timer of its own.
func (f *fetcher) current() (int64, error) {
	f.mu.Lock()
	if f.next == nil {
		f.next = &fetch{done: make(chan struct{})}
	}
	b := f.next
	if !f.running {
		// Counted in wg under db.mu while open, so Close waits for it
		// before it closes the client.
		f.db.mu.RLock()
		if f.db.closed {
			f.db.mu.RUnlock()
			f.mu.Unlock()
			return 0, bolt.ErrClosed
		}
		f.db.wg.Add(1)
		f.db.mu.RUnlock()
		f.running = true
		go f.run()
	}
	f.mu.Unlock()
	<-b.done // run ends every fetch within readTimeout, and at once at Close
	return b.rev, b.err
}

// run sends the next fetch until no reader waits for one. A reader joins
// the next fetch until run takes it, just before sending it.
func (f *fetcher) run() {
	defer f.db.wg.Done()
	for {
		// Readers already runnable join this fetch before it is sent:
		// under load one round trip then serves more of them, and an
		// idle process yields at no cost. Nothing waits on a clock.
		runtime.Gosched()
		f.mu.Lock()
		b := f.next
		f.next = nil
		if b == nil {
			f.running = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		ctx, cancel := context.WithTimeout(f.db.ctx, f.db.readTimeout)
		// A count-only range of one key: linearizable, so its header
		// carries the revision of every write acknowledged before it.
		resp, err := f.db.cli.Get(ctx, f.db.prefix+compactKey, clientv3.WithCountOnly())
		cancel()
		if err != nil {
			b.err = fmt.Errorf("%w: read etcd's revision: %v", bolt.ErrIO, err)
		} else {
			b.rev = resp.Header.Revision
		}
		close(b.done)
	}
}

// sync makes the mirror as new as etcd: a consistent read. The mirror
// has mostly applied the fetched revision already: a wait (and its
// timer) is the exception.
func (db *DB) sync() error {
	rev, err := db.revs.current()
	if err != nil {
		return err
	}
	if db.hasApplied(rev) {
		return nil
	}
	ctx, cancel := context.WithTimeout(db.ctx, db.readTimeout)
	defer cancel()
	return db.waitApplied(ctx, rev)
}

// hasApplied reports whether the mirror has applied etcd revision rev.
func (db *DB) hasApplied(rev int64) bool {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.applied >= rev
}

func checkKey(key string) error {
	if len(key) < 2 || key[0] != '/' || key[len(key)-1] == '/' || key == compactKey {
		return fmt.Errorf("%w: key %q", bolt.ErrInvalid, key)
	}
	return nil
}

func checkPrefix(prefix string) error {
	if len(prefix) == 0 || prefix[0] != '/' || prefix[len(prefix)-1] != '/' {
		return fmt.Errorf("%w: prefix %q must start and end with /", bolt.ErrInvalid, prefix)
	}
	return nil
}

// Get implements bolt.Store: a consistent read served from memory.
func (db *DB) Get(key string) (bolt.KV, error) {
	if err := checkKey(key); err != nil {
		return bolt.KV{}, err
	}
	if err := db.sync(); err != nil {
		return bolt.KV{}, db.readErr(err)
	}
	return db.lookup(key)
}

// GetAt is Get for an in-process caller that holds a revision it must
// see (of an object it just read or wrote, or a list's): the mirror's
// state once it has applied minRev, with no etcd round trip when it has
// already. It is not a consistent read: a write another replica made
// after minRev may not show yet. minRev 0 reads the mirror as it is.
func (db *DB) GetAt(key string, minRev int64) (bolt.KV, error) {
	if err := checkKey(key); err != nil {
		return bolt.KV{}, err
	}
	if db.ctx.Err() != nil {
		return bolt.KV{}, bolt.ErrClosed
	}
	if !db.hasApplied(minRev) {
		ctx, cancel := context.WithTimeout(db.ctx, db.readTimeout)
		defer cancel()
		if err := db.waitApplied(ctx, minRev); err != nil {
			return bolt.KV{}, db.readErr(err)
		}
	}
	return db.lookup(key)
}

// lookup is key's state in the mirror.
func (db *DB) lookup(key string) (bolt.KV, error) {
	db.mu.RLock()
	kv, ok := db.idx.Get(key)
	var bad *bolt.CorruptError
	if ok && len(db.corrupt) > 0 {
		bad = db.corrupt[key]
	}
	db.mu.RUnlock()
	if !ok {
		return bolt.KV{}, fmt.Errorf("%w: %s", bolt.ErrNotFound, key)
	}
	if bad != nil {
		return bolt.KV{}, bad
	}
	return kv, nil
}

// readErr reports ErrClosed for a read cut short by Close.
func (db *DB) readErr(err error) error {
	if db.ctx.Err() != nil {
		return bolt.ErrClosed
	}
	return err
}

// Count implements bolt.Store: a consistent count (from the mirror as it
// is when etcd cannot be reached).
func (db *DB) Count(prefix string) int64 {
	if checkPrefix(prefix) != nil {
		return 0
	}
	_ = db.sync()
	db.mu.RLock()
	defer db.mu.RUnlock()
	return int64(db.idx.CountRange(prefix, prefixEnd(prefix)))
}

// prefixEnd is the smallest string above every key under prefix.
func prefixEnd(prefix string) string {
	return prefix[:len(prefix)-1] + string(rune(prefix[len(prefix)-1]+1))
}

// List implements bolt.Store. The current revision and revisions the
// in-memory history covers are served from memory; older ones that etcd
// has not compacted are read from etcd.
func (db *DB) List(prefix string, opts bolt.ListOptions) (bolt.ListResult, error) {
	if err := checkPrefix(prefix); err != nil {
		return bolt.ListResult{}, err
	}
	if opts.Revision == 0 {
		if err := db.sync(); err != nil {
			return bolt.ListResult{}, db.readErr(err)
		}
	}
	db.mu.RLock()
	rev := opts.Revision
	switch {
	case rev == 0 || rev == db.rev:
		defer db.mu.RUnlock()
		return db.listCurrent(prefix, opts)
	case rev > db.applied:
		db.mu.RUnlock()
		return bolt.ListResult{}, fmt.Errorf("%w: %d, current %d", bolt.ErrFutureRevision, rev, db.Revision())
	case rev > db.rev:
		// A revision of a write elsewhere in etcd that the mirror has
		// passed: the state under the prefix is the current one.
		defer db.mu.RUnlock()
		res, err := db.listCurrent(prefix, opts)
		res.Revision = rev
		return res, err
	case rev < db.compacted:
		db.mu.RUnlock()
		return bolt.ListResult{}, fmt.Errorf("%w: %d, compacted %d", bolt.ErrCompacted, rev, db.CompactedRevision())
	case rev >= db.ringBase:
		defer db.mu.RUnlock()
		return db.listPast(prefix, opts), nil
	}
	db.mu.RUnlock()
	// Only a past revision (no sync) gets here.
	ctx, cancel := context.WithTimeout(db.ctx, db.readTimeout)
	defer cancel()
	return db.listEtcd(ctx, prefix, opts)
}

// listCurrent pages the current state; mu held.
func (db *DB) listCurrent(prefix string, opts bolt.ListOptions) (bolt.ListResult, error) {
	from, end := max(prefix, opts.StartKey), prefixEnd(prefix)
	res := bolt.ListResult{Revision: db.rev}
	n := db.idx.CountRange(from, end)
	size := n
	if opts.Limit > 0 {
		size = min(n, opts.Limit)
	}
	if opts.Filter == nil && len(db.corrupt) == 0 {
		// Every key is an item: copy the range's KVs as they lie.
		res.Items, res.More = db.idx.AppendRange(make([]bolt.KV, 0, size), from, end, opts.Limit)
		if res.More {
			res.Remaining = int64(n - len(res.Items))
		}
		return res, nil
	}
	if opts.Filter == nil {
		res.Items = make([]bolt.KV, 0, size)
	}
	visited := 0
	db.idx.Ascend(from, func(kv *bolt.KV) bool {
		if kv.Key >= end || (opts.Limit > 0 && len(res.Items) >= opts.Limit) {
			return false
		}
		visited++
		if len(db.corrupt) > 0 && db.corrupt[kv.Key] != nil {
			return true
		}
		c := *kv // the filter gets a copy: it cannot alter the state
		if opts.Filter == nil || opts.Filter(&c) {
			res.Items = append(res.Items, c)
		}
		return true
	})
	if visited < n {
		res.More, res.Remaining = true, int64(n-visited)
	}
	if opts.ReportCorrupt {
		// Every corrupt key of the range counts, not only this page's.
		if bad := db.corruptIn(from, end); len(bad) > 0 {
			return bolt.ListResult{}, &bolt.CorruptListError{Keys: bad}
		}
	}
	return res, nil
}

// corruptIn is the corrupt keys k with from <= k < end, in key order; mu
// held.
func (db *DB) corruptIn(from, end string) []*bolt.CorruptError {
	var bad []*bolt.CorruptError
	for k, c := range db.corrupt {
		if k >= from && k < end {
			bad = append(bad, c)
		}
	}
	slices.SortFunc(bad, func(a, b *bolt.CorruptError) int { return strings.Compare(a.Key, b.Key) })
	return bad
}

// listPast reads the current state with the events after opts.Revision
// undone, one page: the KVs past a full page are counted, not copied; mu
// held.
func (db *DB) listPast(prefix string, opts bolt.ListOptions) bolt.ListResult {
	rev := opts.Revision
	start, end := max(prefix, opts.StartKey), prefixEnd(prefix)
	// undo[key] is the key's state at rev (nil: absent), for every key
	// in range an event after rev changed; changed holds its keys in order.
	undo := map[string]*bolt.KV{}
	for i := len(db.ring) - 1; i >= 0 && db.ring[i].ev.Revision > rev; i-- {
		ev := &db.ring[i].ev
		if k := ev.KV.Key; k >= start && k < end {
			undo[k] = ev.Prev
		}
	}
	changed := make([]string, 0, len(undo))
	for k := range undo {
		changed = append(changed, k)
	}
	slices.Sort(changed)
	res := bolt.ListResult{Revision: rev}
	if opts.Filter == nil {
		n := db.idx.CountRange(start, end) + len(changed)
		if opts.Limit > 0 {
			n = min(n, opts.Limit)
		}
		res.Items = make([]bolt.KV, 0, n)
	}
	// take offers the range's next KV at rev.
	take := func(kv *bolt.KV) {
		switch {
		case res.More:
			res.Remaining++
		case opts.Limit > 0 && len(res.Items) >= opts.Limit:
			res.More, res.Remaining = true, 1
		case opts.Filter == nil:
			res.Items = append(res.Items, *kv)
		default:
			c := *kv // the filter gets a copy: it cannot alter the state
			if opts.Filter(&c) {
				res.Items = append(res.Items, c)
			}
		}
	}
	// Merge the current keys with the changed ones; a changed key's state
	// at rev wins. A changed key met before the current key it sorts
	// below is absent now.
	db.idx.Ascend(start, func(kv *bolt.KV) bool {
		if kv.Key >= end {
			return false
		}
		for len(changed) > 0 && changed[0] < kv.Key {
			if then := undo[changed[0]]; then != nil {
				take(then)
			}
			changed = changed[1:]
		}
		if len(changed) > 0 && changed[0] == kv.Key {
			if then := undo[kv.Key]; then != nil {
				take(then)
			}
			changed = changed[1:]
			return true
		}
		if len(db.corrupt) == 0 || db.corrupt[kv.Key] == nil {
			take(kv)
		}
		return true
	})
	for _, k := range changed {
		if then := undo[k]; then != nil {
			take(then)
		}
	}
	return res
}

// listEtcd reads a revision older than the in-memory history from etcd's
// own history, a page of listPage keys at a time.
func (db *DB) listEtcd(ctx context.Context, prefix string, opts bolt.ListOptions) (bolt.ListResult, error) {
	from := db.prefix + max(prefix, opts.StartKey)
	end := db.prefix + prefixEnd(prefix)
	res := bolt.ListResult{Revision: opts.Revision}
	for {
		resp, err := db.cli.Get(ctx, from, clientv3.WithRange(end), clientv3.WithRev(opts.Revision), clientv3.WithLimit(listPage))
		if err != nil {
			if errors.Is(err, rpctypes.ErrCompacted) {
				return bolt.ListResult{}, fmt.Errorf("%w: %d", bolt.ErrCompacted, opts.Revision)
			}
			return bolt.ListResult{}, db.readErr(fmt.Errorf("%w: list %s at %d: %v", bolt.ErrIO, prefix, opts.Revision, err))
		}
		for i, kv := range resp.Kvs {
			if opts.Limit > 0 && len(res.Items) >= opts.Limit {
				res.More, res.Remaining = true, resp.Count-int64(i)
				return res, nil
			}
			key := string(kv.Key[len(db.prefix):])
			if key == compactKey {
				continue
			}
			e := db.decode(key, kv)
			if e.corrupt != nil {
				if opts.ReportCorrupt {
					return bolt.ListResult{}, &bolt.CorruptListError{Keys: []*bolt.CorruptError{e.corrupt}}
				}
				continue
			}
			if opts.Filter != nil && !opts.Filter(&e.kv) {
				continue
			}
			res.Items = append(res.Items, e.kv)
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return res, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}
