package etcd

import (
	"bytes"
	"fmt"
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
