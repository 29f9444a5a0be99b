package bolt

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"testing"
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
				if !sameBytes(kv.Value, got[i].KV.Value) {
					t.Errorf("%s: state and newest event hold separate copies", key)
				}
			}
		})
	}
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
