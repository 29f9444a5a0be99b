package rest

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"platd/bolt"
	"platd/server/registry"
)

// The protobuf form of a list item costs a transcoding of its stored JSON
// (about 2 µs for a 600-byte ConfigMap), where a JSON list only copies the
// stored bytes: transcoding alone leaves a full protobuf list of 10,000
// objects slower than the same list in JSON, and client-go's informers
// list built-in types in protobuf. So the protobuf message of each object
// state a list renders is kept, keyed by storage key and revision (the
// bytes of a key at a revision never change), and a later list copies it.
// The message of an object's metadata (a PartialObjectMetadataList's
// item, what metadata informers list) is kept the same way, under a key of
// its own (metadataCacheKey).
//
// Entries are filled lazily by protobuf lists only, so a server nobody
// asks for protobuf holds none. A watch of the whole store, started with
// the first entry, drops an entry when its object changes or is deleted;
// the revision check alone keeps answers right if it lags.

// protoCacheBytes bounds the memory of the cache: the messages and a fixed
// overhead per entry. 64 MiB holds about 100,000 objects of the usual
// half kilobyte, the full lists of a larger site than one platd is meant
// for; past it the oldest entries are dropped first, and lists of what no
// longer fits are transcoded as before.
const protoCacheBytes = 64 << 20

// protoCacheMaxEntry is the largest message kept: one huge object must
// not push out thousands of small ones, and transcoding it costs little
// beside sending it.
const protoCacheMaxEntry = 256 << 10

// protoEntryOverhead is about what an entry costs besides its message:
// the map slot, the entry and its queue record.
const protoEntryOverhead = 96

// protoCacheShards spreads the entries over independently locked parts, so
// the workers rendering parts of one list and concurrent lists rarely wait
// for each other.
const protoCacheShards = 16

// protoCache holds protobuf messages of stored object states. It is safe
// for concurrent use; a message returned by get is never modified.
type protoCache struct {
	seed   maphash.Seed
	shards [protoCacheShards]protoShard
	// shardBytes bounds each shard: protoCacheBytes over the shards.
	shardBytes int
	// watching is set while the invalidation watch runs.
	watching atomic.Bool
	// store and done feed the invalidation watch; with no store entries
	// are only replaced by newer revisions and dropped by the bound.
	store Storage
	done  <-chan struct{}
}

type protoShard struct {
	mu      sync.RWMutex
	entries map[string]protoEntry
	// queue holds the keys in the order their entries were added, oldest
	// from head; a record whose entry was replaced or dropped is skipped.
	queue []protoRecord
	head  int
	bytes int
}

type protoEntry struct {
	d   *registry.Descriptor
	rev int64
	pb  []byte
}

type protoRecord struct {
	key string
	rev int64
}

func newProtoCache(store Storage, done <-chan struct{}) *protoCache {
	return &protoCache{seed: maphash.MakeSeed(), shardBytes: protoCacheBytes / protoCacheShards, store: store, done: done}
}

func (c *protoCache) shard(key string) *protoShard {
	return &c.shards[maphash.String(c.seed, key)%protoCacheShards]
}

// get returns the message of key at revision rev in d's form.
func (c *protoCache) get(d *registry.Descriptor, key string, rev int64) ([]byte, bool) {
	s := c.shard(key)
	s.mu.RLock()
	e, ok := s.entries[key]
	s.mu.RUnlock()
	if !ok || e.rev != rev || e.d != d {
		return nil, false
	}
	return e.pb, true
}

// put keeps a copy of pb as the message of key at revision rev in d's
// form, replacing an entry of an older revision or another form.
func (c *protoCache) put(d *registry.Descriptor, key string, rev int64, pb []byte) {
	if rev <= 0 || len(pb) > protoCacheMaxEntry {
		return
	}
	if c.store != nil && !c.watching.Load() {
		c.startWatch()
	}
	e := protoEntry{d: d, rev: rev, pb: append([]byte(nil), pb...)}
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.entries[key]; ok {
		if old.rev > rev {
			return // a list at a past revision: keep the newer state
		}
		s.bytes -= entrySize(key, old.pb)
	}
	if s.entries == nil {
		s.entries = make(map[string]protoEntry)
	}
	s.entries[key] = e
	s.bytes += entrySize(key, e.pb)
	s.queue = append(s.queue, protoRecord{key: key, rev: rev})
	for s.bytes > c.shardBytes && s.head < len(s.queue) {
		r := s.queue[s.head]
		s.queue[s.head] = protoRecord{}
		s.head++
		if old, ok := s.entries[r.key]; ok && old.rev == r.rev {
			s.bytes -= entrySize(r.key, old.pb)
			delete(s.entries, r.key)
		}
	}
	s.compactQueue()
}

// compactQueue drops the skipped records once they outnumber the live
// ones, so a cache of few, often rewritten objects keeps a short queue.
func (s *protoShard) compactQueue() {
	if len(s.queue)-s.head <= 2*len(s.entries)+64 {
		return
	}
	q := s.queue[:0]
	for _, r := range s.queue[s.head:] {
		if e, ok := s.entries[r.key]; ok && e.rev == r.rev {
			q = append(q, r)
		}
	}
	clear(s.queue[len(q):])
	s.queue, s.head = q, 0
}

// metadataCacheKey is the cache key of the PartialObjectMetadata message of
// the object at key: a storage key never holds a NUL byte.
func metadataCacheKey(key string) string { return key + "\x00metadata" }

// drop removes the entries of key, its object's message and its
// metadata's, that are older than rev.
func (c *protoCache) drop(key string, rev int64) {
	for _, k := range []string{key, metadataCacheKey(key)} {
		s := c.shard(k)
		s.mu.Lock()
		if e, ok := s.entries[k]; ok && e.rev < rev {
			s.bytes -= entrySize(k, e.pb)
			delete(s.entries, k)
		}
		s.mu.Unlock()
	}
}

// clearAll drops every entry.
func (c *protoCache) clearAll() {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.entries, s.queue, s.head, s.bytes = nil, nil, 0, 0
		s.mu.Unlock()
	}
}

// size is the memory the entries are charged, and their number.
func (c *protoCache) size() (bytes, entries int) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		bytes += s.bytes
		entries += len(s.entries)
		s.mu.RUnlock()
	}
	return bytes, entries
}

func entrySize(key string, pb []byte) int {
	return cap(pb) + len(key) + protoEntryOverhead
}

// startWatch starts the invalidation watch of every key (they all start
// with "/") unless it runs. Entries put
// before it starts may outlive their objects; the bound drops them.
func (c *protoCache) startWatch() {
	if !c.watching.CompareAndSwap(false, true) {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := c.store.Watch(ctx, "/", 0)
	if err != nil {
		// A closed store: no watch is tried again, entries are still
		// checked by revision and bounded.
		cancel()
		return
	}
	go c.invalidate(ctx, cancel, w)
}

// invalidate drops the entry of every key written or deleted, until the
// server shuts down. If the watch ends early (too slow, storage closed),
// every entry is dropped, since changes may have been missed, and the
// next put starts a new watch.
func (c *protoCache) invalidate(ctx context.Context, cancel context.CancelFunc, w bolt.Watcher) {
	defer cancel()
	defer w.Stop()
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				c.clearAll()
				c.watching.Store(false)
				return
			}
			c.drop(ev.KV.Key, ev.Revision)
		case <-c.done:
			return
		case <-ctx.Done():
			return
		}
	}
}
