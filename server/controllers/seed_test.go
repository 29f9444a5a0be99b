package controllers

import (
	"context"
	"reflect"
	"testing"

	"platd/server/registry"
)

func TestSeedPlant(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	if err := e.api.EnsureNamespace(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	cms := e.lookup(t, "", "v1", "configmaps")
	cm := func(name, value string, labels map[string]any) registry.Object {
		return registry.Object{
			"metadata": map[string]any{"name": name, "namespace": "default", "labels": labels},
			"data":     map[string]any{"v": value},
		}
	}
	managed := map[string]any{"seeded": "true"}
	// Before: one stale seeded object, one seeded object changed by a
	// user, one object the seed never wrote.
	for _, o := range []registry.Object{cm("stale", "x", managed), cm("kept", "user", managed), cm("mine", "x", nil)} {
		if _, err := e.api.Create(ctx, cms, o); err != nil {
			t.Fatal(err)
		}
	}
	seed := Seed{
		Resource: cms,
		Objects:  []registry.Object{cm("fresh", "1", managed), cm("kept", "2", managed)},
		Reconcile: func(have, want registry.Object) registry.Object {
			if reflect.DeepEqual(have["data"], want["data"]) {
				return nil
			}
			have["data"] = want["data"]
			return have
		},
		Prune: func(have registry.Object) bool {
			l, _ := have["metadata"].(map[string]any)["labels"].(map[string]any)
			return l["seeded"] == "true"
		},
	}
	for round := range 2 { // planting twice changes nothing more
		if err := seed.Plant(ctx, e.api); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got := map[string]any{}
		objs, _, err := e.api.List(cms, "default")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			got[metaString(o, "name")] = o["data"].(map[string]any)["v"]
		}
		want := map[string]any{"fresh": "1", "kept": "2", "mine": "x"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: objects %v, want %v", round, got, want)
		}
	}
}

func TestReconcileSpec(t *testing.T) {
	t.Parallel()
	have := registry.Object{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"x": 1.0}, "status": map[string]any{"s": true}}
	if ReconcileSpec(copyObject(have), registry.Object{"spec": map[string]any{"x": 1.0}}) != nil {
		t.Error("equal specs: want no change")
	}
	got := ReconcileSpec(copyObject(have), registry.Object{"spec": map[string]any{"x": 2.0}})
	if got["spec"].(map[string]any)["x"] != 2.0 || got["status"] == nil || metaString(got, "name") != "a" {
		t.Errorf("reconciled: %v", got)
	}
}
