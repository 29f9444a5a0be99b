package etcd

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platd/bolt"
	"platd/bolt/storetest"
	"platd/etcd/etcdtest"
)

// shared is the embedded etcd the package's tests share; each test uses
// its own key prefix in it.
var shared *etcdtest.Cluster

func TestMain(m *testing.M) {
	s, err := startEtcd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedded etcd:", err)
		os.Exit(1)
	}
	shared = s
	code := m.Run()
	s.Stop()
	os.Exit(code)
}

// startEtcd starts a one-member etcd of the test's own.
func startEtcd() (*etcdtest.Cluster, error) { return etcdtest.Start(etcdtest.Config{}) }

var prefixes atomic.Int64

// newPrefix is a key prefix no other test uses.
func newPrefix() string {
	return fmt.Sprintf("/t%d/registry", prefixes.Add(1))
}

// quiet is a logger for tests that discards everything below warnings.
var quiet = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// openOn opens a DB on s under prefix and closes it with the test.
func openOn(t *testing.T, s *etcdtest.Cluster, prefix string, mod func(*Options)) *DB {
	t.Helper()
	opts := Options{Endpoints: []string{s.Endpoint()}, Prefix: prefix, Stamp: storetest.Stamp,
		Logger: quiet, DialTimeout: 10 * time.Second}
	if mod != nil {
		mod(&opts)
	}
	db, err := Open(t.Context(), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// isolated names the conformance tests that need an etcd of their own:
// they compact (which would cut the history of every other test sharing
// the etcd), or count on consecutive revisions, which writes under other
// prefixes of a shared etcd break.
var isolated = map[string]bool{
	"WatchRacingWrites": true, "WatchSlowConsumer": true, "Compaction": true, "Restart": true,
	"TxnAtomicity": true, "TxnInvalid": true, "TxnListAtRevision": true, "TxnReaders": true,
	"TxnRestart": true, "TxnCommit": true, "WaitForRevision": true, "ListErrors": true,
}

func TestConformance(t *testing.T) {
	storetest.RunConformance(t, func(t *testing.T) storetest.Harness {
		s := shared
		name := t.Name()[strings.LastIndexByte(t.Name(), '/')+1:]
		if isolated[name] {
			var err error
			if s, err = startEtcd(); err != nil {
				t.Fatalf("embedded etcd: %v", err)
			}
			t.Cleanup(s.Stop)
		}
		prefix := newPrefix()
		var mu sync.Mutex
		cur := openOn(t, s, prefix, nil)
		return storetest.Harness{
			Store: cur,
			Reopen: func(t *testing.T) bolt.Store {
				mu.Lock()
				defer mu.Unlock()
				if err := cur.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				cur = openOn(t, s, prefix, nil)
				return cur
			},
			// More than a watcher that never reads holds: its queue, its
			// channel and the event in hand.
			SlowWatcherWrites: watchBuffer + watchChan + 100,
			TxnSharesRevision: true,
		}
	})
}
