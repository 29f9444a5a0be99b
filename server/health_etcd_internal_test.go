package server

import (
	"errors"
	"net/http/httptest"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/bolt"
)

// mirrorStore is an etcd engine whose mirror health the test sets.
type mirrorStore struct {
	bolt.Store
	healthy error
}

func (m mirrorStore) Client() *clientv3.Client { return nil }
func (m mirrorStore) Healthy() error           { return m.healthy }

// TestEtcdChecksReportMirror: the etcd livez and readyz checks fail with
// the engine's own health error (its mirror of etcd is down) before they
// probe etcd.
func TestEtcdChecksReportMirror(t *testing.T) {
	down := errors.New("etcd: the mirror is down: relisting")
	s := &Server{store: mirrorStore{healthy: down}}
	all, ready := s.storageChecks()
	if len(all) != 1 || all[0].Name != "etcd" || len(ready) != 1 || ready[0].Name != "etcd-readiness" {
		t.Fatalf("checks %+v / %+v", all, ready)
	}
	r := httptest.NewRequest("GET", "/readyz", nil)
	for _, c := range append(all, ready...) {
		if err := c.Fn(r); !errors.Is(err, down) {
			t.Errorf("check %s with the mirror down: %v", c.Name, err)
		}
	}
	s.store = mirrorStore{}
	all, _ = s.storageChecks()
	if err := all[0].Fn(r); err == nil || errors.Is(err, down) {
		t.Errorf("check with a healthy mirror and no client: %v", err)
	}
}
