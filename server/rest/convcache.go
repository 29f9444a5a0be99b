package rest

import "platd/server/registry"

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
}

// conversionCache shares the conversions of object states between
// watchers: a conversion is kept from when it begins, so those who ask
// for it meanwhile wait for it rather than convert again, and is charged
// its bytes once done. It is safe for concurrent use; the bytes it
// returns are never modified.
type conversionCache struct {
	kept boundedCache[conversionKey, *conversion]
}

func newConversionCache() *conversionCache {
	return &conversionCache{kept: boundedCache[conversionKey, *conversion]{maxEntries: conversionCacheSize, maxBytes: conversionCacheBytes}}
}

// inVersion returns the state value of key at rev in d's version (see
// inVersion): converted at most once while it is kept, failures not kept.
// A conversion dropped from the cache while in progress is still given to
// whoever waits for it; a later reader converts again.
func (c *conversionCache) inVersion(d *registry.Descriptor, key string, rev int64, value []byte) ([]byte, error) {
	if converter(d) == nil || isStoredIn(d, value, d.GroupVersion()) {
		return value, nil
	}
	k := conversionKey{d: d, key: key, rev: rev}
	if e, ok := c.kept.get(k); ok {
		<-e.done
		return e.value, e.err
	}
	e, id, added := c.kept.add(k, &conversion{done: make(chan struct{})}, 0)
	if !added {
		// Another watcher began it meanwhile.
		<-e.done
		return e.value, e.err
	}
	e.value, e.err = inVersion(d, value)
	close(e.done)
	if e.err != nil {
		// Whoever waits has it; a later reader tries again.
		c.kept.remove(k, id)
	} else {
		c.kept.charge(k, id, len(e.value))
	}
	return e.value, e.err
}
