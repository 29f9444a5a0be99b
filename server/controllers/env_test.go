package controllers

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"platd/bolt"
	"platd/config"
	"platd/server/builtin"
	"platd/server/registry"
	"platd/server/rest"
	"platd/server/schema"
)

// testEnv is a store with the built-in types and the in-process API over
// it: what a controller runs against in the server.
type testEnv struct {
	store *bolt.DB
	reg   *registry.Registry
	api   *rest.Handler
	brand config.Brand
	log   *slog.Logger
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	b, _ := config.LookupBrand("plat")
	store, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{Stamp: rest.Stamp, NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cat, err := schema.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	if err := builtin.Register(reg, cat, b); err != nil {
		t.Fatal(err)
	}
	api := rest.New(rest.Config{Store: store, Registry: reg, Brand: b, Kinds: cat.ByGVK})
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return &testEnv{store: store, reg: reg, api: api, brand: b, log: log}
}

// run starts a controller and stops it when the test ends.
func (e *testEnv) run(t *testing.T, run func(ctx context.Context)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// lookup returns a registered descriptor.
func (e *testEnv) lookup(t *testing.T, group, version, resource string) *registry.Descriptor {
	t.Helper()
	d := e.reg.Lookup(group, version, resource)
	if d == nil {
		t.Fatalf("%s/%s %s not registered", group, version, resource)
	}
	return d
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
