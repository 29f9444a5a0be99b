package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// snapshotOf is everything a reader can observe: the current state, the
// retained history and the revisions.
type snapshot struct {
	Items     []KV
	Events    []Event
	Rev, Comp int64
}

func snapshotOf(t *testing.T, db *DB) snapshot {
	t.Helper()
	res, err := db.List("/", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := snapshot{Items: res.Items, Rev: db.Revision(), Comp: db.CompactedRevision()}
	for _, h := range db.eventsAfter(0) {
		s.Events = append(s.Events, h.Event)
	}
	return s
}

func TestDefragKeepsEverything(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	ctx := context.Background()
	for i := range 300 {
		if _, err := db.Create(ctx, fmt.Sprintf("/a/k%03d", i), []byte(fmt.Sprintf(`{"i":%d,"pad":"%0200d"}`, i, i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		if i%3 == 0 {
			if _, err := db.Delete(ctx, fmt.Sprintf("/a/k%03d", i), 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := db.Txn(ctx, []Op{
		{Kind: OpCreate, Key: "/b/x", Value: []byte("x")},
		{Kind: OpUpdate, Key: "/a/k001", Value: []byte("y")},
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(ctx, 150); err != nil {
		t.Fatal(err)
	}
	want := snapshotOf(t, db)
	before, after, err := db.Defrag(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after <= 0 || after > before {
		t.Errorf("size %d -> %d, want it to shrink or stay", before, after)
	}
	if got := snapshotOf(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("memory changed by the rewrite")
	}
	if st := db.DefragStats(); st.Runs != 1 || st.Failures != 0 {
		t.Errorf("stats %+v, want one run", st)
	}
	// Writes after the swap go to the new file.
	if _, err := db.Update(ctx, "/b/x", 0, []byte("z")); err != nil {
		t.Fatal(err)
	}
	want = snapshotOf(t, db)
	db = reopen(t, db)
	if got := snapshotOf(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopen:\n got %+v\nwant %+v", got.Rev, want.Rev)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CheckFile(db.path); err != nil {
		t.Fatal(err)
	}
}

// Writes made while the file is rewritten are all in the new file.
func TestDefragUnderWrites(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	ctx := context.Background()
	for b := range 20 {
		ops := make([]Op, 100)
		for i := range ops {
			ops[i] = Op{Kind: OpCreate, Key: fmt.Sprintf("/seed/%04d", b*100+i), Value: make([]byte, 500)}
		}
		if _, err := db.Txn(ctx, ops); err != nil {
			t.Fatal(err)
		}
	}
	var (
		wg    sync.WaitGroup
		stop  atomic.Bool
		acked sync.Map // key -> revision
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load() || i < 200; i++ {
				key := fmt.Sprintf("/w%d/%05d", w, i)
				kv, err := db.Create(ctx, key, []byte(key))
				if err != nil {
					t.Error(err)
					return
				}
				acked.Store(key, kv.ModRevision)
				if i%7 == 0 {
					if _, err := db.Update(ctx, fmt.Sprintf("/seed/%04d", (w*500+i)%2000), 0, []byte(key)); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	for range 3 {
		if _, _, err := db.Defrag(ctx); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	want := snapshotOf(t, db)
	db = reopen(t, db)
	if got := snapshotOf(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopen: revision %d, want %d; %d items, want %d", got.Rev, want.Rev, len(got.Items), len(want.Items))
	}
	n := 0
	acked.Range(func(k, v any) bool {
		n++
		if kv, err := db.Get(k.(string)); err != nil || kv.CreateRevision != v.(int64) {
			t.Errorf("%s: %+v %v, want created at %d", k, kv, err, v)
		}
		return true
	})
	if n < 800 {
		t.Errorf("only %d acknowledged writes", n)
	}
}

func TestOpenRemovesInterruptedRewrite(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	if _, err := db.Create(context.Background(), "/a/b", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db.path+defragSuffix, []byte("half a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db)
	if _, err := os.Stat(db.path + defragSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("leftover rewrite still there: %v", err)
	}
	if _, err := db.Get("/a/b"); err != nil {
		t.Error(err)
	}
}

func TestDefragThresholdValidated(t *testing.T) {
	t.Parallel()
	_, err := Open(t.TempDir()+"/e.db", Options{Stamp: testStamp, DefragThreshold: 0.5})
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("threshold 0.5: %v, want ErrInvalid", err)
	}
}

// churnValue is a deterministic object of 300 to 1,700 bytes.
func churnValue(obj, i int) []byte {
	n := 300 + (obj*7919+i*104729)%1400
	b := make([]byte, 0, n+40)
	b = append(b, `{"name":"obj`...)
	b = strconv.AppendInt(b, int64(obj), 10)
	b = append(b, `","gen":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `,"data":"`...)
	for len(b) < n {
		b = append(b, byte('a'+(len(b)+i)%26))
	}
	return append(b, `"}`...)
}

func TestDefragFile(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	ctx := context.Background()
	for b := range 60 { // 50 objects written 60 times, 50 writes a commit
		ops := make([]Op, 50)
		for i := range ops {
			ops[i] = Op{Kind: OpUpdate, Key: fmt.Sprintf("/a/%02d", i), Value: churnValue(i, b)}
			if b == 0 {
				ops[i].Kind = OpCreate
			}
		}
		if _, err := db.Txn(ctx, ops); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Delete(ctx, "/a/07", 0); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(ctx, db.Revision()-100); err != nil {
		t.Fatal(err)
	}

	if _, _, err := DefragFile(db.path, nil); !errors.Is(err, ErrLocked) {
		t.Errorf("while open: %v, want ErrLocked", err)
	}
	want := snapshotOf(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var calls, done, total int64
	before, after, err := DefragFile(db.path, func(d, n int64) { calls, done, total = calls+1, d, n })
	if err != nil {
		t.Fatal(err)
	}
	if after*2 > before {
		t.Errorf("size %d -> %d, want less than half", before, after)
	}
	if calls == 0 || done != total || total != int64(3+50-1+100) {
		t.Errorf("progress: %d calls, last %d of %d", calls, done, total)
	}
	if err := CheckFile(db.path); err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db)
	if got := snapshotOf(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("after defrag: revision %d, want %d; %d events, want %d", got.Rev, want.Rev, len(got.Events), len(want.Events))
	}
}

func TestDefragFileMissing(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/none.db"
	if _, _, err := DefragFile(path, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was created: %v", err)
	}
}

// Meta values other than the revisions, such as the tag, survive both
// rewrites.
func TestDefragKeepsTag(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{Tag: "blue"})
	ctx := context.Background()
	if _, err := db.Create(ctx, "/a/b", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Defrag(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, offline := range []bool{false, true} {
		if offline {
			if _, _, err := DefragFile(db.path, nil); err != nil {
				t.Fatal(err)
			}
		}
		opts := db.opts
		opts.Tag = "green"
		var te *TagError
		if _, err := Open(db.path, opts); !errors.As(err, &te) || te.Recorded != "blue" {
			t.Errorf("offline %v: open with another tag: %v", offline, err)
		}
	}
}

// With a transformer the rewritten file holds only transformed values, and
// a value that could not be read back is kept as it was stored.
func TestDefragTransformed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{Transformer: xorTransformer{}})
	for _, k := range []string{"/s/a", "/s/b", "/s/c"} {
		if _, err := db.Create(ctx, k, []byte("topsecret"+k)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Update(ctx, "/s/a", 0, []byte("topsecret2")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Delete(ctx, "/s/c", 0); err != nil {
		t.Fatal(err)
	}
	// The key of /s/b is lost for a while.
	db.opts.Transformer = xorTransformer{refuse: "/s/b"}
	db = reopen(t, db)
	if _, err := db.Get("/s/b"); !errors.Is(err, ErrCorruptValue) {
		t.Fatalf("Get /s/b: %v", err)
	}
	if _, err := db.Create(ctx, "/s/d", []byte("topsecret4")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Defrag(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Update(ctx, "/s/d", 0, []byte("topsecret5")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if fileHolds(t, db.path, []byte("topsecret")) {
		t.Error("the rewritten file holds a plain value")
	}
	// The key is back: /s/b reads as it was written.
	db.opts.Transformer = xorTransformer{}
	db = reopen(t, db)
	for key, want := range map[string]string{"/s/a": "topsecret2@4", "/s/b": "topsecret/s/b@2", "/s/d": "topsecret5@7"} {
		if kv, err := db.Get(key); err != nil || string(kv.Value) != want {
			t.Errorf("Get %s: %q %v, want %q", key, kv.Value, err, want)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CheckFileWith(db.path, xorTransformer{}); err != nil {
		t.Error(err)
	}
}

// Close stops a running rewrite at its next transaction; the file stays
// as it was and the copy is removed. Not parallel: it sets defragHook.
func TestCloseStopsDefrag(t *testing.T) {
	db := openInternal(t, Options{})
	ctx := context.Background()
	if _, err := db.Create(ctx, "/a/b", []byte("v")); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	defragHook = func(s defragStep) {
		if s == stepCopying {
			go func() { closed <- db.Close() }()
			poll(t, "Close to start", db.closed.Load)
		}
	}
	t.Cleanup(func() { defragHook = nil })
	if _, _, err := db.Defrag(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Defrag: %v, want ErrClosed", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if st := db.DefragStats(); st.Runs != 0 || st.Failures != 0 {
		t.Errorf("stats %+v: a rewrite stopped by Close is neither", st)
	}
	if _, err := os.Stat(db.path + defragSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("copy left behind: %v", err)
	}
}

// The compactor rewrites the file only when it is past the minimum size
// and the threshold, and never with the threshold at 0.
func TestMaybeDefrag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// bloat writes objects and deletes them again, leaving the file
	// mostly free pages.
	bloat := func(t *testing.T, db *DB) {
		t.Helper()
		for b := range 20 {
			ops := make([]Op, 100)
			for i := range ops {
				ops[i] = Op{Kind: OpCreate, Key: fmt.Sprintf("/x/%02d-%03d", b, i), Value: make([]byte, 1000)}
			}
			if _, err := db.Txn(ctx, ops); err != nil {
				t.Fatal(err)
			}
			for i := range ops {
				ops[i] = Op{Kind: OpDelete, Key: ops[i].Key}
			}
			if _, err := db.Txn(ctx, ops); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Compact(ctx, db.Revision()); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name      string
		threshold float64
		minSize   int64
		runs      int64
	}{
		{"due", 2, 64 << 10, 1},
		{"off", 0, 64 << 10, 0},
		{"below the minimum size", 2, 1 << 30, 0},
		{"below the threshold", 1000, 64 << 10, 0},
		{"failing", 2, 64 << 10, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := openInternal(t, Options{DefragThreshold: c.threshold, DefragMinSize: c.minSize, HistoryRetention: time.Hour})
			bloat(t, db)
			file, live, err := db.fileUsage()
			if err != nil {
				t.Fatal(err)
			}
			if file < 2*live {
				t.Fatalf("file %d, live %d: not bloated", file, live)
			}
			if c.name == "failing" {
				// A directory in the copy's way: the rewrite fails, and
				// the next pass does not try again at once.
				if err := os.MkdirAll(db.path+defragSuffix+"/x", 0o700); err != nil {
					t.Fatal(err)
				}
				defer os.RemoveAll(db.path + defragSuffix)
				db.maybeDefrag()
			}
			db.maybeDefrag()
			if st := db.DefragStats(); st.Runs != c.runs || st.Failures != map[bool]int64{true: 1}[c.name == "failing"] {
				t.Errorf("stats %+v, want %d rewrites", st, c.runs)
			}
			if after, _, _ := db.fileUsage(); c.runs > 0 && after*2 > file {
				t.Errorf("file %d -> %d", file, after)
			}
		})
	}
}
