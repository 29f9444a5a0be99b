package etcd

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"platd/bolt"
)

// TestReplicaReadsUnderLoad: while readers on replica b keep a revision
// fetch in flight at all times, a write acknowledged by replica a is seen
// by the next Get and List on b: a read that arrives during a fetch never
// takes that fetch's answer.
func TestReplicaReadsUnderLoad(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	a := openOn(t, shared, prefix, nil)
	b := openOn(t, shared, prefix, nil)
	if _, err := a.Create(t.Context(), "/cms/ns/busy", []byte("v")); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := b.Get("/cms/ns/busy"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()
	for i := range 200 {
		key := fmt.Sprintf("/cms/ns/k%03d", i)
		value := fmt.Appendf(nil, "v%d", i)
		kv, err := a.Create(t.Context(), key, value)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.Get(key)
		if err != nil {
			t.Fatalf("replica b after a's create of %s: %v", key, err)
		}
		if !bytes.Equal(got.Value, kv.Value) || got.ModRevision != kv.ModRevision {
			t.Fatalf("replica b reads %q at %d, a wrote %q at %d", got.Value, got.ModRevision, kv.Value, kv.ModRevision)
		}
		up, err := a.Update(t.Context(), key, kv.ModRevision, []byte("changed"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.List("/cms/ns/", bolt.ListOptions{StartKey: key, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Items) != 1 || !bytes.Equal(res.Items[0].Value, up.Value) || res.Items[0].ModRevision != up.ModRevision {
			t.Fatalf("replica b lists %v after a's update of %s", res.Items, key)
		}
	}
}

// TestPastListPages: a page of a list at a past revision the history
// holds (start key, limit, filter) is that revision's state, and its
// Remaining counts the keys of the range from the first one not visited.
func TestPastListPages(t *testing.T) {
	t.Parallel()
	db := openOn(t, shared, newPrefix(), nil)
	rng := rand.New(rand.NewPCG(1, 2))
	state := map[string]bolt.KV{}
	type snapshot struct {
		rev   int64
		state map[string]bolt.KV
	}
	var snaps []snapshot
	for range 150 {
		key := fmt.Sprintf("/p/ns/k%02d", rng.IntN(40))
		old, ok := state[key]
		var kv bolt.KV
		var err error
		switch {
		case !ok:
			kv, err = db.Create(t.Context(), key, fmt.Appendf(nil, "c%d", rng.IntN(9)))
			state[key] = kv
		case rng.IntN(3) == 0:
			kv, err = db.Delete(t.Context(), key, old.ModRevision)
			delete(state, key)
		default:
			kv, err = db.Update(t.Context(), key, old.ModRevision, fmt.Appendf(nil, "u%d", rng.IntN(9)))
			state[key] = kv
		}
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, snapshot{kv.ModRevision, maps.Clone(state)})
	}
	odd := func(kv *bolt.KV) bool { return kv.Key[len(kv.Key)-1]%2 == 1 }
	for _, s := range snaps[:len(snaps)-1] {
		keys := slices.Sorted(maps.Keys(s.state))
		for _, start := range []string{"", "/p/ns/k1", "/p/ns/k25"} {
			for _, limit := range []int{0, 1, 7} {
				for _, filter := range []func(*bolt.KV) bool{nil, odd} {
					res, err := db.List("/p/", bolt.ListOptions{Revision: s.rev, StartKey: start, Limit: limit, Filter: filter})
					if err != nil {
						t.Fatal(err)
					}
					var want []bolt.KV
					var remaining int64
					for _, k := range keys {
						if k < start {
							continue
						}
						switch {
						case remaining > 0 || (limit > 0 && len(want) >= limit):
							remaining++
						case filter == nil || filter(ptr(s.state[k])):
							want = append(want, s.state[k])
						}
					}
					got := fmt.Sprint(res.Items, res.More, res.Remaining, res.Revision)
					if exp := fmt.Sprint(want, remaining > 0, remaining, s.rev); got != exp {
						t.Fatalf("list at %d from %q limit %d filter %v:\n got %s\nwant %s", s.rev, start, limit, filter != nil, got, exp)
					}
				}
			}
		}
	}
}

func ptr(kv bolt.KV) *bolt.KV { return &kv }
