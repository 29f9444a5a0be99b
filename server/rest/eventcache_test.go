package rest

import (
	"fmt"
	"testing"
)

// The cache keeps the newest encodings within both bounds, and none
// larger than the byte bound.
func TestEventCacheBounds(t *testing.T) {
	t.Parallel()
	key := func(i int) eventKey { return eventKey{key: fmt.Sprintf("/k/%d", i), rev: int64(i)} }
	check := func(c *eventCache, what string) {
		t.Helper()
		sum := 0
		for _, b := range c.entries {
			sum += cap(b)
		}
		if sum != c.bytes || len(c.entries) != c.n || c.n > eventCacheSize || c.bytes > eventCacheBytes {
			t.Fatalf("%s: %d entries of %d bytes, counted %d of %d", what, len(c.entries), sum, c.n, c.bytes)
		}
	}

	var c eventCache
	const big = 1 << 20
	for i := range 100 {
		c.put(key(i), make([]byte, big))
		check(&c, fmt.Sprintf("after large entry %d", i))
	}
	if want := eventCacheBytes / big; c.n != want {
		t.Fatalf("%d large entries kept, want %d", c.n, want)
	}
	for i := range 100 {
		_, ok := c.get(key(i))
		if want := i >= 100-eventCacheBytes/big; ok != want {
			t.Fatalf("entry %d cached %v, want %v", i, ok, want)
		}
	}
	c.put(key(1000), make([]byte, eventCacheBytes+1))
	if _, ok := c.get(key(1000)); ok || c.n != eventCacheBytes/big {
		t.Fatalf("an entry larger than the bound was kept or evicted others: %d entries", c.n)
	}

	// Small entries: the count bound, oldest out first.
	for i := range 2 * eventCacheSize {
		c.put(key(2000+i), make([]byte, 64))
	}
	check(&c, "after small entries")
	if c.n != eventCacheSize {
		t.Fatalf("%d small entries kept, want %d", c.n, eventCacheSize)
	}
	if _, ok := c.get(key(2000 + eventCacheSize - 1)); ok {
		t.Fatal("an entry older than the newest eventCacheSize is still cached")
	}
	if _, ok := c.get(key(2000 + 2*eventCacheSize - 1)); !ok {
		t.Fatal("the newest entry is not cached")
	}
	c.put(key(2000+2*eventCacheSize-1), make([]byte, 10))
	check(&c, "after putting a cached key again")
}
