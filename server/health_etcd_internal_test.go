package server

import (
	"errors"
	"net/http/httptest"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/bolt"
	"platd/health"
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
	if all.Name != "etcd" || ready.Name != "etcd-readiness" {
		t.Fatalf("checks %+v / %+v", all, ready)
	}
	r := httptest.NewRequest("GET", "/readyz", nil)
	for _, c := range []health.Check{all, ready} {
		if err := c.Fn(r); !errors.Is(err, down) {
			t.Errorf("check %s with the mirror down: %v", c.Name, err)
		}
	}
	s.store = mirrorStore{}
	all, _ = s.storageChecks()
	if err := all.Fn(r); err == nil || errors.Is(err, down) {
		t.Errorf("check with a healthy mirror and no client: %v", err)
	}
}
