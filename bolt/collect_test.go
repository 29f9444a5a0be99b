package bolt

import (
	"bytes"
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// A transaction of large records is followed by a collection the committer
// starts itself: with the pacer switched off, nothing else collects.
// Not parallel: the collector's setting is the process's.
func TestLargeCommitCollects(t *testing.T) {
	db := openInternal(t, Options{})
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	nextCollect.Store(0) // a large commit of an earlier test may have collected

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.NumGC
	if _, err := db.Create(context.Background(), "/k/big", bytes.Repeat([]byte("x"), collectAfterBytes)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(testWait); ; time.Sleep(time.Millisecond) {
		runtime.ReadMemStats(&ms)
		if ms.NumGC > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no collection within %v of a %d-byte commit", testWait, collectAfterBytes)
		}
	}
	// The flag is cleared once that collection is done.
	for deadline := time.Now().Add(testWait); collecting.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("collection still marked as running")
		}
	}
	// The next may start only once as long as it took has passed.
	if next := time.Unix(0, nextCollect.Load()); !next.After(time.Now().Add(-time.Hour)) {
		t.Errorf("next collection allowed from %v: the spacing was not recorded", next)
	}
}
