package server_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"platd/etcd/etcdtest"
)

// sharedEtcd is one embedded etcd for the package's tests, started by the
// first test that needs it and stopped by TestMain; each test takes its
// own key prefix.
var sharedEtcd struct {
	once sync.Once
	etcd *etcdtest.Cluster
	err  error
}

var etcdPrefixes atomic.Int64

// embeddedEtcd returns the client URL of the package's etcd and a key
// prefix no other test uses.
func embeddedEtcd(t *testing.T) (endpoint, prefix string) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping: starts an embedded etcd")
	}
	sharedEtcd.once.Do(func() { sharedEtcd.etcd, sharedEtcd.err = etcdtest.Start(etcdtest.Config{}) })
	if sharedEtcd.err != nil {
		t.Fatalf("embedded etcd: %v", sharedEtcd.err)
	}
	return sharedEtcd.etcd.Endpoint(), fmt.Sprintf("/t%d/registry", etcdPrefixes.Add(1))
}

// stopSharedEtcd stops the embedded etcd if a test started it.
func stopSharedEtcd() {
	if sharedEtcd.etcd != nil {
		sharedEtcd.etcd.Stop()
	}
}

// etcdFlags are the serve flags of a platd on the embedded etcd.
func etcdFlags(endpoint, prefix string) []string {
	return []string{"--storage-backend", "etcd3", "--etcd-servers", endpoint, "--etcd-prefix", prefix}
}
