package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/bolt"
)

// TestCancelledWrite: a write whose ctx ends after etcd applied it (a
// watch of etcd cancels it as soon as the key shows up, while the
// response may still be on its way) completes; one whose ctx ended before
// its pick-up returns ctx's error and writes nothing.
func TestCancelledWrite(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	db := openOn(t, shared, prefix, nil)
	var mu sync.Mutex
	cancels := map[string]context.CancelFunc{}
	wctx, stop := context.WithCancel(t.Context())
	defer stop()
	wch := db.cli.Watch(wctx, prefix+"/k/", clientv3.WithPrefix())
	go func() {
		for resp := range wch {
			for _, ev := range resp.Events {
				mu.Lock()
				if c := cancels[string(ev.Kv.Key)]; c != nil {
					c()
				}
				mu.Unlock()
			}
		}
	}()
	for i := range 50 {
		key := fmt.Sprintf("/k/%03d", i)
		ctx, cancel := context.WithCancel(t.Context())
		mu.Lock()
		cancels[prefix+key] = cancel
		mu.Unlock()
		kv, err := db.Create(ctx, key, []byte("v"))
		cancel()
		if err != nil {
			t.Fatalf("%s: create cancelled after etcd applied it: %v", key, err)
		}
		if got, err := db.Get(key); err != nil || got.ModRevision != kv.ModRevision {
			t.Fatalf("%s: created at %d, read %+v, %v", key, kv.ModRevision, got, err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := db.Create(ctx, "/k/late", []byte("v")); !errors.Is(err, context.Canceled) {
		t.Fatalf("create with an ended ctx: %v", err)
	}
	if _, err := db.Get("/k/late"); !errors.Is(err, bolt.ErrNotFound) {
		t.Fatalf("create with an ended ctx is stored: %v", err)
	}
}

// TestListEtcdSkipsCompactionKey: a list of "/" older than the in-memory
// history (read from etcd) does not return the compaction key.
func TestListEtcdSkipsCompactionKey(t *testing.T) {
	t.Parallel()
	db := openOn(t, shared, newPrefix(), func(o *Options) { o.HistoryMaxBytes = 1 })
	if _, err := db.Create(t.Context(), "/a/1", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.compactOnce(0, 0); err != nil { // records the key only
		t.Fatal(err)
	}
	for range 5 {
		if _, err := db.Update(t.Context(), "/a/1", 0, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Create(t.Context(), "/z/1", []byte("v")); err != nil {
		t.Fatal(err)
	}
	at := db.Revision() - 1 // before the last create
	db.mu.RLock()
	fromEtcd := at < db.ringBase
	db.mu.RUnlock()
	if !fromEtcd {
		t.Fatal("the ring still covers the revision: the list would not read etcd")
	}
	res, err := db.List("/", bolt.ListOptions{Revision: at, ReportCorrupt: true})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range res.Items {
		keys = append(keys, kv.Key)
	}
	if len(keys) != 1 || keys[0] != "/a/1" {
		t.Fatalf("list of / before the last create: %q, want [/a/1]", keys)
	}
}

// TestGetAt: a replica reads another's write by the revision the writer
// returned (it waits for its mirror to apply it), and reads the mirror as
// it is without one; bad keys and Close give the same errors as Get.
func TestGetAt(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	a := openOn(t, shared, prefix, nil)
	b := openOn(t, shared, prefix, nil)
	for i := range 20 {
		key := fmt.Sprintf("/k/%02d", i)
		kv, err := a.Create(t.Context(), key, []byte("v"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.GetAt(key, kv.ModRevision)
		if err != nil || got.ModRevision != kv.ModRevision || string(got.Value) != string(kv.Value) {
			t.Fatalf("GetAt %s at %d: %+v, %v", key, kv.ModRevision, got, err)
		}
		if got, err := a.GetAt(key, 0); err != nil || got.ModRevision != kv.ModRevision {
			t.Fatalf("GetAt %s on the writer: %+v, %v", key, got, err)
		}
	}
	if _, err := b.GetAt("/k/none", b.Revision()); !errors.Is(err, bolt.ErrNotFound) {
		t.Fatalf("GetAt of a missing key: %v", err)
	}
	if _, err := b.GetAt("bad", 0); !errors.Is(err, bolt.ErrInvalid) {
		t.Fatalf("GetAt of a bad key: %v", err)
	}
	b.Close()
	if _, err := b.GetAt("/k/00", 0); !errors.Is(err, bolt.ErrClosed) {
		t.Fatalf("GetAt after Close: %v", err)
	}
}
