package controllers

import (
	"context"
	"testing"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

func TestDeletionGraceController(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	pd := e.lookup(t, "", "v1", "pods")
	e.createPodNamespace(t, "ns")
	pod := func(name string, finalizers ...any) {
		t.Helper()
		obj := registry.Object{
			"metadata": map[string]any{"name": name, "namespace": "ns"},
			"spec":     map[string]any{"nodeName": "node-1", "containers": []any{map[string]any{"name": "c", "image": "busybox"}}},
		}
		if len(finalizers) > 0 {
			child(obj, "metadata")["finalizers"] = finalizers
		}
		if _, err := e.api.Create(ctx, pd, obj); err != nil {
			t.Fatal(err)
		}
	}
	del := func(name string, grace int64) {
		t.Helper()
		gone, err := e.api.Delete(ctx, pd, "ns", name, registry.DeleteOptions{GracePeriodSeconds: &grace})
		if err != nil || gone {
			t.Fatalf("deleting %s: gone %v, %v", name, gone, err)
		}
	}
	missing := func(name string) func() bool {
		return func() bool {
			_, err := e.api.Get(pd, "ns", name)
			return apierr.ReasonOf(err) == apierr.ReasonNotFound
		}
	}

	// held is due first but its finalizer keeps it; early is marked before
	// the controller starts, late after.
	pod("held", "example.com/hold")
	pod("early")
	pod("late")
	pod("alive")
	del("held", 1)
	del("early", 1)
	e.run(t, (&DeletionGrace{Source: e.store, Objects: e.api, Registry: e.reg, Log: e.log}).Run)
	// Timestamps have whole seconds: two seconds leave at least one.
	del("late", 2)
	if missing("late")() {
		t.Fatal("removed before its grace period ran out")
	}
	waitFor(t, "the early pod to go", missing("early"))
	waitFor(t, "the late pod to go", missing("late"))
	if missing("held")() || missing("alive")() {
		t.Fatal("a pod with a finalizer or no deletion was removed")
	}

	// Once its finalizer goes, the overdue pod goes.
	if _, err := e.api.Update(ctx, pd, "ns", "held", "", func(p registry.Object) registry.Object {
		delete(child(p, "metadata"), "finalizers")
		return p
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the released pod to go", missing("held"))
}

// TestDeletionGraceObserve: an object gets a timer when its metadata
// marks it deleted with a grace period and nothing holds it; the word
// anywhere else in the object, or a mark with finalizers, sets none, and
// a later state without the mark clears the timer.
func TestDeletionGraceObserve(t *testing.T) {
	t.Parallel()
	const due = `"deletionTimestamp":"2999-01-01T00:00:00Z","deletionGracePeriodSeconds":30`
	for _, tc := range []struct {
		name, stored string
		timer        bool
	}{
		{"marked", `{"metadata":{"name":"a",` + due + `},"spec":{}}`, true},
		{"held", `{"metadata":{"name":"a",` + due + `,"finalizers":["f"]}}`, false},
		{"not marked", `{"metadata":{"name":"a"},"spec":{}}`, false},
		{"label", `{"metadata":{"name":"a","labels":{"deletionTimestamp":"x"}}}`, false},
		{"annotation", `{"metadata":{"name":"a","annotations":{"n":"deletionTimestamp\":\"2999-01-01T00:00:00Z\""}}}`, false},
		{"spec", `{"metadata":{"name":"a"},"spec":{` + due + `}}`, false},
		{"label and mark", `{"metadata":{"name":"a","labels":{"deletionTimestamp":"x"},` + due + `}}`, true},
	} {
		q := newQueue()
		c := &DeletionGrace{timers: newExpiryTimers(q.add), queue: q}
		c.observe(bolt.Event{Type: bolt.Put, KV: bolt.KV{Key: "/k", Value: []byte(tc.stored)}})
		if got := c.timers.timers["/k"] != nil; got != tc.timer {
			t.Errorf("%s: timer %v, want %v", tc.name, got, tc.timer)
		}
		c.observe(bolt.Event{Type: bolt.Put, KV: bolt.KV{Key: "/k", Value: []byte(`{"metadata":{"name":"a"}}`)}})
		if len(c.timers.timers) != 0 {
			t.Errorf("%s: timer left after the mark went", tc.name)
		}
	}
}
