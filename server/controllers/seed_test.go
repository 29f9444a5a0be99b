package controllers

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"platd/server/apierr"
	"platd/server/builtin"
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

// TestReplantFlowControl keeps the bootstrap flow-control configuration as
// the server does, planted again every (short) period: deleted objects
// come back, mandatory ones get their spec and mark back while the exempt
// level keeps its own settings, a suggested object an operator changed
// keeps its change and is marked "false", and an auto-updated object the
// bootstrap no longer names is removed.
func TestReplantFlowControl(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	b := e.brand
	key := builtin.FlowControlAutoUpdate(b)
	levels := e.lookup(t, b.Group("flowcontrol.apiserver"), "v1", "prioritylevelconfigurations")
	schemas := e.lookup(t, b.Group("flowcontrol.apiserver"), "v1", "flowschemas")
	bootLevels, bootSchemas := builtin.FlowControlBootstrap(b)
	seeds := []Seed{
		{Resource: levels, Objects: bootLevels, Reconcile: builtin.PriorityLevelReviser(b, levels), Prune: builtin.FlowControlRemovable(b)},
		{Resource: schemas, Objects: bootSchemas, Reconcile: builtin.FlowSchemaReviser(b, schemas), Prune: builtin.FlowControlRemovable(b)},
	}
	// Planted as at start; planted again, nothing is written.
	for round := range 2 {
		before := e.store.Revision()
		for _, s := range seeds {
			if err := s.Plant(ctx, e.api); err != nil {
				t.Fatal(err)
			}
		}
		if round == 1 && e.store.Revision() != before {
			t.Fatalf("planting the configuration again wrote %d times", e.store.Revision()-before)
		}
	}
	get := func(d *registry.Descriptor, name string) registry.Object {
		o, err := e.api.Get(d, "", name)
		if err != nil && apierr.ReasonOf(err) != apierr.ReasonNotFound {
			t.Fatal(err)
		}
		return o
	}
	update := func(d *registry.Descriptor, name string, change func(o registry.Object)) {
		t.Helper()
		if _, err := e.api.Update(ctx, d, "", name, "", func(o registry.Object) registry.Object { change(o); return o }); err != nil {
			t.Fatal(err)
		}
	}
	// An object's mark; nil while it has none (a schema whose mark the
	// test took off, before the replant marks it again).
	mark := func(o registry.Object) any {
		a, _ := path(o, "metadata.annotations").(map[string]any)
		return a[key]
	}
	// An operator's own schema, then one the bootstrap no longer names.
	mine := registry.Object{"metadata": map[string]any{"name": "mine"}, "spec": map[string]any{
		"priorityLevelConfiguration": map[string]any{"name": "global-default"}, "matchingPrecedence": int64(5000)}}
	if _, err := e.api.Create(ctx, schemas, mine); err != nil {
		t.Fatal(err)
	}
	retired := copyObject(mine)
	child(retired, "metadata")["name"] = "retired"
	child(child(retired, "metadata"), "annotations")[key] = "true"
	if _, err := e.api.Create(ctx, schemas, retired); err != nil {
		t.Fatal(err)
	}
	// The exempt level's own settings change, and its mark is taken off.
	update(levels, "exempt", func(o registry.Object) {
		child(child(o, "spec"), "exempt")["nominalConcurrencyShares"] = int64(7)
		child(child(o, "metadata"), "annotations")[key] = "false"
	})
	// A suggested schema is changed with its mark taken off (generation
	// 2); another keeps its mark and is changed.
	update(schemas, "global-default", func(o registry.Object) {
		child(o, "spec")["matchingPrecedence"] = int64(4321)
		delete(child(child(o, "metadata"), "annotations"), key)
	})
	update(schemas, "service-accounts", func(o registry.Object) { child(o, "spec")["matchingPrecedence"] = int64(4321) })
	// The mandatory catch-all level is given another spec, as an older
	// release could have stored it (validation refuses it now).
	catchAll := levels.Key("", "catch-all")
	kv, err := e.store.Get(catchAll)
	if err != nil {
		t.Fatal(err)
	}
	var stored registry.Object
	if err := json.Unmarshal(kv.Value, &stored); err != nil {
		t.Fatal(err)
	}
	child(child(stored, "spec"), "limited")["nominalConcurrencyShares"] = 50
	raw, _ := json.Marshal(stored)
	if _, err := e.store.Update(ctx, catchAll, kv.ModRevision, raw); err != nil {
		t.Fatal(err)
	}
	// The catch-all schema is deleted.
	firstUID := metaString(get(schemas, "catch-all"), "uid")
	if _, err := e.api.Delete(ctx, schemas, "", "catch-all", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	e.run(t, (&Replant{Seeds: seeds, Objects: e.api, Interval: 5 * time.Millisecond, Log: e.log}).Run)
	waitFor(t, "the catch-all schema recreated", func() bool {
		o := get(schemas, "catch-all")
		return o != nil && metaString(o, "uid") != firstUID
	})
	waitFor(t, "the exempt level marked again", func() bool { return mark(get(levels, "exempt")) == "true" })
	if got := path(get(levels, "exempt"), "spec.exempt.nominalConcurrencyShares"); got != int64(7) {
		t.Errorf("exempt level's nominalConcurrencyShares %v, want the operator's 7", got)
	}
	waitFor(t, "the catch-all level's spec restored", func() bool {
		return path(get(levels, "catch-all"), "spec.limited.nominalConcurrencyShares") == int64(5)
	})
	waitFor(t, "the changed suggested schema marked false", func() bool { return mark(get(schemas, "global-default")) == "false" })
	if o := get(schemas, "global-default"); path(o, "spec.matchingPrecedence") != int64(4321) {
		t.Errorf("changed suggested schema: spec %v, want the operator's", o["spec"])
	}
	waitFor(t, "the marked suggested schema restored", func() bool {
		return path(get(schemas, "service-accounts"), "spec.matchingPrecedence") == int64(9000)
	})
	waitFor(t, "the retired schema removed", func() bool { return get(schemas, "retired") == nil })
	if get(schemas, "mine") == nil {
		t.Error("the operator's own schema was removed")
	}
}
