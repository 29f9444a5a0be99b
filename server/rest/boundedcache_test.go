package rest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// checkBoundedCache fails t unless c is within its bounds and its counts
// agree with what it holds: every entry has the live slot of its
// addition, and the bytes counted are the sizes charged.
func checkBoundedCache[K comparable, V any](t *testing.T, c *boundedCache[K, V], what string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n > c.maxEntries || len(c.entries) > c.n {
		t.Fatalf("%s: %d entries in %d slots, at most %d", what, len(c.entries), c.n, c.maxEntries)
	}
	sum := 0
	for _, e := range c.entries {
		sum += e.size
	}
	if sum != c.bytes || c.bytes > c.maxBytes {
		t.Fatalf("%s: %d bytes charged, counted %d, at most %d", what, sum, c.bytes, c.maxBytes)
	}
	live := 0
	for i := range c.n {
		s := c.ring[(c.head+i)%c.maxEntries]
		if e, ok := c.entries[s.key]; ok && e.id == s.id {
			live++
		}
	}
	if live != len(c.entries) {
		t.Fatalf("%s: %d entries, %d of them in a live slot", what, len(c.entries), live)
	}
}

// keptKeys are the keys c holds, oldest addition first.
func keptKeys[V any](c *boundedCache[string, V]) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var keys []string
	for i := range c.n {
		s := c.ring[(c.head+i)%c.maxEntries]
		if e, ok := c.entries[s.key]; ok && e.id == s.id {
			keys = append(keys, s.key)
		}
	}
	return keys
}

