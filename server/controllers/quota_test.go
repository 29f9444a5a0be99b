package controllers

import (
	"context"
	"testing"
	"time"

	"platd/server/registry"
)

// TestResourceQuotaResync: a status that drifted from the objects (written
// by hand here) is counted again at the next periodic resync, though no
// event names the quota.
func TestResourceQuotaResync(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	if err := e.api.EnsureNamespace(ctx, "ns"); err != nil {
		t.Fatal(err)
	}
	qd := e.lookup(t, "", "v1", "resourcequotas")
	cmd := e.lookup(t, "", "v1", "configmaps")
	for _, name := range []string{"a", "b"} {
		if _, err := e.api.Create(ctx, cmd, registry.Object{"metadata": map[string]any{"name": name, "namespace": "ns"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.api.Create(ctx, qd, registry.Object{"metadata": map[string]any{"name": "q", "namespace": "ns"},
		"spec": map[string]any{"hard": map[string]any{"count/configmaps": "5"}}}); err != nil {
		t.Fatal(err)
	}
	e.run(t, (&ResourceQuotas{Source: e.store, Objects: e.api, Registry: e.reg, Log: e.log, Resync: 20 * time.Millisecond}).Run)
	used := func() any {
		q, err := e.api.Get(qd, "ns", "q")
		if err != nil {
			t.Fatal(err)
		}
		status, _ := q["status"].(map[string]any)
		u, _ := status["used"].(map[string]any)
		return u["count/configmaps"]
	}
	waitFor(t, "the quota's usage", func() bool { return used() == "2" })
	if _, err := e.api.Update(ctx, qd, "ns", "q", "status", func(old registry.Object) registry.Object {
		old["status"].(map[string]any)["used"] = map[string]any{"count/configmaps": "4"}
		return old
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the drifted usage counted again", func() bool { return used() == "2" })
}

// TestResourceQuotaEmpty: a quota that limits nothing gets an empty
// status once, and is not written again and again.
func TestResourceQuotaEmpty(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	if err := e.api.EnsureNamespace(ctx, "ns"); err != nil {
		t.Fatal(err)
	}
	qd := e.lookup(t, "", "v1", "resourcequotas")
	if _, err := e.api.Create(ctx, qd, registry.Object{"metadata": map[string]any{"name": "q", "namespace": "ns"}, "spec": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	c := &ResourceQuotas{Source: e.store, Objects: e.api, Registry: e.reg, Log: e.log}
	e.run(t, c.Run)
	// A later quota is counted after the first: once it is, the first
	// has had its turn too.
	if _, err := e.api.Create(ctx, qd, registry.Object{"metadata": map[string]any{"name": "r", "namespace": "ns"},
		"spec": map[string]any{"hard": map[string]any{"pods": "1"}}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second quota's status", func() bool {
		q, _ := e.api.Get(qd, "ns", "r")
		status, _ := q["status"].(map[string]any)
		return status["used"] != nil
	})
	rev := e.store.Revision()
	if err := c.sync(ctx, "ns/q"); err != nil {
		t.Fatal(err)
	}
	if got := e.store.Revision(); got != rev {
		t.Errorf("an empty quota in sync was written again (revision %d, was %d)", got, rev)
	}
}
