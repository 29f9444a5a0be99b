package controllers

import (
	"context"
	"slices"
	"testing"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

func TestNamespaceController(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	nsd := e.reg.Namespaces()
	cmd := e.lookup(t, "", "v1", "configmaps")
	for _, ns := range []string{"live", "doomed"} {
		// A label and an annotation named deletionTimestamp do not make a
		// namespace terminating.
		marks := map[string]any{"deletionTimestamp": "x"}
		if _, err := e.api.Create(ctx, nsd, registry.Object{"metadata": map[string]any{"name": ns, "labels": marks, "annotations": marks}}); err != nil {
			t.Fatal(err)
		}
		for _, cm := range []registry.Object{
			{"metadata": map[string]any{"name": "plain", "namespace": ns}},
			{"metadata": map[string]any{"name": "held", "namespace": ns, "finalizers": []any{"example.com/hold"}}},
		} {
			if _, err := e.api.Create(ctx, cmd, cm); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.run(t, (&Namespaces{Source: e.store, Objects: e.api, Registry: e.reg, Finalizer: e.brand.NamespaceFinalizer, Log: e.log}).Run)

	if _, err := e.api.Delete(ctx, nsd, "", "doomed", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The plain object goes; the held one is marked and keeps the
	// namespace, whose conditions say why.
	waitFor(t, "the deletion pass", func() bool {
		_, err := e.api.Get(cmd, "doomed", "plain")
		return apierr.ReasonOf(err) == apierr.ReasonNotFound
	})
	waitFor(t, "the remaining-content condition", func() bool {
		ns, err := e.api.Get(nsd, "", "doomed")
		if err != nil {
			return false
		}
		for _, c := range list(child(ns, "status")["conditions"]) {
			m, _ := c.(map[string]any)
			if m["type"] == "NamespaceFinalizersRemaining" && m["status"] == "True" &&
				m["message"] == "Some finalizers are remaining: example.com/hold in 1 resource instances" {
				return true
			}
		}
		return false
	})
	held, err := e.api.Get(cmd, "doomed", "held")
	if err != nil || metaString(held, "deletionTimestamp") == "" {
		t.Fatalf("held object: %v %v", held, err)
	}
	ns, _ := e.api.Get(nsd, "", "doomed")
	if !slices.Contains(registry.Strings(child(ns, "spec")["finalizers"]), e.brand.NamespaceFinalizer) {
		t.Fatal("finalized while content remains")
	}

	// Releasing the last finalizer lets the namespace go.
	if _, err := e.api.Update(ctx, cmd, "doomed", "held", "", func(old registry.Object) registry.Object {
		delete(child(old, "metadata"), "finalizers")
		return old
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the namespace to go", func() bool {
		_, err := e.api.Get(nsd, "", "doomed")
		return apierr.ReasonOf(err) == apierr.ReasonNotFound
	})
	// The other namespace is untouched.
	if objs, _, err := e.api.List(cmd, "live"); err != nil || len(objs) != 2 {
		t.Errorf("live namespace content: %d objects, %v", len(objs), err)
	}
}

// A namespace is terminating while its latest event says so: a relist's
// put of a live namespace (recreated after a delete the watch missed)
// clears what the old one left, and a label named deletionTimestamp is not
// a deletion.
func TestNamespaceObserveReadsMetadata(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	c := &Namespaces{Registry: e.reg, terminating: map[string]bool{"gone": true}, queue: newQueue()}
	key := e.reg.Namespaces().Key("", "gone")
	for _, tc := range []struct {
		value string
		want  bool
	}{
		{`{"metadata":{"name":"gone","labels":{"deletionTimestamp":"x"}}}`, false},
		{`{"metadata":{"name":"gone","deletionTimestamp":"2026-01-02T03:04:05Z"}}`, true},
		{`{"metadata":{"name":"gone","annotations":{"deletionTimestamp":"x"}}}`, false},
	} {
		c.observe(bolt.Event{Type: bolt.Put, KV: bolt.KV{Key: key, Value: []byte(tc.value)}})
		if got := c.isTerminating("gone"); got != tc.want {
			t.Errorf("after %s: terminating %v, want %v", tc.value, got, tc.want)
		}
	}
}

// Content goes in the background whatever its type's default: a Job,
// orphaning by default, gets no orphan finalizer that only the garbage
// collector (not running here) would remove.
func TestNamespaceDeletesContentInBackground(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	nsd := e.reg.Namespaces()
	jobs := e.lookup(t, "batch", "v1", "jobs")
	if _, err := e.api.Create(ctx, nsd, registry.Object{"metadata": map[string]any{"name": "doomed"}}); err != nil {
		t.Fatal(err)
	}
	job := registry.Object{"metadata": map[string]any{"name": "j", "namespace": "doomed"}, "spec": map[string]any{"template": map[string]any{
		"spec": map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}}}
	if _, err := e.api.Create(ctx, jobs, job); err != nil {
		t.Fatal(err)
	}
	e.run(t, (&Namespaces{Source: e.store, Objects: e.api, Registry: e.reg, Finalizer: e.brand.NamespaceFinalizer, Log: e.log}).Run)
	if _, err := e.api.Delete(ctx, nsd, "", "doomed", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the namespace to go", func() bool {
		_, err := e.api.Get(nsd, "", "doomed")
		return apierr.ReasonOf(err) == apierr.ReasonNotFound
	})
	if _, err := e.api.Get(jobs, "doomed", "j"); apierr.ReasonOf(err) != apierr.ReasonNotFound {
		t.Errorf("job after its namespace: %v", err)
	}
}