// TestBoundedCache checks the bounds by count and by bytes, the order
// entries are dropped in, and entries whose size is charged once known:
// what is kept, and the bytes counted, after each sequence of calls.
func TestBoundedCache(t *testing.T) {
	t.Parallel()
	type step struct {
		op   string // "add", "charge" or "remove"
		key  string
		size int
		// first makes charge and remove name the key's first addition
		// rather than its last.
		first bool
	}
	add := func(k string, size int) step { return step{op: "add", key: k, size: size} }
	charge := func(k string, size int) step { return step{op: "charge", key: k, size: size} }
	remove := func(k string) step { return step{op: "remove", key: k} }
	for _, tc := range []struct {
		name  string
		steps []step
		kept  []string
		bytes int
		// value, when set, is what get returns for kept[0].
		value string
	}{
		{
			name:  "count bound drops the oldest",
			steps: []step{add("a", 1), add("b", 1), add("c", 1), add("d", 1), add("e", 1), add("f", 1)},
			kept:  []string{"c", "d", "e", "f"},
			bytes: 4,
		},
		{
			name:  "byte bound drops the oldest until the new entry fits",
			steps: []step{add("a", 40), add("b", 40), add("c", 10), add("d", 30)},
			kept:  []string{"b", "c", "d"},
			bytes: 80,
		},
		{
			name:  "an entry larger than the byte bound is not kept and drops nothing",
			steps: []step{add("a", 10), add("b", 101)},
			kept:  []string{"a"},
			bytes: 10,
		},
		{
			name:  "an entry of exactly the byte bound drops all others",
			steps: []step{add("a", 10), add("b", 100)},
			kept:  []string{"b"},
			bytes: 100,
		},
		{
			name:  "a kept key is not replaced",
			steps: []step{add("a", 10), add("a", 20)},
			kept:  []string{"a"},
			bytes: 10,
			value: "a1",
		},
		{
			name:  "pending entries count against the entry bound only",
			steps: []step{add("a", 100), add("b", 0), add("c", 0)},
			kept:  []string{"a", "b", "c"},
			bytes: 100,
		},
		{
			name:  "a charge drops the oldest until the bytes fit",
			steps: []step{add("a", 0), add("b", 0), add("c", 0), charge("a", 40), charge("c", 40), charge("b", 40)},
			kept:  []string{"b", "c"},
			bytes: 80,
		},
		{
			name:  "a charge may drop its own entry when it is the oldest",
			steps: []step{add("a", 0), add("b", 90), charge("a", 50)},
			kept:  []string{"b"},
			bytes: 90,
		},
		{
			name:  "a charge larger than the byte bound removes the entry",
			steps: []step{add("a", 10), add("b", 0), charge("b", 101)},
			kept:  []string{"a"},
			bytes: 10,
		},
		{
			name:  "a charge of a dropped entry changes nothing",
			steps: []step{add("a", 0), add("b", 1), add("c", 1), add("d", 1), add("e", 1), charge("a", 10)},
			kept:  []string{"b", "c", "d", "e"},
			bytes: 4,
		},
		{
			name:  "remove gives back the bytes",
			steps: []step{add("a", 30), add("b", 20), remove("a")},
			kept:  []string{"b"},
			bytes: 20,
		},
		{
			name:  "a removed entry's slot counts until it is the oldest",
			steps: []step{add("a", 1), remove("a"), add("b", 1), add("c", 1), add("d", 1), add("e", 1)},
			kept:  []string{"b", "c", "d", "e"},
			bytes: 4,
		},
		{
			name:  "a removed entry's slot does not drop the key added again",
			steps: []step{add("a", 1), remove("a"), add("b", 1), add("c", 1), add("a", 1), add("d", 1)},
			kept:  []string{"b", "c", "a", "d"},
			bytes: 4,
			value: "b1",
		},
		{
			name:  "charge and remove of an earlier addition change nothing",
			steps: []step{add("a", 0), remove("a"), add("a", 0), {op: "charge", key: "a", size: 50, first: true}, {op: "remove", key: "a", first: true}},
			kept:  []string{"a"},
			bytes: 0,
			value: "a2",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &boundedCache[string, string]{maxEntries: 4, maxBytes: 100}
			ids := map[string][]uint64{}
			for i, s := range tc.steps {
				var id uint64
				if n := len(ids[s.key]); n > 0 {
					id = ids[s.key][n-1]
					if s.first {
						id = ids[s.key][0]
					}
				}
				switch s.op {
				case "add":
					v := fmt.Sprintf("%s%d", s.key, len(ids[s.key])+1)
					held, id, added := c.add(s.key, v, s.size)
					if added {
						ids[s.key] = append(ids[s.key], id)
					}
					if added && held != v {
						t.Fatalf("step %d: add %s gave %q, added %v", i, v, held, added)
					}
				case "charge":
					c.charge(s.key, id, s.size)
				case "remove":
					c.remove(s.key, id)
				}
				checkBoundedCache(t, c, fmt.Sprintf("step %d", i))
			}
			if got := keptKeys(c); !slices.Equal(got, tc.kept) || c.bytes != tc.bytes {
				t.Errorf("kept %q of %d bytes, want %q of %d", got, c.bytes, tc.kept, tc.bytes)
			}
			for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
				if _, ok := c.get(k); ok != slices.Contains(tc.kept, k) {
					t.Errorf("get %s: %v", k, ok)
				}
			}
			if tc.value != "" {
				if v, _ := c.get(tc.kept[0]); v != tc.value {
					t.Errorf("get %s = %q, want %q", tc.kept[0], v, tc.value)
				}
			}
		})
	}
}

// TestBoundedCacheConcurrent uses one cache from many goroutines, as the
// watchers of a resource do: each adds values, some of them pending and
// charged or removed later, and reads what the others added. Run with
// -race; the cache must stay within its bounds and give each key only the
// value added under it.
func TestBoundedCacheConcurrent(t *testing.T) {
	t.Parallel()
	c := &boundedCache[string, int]{maxEntries: 64, maxBytes: 4096}
	const workers, rounds, keys = 8, 2000, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				n := (i*7 + w*13) % keys
				k := fmt.Sprint(n)
				if v, ok := c.get(k); ok {
					if v != n {
						t.Errorf("get %s = %d", k, v)
						return
					}
					continue
				}
				switch i % 3 {
				case 0:
					c.add(k, n, n)
				case 1:
					if _, id, added := c.add(k, n, 0); added {
						c.charge(k, id, 2*n)
					}
				case 2:
					if _, id, added := c.add(k, n, 0); added && n%2 == 0 {
						c.remove(k, id)
					}
				}
			}
		})
	}
	wg.Wait()
	checkBoundedCache(t, c, "after all")
	for k, e := range c.entries {
		if fmt.Sprint(e.value) != k {
			t.Errorf("%s holds %d", k, e.value)
		}
	}
}
