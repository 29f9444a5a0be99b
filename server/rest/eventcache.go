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

// eventCache holds the most recent encoded event objects. It is safe for
// concurrent use; cached bytes are never modified.
type eventCache struct {
	mu      sync.Mutex
	entries map[eventKey][]byte
	ring    [eventCacheSize]eventKey
	next    int
	filled  bool
}

func (c *eventCache) get(k eventKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.entries[k]
	return b, ok
}

// put keeps b under k, dropping the oldest entry when full.
func (c *eventCache) put(k eventKey, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[eventKey][]byte)
	}
	if _, ok := c.entries[k]; ok {
		return
	}
	if c.filled {
		delete(c.entries, c.ring[c.next])
	}
	c.ring[c.next] = k
	c.entries[k] = b
	c.next++
	if c.next == eventCacheSize {
		c.next, c.filled = 0, true
	}
}
