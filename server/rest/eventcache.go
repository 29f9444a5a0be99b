package rest

import (
	"sync"

	"platd/server/registry"
)

// eventCacheSize is how many encoded event objects are kept. Watchers of
// one resource receive an event within moments of each other, so only the
// newest events need to be held; a few thousand covers a burst of writes
// to a resource with many watchers without holding much memory.
const eventCacheSize = 4096

// eventCacheBytes bounds the bytes of those encodings: a few thousand
// objects of a MiB would be gigabytes. 32 MiB still holds the newest
// events of a burst of large objects, which is all the sharing needs; an
// encoding larger than it is not kept (each watcher encodes it).
const eventCacheBytes = 32 << 20

// eventKey identifies the encoding of one event object: which object
// state (key at revision, or its previous state restamped at revision) in
// which descriptor's form and which output.
type eventKey struct {
	d    *registry.Descriptor
	out  output
	key  string
	rev  int64
	prev bool
}

// eventCache holds the most recent encoded event objects, at most
// eventCacheSize of them and eventCacheBytes in all. It is safe for
// concurrent use; cached bytes are never modified.
type eventCache struct {
	mu      sync.Mutex
	entries map[eventKey][]byte
	// ring is made at the first put: a server nobody watches never
	// holds its eventCacheSize keys.
	ring    []eventKey // oldest at head, n in use
	head, n int
	bytes   int
}

func (c *eventCache) get(k eventKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.entries[k]
	return b, ok
}

// put keeps b under k, dropping the oldest entries to make room.
func (c *eventCache) put(k eventKey, b []byte) {
	size := cap(b)
	if size > eventCacheBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[eventKey][]byte)
		c.ring = make([]eventKey, eventCacheSize)
	}
	if _, ok := c.entries[k]; ok {
		return
	}
	for c.n == eventCacheSize || c.bytes+size > eventCacheBytes {
		old := c.ring[c.head]
		c.bytes -= cap(c.entries[old])
		delete(c.entries, old)
		c.ring[c.head] = eventKey{}
		c.head = (c.head + 1) % eventCacheSize
		c.n--
	}
	c.ring[(c.head+c.n)%eventCacheSize] = k
	c.n++
	c.entries[k] = b
	c.bytes += size
}
