package rest

import (
	"sync"

	"platd/bolt"
	"platd/server/registry"
)

// The in-process reads (Get and List, the admission hooks' Lookup) decode
// the same few objects again and again: every pod create reads its
// namespace, its service account and each PriorityClass. A stored state
// never changes once written, so its decoded served form is kept, keyed
// by descriptor and storage key and checked against the revision of the
// state read. Get and List give each caller a copy of it (a copy costs a
// fraction of a decode, and what the caller does with it stays its own);
// admission hooks, which only read what they look up
// (registry.Lookup), share the kept object itself.

// readCacheBytes bounds the cache by the stored size of what it holds
// (the decoded form takes a few times more): enough for the namespaces,
// accounts and classes admission reads on a busy site.
const readCacheBytes = 4 << 20

// readCacheMaxEntry is the largest stored state kept: a large object is
// rarely read in process, and must not push out many small ones.
const readCacheMaxEntry = 32 << 10

// readCache holds decoded served forms of stored states. It is safe for
// concurrent use; a cached object is never modified: Get and List hand
// out copies, admission hooks only read it.
type readCache struct {
	mu      sync.Mutex
	entries map[readCacheKey]readCacheEntry
	bytes   int
}

type readCacheKey struct {
	d   *registry.Descriptor
	key string
}

type readCacheEntry struct {
	rev  int64
	size int
	obj  Object
}

// get returns the cached served form of kv, or nil. It is shared: the
// caller must not modify it.
func (c *readCache) get(d *registry.Descriptor, kv bolt.KV) Object {
	c.mu.Lock()
	e, ok := c.entries[readCacheKey{d, kv.Key}]
	c.mu.Unlock()
	if !ok || e.rev != kv.ModRevision {
		return nil
	}
	return e.obj
}

// put keeps obj, the served form of kv, which the caller must not modify
// afterwards. Past the bound, other entries are dropped first.
func (c *readCache) put(d *registry.Descriptor, kv bolt.KV, obj Object) {
	size := len(kv.Value)
	if size > readCacheMaxEntry {
		return
	}
	k := readCacheKey{d, kv.Key}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[readCacheKey]readCacheEntry{}
	}
	if old, ok := c.entries[k]; ok {
		if old.rev > kv.ModRevision {
			return
		}
		c.bytes -= old.size
		delete(c.entries, k)
	}
	for victim, e := range c.entries {
		if c.bytes+size <= readCacheBytes {
			break
		}
		c.bytes -= e.size
		delete(c.entries, victim)
	}
	c.entries[k] = readCacheEntry{rev: kv.ModRevision, size: size, obj: obj}
	c.bytes += size
}

// readObject returns the served form of the stored state kv of d, which
// belongs to the caller.
func (h *Handler) readObject(d *registry.Descriptor, kv bolt.KV) (Object, error) {
	obj, err := h.sharedObject(d, kv)
	if err != nil {
		return nil, err
	}
	return deepCopyObject(obj), nil
}

// sharedObject returns the served form of the stored state kv of d,
// shared with other readers: the caller must not modify it.
func (h *Handler) sharedObject(d *registry.Descriptor, kv bolt.KV) (Object, error) {
	if obj := h.reads.get(d, kv); obj != nil {
		return obj, nil
	}
	obj, err := h.servedObject(d, kv.Value)
	if err != nil {
		return nil, err
	}
	h.reads.put(d, kv, obj)
	return obj, nil
}
