package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"unsafe"
)

// sameBytes reports whether a and b are one slice of memory.
func sameBytes(a, b []byte) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// After a reopen every value the state and the history hold in common is
// held once: a key's newest event shares the state's key and value, an
// event's previous state shares the key's event before, in both loads
// (with and without a transformer), and the history is the one written.
func TestLoadSharesValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tr := range []Transformer{nil, xorTransformer{}} {
		t.Run(fmt.Sprintf("transformer=%v", tr != nil), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "state.db")
			opts := Options{Stamp: testStamp, Logger: slog.New(slog.DiscardHandler), Transformer: tr}
			db, err := Open(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 50 {
				if _, err := db.Create(ctx, fmt.Sprintf("/things/k%02d", i), []byte(fmt.Sprintf("v%d", i))); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < 50; i += 3 {
				if _, err := db.Update(ctx, fmt.Sprintf("/things/k%02d", i), 0, []byte("updated")); err != nil {
					t.Fatal(err)
				}
			}
			for i := 1; i < 50; i += 7 {
				if _, err := db.Delete(ctx, fmt.Sprintf("/things/k%02d", i), 0); err != nil {
					t.Fatal(err)
				}
			}
			want := db.eventsAfter(0)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = Open(path, opts); err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			got := db.eventsAfter(0)
			if len(got) != len(want) {
				t.Fatalf("%d events after reopen, want %d", len(got), len(want))
			}
			newest := map[string]int{}
			for i, h := range got {
				if inFileMap(db, strBytes(h.KV.Key)) || inFileMap(db, h.KV.Value) || (h.Prev != nil && (inFileMap(db, strBytes(h.Prev.Key)) || inFileMap(db, h.Prev.Value))) {
					t.Fatalf("event %d still reads the file's map", h.Revision)
				}
				w := want[i]
				if h.Revision != w.Revision || h.Type != w.Type || h.KV.Key != w.KV.Key || string(h.KV.Value) != string(w.KV.Value) ||
					(h.Prev == nil) != (w.Prev == nil) || h.joined != w.joined || h.at != w.at {
					t.Fatalf("event %d after reopen: %+v, want %+v", i, h, w)
				}
				if h.Prev != nil {
					if string(h.Prev.Value) != string(w.Prev.Value) || h.Prev.ModRevision != w.Prev.ModRevision || h.Prev.Key != h.KV.Key {
						t.Fatalf("previous state of event %d: %+v, want %+v", i, h.Prev, w.Prev)
					}
					if j, ok := newest[h.KV.Key]; !ok || !sameBytes(h.Prev.Value, got[j].KV.Value) {
						t.Errorf("event %d: previous state not shared with the key's event before", h.Revision)
					}
				}
				newest[h.KV.Key] = i
			}
			for key, i := range newest {
				kv, err := db.Get(key)
				if got[i].Type == Delete {
					if err == nil {
						t.Errorf("%s deleted but present", key)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if inFileMap(db, strBytes(kv.Key)) || inFileMap(db, kv.Value) {
					t.Fatalf("%s: the state reads the file's map", key)
				}
				if !sameBytes(kv.Value, got[i].KV.Value) {
					t.Errorf("%s: state and newest event hold separate copies", key)
				}
			}
		})
	}
}

// inFileMap reports whether b lies in the file's map, which is valid only
// inside a transaction.
func inFileMap(db *DB, b []byte) bool {
	if len(b) == 0 {
		return false
	}
	info := db.bdb.Info()
	fi, err := os.Stat(db.path)
	if err != nil {
		panic(err)
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= info.Data && p < info.Data+uintptr(fi.Size())
}

// Open turns the collector off while it loads and back on after, also
// when loads overlap.
func TestLoadRestoresGC(t *testing.T) {
	// Not parallel: it reads the process's GC setting.
	const percent = 137
	old := debug.SetGCPercent(percent)
	defer debug.SetGCPercent(old)
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(path, Options{Stamp: testStamp, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(percent); got != percent {
		t.Errorf("GC percent after Open = %d, want %d", got, percent)
	}
	end1, end2 := pauseGC(), pauseGC()
	end1()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("GC percent with one load still running = %d, want -1 (off)", got)
	}
	end2()
	if got := debug.SetGCPercent(percent); got != percent {
		t.Errorf("GC percent after both loads = %d, want %d", got, percent)
	}
}

// splitKeys is how many keys openSplitState writes: enough for the state
// to be loaded in two halves.
const splitKeys = 4000

func splitValue(i int) string { return fmt.Sprintf("v%d-%s", i, strings.Repeat("p", 200)) }

// openSplitState opens a new file holding splitKeys keys
// /things/ns<i%4>/k<i> with value splitValue(i), written in transactions.
func openSplitState(t *testing.T) (string, Options, *DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	opts := Options{Stamp: testStamp, NoFsync: true, Logger: slog.New(slog.DiscardHandler)}
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	var ops []Op
	for i := range splitKeys {
		ops = append(ops, CreateOp(fmt.Sprintf("/things/ns%d/k%05d", i%4, i), []byte(splitValue(i))))
		if len(ops) == MaxTxnOps || i == splitKeys-1 {
			if _, err := db.Txn(context.Background(), ops); err != nil {
				t.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	return path, opts, db
}

// A state large enough to be read in two halves loads every key once, in
// order, with its value; a damaged record in either half marks its key
// corrupt and leaves the others served.
func TestLoadSplitsState(t *testing.T) {
	t.Parallel()
	const n = splitKeys
	path, opts, db := openSplitState(t)
	ctx := context.Background()
	value := splitValue
	// The first and the last key of the bucket, one in each half.
	for _, k := range []string{"/aaa/first", "/zzz/last"} {
		if _, err := db.Create(ctx, k, []byte("DAMAGE-ME-"+k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, damaged := range []bool{false, true} {
		if damaged {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, flipAll(t, data, "DAMAGE-ME-"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		db, err := Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := db.bdb.Begin(false)
		if err != nil {
			t.Fatal(err)
		}
		split := db.stateSplit(tx.Bucket(bucketState))
		_ = tx.Rollback()
		if split == nil || string(split) <= "/things/ns0/" || string(split) >= "/things/ns3/k03999" {
			t.Errorf("split key %q, want one inside the keys", split)
		}
		res, err := db.List("/things/", ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Items) != n {
			t.Fatalf("%d keys after reopen, want %d", len(res.Items), n)
		}
		for i, kv := range res.Items {
			ns, k := i/(n/4), i%(n/4)*4+i/(n/4)
			if want := fmt.Sprintf("/things/ns%d/k%05d", ns, k); kv.Key != want || !strings.HasPrefix(string(kv.Value), value(k)+"@") {
				t.Fatalf("key %d: %s = %.20q, want %s = %.20q", i, kv.Key, kv.Value, want, value(k))
			}
		}
		for _, k := range []string{"/aaa/first", "/zzz/last"} {
			var ce *CorruptError
			_, err := db.Get(k)
			if damaged && (!errors.As(err, &ce) || ce.Key != k || !errors.Is(err, ErrChecksum)) || !damaged && err != nil {
				t.Errorf("damaged=%v: get %s: %v", damaged, k, err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A key of the first half damaged into one past the split stops that
// half early; the keys behind it are read by neither half, so Open must
// refuse the file rather than serve a state missing them.
func TestLoadSplitDamagedKey(t *testing.T) {
	t.Parallel()
	const n = splitKeys
	path, opts, db := openSplitState(t)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const victim = "/things/ns0/k00100"
	if !bytes.Contains(data, []byte(victim)) {
		t.Fatalf("%s not found in the file", victim)
	}
	damaged := filepath.Join(t.TempDir(), "damaged.db")
	if err := os.WriteFile(damaged, bytes.ReplaceAll(data, []byte(victim), []byte("/things/ns9/k00100")), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err = Open(damaged, opts)
	if err == nil {
		res, _ := db.List("/things/", ListOptions{})
		_ = db.Close()
		t.Fatalf("a damaged key opened cleanly, listing %d of %d keys", len(res.Items), n)
	}
	// The load's refusal makes Open walk every page, which names the
	// damaged one.
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "out of its parent's range") {
		t.Fatalf("open: %v, want a corrupt file naming the damaged page", err)
	}
}

// The page check counts the state's keys, which sizes the load's key map.
func TestLoadCountsKeys(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "count.db")
	opts := Options{Stamp: testStamp, NoFsync: true, Logger: slog.New(slog.DiscardHandler)}
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	ops := make([]Op, 0, MaxTxnOps)
	for i := range n {
		ops = append(ops, CreateOp(fmt.Sprintf("/things/k%05d", i), bytes.Repeat([]byte{'v'}, 100)))
		if len(ops) == cap(ops) || i == n-1 {
			if _, err := db.Txn(context.Background(), ops); err != nil {
				t.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(path, opts); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.stateKeys != n || db.idx.len() != n {
		t.Fatalf("page check counted %d keys, the load read %d; want %d", db.stateKeys, db.idx.len(), n)
	}
}
