package bolt

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// checkHistory verifies the history's accounting and its bound: the
// counted bytes are those of the retained events, within the bound, and
// the ring starts right after the compacted revision.
func checkHistory(t *testing.T, db *DB) HistoryStats {
	t.Helper()
	db.mu.RLock()
	defer db.mu.RUnlock()
	var sum int64
	for i := range db.hist {
		sum += eventCost(&db.hist[i].Event)
	}
	st := HistoryStats{Events: len(db.hist), Bytes: db.histBytes, MaxBytes: db.opts.HistoryMaxBytes, Trimmed: db.histTrimmed}
	if sum != db.histBytes {
		t.Fatalf("history counts %d bytes, its events cost %d", db.histBytes, sum)
	}
	if db.opts.HistoryMaxBytes > 0 && !db.pinned && db.histBytes > db.opts.HistoryMaxBytes {
		t.Fatalf("history holds %d bytes, bound %d", db.histBytes, db.opts.HistoryMaxBytes)
	}
	if len(db.hist) > 0 && db.hist[0].Revision <= db.compacted.Load() {
		t.Fatalf("history starts at %d, compacted %d", db.hist[0].Revision, db.compacted.Load())
	}
	return st
}

// fileCaughtUp waits until the compactor deleted from the file what
// trimHistory dropped from memory.
func fileCaughtUp(t *testing.T, db *DB) {
	t.Helper()
	poll(t, "the file to be compacted as memory is", func() bool {
		db.mu.RLock()
		to := db.trimTo
		db.mu.RUnlock()
		db.compactMu.Lock()
		defer db.compactMu.Unlock()
		return db.fileCompacted >= to
	})
}

func value(tag string, size int) []byte {
	return []byte(tag + strings.Repeat(".", size-len(tag)))
}

