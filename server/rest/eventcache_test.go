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
		checkBoundedCache(t, &c.kept, what)
		if len(c.kept.entries) != c.kept.n {
			t.Fatalf("%s: %d entries in %d slots", what, len(c.kept.entries), c.kept.n)
		}
		for k, e := range c.kept.entries {
			if e.size != cap(e.value) {
				t.Fatalf("%s: %v charged %d bytes, holds %d", what, k, e.size, cap(e.value))
			}
		}
	}

	c := newEventCache()
	const big = 1 << 20
	for i := range 100 {
		c.put(key(i), make([]byte, big))
		check(c, fmt.Sprintf("after large entry %d", i))
	}
	if want := eventCacheBytes / big; c.kept.n != want {
		t.Fatalf("%d large entries kept, want %d", c.kept.n, want)
	}
	for i := range 100 {
		_, ok := c.get(key(i))
		if want := i >= 100-eventCacheBytes/big; ok != want {
			t.Fatalf("entry %d cached %v, want %v", i, ok, want)
		}
	}
	c.put(key(1000), make([]byte, eventCacheBytes+1))
	if _, ok := c.get(key(1000)); ok || c.kept.n != eventCacheBytes/big {
		t.Fatalf("an entry larger than the bound was kept or evicted others: %d entries", c.kept.n)
	}

	// Small entries: the count bound, oldest out first.
	for i := range 2 * eventCacheSize {
		c.put(key(2000+i), make([]byte, 64))
	}
	check(c, "after small entries")
	if c.kept.n != eventCacheSize {
		t.Fatalf("%d small entries kept, want %d", c.kept.n, eventCacheSize)
	}
	if _, ok := c.get(key(2000 + eventCacheSize - 1)); ok {
		t.Fatal("an entry older than the newest eventCacheSize is still cached")
	}
	if _, ok := c.get(key(2000 + 2*eventCacheSize - 1)); !ok {
		t.Fatal("the newest entry is not cached")
	}
	c.put(key(2000+2*eventCacheSize-1), make([]byte, 10))
	check(c, "after putting a cached key again")
}
