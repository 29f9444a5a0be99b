package rest

import "sync"

// The watch path shares work between the watchers of one resource: the
// encoding of an event in one form (eventCache) and the conversion of an
// object state into one version (conversionCache). Both keep only the
// newest results, bounded by count and by bytes, oldest dropped first.
// boundedCache is that bookkeeping, written once: the caches differ only
// in what they keep and when its size is known, an encoding's at once, a
// conversion's once it is done.

// boundedCache keeps values under keys, at most maxEntries of them and
// maxBytes in all, dropping the oldest additions first to make room for
// new ones. An entry's size is charged when it is added or later, once
// known (charge): until then it counts against the entry bound only, so a
// value still being made can be found by those who want it. It is safe for
// concurrent use; it never modifies a value it keeps.
type boundedCache[K comparable, V any] struct {
	// maxEntries and maxBytes are the bounds, set when the cache is made
	// and never changed; both must be positive.
	maxEntries, maxBytes int

	mu      sync.Mutex
	entries map[K]boundedEntry[V]
	// ring holds the additions in order, oldest at head, n in use; it is
	// made at the first addition, so a cache never used holds nothing.
	// A slot whose entry was removed stays until it is the oldest, and
	// counts against maxEntries until then.
	ring    []boundedSlot[K]
	head, n int
	bytes   int
	// added numbers the additions: an entry and its slot carry the same
	// number, so a slot left by a removed entry never drops a later
	// entry of the same key.
	added uint64
}

// boundedEntry is one kept value, size the bytes it is charged.
type boundedEntry[V any] struct {
	value V
	size  int
	id    uint64
}

type boundedSlot[K comparable] struct {
	key K
	id  uint64
}

// get returns the value kept under k.
func (c *boundedCache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	return e.value, ok
}

// add keeps v under k charged size bytes, dropping the oldest entries to
// make room, and returns v and the id of the addition (for charge and
// remove) with added true. When k already holds a value, that value is
// returned instead and nothing changes; a value larger than maxBytes is
// not kept (added is false, v returned).
func (c *boundedCache[K, V]) add(k K, v V, size int) (held V, id uint64, added bool) {
	if size > c.maxBytes {
		return v, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok {
		return e.value, e.id, false
	}
	if c.entries == nil {
		c.entries = make(map[K]boundedEntry[V])
		c.ring = make([]boundedSlot[K], c.maxEntries)
	}
	for c.n > 0 && (c.n == c.maxEntries || c.bytes+size > c.maxBytes) {
		c.dropOldestLocked()
	}
	c.added++
	c.ring[(c.head+c.n)%c.maxEntries] = boundedSlot[K]{key: k, id: c.added}
	c.n++
	c.entries[k] = boundedEntry[V]{value: v, size: size, id: c.added}
	c.bytes += size
	return v, c.added, true
}

// charge sets the size of addition id of k to size, once known, and drops
// the oldest entries (possibly this one) until the bytes kept are within
// maxBytes; a size larger than maxBytes removes the entry. It does
// nothing when the entry was dropped or removed meanwhile.
func (c *boundedCache[K, V]) charge(k K, id uint64, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || e.id != id {
		return
	}
	if size > c.maxBytes {
		c.bytes -= e.size
		delete(c.entries, k)
		return
	}
	c.bytes += size - e.size
	e.size = size
	c.entries[k] = e
	for c.bytes > c.maxBytes && c.n > 0 {
		c.dropOldestLocked()
	}
}

// remove drops addition id of k, if it is still kept.
func (c *boundedCache[K, V]) remove(k K, id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok && e.id == id {
		c.bytes -= e.size
		delete(c.entries, k)
	}
}

func (c *boundedCache[K, V]) dropOldestLocked() {
	s := c.ring[c.head]
	if e, ok := c.entries[s.key]; ok && e.id == s.id {
		c.bytes -= e.size
		delete(c.entries, s.key)
	}
	c.ring[c.head] = boundedSlot[K]{}
	c.head = (c.head + 1) % c.maxEntries
	c.n--
}