// The byte bound holds after every write (updates, deletes, recreates),
// the accounting agrees after a restart, and a smaller bound at Open
// trims the loaded history.
func TestHistoryByteBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const size = 16 << 10
	db := openInternal(t, Options{HistoryMaxBytes: 256 << 10, HistoryRetention: time.Hour})
	for i := range 3 {
		if _, err := db.Create(ctx, fmt.Sprintf("/h/k%d", i), value("c", size)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 120 {
		key := fmt.Sprintf("/h/k%d", i%3)
		var err error
		switch i % 20 {
		case 7:
			_, err = db.Delete(ctx, key, 0)
		case 8:
			_, err = db.Create(ctx, fmt.Sprintf("/h/k%d", (i-1)%3), value("r", size))
			if err == nil {
				_, err = db.Update(ctx, key, 0, value(fmt.Sprint(i), size))
			}
		default:
			_, err = db.Update(ctx, key, 0, value(fmt.Sprint(i), size))
		}
		if err != nil {
			t.Fatal(err)
		}
		checkHistory(t, db)
	}
	st := checkHistory(t, db)
	if st.Trimmed == 0 || db.CompactedRevision() == 0 {
		t.Fatalf("stats %+v, compacted %d: nothing trimmed", st, db.CompactedRevision())
	}
	if low := st.MaxBytes - st.MaxBytes/8 - 2*(size+histEventOverhead+64); st.Bytes < low {
		t.Fatalf("history holds %d bytes, trimmed further than to %d", st.Bytes, low)
	}
	if _, err := db.Watch(ctx, "/h/", db.CompactedRevision()-1); !errors.Is(err, ErrCompacted) {
		t.Fatalf("watch below the trimmed history: %v", err)
	}

	// A restart loads the same history and counts it the same.
	fileCaughtUp(t, db)
	want := snapshotOf(t, db)
	db = reopen(t, db)
	if got := snapshotOf(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopen: revision %d compacted %d events %d, want %d %d %d",
			got.Rev, got.Comp, len(got.Events), want.Rev, want.Comp, len(want.Events))
	}
	// Values read back are allocated to their length; stamped ones had
	// some spare capacity, which the count includes.
	if got := checkHistory(t, db); got.Events != st.Events || got.Bytes > st.Bytes || got.Bytes < st.Bytes*3/4 {
		t.Fatalf("after reopen the history counts %d bytes in %d events, before %d in %d", got.Bytes, got.Events, st.Bytes, st.Events)
	}

	// A smaller bound at Open trims what is loaded, memory and file.
	db.opts.HistoryMaxBytes = 64 << 10
	db = reopen(t, db)
	small := checkHistory(t, db)
	if small.Bytes > 64<<10 || db.CompactedRevision() <= want.Comp {
		t.Fatalf("reopened with a smaller bound: %+v, compacted %d (was %d)", small, db.CompactedRevision(), want.Comp)
	}
	fileCaughtUp(t, db)
	res, err := db.List("/h/", ListOptions{Revision: db.CompactedRevision()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 3 {
		t.Fatalf("list at the trimmed revision: %d items", len(res.Items))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CheckFile(db.path); err != nil {
		t.Fatal(err)
	}
}

// A transaction leaves the history whole: the ring never starts inside one.
func TestHistoryTrimKeepsTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{HistoryMaxBytes: 40 << 10, HistoryRetention: time.Hour})
	keys := []string{"/t/a", "/t/b", "/t/c"}
	for _, k := range keys {
		if _, err := db.Create(ctx, k, value("c", 8<<10)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		ops := make([]Op, len(keys))
		for j, k := range keys {
			ops[j] = Op{Kind: OpUpdate, Key: k, Value: value(fmt.Sprint(i), 8<<10)}
		}
		if _, err := db.Txn(ctx, ops); err != nil {
			t.Fatal(err)
		}
		checkHistory(t, db)
		db.mu.RLock()
		inside := len(db.hist) > 0 && db.hist[0].joined
		db.mu.RUnlock()
		if inside {
			t.Fatalf("after txn %d the history starts inside a transaction", i)
		}
		if c := db.CompactedRevision(); c > 3 && (c-3)%3 != 0 {
			t.Fatalf("compacted at %d, inside a transaction", c)
		}
	}
}

// Writes made while the file is rewritten are replayed from the history,
// so none of them is trimmed before the rewrite has them, even past the
// bound; the bound applies again after it. Not parallel: it sets
// defragHook.
func TestHistoryTrimDuringDefrag(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t, Options{HistoryMaxBytes: 64 << 10, HistoryRetention: time.Hour})
	for i := range 20 {
		if _, err := db.Create(ctx, fmt.Sprintf("/d/k%02d", i), value("c", 4<<10)); err != nil {
			t.Fatal(err)
		}
	}
	start := db.Revision()
	defragHook = func(s defragStep) {
		if s != stepCopied {
			return
		}
		for i := range 60 {
			if _, err := db.Update(ctx, fmt.Sprintf("/d/k%02d", i%20), 0, value(fmt.Sprint(i), 4<<10)); err != nil {
				t.Error(err)
			}
		}
		db.mu.RLock()
		first := db.hist[0].Revision
		db.mu.RUnlock()
		if first > start+1 {
			t.Errorf("the history starts at %d during the rewrite; it must keep everything after %d", first, start)
		}
	}
	t.Cleanup(func() { defragHook = nil })
	if _, _, err := db.Defrag(ctx); err != nil {
		t.Fatal(err)
	}
	defragHook = nil
	if _, err := db.Update(ctx, "/d/k00", 0, value("after", 4<<10)); err != nil {
		t.Fatal(err)
	}
	checkHistory(t, db)
	if db.CompactedRevision() <= start {
		t.Fatalf("compacted %d: the bound was not applied after the rewrite", db.CompactedRevision())
	}
	fileCaughtUp(t, db)
	want := snapshotOf(t, db)
	db = reopen(t, db)
	got := snapshotOf(t, db)
	if !reflect.DeepEqual(got.Items, want.Items) || got.Rev != want.Rev {
		t.Fatalf("after the rewrite and a reopen: revision %d, want %d; state equal %v", got.Rev, want.Rev, reflect.DeepEqual(got.Items, want.Items))
	}
}

// The counted bytes are what the history really keeps alive: the heap
// grows by them and drops by them when the history is compacted. Not
// parallel: it measures the heap.
func TestHistoryBytesMatchHeap(t *testing.T) {
	ctx := context.Background()
	const size = 256 << 10
	db := openInternal(t, Options{HistoryMaxBytes: 16 << 20, HistoryRetention: time.Hour})
	for i := range 4 {
		if _, err := db.Create(ctx, fmt.Sprintf("/m/k%d", i), value("c", size)); err != nil {
			t.Fatal(err)
		}
	}
	heap := func() int64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	before := heap()
	for i := range 200 {
		if _, err := db.Update(ctx, fmt.Sprintf("/m/k%d", i%4), 0, value(fmt.Sprint(i), size)); err != nil {
			t.Fatal(err)
		}
	}
	st := checkHistory(t, db)
	grown := heap() - before
	if st.Trimmed == 0 {
		t.Fatalf("stats %+v: the bound was not reached", st)
	}
	if diff := grown - st.Bytes; diff < -st.Bytes/10 || diff > st.Bytes/10 {
		t.Fatalf("the heap grew by %d bytes, the history counts %d", grown, st.Bytes)
	}
	full := heap()
	if err := db.Compact(ctx, db.Revision()); err != nil {
		t.Fatal(err)
	}
	if st := checkHistory(t, db); st.Bytes != 0 || st.Events != 0 {
		t.Fatalf("after compacting everything: %+v", st)
	}
	if freed := full - heap(); freed < st.Bytes*9/10 {
		t.Fatalf("compacting a history of %d bytes freed %d", st.Bytes, freed)
	}
}

// A watcher that does not read is ended once its queue holds
// watchBufferBytes of values, long before watchBuffer events; a value
// larger than that bound still reaches a watcher that reads.
func TestWatchByteBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const size = 512 << 10
	db := openInternal(t, Options{HistoryMaxBytes: 1 << 20, HistoryRetention: time.Hour})
	if _, err := db.Create(ctx, "/w/a", value("c", size)); err != nil {
		t.Fatal(err)
	}
	stalled, err := db.Watch(ctx, "/w/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Stop()
	reader, err := db.Watch(ctx, "/w/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Stop()
	got := make(chan int, 1)
	go func() {
		n := 0
		for ev := range reader.Events() {
			if n++; ev.KV.Key == "/w/huge" {
				break
			}
		}
		got <- n
	}()
	// Each event holds two values (new and previous): the queue is full
	// after watchBufferBytes/(2*size) of them, beyond the channel's
	// watchOutBuffer and the batch being forwarded.
	limit := watchBufferBytes/(2*size) + watchOutBuffer + 4
	writes := 0
	for ; writes < 4*limit && stalled.Err() == nil; writes++ {
		if _, err := db.Update(ctx, "/w/a", 0, value(fmt.Sprint(writes), size)); err != nil {
			t.Fatal(err)
		}
	}
	if !errors.Is(stalled.Err(), ErrWatcherTooSlow) || writes > limit {
		t.Fatalf("after %d writes of %d bytes the stalled watcher's error is %v; want %v within %d", writes, size, stalled.Err(), ErrWatcherTooSlow, limit)
	}
	if _, err := db.Create(ctx, "/w/huge", value("h", watchBufferBytes+1)); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-got:
		if n != writes+1 {
			t.Fatalf("the reading watcher got %d events, want %d", n, writes+1)
		}
	case <-time.After(testWait):
		t.Fatalf("the reading watcher did not get the large value: %v", reader.Err())
	}
	if reader.Err() != nil {
		t.Fatalf("reading watcher: %v", reader.Err())
	}
}
