// Package etcdtest starts etcd inside a test process (the embed package
// of etcd's server): real etcd on free loopback ports, nothing to install.
// Only tests import it.
package etcdtest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// ReadyTimeout bounds the start of a cluster: every member ready.
const ReadyTimeout = 30 * time.Second

// startAttempts is how often a start is tried when a free port was taken
// between picking it and binding it.
const startAttempts = 4

// Config is the shape of a cluster.
type Config struct {
	// Members is the number of members (0 means 1).
	Members int
	// Fast shortens the raft ticks, so that the first election is quick,
	// and turns fsync off: for members sharing one process on a shared
	// machine, where durability across a crash is not under test.
	Fast bool
}

// Cluster is a running embedded etcd cluster. Stop ends it.
type Cluster struct {
	// Endpoints are the members' client URLs, in member order.
	Endpoints []string
	members   []*embed.Etcd
	dir       string
}

// Endpoint is the first member's client URL.
func (c *Cluster) Endpoint() string { return c.Endpoints[0] }

// Start starts a cluster with its data in a new temporary directory and
// waits until every member is ready. Stop removes the directory.
func Start(cfg Config) (*Cluster, error) {
	n := max(cfg.Members, 1)
	dir, err := os.MkdirTemp("", "platd-etcd-")
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		c, err := start(dir, n, cfg.Fast)
		if err == nil {
			return c, nil
		}
		if attempt < startAttempts && strings.Contains(err.Error(), "address already in use") {
			continue
		}
		os.RemoveAll(dir)
		return nil, err
	}
}

// StartT is Start for one test: it fails the test when etcd does not
// start and stops the cluster when the test ends.
func StartT(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	c, err := Start(cfg)
	if err != nil {
		t.Fatalf("embedded etcd: %v", err)
	}
	t.Cleanup(c.Stop)
	return c
}

func start(parent string, n int, fast bool) (*Cluster, error) {
	dir, err := os.MkdirTemp(parent, "attempt-")
	if err != nil {
		return nil, err
	}
	cfgs := make([]*embed.Config, n)
	var initial []string
	for i := range cfgs {
		cu, err := FreeURL()
		if err != nil {
			return nil, err
		}
		pu, err := FreeURL()
		if err != nil {
			return nil, err
		}
		e := embed.NewConfig()
		e.Name = "m" + strconv.Itoa(i)
		e.Dir = filepath.Join(dir, e.Name)
		e.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		e.ListenClientUrls, e.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
		e.ListenPeerUrls, e.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
		e.InitialClusterToken = "platd-test"
		if fast {
			e.TickMs, e.ElectionMs = 50, 1000
			e.UnsafeNoFsync = true
		}
		cfgs[i] = e
		initial = append(initial, e.Name+"="+pu.String())
	}
	c := &Cluster{dir: parent}
	// Every member starts before any can be ready: they elect together.
	for _, e := range cfgs {
		e.InitialCluster = strings.Join(initial, ",")
		m, err := embed.StartEtcd(e)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("etcd member %s: %w", e.Name, err)
		}
		c.members = append(c.members, m)
		c.Endpoints = append(c.Endpoints, e.AdvertiseClientUrls[0].String())
	}
	deadline := time.After(ReadyTimeout)
	for i, m := range c.members {
		select {
		case <-m.Server.ReadyNotify():
		case <-deadline:
			c.close()
			return nil, fmt.Errorf("etcd member m%d not ready after %v", i, ReadyTimeout)
		}
	}
	return c, nil
}

// FreeURL is an http URL of a free port on 127.0.0.1 (also one that
// nobody serves, for tests of an absent etcd).
func FreeURL() (url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return url.URL{}, err
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: l.Addr().String()}, nil
}

func (c *Cluster) close() {
	for _, m := range c.members {
		m.Close()
	}
}

// Stop ends every member and removes the cluster's data. A second Stop
// does nothing.
func (c *Cluster) Stop() {
	c.close()
	c.members = nil
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
		c.dir = ""
	}
}
