package controllers

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"platd/bolt"
	"platd/server/rest"
)

// fakeContent records the controller's calls; remaining is what the next
// deletion pass reports.
type fakeContent struct {
	mu        sync.Mutex
	remaining int
	deletes   map[string]int
	finalized map[string]int
}

func (f *fakeContent) DeleteNamespaceContent(_ context.Context, ns string) (rest.NamespaceContent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes[ns]++
	c := rest.NamespaceContent{Remaining: map[string]int{}}
	if f.remaining > 0 {
		c.Remaining["configmaps."] = f.remaining
	}
	return c, nil
}

func (f *fakeContent) SetNamespaceConditions(context.Context, string, rest.NamespaceContent) error {
	return nil
}

func (f *fakeContent) FinalizeNamespace(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finalized[name]++
	return nil
}

func (f *fakeContent) counts(ns string) (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deletes[ns], f.finalized[ns]
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

func TestNamespaceController(t *testing.T) {
	t.Parallel()
	store, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{Stamp: rest.Stamp, NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeContent{remaining: 1, deletes: map[string]int{}, finalized: map[string]int{}}
	c := &Namespaces{Store: store, Content: f, Finalizer: "plat", Log: slog.Default()}
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	active := `{"metadata":{"name":"live","resourceVersion":"0"},"spec":{"finalizers":["plat"]}}`
	if _, err := store.Create(ctx, "/namespaces/live", []byte(active)); err != nil {
		t.Fatal(err)
	}
	doomed := `{"metadata":{"name":"doomed","resourceVersion":"0","deletionTimestamp":"2026-01-01T00:00:00Z"},"spec":{"finalizers":["plat"]}}`
	if _, err := store.Create(ctx, "/namespaces/doomed", []byte(doomed)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a deletion pass", func() bool { d, _ := f.counts("doomed"); return d >= 1 })
	if _, fin := f.counts("doomed"); fin != 0 {
		t.Fatal("finalized while content remains")
	}
	// A change inside the namespace triggers another pass, which now finds
	// it empty and finalizes.
	f.mu.Lock()
	f.remaining = 0
	f.mu.Unlock()
	if _, err := store.Create(ctx, "/configmaps/doomed/x", []byte(`{"metadata":{"resourceVersion":"0"}}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "finalization", func() bool { _, fin := f.counts("doomed"); return fin >= 1 })
	if d, fin := f.counts("live"); d != 0 || fin != 0 {
		t.Errorf("active namespace touched: %d deletes, %d finalizations", d, fin)
	}
}
