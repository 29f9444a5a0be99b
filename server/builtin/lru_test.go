package builtin

import (
	"slices"
	"sync"
	"testing"
)

func TestLRU(t *testing.T) {
	t.Parallel()
	c := newLRU[int](2)
	c.add("a", 1)
	c.add("b", 2)
	if v, ok := c.get("a"); !ok || v != 1 {
		t.Fatalf("get a = %d, %v", v, ok)
	}
	// a was used last: b is the one dropped.
	c.add("c", 3)
	if _, ok := c.get("b"); ok {
		t.Errorf("b kept past the bound")
	}
	c.add("a", 10)
	made := 0
	if v := c.getOrAdd("a", func() int { made++; return 0 }); v != 10 || made != 0 {
		t.Errorf("getOrAdd of a held key = %d (made %d)", v, made)
	}
	if v := c.getOrAdd("d", func() int { made++; return 4 }); v != 4 || made != 1 {
		t.Errorf("getOrAdd of a new key = %d (made %d)", v, made)
	}
	var keys []string
	for _, k := range []string{"a", "b", "c", "d"} {
		if _, ok := c.get(k); ok {
			keys = append(keys, k)
		}
	}
	if !slices.Equal(keys, []string{"a", "d"}) || c.len() != 2 {
		t.Errorf("held %v (%d), want [a d]", keys, c.len())
	}
	c.remove("a")
	if _, ok := c.get("a"); ok || c.len() != 1 {
		t.Errorf("a held after remove (%d keys)", c.len())
	}
}

// TestLRUConcurrentGetOrAdd: callers racing on a new key share one value.
func TestLRUConcurrentGetOrAdd(t *testing.T) {
	t.Parallel()
	c := newLRU[*int](4)
	var wg sync.WaitGroup
	got := make([]*int, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = c.getOrAdd("k", func() *int { return new(int) })
		}()
	}
	wg.Wait()
	for _, p := range got {
		if p != got[0] {
			t.Fatal("racing callers got different values")
		}
	}
}
