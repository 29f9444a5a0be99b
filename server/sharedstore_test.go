package server_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"platd/bolt"
	"platd/config"
	"platd/server"
	"platd/server/rest"
)

// startOnStore serves a server on a store the test opened and closes.
func startOnStore(t *testing.T, store bolt.Store, mods ...option) *env {
	t.Helper()
	o := testOptions(t, t.TempDir(), mods...)
	return launch(t, o, func(ctx context.Context) (*server.Server, error) {
		return server.NewOnStore(ctx, o, quietLog(), store)
	})
}

// openTestStore opens a bolt store as New would, closed after every server
// of the test has stopped.
func openTestStore(t *testing.T) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "shared.db"), bolt.Options{Stamp: rest.Stamp, Verify: rest.VerifyStored, NoFsync: true, Tag: platBrand.Name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("closing the shared store: %v", err)
		}
	})
	return db
}

// Two servers on one store: what is written through one is read and
// watched through the other at once, and stopping a server leaves the
// store it did not open open.
func TestServersShareOneStore(t *testing.T) {
	t.Parallel()
	db := openTestStore(t)
	a, b := startOnStore(t, db), startOnStore(t, db)
	if a.srv.Store() != bolt.Store(db) || b.srv.Store() != bolt.Store(db) {
		t.Fatal("servers do not use the store they were given")
	}
	// Replicas sharing a store renew identity leases, as upstream's do.
	for _, e := range []*env{a, b} {
		e.do("GET", "/readyz/poststarthook/start-kube-apiserver-identity-lease-controller", nil).mustCode(t, 200)
	}
	list := b.do("GET", "/api/v1/namespaces/default/configmaps", nil).mustCode(t, 200).obj(t)
	w := b.watch("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + path(list, "metadata.resourceVersion").(string))

	created := a.do("POST", "/api/v1/namespaces/default/configmaps", cm("shared", map[string]string{"k": "v"}, nil)).mustCode(t, 201)
	got := b.do("GET", "/api/v1/namespaces/default/configmaps/shared", nil).mustCode(t, 200)
	if !bytes.Equal(bytes.TrimSpace(got.body), bytes.TrimSpace(created.body)) {
		t.Errorf("read through the other server:\n%s\nwritten:\n%s", got.body, created.body)
	}
	ev := w.expect("ADDED", "shared")
	if rvOf(ev.Object) != rvOf(created.obj(t)) || path(ev.Object, "data.k") != "v" {
		t.Errorf("watched through the other server: %v", ev.Object)
	}
	// A write through b is a conflict for a's stale copy.
	upd := created.obj(t)
	upd["data"] = map[string]any{"k": "b"}
	b.do("PUT", "/api/v1/namespaces/default/configmaps/shared", upd).mustCode(t, 200)
	a.do("PUT", "/api/v1/namespaces/default/configmaps/shared", upd).mustCode(t, 409)

	a.stop()
	if _, err := db.Get("/configmaps/default/shared"); err != nil {
		t.Fatalf("the store after one server stopped: %v", err)
	}
	b.do("GET", "/api/v1/namespaces/default/configmaps/shared", nil).mustCode(t, 200)
}

func TestNewOnStoreNeedsAStore(t *testing.T) {
	t.Parallel()
	_, err := server.NewOnStore(context.Background(), config.Options{}, quietLog(), nil)
	if err == nil || errors.Is(err, config.ErrInvalid) {
		t.Fatalf("NewOnStore(nil): %v", err)
	}
}
