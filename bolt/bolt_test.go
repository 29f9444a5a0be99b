package bolt_test

import (
	"log/slog"
	"path/filepath"
	"testing"

	"platd/bolt"
	"platd/bolt/storetest"
)

// openTest opens a fresh engine in t's temporary directory. Its cleanup
// closes the engine, checks that no goroutine is left and that the file
// passes CheckFile.
func openTest(t *testing.T, opts bolt.Options) (*bolt.DB, func(t *testing.T) *bolt.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	if opts.Stamp == nil {
		opts.Stamp = storetest.Stamp
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	db, err := bolt.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	cur := db
	t.Cleanup(func() {
		if err := cur.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if n := bolt.LiveGoroutines(cur); n != 0 {
			t.Errorf("%d goroutines left after Close", n)
		}
		if err := bolt.CheckFile(path); err != nil {
			t.Errorf("CheckFile: %v", err)
		}
	})
	reopen := func(t *testing.T) *bolt.DB {
		t.Helper()
		if err := cur.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := bolt.CheckFile(path); err != nil {
			t.Fatalf("CheckFile before reopen: %v", err)
		}
		next, err := bolt.Open(path, opts)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		cur = next
		return next
	}
	return db, reopen
}

func TestConformance(t *testing.T) {
	t.Parallel()
	for _, fsync := range []bool{false, true} {
		name := "nofsync"
		if fsync {
			name = "fsync"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storetest.RunConformance(t, func(t *testing.T) storetest.Harness {
				db, reopen := openTest(t, bolt.Options{NoFsync: !fsync})
				return storetest.Harness{
					Store:             db,
					Reopen:            func(t *testing.T) bolt.Store { return reopen(t) },
					SlowWatcherWrites: bolt.SlowWatcherEvents,
					OpenBounded: func(t *testing.T, maxBytes int64) bolt.Store {
						db, _ := openTest(t, bolt.Options{NoFsync: !fsync, HistoryMaxBytes: maxBytes})
						return db
					},
				}
			})
		})
	}
}
