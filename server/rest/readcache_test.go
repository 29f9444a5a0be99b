package rest

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"platd/bolt"
	"platd/server/registry"
)

// TestInProcessReadsAreTheCallers: Get and List answer each stored state
// as decoded, whether it was read before or not; what a caller changes in
// an answer never shows in a later one; a write is read at its new state
// and a delete is gone.
func TestInProcessReadsAreTheCallers(t *testing.T) {
	t.Parallel()
	h, _, _ := newTestHandler(t, Config{})
	ctx := context.Background()
	d := h.reg.Lookup("", "v1", "configmaps")
	for _, name := range []string{"a", "b"} {
		cm := Object{"metadata": map[string]any{"name": name, "namespace": "default", "labels": map[string]any{"x": "1"}},
			"data": map[string]any{"k": name}}
		if err := h.CreateOnly(ctx, d, cm); err != nil {
			t.Fatal(err)
		}
	}
	decoded := func(name string) Object {
		t.Helper()
		kv, err := h.store.Get(d.Key("default", name))
		if err != nil {
			t.Fatal(err)
		}
		obj, err := h.servedObject(d, kv.Value)
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	spoil := func(obj Object) {
		obj["data"].(map[string]any)["k"] = "spoiled"
		obj["metadata"].(map[string]any)["labels"].(map[string]any)["x"] = "spoiled"
		obj["extra"] = []any{"spoiled"}
	}
	get := func() []Object {
		obj, err := h.Get(d, "default", "a")
		if err != nil {
			t.Fatal(err)
		}
		return []Object{obj}
	}
	list := func() []Object {
		objs, _, err := h.List(d, "default")
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	for _, tc := range []struct {
		name string
		read func() []Object
	}{{"get", get}, {"list", list}} {
		for round := range 3 {
			got := tc.read()
			for _, obj := range got {
				name := obj["metadata"].(map[string]any)["name"].(string)
				if want := decoded(name); !reflect.DeepEqual(obj, want) {
					t.Fatalf("%s round %d: %s is\n%v\nwant\n%v", tc.name, round, name, obj, want)
				}
				spoil(obj)
			}
		}
	}

	_, err := h.Update(ctx, d, "default", "a", "", func(old Object) Object {
		old["data"] = map[string]any{"k": "changed"}
		return old
	})
	if err != nil {
		t.Fatal(err)
	}
	got := get()[0]
	if data := got["data"].(map[string]any); data["k"] != "changed" || !reflect.DeepEqual(got, decoded("a")) {
		t.Fatalf("after update: %v", got)
	}
	if _, err := h.Delete(ctx, d, "default", "b", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if objs := list(); len(objs) != 1 || objs[0]["data"].(map[string]any)["k"] != "changed" {
		t.Fatalf("after delete: %v", objs)
	}
}

// TestReadCacheBound: the cache holds no more than its bound of stored
// bytes, keeps no state larger than its largest entry, keeps the newest
// revision of a key, and serves concurrent readers and writers.
func TestReadCacheBound(t *testing.T) {
	t.Parallel()
	h, _, _ := newTestHandler(t, Config{})
	d := h.reg.Lookup("", "v1", "configmaps")
	var c readCache
	value := make([]byte, 1024)
	kv := func(i int, rev int64) bolt.KV {
		return bolt.KV{Key: fmt.Sprintf("k%d", i), ModRevision: rev, Value: value}
	}
	obj := func(i int) Object { return Object{"i": fmt.Sprint(i)} }

	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2 * readCacheBytes / len(value) {
				c.put(d, kv(i, int64(w+1)), obj(i))
				c.get(d, kv(i/2, int64(w+1)))
			}
		}()
	}
	wg.Wait()
	if c.bytes > readCacheBytes || c.bytes != len(c.entries)*len(value) {
		t.Fatalf("cache holds %d bytes in %d entries, bound %d", c.bytes, len(c.entries), readCacheBytes)
	}

	c.put(d, kv(-1, 7), obj(7))
	c.put(d, kv(-1, 5), obj(5))
	if got := c.get(d, kv(-1, 7)); got["i"] != "7" {
		t.Fatalf("newest revision: %v", got)
	}
	if got := c.get(d, kv(-1, 5)); got != nil {
		t.Fatalf("older revision answered: %v", got)
	}
	big := bolt.KV{Key: "big", ModRevision: 1, Value: make([]byte, readCacheMaxEntry+1)}
	c.put(d, big, obj(0))
	if got := c.get(d, big); got != nil {
		t.Fatalf("state over the largest entry kept: %v", got)
	}
}
