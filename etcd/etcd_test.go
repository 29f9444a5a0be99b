package etcd

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"platd/bolt"
	"platd/bolt/storetest"
)

// shared is the embedded etcd the package's tests share; each test uses
// its own key prefix in it.
var shared *server

// server is one embedded etcd.
type server struct {
	etcd     *embed.Etcd
	dir      string
	endpoint string
}

func TestMain(m *testing.M) {
	s, err := startEtcd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedded etcd:", err)
		os.Exit(1)
	}
	shared = s
	code := m.Run()
	s.stop()
	os.Exit(code)
}

// freeURL picks a free port on 127.0.0.1.
func freeURL() (url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return url.URL{}, err
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: l.Addr().String()}, nil
}

// startEtcd starts a one-member etcd on free ports with its data in a
// temporary directory.
func startEtcd() (*server, error) {
	dir, err := os.MkdirTemp("", "platd-etcd-")
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		cu, err := freeURL()
		if err != nil {
			return nil, err
		}
		pu, err := freeURL()
		if err != nil {
			return nil, err
		}
		cfg := embed.NewConfig()
		cfg.Dir = dir
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
		cfg.InitialCluster = cfg.Name + "=" + pu.String()
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			if attempt < 3 && strings.Contains(err.Error(), "address already in use") {
				continue
			}
			os.RemoveAll(dir)
			return nil, err
		}
		select {
		case <-e.Server.ReadyNotify():
		case <-time.After(30 * time.Second):
			e.Close()
			os.RemoveAll(dir)
			return nil, fmt.Errorf("etcd not ready after 30s")
		}
		return &server{etcd: e, dir: dir, endpoint: cu.String()}, nil
	}
}

func (s *server) stop() {
	s.etcd.Close()
	os.RemoveAll(s.dir)
}

var prefixes atomic.Int64

// newPrefix is a key prefix no other test uses.
func newPrefix() string {
	return fmt.Sprintf("/t%d/registry", prefixes.Add(1))
}

// quiet is a logger for tests that discards everything below warnings.
var quiet = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// openOn opens a DB on s under prefix and closes it with the test.
func openOn(t *testing.T, s *server, prefix string, mod func(*Options)) *DB {
	t.Helper()
	opts := Options{Endpoints: []string{s.endpoint}, Prefix: prefix, Stamp: storetest.Stamp,
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
			t.Cleanup(s.stop)
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
