package rest

import (
	"context"
	"errors"
	"fmt"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

// The methods below are the in-process API the server's own controllers
// use: the rules of the HTTP verbs, addressed by descriptor. Objects are in
// the descriptor's served form with kind and apiVersion; errors are Status
// errors (apierr), so callers can tell NotFound or AlreadyExists apart.

// Get returns the object called name in namespace ns.
func (h *Handler) Get(d *registry.Descriptor, ns, name string) (Object, error) {
	return h.getInProcess(d, ns, name, h.readObject)
}

// List returns the objects of d in namespace ns ("" for all) and the
// revision they were read at.
func (h *Handler) List(d *registry.Descriptor, ns string) ([]Object, int64, error) {
	return h.listInProcess(d, ns, h.readObject)
}

// sharedReads is the registry.Lookup of admission hooks: Get and List
// whose objects are shared with other readers, as the hooks only read
// them.
type sharedReads struct{ h *Handler }

func (r sharedReads) Get(d *registry.Descriptor, ns, name string) (Object, error) {
	return r.h.getInProcess(d, ns, name, r.h.sharedObject)
}

func (r sharedReads) List(d *registry.Descriptor, ns string) ([]Object, int64, error) {
	return r.h.listInProcess(d, ns, r.h.sharedObject)
}

func (h *Handler) getInProcess(d *registry.Descriptor, ns, name string, read func(*registry.Descriptor, bolt.KV) (Object, error)) (Object, error) {
	s := &scope{d: d, ns: ns, name: name}
	kv, err := h.store.Get(s.key())
	if err != nil {
		return nil, h.toStatus(objectErr(s, name, err))
	}
	return read(d, kv)
}

func (h *Handler) listInProcess(d *registry.Descriptor, ns string, read func(*registry.Descriptor, bolt.KV) (Object, error)) ([]Object, int64, error) {
	s := &scope{d: d, ns: ns}
	res, err := h.store.List(s.prefix(), bolt.ListOptions{})
	if err != nil {
		return nil, 0, h.toStatus(&storeFailure{s: s, op: opList, err: err})
	}
	out := make([]Object, 0, len(res.Items))
	for _, kv := range res.Items {
		obj, err := read(d, kv)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, obj)
	}
	return out, res.Revision, nil
}

// servedObject decodes stored bytes into d's served form with kind and
// apiVersion.
func (h *Handler) servedObject(d *registry.Descriptor, stored []byte) (Object, error) {
	obj, err := decodeStored(d, stored)
	if err != nil {
		return nil, internalErr(err)
	}
	obj["kind"], obj["apiVersion"] = d.Kind, d.GroupVersion()
	return obj, nil
}

// Create creates obj, whose metadata names its namespace, as POST would.
func (h *Handler) Create(ctx context.Context, d *registry.Descriptor, obj Object) (Object, error) {
	stored, err := h.createInProcess(ctx, d, obj)
	if err != nil {
		return nil, err
	}
	return h.servedObject(d, stored)
}

// CreateOnly is Create for a caller that does not read the created
// object: it is not decoded back from the stored bytes. The start's
// default objects are written this way.
func (h *Handler) CreateOnly(ctx context.Context, d *registry.Descriptor, obj Object) error {
	_, err := h.createInProcess(ctx, d, obj)
	return err
}

func (h *Handler) createInProcess(ctx context.Context, d *registry.Descriptor, obj Object) ([]byte, error) {
	s := &scope{d: d, ns: metaString(obj, "namespace"), manager: h.inProcessManager(ctx)}
	obj["kind"], obj["apiVersion"] = d.Kind, d.GroupVersion()
	stored, err := h.prepareAndCreate(ctx, s, obj, false)
	if err != nil {
		return nil, h.toStatus(err)
	}
	return stored, nil
}

// Update changes the object called name (or its subresource sub) through
// the update path. change gets the stored object and returns what a PUT
// would send, or nil when there is nothing to change; it runs again when
// another writer wins the race. A missing object is a NotFound error.
func (h *Handler) Update(ctx context.Context, d *registry.Descriptor, ns, name, sub string, change func(old Object) Object) (Object, error) {
	s := &scope{d: d, ns: ns, name: name, sub: sub, manager: h.inProcessManager(ctx)}
	for attempt := 0; attempt < maxUpdateAttempts; attempt++ {
		kv, err := h.store.Get(s.key())
		if err != nil {
			return nil, h.toStatus(objectErr(s, name, err))
		}
		old, err := h.servedObject(d, kv.Value)
		if err != nil {
			return nil, err
		}
		want := change(deepCopyObject(old))
		if want == nil {
			return old, nil
		}
		delete(old, "kind")
		delete(old, "apiVersion")
		next, err := h.prepareUpdate(ctx, s, want, old)
		if err != nil {
			return nil, h.toStatus(err)
		}
		stored, retry, err := h.commitUpdate(ctx, s, kv, next, false)
		if retry {
			continue
		}
		if err != nil {
			return nil, h.toStatus(err)
		}
		return h.servedObject(d, stored)
	}
	return nil, apierr.ConflictModified(d.Group, d.Resource, name)
}

// Apply merges config, an apply configuration, into the object called
// name (or its subresource sub) as a server-side apply by ctx's manager
// does, taking over conflicting fields when force is set; config gains
// the resource's kind and apiVersion. The object must exist when sub is
// set.
func (h *Handler) Apply(ctx context.Context, d *registry.Descriptor, ns, name, sub string, config Object, force bool) (Object, error) {
	s := &scope{d: d, ns: ns, name: name, sub: sub, manager: h.inProcessManager(ctx), applying: true}
	config["kind"], config["apiVersion"] = d.Kind, d.GroupVersion()
	stored, _, err := h.applyObject(ctx, s, applyRequest{config: config, force: force})
	if err != nil {
		return nil, h.toStatus(err)
	}
	return h.servedObject(d, stored)
}

// Delete deletes the object called name as DELETE would. gone reports
// whether it is removed rather than only marked (finalizers, grace
// period).
func (h *Handler) Delete(ctx context.Context, d *registry.Descriptor, ns, name string, opts registry.DeleteOptions) (gone bool, err error) {
	o := &deleteOptions{GracePeriodSeconds: opts.GracePeriodSeconds}
	if opts.PropagationPolicy != "" {
		p := opts.PropagationPolicy
		o.PropagationPolicy = &p
	}
	if opts.PreconditionUID != "" {
		uid := opts.PreconditionUID
		o.Preconditions = &precond{UID: &uid}
	}
	s := &scope{d: d, ns: ns, name: name}
	res, err := h.deleteObject(ctx, s, ns, name, o, false)
	if err != nil {
		return false, h.toStatus(err)
	}
	return res.removed, nil
}

// EnsureNamespace creates the namespace called name unless it exists.
func (h *Handler) EnsureNamespace(ctx context.Context, name string) error {
	d := h.reg.Namespaces()
	if d == nil {
		return errors.New("namespaces are not registered")
	}
	if _, err := h.store.Get(d.Key("", name)); err == nil {
		return nil
	}
	err := h.CreateOnly(ctx, d, Object{"metadata": map[string]any{"name": name}})
	if err != nil && apierr.ReasonOf(err) != apierr.ReasonAlreadyExists {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}
