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
// use; they run the same rules as the HTTP verbs.

// namespaceScope addresses the namespace object called name.
func (h *Handler) namespaceScope(name string) (*scope, error) {
	d := h.reg.Lookup("", "v1", "namespaces")
	if d == nil {
		return nil, errors.New("namespaces are not registered")
	}
	return &scope{d: d, name: name}, nil
}

// EnsureNamespace creates the namespace called name unless it exists.
func (h *Handler) EnsureNamespace(ctx context.Context, name string) error {
	s, err := h.namespaceScope(name)
	if err != nil {
		return err
	}
	if _, err := h.store.Get(s.key()); err == nil {
		return nil
	}
	obj, err := h.prepareCreate(s, Object{"metadata": map[string]any{"name": name}})
	if err != nil {
		return fmt.Errorf("preparing namespace %s: %w", name, err)
	}
	if _, err := h.createObject(ctx, s, obj, false); err != nil && apierr.ReasonOf(err) != apierr.ReasonAlreadyExists {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// DeleteNamespaceContent deletes every object in namespace ns, as DELETE
// would, and returns how many remain (objects waiting for finalizers).
func (h *Handler) DeleteNamespaceContent(ctx context.Context, ns string) (int, error) {
	remaining := 0
	for _, d := range h.reg.All() {
		if !d.Namespaced || !d.HasVerb(registry.VerbDelete) {
			continue
		}
		s := &scope{d: d, ns: ns}
		res, err := h.store.List(s.prefix(), bolt.ListOptions{})
		if err != nil {
			return 0, fmt.Errorf("listing %s in %s: %w", d.GroupResource(), ns, err)
		}
		for _, kv := range res.Items {
			obj, err := decodeStored(d, kv.Value)
			if err != nil {
				return 0, err
			}
			name := metaString(obj, "name")
			dr, err := h.deleteObject(ctx, d, s, ns, name, &deleteOptions{}, false)
			if err != nil {
				if apierr.ReasonOf(err) == apierr.ReasonNotFound {
					continue
				}
				return 0, fmt.Errorf("deleting %s %s/%s: %w", d.GroupResource(), ns, name, err)
			}
			if !dr.removed {
				remaining++
			}
		}
	}
	return remaining, nil
}

// FinalizeNamespace removes the server's finalizer from the namespace's
// spec.finalizers; the namespace goes away when nothing else keeps it.
func (h *Handler) FinalizeNamespace(ctx context.Context, name string) error {
	s, err := h.namespaceScope(name)
	if err != nil {
		return err
	}
	s.sub = "finalize"
	for attempt := 0; attempt < maxUpdateAttempts; attempt++ {
		kv, err := h.store.Get(s.key())
		if errors.Is(err, bolt.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		old, err := decodeStored(s.d, kv.Value)
		if err != nil {
			return err
		}
		spec, _ := old["spec"].(map[string]any)
		var keep []string
		for _, f := range stringList(spec["finalizers"]) {
			if f != h.brand.NamespaceFinalizer {
				keep = append(keep, f)
			}
		}
		body := Object{"spec": map[string]any{}}
		if len(keep) > 0 {
			body["spec"] = map[string]any{"finalizers": toAnyList(keep)}
		}
		next, err := h.prepareUpdate(s, body, old)
		if err != nil {
			return err
		}
		_, retry, err := h.commitUpdate(ctx, s, kv, next, false)
		if !retry {
			return err
		}
	}
	return apierr.ConflictModified("", "namespaces", name)
}
