package rest

import (
	"sync"

	"platd/server/registry"
)

// Watch events of a type with a Converter are converted into the version
// each watch serves before they are selected and rendered, as upstream's
// per-version watch cache converts each object once: all watchers of one
// version share the conversion of an event, made once even when they ask
// for it at the same moment.

// conversionCacheSize is how many converted object states are kept. As
// for eventCacheSize, watchers receive an event within moments of each
// other: only the newest states need to be held.
const conversionCacheSize = 4096

// conversionCacheBytes bounds the bytes of the converted states kept, as
// eventCacheBytes bounds the encodings'.
const conversionCacheBytes = 32 << 20

// conversionKey names one object state in one descriptor's version: the
// value of key at modification revision rev.
type conversionKey struct {
	d   *registry.Descriptor
	key string
	rev int64
}

// conversion is one state's conversion: value and err are set once done
// is closed, and never changed after.
type conversion struct {
	done  chan struct{}
	value []byte
	err   error
	// size is what the entry counts in conversionCache.bytes, set under
	// its lock once the conversion is kept.
	size int
}

// conversionCache shares the conversions of object states between
// watchers. It is safe for concurrent use; the bytes it returns are never
// modified.
type conversionCache struct {
	mu      sync.Mutex
	entries map[conversionKey]*conversion
	ring    []conversionKey // oldest at head, n in use; made at the first use
	head, n int
	bytes   int
}

// inVersion returns the state value of key at rev in d's version (see
// inVersion): converted at most once while it is kept, failures not kept.
func (c *conversionCache) inVersion(d *registry.Descriptor, key string, rev int64, value []byte) ([]byte, error) {
	if converter(d) == nil || isStoredIn(d, value, d.GroupVersion()) {
		return value, nil
	}
	k := conversionKey{d: d, key: key, rev: rev}
	c.mu.Lock()
	if e, ok := c.entries[k]; ok {
		c.mu.Unlock()
		<-e.done
		return e.value, e.err
	}
	e := &conversion{done: make(chan struct{})}
	c.addLocked(k, e)
	c.mu.Unlock()

	e.value, e.err = inVersion(d, value)
	close(e.done)
	c.mu.Lock()
	if e.err != nil || len(e.value) > conversionCacheBytes {
		// Whoever waits has it; a later reader tries again.
		if c.entries[k] == e {
			delete(c.entries, k)
		}
	} else if c.entries[k] == e {
		e.size = len(e.value)
		c.bytes += e.size
		c.evictLocked()
	}
	c.mu.Unlock()
	return e.value, e.err
}

// addLocked keeps e under k, dropping the oldest entry when all slots
// are taken.
func (c *conversionCache) addLocked(k conversionKey, e *conversion) {
	if c.entries == nil {
		c.entries = make(map[conversionKey]*conversion)
		c.ring = make([]conversionKey, conversionCacheSize)
	}
	if c.n == conversionCacheSize {
		c.dropOldestLocked()
	}
	c.ring[(c.head+c.n)%conversionCacheSize] = k
	c.n++
	c.entries[k] = e
}

// evictLocked drops the oldest entries until the bytes kept are within
// conversionCacheBytes.
func (c *conversionCache) evictLocked() {
	for c.bytes > conversionCacheBytes && c.n > 0 {
		c.dropOldestLocked()
	}
}

func (c *conversionCache) dropOldestLocked() {
	old := c.ring[c.head]
	if e, ok := c.entries[old]; ok {
		c.bytes -= e.size
		delete(c.entries, old)
	}
	c.ring[c.head] = conversionKey{}
	c.head = (c.head + 1) % conversionCacheSize
	c.n--
}
