//go:build unix

package bolt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"platd/bolt"
)

// openBenchNamespaces spreads the objects as a server's ConfigMaps
// across a few namespaces.
const openBenchNamespaces = 4

// rvField is where configMapStamp writes the revision.
var rvField = []byte(`"resourceVersion":"`)

// configMapStamp writes rev into the empty resourceVersion of a value
// made by configMapValue, as the server's stamp does.
func configMapStamp(value []byte, rev int64) ([]byte, error) {
	i := bytes.Index(value, rvField)
	if i < 0 {
		return nil, errors.New("no resourceVersion")
	}
	i += len(rvField)
	out := make([]byte, 0, len(value)+20)
	out = append(out, value[:i]...)
	out = strconv.AppendInt(out, rev, 10)
	return append(out, value[i:]...), nil
}

// configMapVerify is as cheap a check as the server's.
func configMapVerify(_ string, v []byte) error {
	if len(v) == 0 || v[0] != '{' || v[len(v)-1] != '}' || !bytes.Contains(v, rvField) {
		return errors.New("not an object")
	}
	return nil
}

// configMapValue is a ConfigMap of about 560 bytes with a 300-byte
// payload, its resourceVersion left for the stamp.
func configMapValue(ns, i int) []byte {
	return fmt.Appendf(nil, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-%d","namespace":"ns%d",`+
		`"uid":"6f1c2a8e-%04x-4b1e-9a57-%012x","resourceVersion":"","creationTimestamp":"2026-11-26T20:45:00Z",`+
		`"managedFields":[{"manager":"apibench","operation":"Update","apiVersion":"v1","time":"2026-11-26T20:45:00Z"}]},`+
		`"data":{"payload":"%s"}}`, i, ns, ns, i, bytes.Repeat([]byte{'a' + byte(i%26)}, 300))
}

// writeOpenBenchFile makes a file of n ConfigMaps created in
// transactions of 100, as a server's concurrent creates land; with
// compacted the history is dropped, as it is once the retention passed.
func writeOpenBenchFile(b *testing.B, n int, compacted bool) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "open.db")
	db, err := bolt.Open(path, bolt.Options{Stamp: configMapStamp, NoFsync: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ops := make([]bolt.Op, 0, 100)
	for i := 0; i < n; i++ {
		ns := i % openBenchNamespaces
		ops = append(ops, bolt.CreateOp(fmt.Sprintf("/configmaps/ns%d/cm-%d", ns, i/openBenchNamespaces), configMapValue(ns, i/openBenchNamespaces)))
		if len(ops) == cap(ops) || i == n-1 {
			if _, err := db.Txn(context.Background(), ops); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	if compacted {
		if err := db.Compact(context.Background(), db.Revision()); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkOpen measures a restart of the engine: Open of a file of
// 1,000 to 100,000 ConfigMaps, with their creates still in the history
// (a restart within the retention) and without. It reports the live heap
// after the open and the CPU time of the process during it (user and
// system, every thread), which on a shared machine varies less than the
// wall time.
func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		for _, compacted := range []bool{false, true} {
			name := fmt.Sprintf("%dk/history", n/1000)
			if compacted {
				name = fmt.Sprintf("%dk/state", n/1000)
			}
			b.Run(name, func(b *testing.B) {
				path := writeOpenBenchFile(b, n, compacted)
				opts := bolt.Options{Stamp: configMapStamp, Verify: configMapVerify, Logger: slog.New(slog.DiscardHandler)}
				b.ReportAllocs()
				var heap uint64
				var cpu time.Duration
				for b.Loop() {
					c0 := cpuTime()
					db, err := bolt.Open(path, opts)
					cpu += cpuTime() - c0
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					if got := db.Count("/configmaps/"); got != int64(n) {
						b.Fatalf("%d keys after open, want %d", got, n)
					}
					runtime.GC()
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					heap = ms.HeapAlloc
					if err := db.Close(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(heap)/(1<<20), "heapMB")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
