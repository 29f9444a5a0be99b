package etcd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unsafe"

	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/bolt"
)

// histEvent is one retained event and when the mirror applied it.
type histEvent struct {
	ev   bolt.Event
	at   time.Time
	cost int64
}

// histOverhead is the memory of a retained event besides its values.
const histOverhead = int64(unsafe.Sizeof(histEvent{}) + unsafe.Sizeof(bolt.KV{}))

// Relist backoff: how soon a failed relist of the mirror is tried again,
// doubling up to relistMax, so an absent etcd is not hammered.
const (
	relistMin = 100 * time.Millisecond
	relistMax = 5 * time.Second
)

// follow applies the mirror watch's responses until Close. When etcd ends
// the watch (it fell behind a compaction, or etcd cancelled it), the
// mirror relists the prefix and watches again, as upstream's reflector
// does.
func (db *DB) follow(wch clientv3.WatchChan) {
	defer db.wg.Done()
	for {
		compacted, cause := db.drain(wch)
		if db.ctx.Err() != nil {
			return
		}
		db.mu.Lock()
		db.mirrorErr = fmt.Errorf("%w: the mirror of %s stopped (%v), relisting", ErrMirrorDown, db.prefix, cause)
		db.mu.Unlock()
		db.log.Warn("watch end", "prefix", db.prefix, "err", cause)
		if wch = db.relist(compacted); wch == nil {
			return
		}
	}
}

// drain applies a watch's responses until etcd ends it: etcd's compacted
// revision, when that is why, and the cause.
func (db *DB) drain(wch clientv3.WatchChan) (int64, error) {
	for resp := range wch {
		if err := resp.Err(); err != nil {
			if resp.CompactRevision != 0 || resp.Canceled {
				return resp.CompactRevision, err
			}
			continue
		}
		db.apply(&resp)
	}
	return 0, errors.New("watch channel closed")
}

// relist lists the prefix again until it succeeds (nil at Close), swaps
// the state in, ends every watch (they missed events: ErrCompacted, so
// clients list again) and returns the new watch from the listing on.
func (db *DB) relist(compacted int64) clientv3.WatchChan {
	wait := relistMin
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-db.ctx.Done():
			return nil
		case <-timer.C:
		}
		ctx, cancel := context.WithTimeout(db.ctx, db.readTimeout)
		st, r0, maxMod, err := db.list(ctx)
		var c int64
		if err == nil {
			c, err = db.compactedIn(ctx, r0)
		}
		cancel()
		if err != nil {
			if db.ctx.Err() != nil {
				return nil
			}
			db.log.Warn("relist", "prefix", db.prefix, "err", err)
			timer.Reset(wait)
			wait = min(2*wait, relistMax)
			continue
		}
		db.mu.Lock()
		if db.closed {
			db.mu.Unlock()
			return nil
		}
		ws := make([]*watcher, 0, len(db.watchers))
		for w := range db.watchers {
			ws = append(ws, w)
		}
		clear(db.watchers)
		db.epoch++
		db.idx, db.corrupt = st.idx, st.corrupt
		clear(db.ring)
		db.ring, db.ringBytes = nil, 0
		// Revision never goes back; deletes the mirror missed have no
		// revision to report. Those etcd compacted away cannot be
		// replayed either: the state is then served from the compaction
		// on (compactedAt reports it as compacted).
		db.rev = max(db.rev, maxMod)
		if c > db.applied {
			db.rev = max(db.rev, c)
		}
		db.ringBase = db.rev
		db.applied = max(db.applied, r0)
		db.compactedAt(max(c, compacted))
		db.mirrorErr = nil
		wch := db.watchMirror(r0 + 1)
		db.publishProgress()
		db.broadcast()
		db.mu.Unlock()
		for _, w := range ws {
			w.fail(fmt.Errorf("%w: the mirror of %s relisted at %d", bolt.ErrCompacted, db.prefix, r0))
		}
		db.log.Info("relist", "prefix", db.prefix, "keys", st.idx.Len(), "revision", r0, "watchers ended", len(ws))
		return wch
	}
}

