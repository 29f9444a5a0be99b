package etcd

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"platd/bolt"
	"platd/bolt/storetest"
)

// benchValue is a ConfigMap-sized object (~800 bytes), as bolt's benchmarks
// use.
var benchValue = bytes.Repeat([]byte("x"), 800)

func openBench(b *testing.B) *DB {
	b.Helper()
	db, err := Open(b.Context(), Options{Endpoints: []string{shared.Endpoint()}, Prefix: newPrefix(),
		Stamp: storetest.Stamp, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// clients is the number of concurrent clients the parallel benchmarks run
// (the load tool's c32 runs 32; the embedded etcd shares the process).
const clients = 32

// BenchmarkCreate measures creates from 32 concurrent clients: each is an
// etcd transaction, acknowledged once the mirror has applied it.
func BenchmarkCreate(b *testing.B) {
	db := openBench(b)
	var n atomic.Int64
	b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			i := n.Add(1)
			if _, err := db.Create(ctx, fmt.Sprintf("/configmaps/ns%d/cm%d", i%10, i), benchValue); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// fill creates n keys from 32 clients.
func fill(b *testing.B, db *DB, n int) {
	b.Helper()
	var wg sync.WaitGroup
	for g := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += clients {
				if _, err := db.Create(context.Background(), fmt.Sprintf("/configmaps/ns/cm%05d", i), benchValue); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkGet measures consistent gets from 32 concurrent clients: each
// waits for etcd's current revision (one round trip shared by the readers
// that arrive meanwhile) and reads memory.
func BenchmarkGet(b *testing.B) {
	db := openBench(b)
	fill(b, db, 1000)
	var n atomic.Int64
	b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.Get(fmt.Sprintf("/configmaps/ns/cm%05d", n.Add(1)%1000)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkGetAt is BenchmarkGet for callers holding a revision the
// mirror has applied: no etcd round trip.
func BenchmarkGetAt(b *testing.B) {
	db := openBench(b)
	fill(b, db, 1000)
	rev := db.Revision()
	var n atomic.Int64
	b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.GetAt(fmt.Sprintf("/configmaps/ns/cm%05d", n.Add(1)%1000), rev); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkList10k lists 10,000 keys at the current revision (a consistent
// read, and named), at a past revision the history holds, and at one only
// etcd holds.
func BenchmarkList10k(b *testing.B) {
	db := openBench(b)
	fill(b, db, 10_000)
	past := db.Revision()
	if _, err := db.Update(b.Context(), "/configmaps/ns/cm00000", 0, benchValue); err != nil {
		b.Fatal(err)
	}
	list := func(b *testing.B, rev int64) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := db.List("/configmaps/", bolt.ListOptions{Revision: rev})
			if err != nil || len(res.Items) != 10_000 {
				b.Fatalf("list: %d items, %v", len(res.Items), err)
			}
		}
	}
	b.Run("current", func(b *testing.B) { list(b, 0) })
	// The current revision named: memory alone, no etcd round trip.
	b.Run("mirror", func(b *testing.B) { list(b, db.Revision()) })
	b.Run("history", func(b *testing.B) { list(b, past) })
	// One page of 500 at that revision, as a paged client's continue reads.
	b.Run("history-page", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := db.List("/configmaps/", bolt.ListOptions{Revision: past, StartKey: "/configmaps/ns/cm05000", Limit: 500})
			if err != nil || len(res.Items) != 500 || res.Remaining != 4500 {
				b.Fatalf("list: %d items, %d remaining, %v", len(res.Items), res.Remaining, err)
			}
		}
	})
	b.Run("etcd", func(b *testing.B) {
		db.mu.Lock()
		db.ring, db.ringBase = nil, db.rev // as if the history had been trimmed
		db.mu.Unlock()
		list(b, past)
	})
}
