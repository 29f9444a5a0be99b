package bolt_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"platd/bolt"
	"platd/bolt/storetest"
)

// benchValue is a ConfigMap-sized object (~800 bytes).
var benchValue = bytes.Repeat([]byte("x"), 800)

func openBench(b *testing.B, noFsync bool) *bolt.DB {
	b.Helper()
	db, err := bolt.Open(filepath.Join(b.TempDir(), "bench.db"), bolt.Options{
		Stamp:   storetest.Stamp,
		NoFsync: noFsync,
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkParallelCreate measures durable creates from 16 concurrent
// clients (per CPU: 16/GOMAXPROCS goroutines), sharing fsyncs through
// group commit.
func BenchmarkParallelCreate(b *testing.B) {
	db := openBench(b, false)
	var n atomic.Int64
	b.SetParallelism(max(1, 16/runtimeProcs()))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			key := fmt.Sprintf("/configmaps/ns%d/cm%d", n.Load()%10, n.Add(1))
			if _, err := db.Create(ctx, key, benchValue); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkList10k lists 10,000 keys of ~800-byte values at the current
// revision and at a past one.
func BenchmarkList10k(b *testing.B) {
	db := openBench(b, true)
	fill(b, db, 10_000)
	first := db.Revision()
	for i := 0; i < 100; i++ {
		if _, err := db.Update(context.Background(), fmt.Sprintf("/configmaps/ns%d/cm%05d", i%10, i), 0, benchValue); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		rev  int64
	}{{"current", 0}, {"past", first}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := db.List("/configmaps/", bolt.ListOptions{Revision: bc.rev})
				if err != nil || len(res.Items) != 10_000 {
					b.Fatalf("%d items, %v", len(res.Items), err)
				}
			}
		})
	}
}

// BenchmarkGet reads one key of a 10,000-key store.
func BenchmarkGet(b *testing.B) {
	db := openBench(b, true)
	fill(b, db, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.Get("/configmaps/ns3/cm05003"); err != nil {
			b.Fatal(err)
		}
	}
}

func fill(b *testing.B, db *bolt.DB, n int) {
	b.Helper()
	const workers = 16
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if _, err := db.Create(context.Background(), fmt.Sprintf("/configmaps/ns%d/cm%05d", i%10, i), benchValue); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

// BenchmarkCreate10k16Clients is the server's write target at engine
// level: 10,000 durable creates of ~800-byte values from 16 concurrent
// clients into a fresh file. It reports the wall time per 10,000, the
// operations sharing each commit, and the live heap afterwards.
func BenchmarkCreate10k16Clients(b *testing.B) {
	benchCreate10k(b, benchValue, func(i int) string { return fmt.Sprintf("/configmaps/ns%d/cm%05d", i%10, i) })
}

// benchPodValue is the size of the server benchmark's 3 KB pod as stored,
// with its defaults and managedFields.
var benchPodValue = bytes.Repeat([]byte("x"), 7200)

// BenchmarkCreate10kPods16Clients is BenchmarkCreate10k16Clients with
// values the size of a stored pod and the names of the server's pod
// benchmark (40 workloads stamping out pods in turn): each leaf holds only
// two to four values, all rewritten when one is added.
func BenchmarkCreate10kPods16Clients(b *testing.B) {
	benchCreate10k(b, benchPodValue, func(i int) string {
		return fmt.Sprintf("/pods/bench/checkout-%02d-7d9f8c6b5-%05d", i%40, i)
	})
}

func benchCreate10k(b *testing.B, value []byte, key func(int) string) {
	const total, clients = 10_000, 16
	for b.Loop() {
		b.StopTimer()
		db := openBench(b, false)
		b.StartTimer()
		var wg sync.WaitGroup
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := c; i < total; i += clients {
					if _, err := db.Create(context.Background(), key(i), value); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heapMB")
		db.Close()
		b.StartTimer()
	}
}