// apply publishes one watch response: state, history, watchers, then the
// revisions, all under one lock, so no reader sees part of a transaction.
func (db *DB) apply(resp *clientv3.WatchResponse) {
	now := time.Now()
	db.mu.Lock()
	defer db.mu.Unlock()
	if resp.IsProgressNotify() {
		db.progress.Lock()
		db.progress.pending = false
		db.progress.Unlock()
		if resp.Header.Revision > db.applied {
			db.applied = resp.Header.Revision
			db.publishProgress()
			db.broadcast()
		}
		return
	}
	var last int64
	for _, ev := range resp.Events {
		rev := ev.Kv.ModRevision
		last = rev
		key := string(ev.Kv.Key[len(db.prefix):])
		if key == compactKey {
			if ev.Type == clientv3.EventTypePut {
				if c, err := strconv.ParseInt(string(ev.Kv.Value), 10, 64); err == nil {
					db.compactedAt(c)
				}
			}
			continue
		}
		old, had := db.idx.Get(key)
		var prev *bolt.KV
		if had && db.corrupt[key] == nil {
			prev = &old
		} else if had {
			// A corrupt value: the stand-in when this replica deletes it,
			// else the event carries no value (see README).
			if v, ok := db.standIns[key]; ok && ev.Type == clientv3.EventTypeDelete {
				if s, err := db.opts.Stamp(v, old.ModRevision); err == nil {
					prev = &bolt.KV{Key: key, Value: s, CreateRevision: old.CreateRevision, ModRevision: old.ModRevision}
				}
			}
		} else if ev.PrevKv != nil {
			prev = db.prevKV(key, ev.PrevKv.CreateRevision, ev.PrevKv.ModRevision, ev.PrevKv.Value)
		}
		var out bolt.Event
		switch ev.Type {
		case clientv3.EventTypePut:
			e := db.decode(key, ev.Kv)
			db.idx.Put(e.kv)
			if e.corrupt != nil {
				db.corrupt[key] = e.corrupt
			} else if len(db.corrupt) > 0 {
				delete(db.corrupt, key)
			}
			if ev.IsCreate() {
				prev = nil
			}
			out = bolt.Event{Type: bolt.Put, Revision: rev, KV: e.kv, Prev: prev}
		case clientv3.EventTypeDelete:
			if had {
				db.idx.Remove(key)
				delete(db.corrupt, key)
			}
			kv := bolt.KV{Key: key, ModRevision: rev}
			if prev != nil {
				kv.CreateRevision = prev.CreateRevision
				kv.Value, _ = db.opts.Stamp(prev.Value, rev)
			} else if had {
				kv.CreateRevision = old.CreateRevision
			}
			out = bolt.Event{Type: bolt.Delete, Revision: rev, KV: kv, Prev: prev}
		}
		h := histEvent{ev: out, at: now, cost: eventCost(&out)}
		db.ring = append(db.ring, h)
		db.ringBytes += h.cost
		for w := range db.watchers {
			w.offer(&out)
		}
		db.rev = rev
	}
	if last > db.applied {
		db.applied = last
	}
	if db.compactPending {
		db.compactedAt(db.etcdCompacted)
	}
	db.trim(now)
	db.publishProgress()
	db.broadcast()
}

// prevKV decodes an event's previous state (nil when it cannot be read).
func (db *DB) prevKV(key string, create, mod int64, stored []byte) *bolt.KV {
	val, cerr := db.plain(key, stored, mod)
	if cerr != nil {
		return nil
	}
	s, err := db.opts.Stamp(val, mod)
	if err != nil {
		return nil
	}
	return &bolt.KV{Key: key, Value: s, CreateRevision: create, ModRevision: mod}
}

// publishProgress tells every watcher how far the mirror has come.
func (db *DB) publishProgress() {
	for w := range db.watchers {
		w.advance(db.rev)
	}
}

// eventCost is the memory an event alone keeps: the value it replaced and,
// for a delete, its restamped copy (the value it writes is the state's).
func eventCost(e *bolt.Event) int64 {
	n := histOverhead + int64(len(e.KV.Key))
	if e.Prev != nil {
		n += int64(cap(e.Prev.Value))
	}
	if e.Type == bolt.Delete {
		n += int64(cap(e.KV.Value))
	}
	return n
}

// trim drops events past their retention and, past the byte bound, the
// oldest down to 7/8 of it. Dropped events stay readable from etcd until
// it is compacted, so this moves ringBase, not the compacted revision.
func (db *DB) trim(now time.Time) {
	cut := 0
	for cut < len(db.ring) && now.Sub(db.ring[cut].at) > db.opts.HistoryRetention {
		cut++
	}
	if max := db.opts.HistoryMaxBytes; max > 0 && db.ringBytes > max {
		bytes := db.ringBytes
		for i := cut; i < len(db.ring); i++ {
			bytes -= db.ring[i].cost
			if bytes <= max/8*7 {
				cut = i + 1
				break
			}
		}
	}
	db.dropOldest(cut)
}

// compactedAt records that etcd is compacted at c; mu held for writing.
// The reported compacted revision is the last revision under the prefix
// at or below c (see DB.compacted): a watch or list from there loses no
// event. Until the mirror has applied c, apply settles it again.
func (db *DB) compactedAt(c int64) {
	db.etcdCompacted = max(db.etcdCompacted, c)
	c = db.etcdCompacted
	v := c
	if db.rev <= c {
		v = db.rev
	} else if i, _ := slices.BinarySearchFunc(db.ring, c+1, func(h histEvent, r int64) int {
		return int(h.ev.Revision - r)
	}); i > 0 {
		v = db.ring[i-1].ev.Revision
	} else if db.ringBase <= c {
		v = db.ringBase
	}
	db.compactPending = db.applied < c
	if v > db.compacted {
		db.compacted = v
		db.trimTo(v)
	}
}

// trimTo drops the events at and below a compacted revision (never past
// rev: see compactedAt).
func (db *DB) trimTo(rev int64) {
	cut, _ := slices.BinarySearchFunc(db.ring, rev+1, func(h histEvent, r int64) int {
		return int(h.ev.Revision - r)
	})
	db.dropOldest(cut)
	db.ringBase = max(db.ringBase, rev)
}

// dropOldest drops the first n events of the ring, keeping whole
// revisions (a transaction's events share one).
func (db *DB) dropOldest(n int) {
	for n > 0 && n < len(db.ring) && db.ring[n].ev.Revision == db.ring[n-1].ev.Revision {
		n++
	}
	if n == 0 {
		return
	}
	for i := range n {
		db.ringBytes -= db.ring[i].cost
	}
	db.ringBase = max(db.ringBase, db.ring[n-1].ev.Revision)
	clear(db.ring[:n])
	db.ring = db.ring[n:]
	if cap(db.ring) > 64 && len(db.ring) < cap(db.ring)/4 {
		db.ring = append(make([]histEvent, 0, 2*len(db.ring)+16), db.ring...)
	}
}
