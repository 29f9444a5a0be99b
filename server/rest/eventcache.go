package rest

import "platd/server/registry"

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
// eventCacheSize of them and eventCacheBytes in all, each charged the
// capacity of its bytes. It is safe for concurrent use; cached bytes are
// never modified.
type eventCache struct {
	kept boundedCache[eventKey, []byte]
}

func newEventCache() *eventCache {
	return &eventCache{kept: boundedCache[eventKey, []byte]{maxEntries: eventCacheSize, maxBytes: eventCacheBytes}}
}

func (c *eventCache) get(k eventKey) ([]byte, bool) {
	return c.kept.get(k)
}

// put keeps b under k, dropping the oldest entries to make room; it keeps
// nothing when k is already kept or b is larger than eventCacheBytes.
func (c *eventCache) put(k eventKey, b []byte) {
	c.kept.add(k, b, cap(b))
}
