package controllers

import (
	"context"
	"slices"
	"testing"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

// gcEnv is a test environment with objects that name owners.
type gcEnv struct {
	*testEnv
	t   *testing.T
	cmd *registry.Descriptor
}

func newGCEnv(t *testing.T) *gcEnv {
	e := &gcEnv{testEnv: newTestEnv(t), t: t}
	e.cmd = e.lookup(t, "", "v1", "configmaps")
	e.createNamespace(t, "ns")
	return e
}

func (e *gcEnv) start() {
	e.run(e.t, (&GarbageCollector{Source: e.store, Objects: e.api, Registry: e.reg, Log: e.log}).Run)
}

// ref is an owner reference to obj.
func ref(obj registry.Object, block bool) map[string]any {
	r := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": metaString(obj, "name"), "uid": metaString(obj, "uid")}
	if block {
		r["blockOwnerDeletion"] = true
	}
	return r
}

// cm creates a ConfigMap in ns "ns" with owner references and finalizers.
func (e *gcEnv) cm(name string, owners []map[string]any, finalizers ...any) registry.Object {
	e.t.Helper()
	meta := map[string]any{"name": name, "namespace": "ns"}
	if len(owners) > 0 {
		refs := make([]any, len(owners))
		for i, o := range owners {
			refs[i] = o
		}
		meta["ownerReferences"] = refs
	}
	if len(finalizers) > 0 {
		meta["finalizers"] = finalizers
	}
	obj, err := e.api.Create(context.Background(), e.cmd, registry.Object{"metadata": meta})
	if err != nil {
		e.t.Fatalf("creating %s: %v", name, err)
	}
	return obj
}

func (e *gcEnv) get(name string) registry.Object {
	obj, err := e.api.Get(e.cmd, "ns", name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return obj
}

func (e *gcEnv) gone(name string) func() bool {
	return func() bool { return e.get(name) == nil }
}

func (e *gcEnv) del(name, policy string) {
	e.t.Helper()
	if _, err := e.api.Delete(context.Background(), e.cmd, "ns", name, registry.DeleteOptions{PropagationPolicy: policy}); err != nil {
		e.t.Fatalf("deleting %s: %v", name, err)
	}
}

func ownerUIDs(obj registry.Object) []string {
	var out []string
	for _, r := range list(child(obj, "metadata")["ownerReferences"]) {
		out = append(out, refUID(r))
	}
	return out
}

func TestGCBackground(t *testing.T) {
	t.Parallel()
	e := newGCEnv(t)
	owner := e.cm("owner", nil)
	other := e.cm("other", nil)
	// Objects that name owners that are gone before the collector starts.
	e.cm("dangling", []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "name": "never", "uid": "0000-never"}})
	e.cm("wrong-uid", []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": "0000-stale"}})
	e.start()
	waitFor(t, "a dependent of a missing owner to go", e.gone("dangling"))
	waitFor(t, "a dependent of an owner with another uid to go", e.gone("wrong-uid"))

	e.cm("only", []map[string]any{ref(owner, false)})
	e.cm("shared", []map[string]any{ref(owner, false), ref(other, false)})
	e.cm("grandchild", []map[string]any{ref(e.get("only"), false)})
	e.del("owner", "")
	waitFor(t, "the only-owned dependent to go", e.gone("only"))
	waitFor(t, "its own dependent to go", e.gone("grandchild"))
	waitFor(t, "the shared dependent to lose the reference", func() bool {
		s := e.get("shared")
		return s != nil && slices.Equal(ownerUIDs(s), []string{metaString(other, "uid")})
	})
	if e.get("other") == nil {
		t.Fatal("a solid owner was deleted")
	}
}

func TestGCClusterScopedOwner(t *testing.T) {
	t.Parallel()
	e := newGCEnv(t)
	icd := e.lookup(t, e.brand.Group("networking"), "v1", "ingressclasses")
	ctx := context.Background()
	ic, err := e.api.Create(ctx, icd, registry.Object{"metadata": map[string]any{"name": "owner"}, "spec": map[string]any{"controller": "example.com/ingress"}})
	if err != nil {
		t.Fatal(err)
	}
	e.start()
	e.cm("dep", []map[string]any{ref(ic, false)})
	// A cluster-scoped object that names a namespaced owner is left alone,
	// as is one whose owner's kind is not served.
	invalid := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "0000-gone"}
	unknown := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "0000-widget"}
	for name, r := range map[string]map[string]any{"invalid": invalid, "unknown": unknown} {
		if _, err := e.api.Create(ctx, icd, registry.Object{
			"metadata": map[string]any{"name": name, "ownerReferences": []any{r}},
			"spec":     map[string]any{"controller": "example.com/ingress"},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.api.Delete(ctx, icd, "", "owner", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dependent of a cluster-scoped owner to go", e.gone("dep"))
	// The collector works in order: a later dangling object's removal
	// shows the ones above were looked at.
	e.cm("canary", []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "name": "never", "uid": "0000-never"}})
	waitFor(t, "the canary to go", e.gone("canary"))
	for _, name := range []string{"invalid", "unknown"} {
		if _, err := e.api.Get(icd, "", name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestGCOrphan(t *testing.T) {
	t.Parallel()
	e := newGCEnv(t)
	e.start()
	owner := e.cm("owner", nil)
	other := e.cm("other", nil)
	e.cm("a", []map[string]any{ref(owner, true)})
	e.cm("b", []map[string]any{ref(owner, false), ref(other, false)})
	e.del("owner", "Orphan")
	waitFor(t, "the orphaning owner to go", e.gone("owner"))
	if a := e.get("a"); a == nil || len(ownerUIDs(a)) != 0 {
		t.Errorf("a: %v", a)
	}
	if b := e.get("b"); b == nil || !slices.Equal(ownerUIDs(b), []string{metaString(other, "uid")}) {
		t.Errorf("b: %v", b)
	}
}

func TestGCForeground(t *testing.T) {
	t.Parallel()
	e := newGCEnv(t)
	e.start()
	owner := e.cm("owner", nil)
	other := e.cm("other", nil)
	child1 := e.cm("child", []map[string]any{ref(owner, true)})
	e.cm("loose", []map[string]any{ref(owner, false)})
	// Another owner keeps it: it only stops naming the deleted one.
	e.cm("shared", []map[string]any{ref(owner, true), ref(other, true)})
	e.cm("grandchild", []map[string]any{ref(child1, true)}, "example.com/hold")
	e.del("owner", "Foreground")

	// The loose dependent goes; the held grandchild keeps the child, the
	// child (deleted in the foreground, having dependents) the owner.
	waitFor(t, "the non-blocking dependent to go", e.gone("loose"))
	waitFor(t, "the grandchild to be marked", func() bool {
		g := e.get("grandchild")
		return g != nil && metaString(g, "deletionTimestamp") != ""
	})
	for _, name := range []string{"owner", "child"} {
		o := e.get(name)
		if o == nil || metaString(o, "deletionTimestamp") == "" || !slices.Contains(registry.Strings(child(o, "metadata")["finalizers"]), "foregroundDeletion") {
			t.Fatalf("%s: %v", name, o)
		}
	}
	if _, err := e.api.Update(context.Background(), e.cmd, "ns", "grandchild", "", func(g registry.Object) registry.Object {
		delete(child(g, "metadata"), "finalizers")
		return g
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the child to go", e.gone("child"))
	waitFor(t, "the owner to go", e.gone("owner"))
	if s := e.get("shared"); s == nil || !slices.Equal(ownerUIDs(s), []string{metaString(other, "uid")}) {
		t.Errorf("shared: %v", s)
	}
}

// TestGCForegroundCycle: two objects that own each other, both blocking,
// are deleted in the foreground without waiting for each other forever.
func TestGCForegroundCycle(t *testing.T) {
	t.Parallel()
	e := newGCEnv(t)
	e.start()
	a := e.cm("a", nil)
	b := e.cm("b", []map[string]any{ref(a, true)})
	if _, err := e.api.Update(context.Background(), e.cmd, "ns", "a", "", func(o registry.Object) registry.Object {
		child(o, "metadata")["ownerReferences"] = []any{ref(b, true)}
		return o
	}); err != nil {
		t.Fatal(err)
	}
	e.del("a", "Foreground")
	waitFor(t, "a to go", e.gone("a"))
	waitFor(t, "b to go", e.gone("b"))
}

// TestGCRestart: a deletion that began while no collector ran is
// finished from the initial list.
func TestGCRestart(t *testing.T) {
	t.Parallel()
	e := newGCEnv(t)
	owner := e.cm("owner", nil)
	e.cm("dep", []map[string]any{ref(owner, true)})
	e.del("owner", "Foreground")
	// The collector starts after the deletion began and finishes it.
	e.start()
	waitFor(t, "the dependent to go", e.gone("dep"))
	waitFor(t, "the owner to go", e.gone("owner"))
}

// TestGCOwnerKindServedLater: a dependent whose owner's kind is not served
// stays, and is collected once the kind is served and its owner is
// missing.
func TestGCOwnerKindServedLater(t *testing.T) {
	t.Parallel()
	e := newGCEnv(t)
	e.start()
	widget := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "0000-widget"}
	e.cm("dep", []map[string]any{widget})
	e.cm("canary", []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "name": "never", "uid": "0000-never"}})
	waitFor(t, "the canary to go", e.gone("canary"))
	if e.get("dep") == nil {
		t.Fatal("a dependent of an unserved kind was collected")
	}
	wd := *e.cmd
	wd.Group, wd.Kind, wd.ListKind, wd.Resource, wd.Singular = "example.com", "Widget", "WidgetList", "widgets", "widget"
	e.reg.Add(&wd)
	// Any later event lets the collector see the new type.
	e.cm("later", nil)
	waitFor(t, "the dependent of a missing widget to go", e.gone("dep"))
}

// An owner whose deletion the store holds but the graph has not seen yet
// is left alone: the graph may not know its dependents yet. Once the
// events catch up, orphaning and foreground deletion go as usual. Events
// are fed by hand, so the graph lags the store exactly as a busy watch
// makes it.
func TestGCWaitsForItsGraph(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, policy := range []string{policyOrphan, policyForeground} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			e := newGCEnv(t)
			c := &GarbageCollector{Objects: e.api, Registry: e.reg, Log: e.log, nodes: map[string]*gcNode{}, unresolved: map[string]bool{}, queue: newQueue()}
			feed := func(names ...string) {
				t.Helper()
				for _, name := range names {
					kv, err := e.store.Get(e.cmd.Key("ns", name))
					if err != nil {
						t.Fatal(err)
					}
					c.observe(bolt.Event{Type: bolt.Put, KV: kv})
				}
			}
			owner := e.cm("owner", nil)
			feed("owner")
			e.cm("dep", []map[string]any{ref(owner, true)}, "example.com/hold")
			e.del("owner", policy)
			if err := c.syncOnce(ctx, metaString(owner, "uid")); err != nil {
				t.Fatal(err)
			}
			if o := e.get("owner"); o == nil {
				t.Fatal("the owner went before the graph saw its dependent")
			}

			feed("dep", "owner")
			if err := c.syncOnce(ctx, metaString(owner, "uid")); err != nil {
				t.Fatal(err)
			}
			switch policy {
			case policyOrphan:
				if d := e.get("dep"); d == nil || len(ownerUIDs(d)) != 0 {
					t.Errorf("dependent after orphaning: %v", d)
				}
				if e.get("owner") != nil {
					t.Error("the orphaning owner stayed")
				}
			case policyForeground:
				// The held dependent blocks the owner.
				if e.get("owner") == nil || e.get("dep") == nil {
					t.Error("the owner went while its blocking dependent stays")
				}
			}
		})
	}
}
