package server_test

import (
	"fmt"
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
)

// etcdReadyTimeout bounds the start of the embedded etcd.
const etcdReadyTimeout = 30 * time.Second

// sharedEtcd is one embedded etcd for the package's tests, started by the
// first test that needs it and stopped by TestMain; each test takes its
// own key prefix.
var sharedEtcd struct {
	once     sync.Once
	etcd     *embed.Etcd
	dir      string
	endpoint string
	err      error
}

var etcdPrefixes atomic.Int64

// embeddedEtcd returns the client URL of the package's etcd and a key
// prefix no other test uses.
func embeddedEtcd(t *testing.T) (endpoint, prefix string) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping: starts an embedded etcd")
	}
	sharedEtcd.once.Do(startSharedEtcd)
	if sharedEtcd.err != nil {
		t.Fatalf("embedded etcd: %v", sharedEtcd.err)
	}
	return sharedEtcd.endpoint, fmt.Sprintf("/t%d/registry", etcdPrefixes.Add(1))
}

func startSharedEtcd() {
	dir, err := os.MkdirTemp("", "platd-server-etcd-")
	if err != nil {
		sharedEtcd.err = err
		return
	}
	sharedEtcd.dir = dir
	free := func() url.URL {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return url.URL{}
		}
		defer l.Close()
		return url.URL{Scheme: "http", Host: l.Addr().String()}
	}
	for attempt := 0; ; attempt++ {
		cu, pu := free(), free()
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
			sharedEtcd.err = err
			return
		}
		select {
		case <-e.Server.ReadyNotify():
		case <-time.After(etcdReadyTimeout):
			e.Close()
			sharedEtcd.err = fmt.Errorf("not ready after %v", etcdReadyTimeout)
			return
		}
		sharedEtcd.etcd, sharedEtcd.endpoint = e, cu.String()
		return
	}
}

// stopSharedEtcd stops the embedded etcd if a test started it.
func stopSharedEtcd() {
	if sharedEtcd.etcd != nil {
		sharedEtcd.etcd.Close()
	}
	if sharedEtcd.dir != "" {
		_ = os.RemoveAll(sharedEtcd.dir)
	}
}

// etcdFlags are the serve flags of a platd on the embedded etcd.
func etcdFlags(endpoint, prefix string) []string {
	return []string{"--storage-backend", "etcd3", "--etcd-servers", endpoint, "--etcd-prefix", prefix}
}
