package controllers

import (
	"context"
	"slices"
	"testing"

	"platd/server/apierr"
	"platd/server/registry"
)

func TestClaimProtection(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	claims, volumes, pods := e.lookup(t, "", "v1", "persistentvolumeclaims"), e.lookup(t, "", "v1", "persistentvolumes"), e.lookup(t, "", "v1", "pods")
	e.createPodNamespace(t, "ns")
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

	// A pod shut down but kept by its finalizer still holds the claim it
	// names, until it is gone.
	claim("kept")
	pod("held", "node-1", "kept")
	if _, err := e.api.Update(ctx, pods, "ns", "held", "", func(old registry.Object) registry.Object {
		old["metadata"].(map[string]any)["finalizers"] = []any{"example.com/hold"}
		return old
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.api.Delete(ctx, pods, "ns", "held", registry.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	del(claims, "ns", "kept")
	settle("probe-3")
	if _, err := e.api.Get(claims, "ns", "kept"); err != nil {
		t.Fatalf("claim of a shut-down pod: %v", err)
	}
	if _, err := e.api.Update(ctx, pods, "ns", "held", "", func(old registry.Object) registry.Object {
		delete(old["metadata"].(map[string]any), "finalizers")
		return old
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the claim to go with its finalized pod", gone(claims, "ns", "kept"))

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

// TestPodUsesClaim: a scheduled pod holds the claims it names for as long
// as it exists, and its own ephemeral claim until it is shut down.
func TestPodUsesClaim(t *testing.T) {
	t.Parallel()
	owned := registry.Object{"metadata": map[string]any{"name": "p-scratch", "ownerReferences": []any{
		map[string]any{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "pod-uid", "controller": true}}}}
	other := registry.Object{"metadata": map[string]any{"name": "p-scratch"}}
	plain := map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "data"}}
	ephemeral := map[string]any{"name": "scratch", "ephemeral": map[string]any{}}
	pod := func(node string, shutDown bool, grace int64, vols ...any) registry.Object {
		md := map[string]any{"name": "p", "uid": "pod-uid"}
		if shutDown {
			md["deletionTimestamp"] = "2026-01-02T03:04:05Z"
			md["deletionGracePeriodSeconds"] = grace
		}
		return registry.Object{"metadata": md, "spec": map[string]any{"nodeName": node, "volumes": vols}}
	}
	for _, c := range []struct {
		name      string
		pod       registry.Object
		claim     registry.Object
		claimName string
		want      bool
	}{
		{"unscheduled", pod("", false, 0, plain), other, "data", false},
		{"named", pod("n", false, 0, plain), other, "data", true},
		{"named, deleting with grace", pod("n", true, 30, plain), other, "data", true},
		{"named, shut down", pod("n", true, 0, plain), other, "data", true},
		{"another claim", pod("n", false, 0, plain), other, "logs", false},
		{"ephemeral", pod("n", false, 0, ephemeral), owned, "p-scratch", true},
		{"ephemeral, deleting with grace", pod("n", true, 30, ephemeral), owned, "p-scratch", true},
		{"ephemeral, shut down", pod("n", true, 0, ephemeral), owned, "p-scratch", false},
		{"ephemeral of another owner", pod("n", false, 0, ephemeral), other, "p-scratch", false},
	} {
		if got := podUsesClaim(c.pod, c.claim, c.claimName); got != c.want {
			t.Errorf("%s: uses %v, want %v", c.name, got, c.want)
		}
	}
}

// TestProtectionFinalizersRestored checks that claims and volumes not being
// deleted get their protection finalizer back, after the finalizers they
// have, whether they lacked it when the controller started or lost it
// later, and that one being deleted does not.
func TestProtectionFinalizersRestored(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	claims, volumes := e.lookup(t, "", "v1", "persistentvolumeclaims"), e.lookup(t, "", "v1", "persistentvolumes")
	e.createPodNamespace(t, "ns")
	claimFinalizer, volumeFinalizer := e.brand.Label("pvc-protection"), e.brand.Label("pv-protection")
	cases := []struct {
		d         *registry.Descriptor
		ns        string
		finalizer string
		spec      map[string]any
	}{
		{claims, "ns", claimFinalizer, map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}},
		{volumes, "", volumeFinalizer, map[string]any{"accessModes": []any{"ReadWriteOnce"}, "capacity": map[string]any{"storage": "1Gi"}, "hostPath": map[string]any{"path": "/srv"}}},
	}
	create := func(d *registry.Descriptor, ns, name string, spec map[string]any) {
		t.Helper()
		if _, err := e.api.Create(ctx, d, registry.Object{"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}); err != nil {
			t.Fatal(err)
		}
	}
	setFinalizers := func(d *registry.Descriptor, ns, name string, fins ...any) {
		t.Helper()
		if _, err := e.api.Update(ctx, d, ns, name, "", func(old registry.Object) registry.Object {
			old["metadata"].(map[string]any)["finalizers"] = fins
			return old
		}); err != nil {
			t.Fatal(err)
		}
	}
	finalizers := func(d *registry.Descriptor, ns, name string) []string {
		t.Helper()
		obj, err := e.api.Get(d, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		return registry.Strings(obj["metadata"].(map[string]any)["finalizers"])
	}
	has := func(d *registry.Descriptor, ns, name string, want ...string) func() bool {
		return func() bool { return slices.Equal(finalizers(d, ns, name), want) }
	}

	// Objects that lack the finalizer before the controller starts.
	for _, c := range cases {
		create(c.d, c.ns, "old", c.spec)
		setFinalizers(c.d, c.ns, "old", "example.com/keep")
	}
	e.run(t, (&ClaimProtection{Source: e.store, Objects: e.api, Registry: e.reg, Claims: claims, Volumes: volumes,
		ClaimFinalizer: claimFinalizer, VolumeFinalizer: volumeFinalizer, Log: e.log}).Run)

	for _, c := range cases {
		waitFor(t, c.d.Resource+" old to get its finalizer back", has(c.d, c.ns, "old", "example.com/keep", c.finalizer))

		create(c.d, c.ns, "live", c.spec)
		setFinalizers(c.d, c.ns, "live")
		waitFor(t, c.d.Resource+" live to get its finalizer back", has(c.d, c.ns, "live", c.finalizer))

		// Being deleted, the object loses the finalizer for good.
		create(c.d, c.ns, "held", c.spec)
		setFinalizers(c.d, c.ns, "held", "example.com/hold", c.finalizer)
		if _, err := e.api.Delete(ctx, c.d, c.ns, "held", registry.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, c.d.Resource+" held to be released", has(c.d, c.ns, "held", "example.com/hold"))
		// The queue is first in, first out: once a later object has its
		// finalizer back, the held one has been looked at again.
		create(c.d, c.ns, "probe", c.spec)
		setFinalizers(c.d, c.ns, "probe")
		waitFor(t, c.d.Resource+" probe to get its finalizer back", has(c.d, c.ns, "probe", c.finalizer))
		if got := finalizers(c.d, c.ns, "held"); !slices.Equal(got, []string{"example.com/hold"}) {
			t.Errorf("%s being deleted has finalizers %v", c.d.Resource, got)
		}
	}
}
