package controllers

import (
	"context"
	"testing"

	"platd/server/apierr"
	"platd/server/registry"
)

func TestClaimProtection(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	claims, volumes, pods := e.lookup(t, "", "v1", "persistentvolumeclaims"), e.lookup(t, "", "v1", "persistentvolumes"), e.lookup(t, "", "v1", "pods")
	e.createNamespace(t, "ns")
	e.run(t, (&ClaimProtection{Source: e.store, Objects: e.api, Registry: e.reg, Claims: claims, Volumes: volumes, Pods: pods,
		ClaimFinalizer: e.brand.Label("pvc-protection"), VolumeFinalizer: e.brand.Label("pv-protection"), Log: e.log}).Run)

	claim := func(name string) {
		t.Helper()
		_, err := e.api.Create(ctx, claims, registry.Object{
			"metadata": map[string]any{"name": name, "namespace": "ns"},
			"spec":     map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name, node, claimName string) {
		t.Helper()
		_, err := e.api.Create(ctx, pods, registry.Object{
			"metadata": map[string]any{"name": name, "namespace": "ns"},
			"spec": map[string]any{"nodeName": node, "containers": []any{map[string]any{"name": "c", "image": "busybox"}},
				"volumes": []any{map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": claimName}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	gone := func(d *registry.Descriptor, ns, name string) func() bool {
		return func() bool {
			_, err := e.api.Get(d, ns, name)
			return apierr.ReasonOf(err) == apierr.ReasonNotFound
		}
	}
	del := func(d *registry.Descriptor, ns, name string) {
		t.Helper()
		if _, err := e.api.Delete(ctx, d, ns, name, registry.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// settle waits until the controller has worked through what was
	// queued before: its queue is first in, first out.
	settle := func(name string) {
		t.Helper()
		claim(name)
		del(claims, "ns", name)
		waitFor(t, "a probe claim to go", gone(claims, "ns", name))
	}

	// An unused claim goes at once; an unscheduled pod does not hold one.
	claim("free")
	pod("pending", "", "free")
	del(claims, "ns", "free")
	waitFor(t, "the unused claim to go", gone(claims, "ns", "free"))

	// A scheduled pod holds its claim until it goes.
	claim("used")
	pod("runner", "node-1", "used")
	del(claims, "ns", "used")
	settle("probe-1")
	if _, err := e.api.Get(claims, "ns", "used"); err != nil {
		t.Fatalf("claim in use: %v", err)
	}
	zero := int64(0)
	if _, err := e.api.Delete(ctx, pods, "ns", "runner", registry.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the claim to go with its pod", gone(claims, "ns", "used"))

	// A volume goes once it is not bound.
	_, err := e.api.Create(ctx, volumes, registry.Object{
		"metadata": map[string]any{"name": "pv"},
		"spec":     map[string]any{"accessModes": []any{"ReadWriteOnce"}, "capacity": map[string]any{"storage": "1Gi"}, "hostPath": map[string]any{"path": "/srv"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.api.Update(ctx, volumes, "", "pv", "status", func(old registry.Object) registry.Object {
		old["status"] = map[string]any{"phase": "Bound"}
		return old
	}); err != nil {
		t.Fatal(err)
	}
	del(volumes, "", "pv")
	settle("probe-2")
	if _, err := e.api.Get(volumes, "", "pv"); err != nil {
		t.Fatalf("bound volume: %v", err)
	}
	if _, err := e.api.Update(ctx, volumes, "", "pv", "status", func(old registry.Object) registry.Object {
		old["status"] = map[string]any{"phase": "Released"}
		return old
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the released volume to go", gone(volumes, "", "pv"))
}
