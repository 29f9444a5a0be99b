package customresource

import (
	"context"
	"time"

	"platd/config"
	"platd/server/registry"
)

// CleanupFinalizer is the finalizer a deleted CRD carries until its
// custom resources are gone.
func CleanupFinalizer(b config.Brand) string {
	return "customresourcecleanup." + b.Group("apiextensions")
}

// Controller is what Attach needs of the controller that serves CRDs.
type Controller interface {
	// Owns reports whether a descriptor serves the CRD called name.
	Owns(name string) func(*registry.Descriptor) bool
	// Await waits until the CRD write at a revision is served.
	Await(ctx context.Context, rev int64)
}

// Attach gives the CRD descriptor d the rules that tie CRDs to what the
// server serves: names are accepted and the CRD established as it is
// written, a write is answered once its resources are served, and a
// deletion first removes the custom resources (the cleanup finalizer).
func Attach(d *registry.Descriptor, reg *registry.Registry, ctrl Controller, b config.Brand) {
	accept := func(obj registry.Object) {
		Accept(obj, reg, ctrl.Owns(str(mapAt(obj, "metadata"), "name")), time.Now())
	}
	create, update := d.Strategy.PrepareForCreate, d.Strategy.PrepareForUpdate
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		if create != nil {
			create(obj)
		}
		accept(obj)
	}
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, sub string) {
		if update != nil {
			update(obj, old, sub)
		}
		if sub == "" && mapAt(obj, "metadata")["deletionTimestamp"] == nil {
			accept(obj)
		}
	}
	// Its own cleanup finalizer has no "/", and apiextensions objects
	// are not held to the core API's finalizer names.
	d.AnyFinalizerNames = true
	finalizer := CleanupFinalizer(b)
	d.Strategy.Graceful = true
	d.Strategy.PrepareForDelete = func(obj registry.Object) {
		m := registry.Child(obj, "metadata")
		fins := list(m["finalizers"])
		has := false
		for _, f := range fins {
			has = has || f == finalizer
		}
		if !has {
			m["finalizers"] = append(fins, finalizer)
		}
		SetCondition(registry.Child(obj, "status"), CondTerminating, "True", "InstanceDeletionPending",
			"CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon", time.Now())
	}
	d.Strategy.Settle = ctrl.Await
}
