package rest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

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

// NamespaceContent is what a namespace deletion pass left behind.
type NamespaceContent struct {
	// Remaining counts the objects still present per "<resource>.<group>".
	Remaining map[string]int
	// Finalizers counts the remaining objects carrying each finalizer.
	Finalizers map[string]int
	// Failures are the deletions that failed.
	Failures []string
}

// Empty reports whether nothing is left.
func (c NamespaceContent) Empty() bool { return len(c.Remaining) == 0 && len(c.Failures) == 0 }

// DeleteNamespaceContent deletes every object in namespace ns, as DELETE
// would, and reports what remains (objects waiting for finalizers).
func (h *Handler) DeleteNamespaceContent(ctx context.Context, ns string) (NamespaceContent, error) {
	c := NamespaceContent{Remaining: map[string]int{}, Finalizers: map[string]int{}}
	for _, d := range h.reg.All() {
		if !d.Namespaced || !d.HasVerb(registry.VerbDelete) {
			continue
		}
		s := &scope{d: d, ns: ns}
		res, err := h.store.List(s.prefix(), bolt.ListOptions{})
		if err != nil {
			return c, fmt.Errorf("listing %s in %s: %w", d.GroupResource(), ns, err)
		}
		for _, kv := range res.Items {
			obj, err := decodeStored(d, kv.Value)
			if err != nil {
				return c, err
			}
			name := metaString(obj, "name")
			dr, err := h.deleteObject(ctx, d, s, ns, name, &deleteOptions{}, false)
			if err != nil {
				if apierr.ReasonOf(err) == apierr.ReasonNotFound {
					continue
				}
				c.Failures = append(c.Failures, fmt.Sprintf("%s %q: %v", d.GroupResource(), name, err))
				continue
			}
			if !dr.removed {
				c.Remaining[d.Resource+"."+d.Group]++
				for _, f := range finalizers(obj) {
					c.Finalizers[f]++
				}
			}
		}
	}
	return c, nil
}

// namespaceConditions renders the five deletion conditions upstream's
// namespace controller writes on every pass, in its order.
func namespaceConditions(c NamespaceContent) []map[string]string {
	cond := func(typ string, bad bool, badReason, badMsg, okReason, okMsg string) map[string]string {
		if bad {
			return map[string]string{"type": typ, "status": "True", "reason": badReason, "message": badMsg}
		}
		return map[string]string{"type": typ, "status": "False", "reason": okReason, "message": okMsg}
	}
	counts := func(m map[string]int, format string) string {
		keys := slices.Sorted(maps.Keys(m))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf(format, k, m[k])
		}
		return strings.Join(parts, ", ")
	}
	return []map[string]string{
		cond("NamespaceDeletionDiscoveryFailure", false, "DiscoveryFailed", "", "ResourcesDiscovered", "All resources successfully discovered"),
		cond("NamespaceDeletionGroupVersionParsingFailure", false, "GroupVersionParsingFailed", "", "ParsedGroupVersions", "All legacy kube types successfully parsed"),
		cond("NamespaceDeletionContentFailure", len(c.Failures) > 0, "ContentDeletionFailed",
			fmt.Sprintf("Failed to delete all resource types, %d remaining: %s", len(c.Failures), strings.Join(c.Failures, ", ")),
			"ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
		cond("NamespaceContentRemaining", len(c.Remaining) > 0, "SomeResourcesRemain",
			"Some resources are remaining: "+counts(c.Remaining, "%s has %d resource instances"),
			"ContentRemoved", "All content successfully removed"),
		cond("NamespaceFinalizersRemaining", len(c.Finalizers) > 0, "SomeFinalizerRemain",
			"Some finalizers are remaining: "+counts(c.Finalizers, "%s in %d resource instances"),
			"ContentRemoved", "All content successfully removed"),
	}
}

// SetNamespaceConditions records a deletion pass in the namespace's status
// conditions; a condition keeps its lastTransitionTime while its status
// stays the same.
func (h *Handler) SetNamespaceConditions(ctx context.Context, name string, c NamespaceContent) error {
	s, err := h.namespaceScope(name)
	if err != nil {
		return err
	}
	s.sub = "status"
	return h.updateStored(ctx, s, func(old Object) Object {
		prior := map[string]map[string]any{}
		status, _ := old["status"].(map[string]any)
		for _, x := range asList(status["conditions"]) {
			if m, ok := x.(map[string]any); ok {
				t, _ := m["type"].(string)
				prior[t] = m
			}
		}
		now := timestamp(h.now())
		var conds []any
		for _, nc := range namespaceConditions(c) {
			m := map[string]any{"type": nc["type"], "status": nc["status"], "reason": nc["reason"], "message": nc["message"], "lastTransitionTime": now}
			if p := prior[nc["type"]]; p != nil && p["status"] == nc["status"] {
				m["lastTransitionTime"] = p["lastTransitionTime"]
			}
			conds = append(conds, m)
		}
		newStatus := map[string]any{}
		for k, v := range status {
			newStatus[k] = v
		}
		newStatus["conditions"] = conds
		return Object{"status": newStatus}
	})
}

func asList(v any) []any { l, _ := v.([]any); return l }

// FinalizeNamespace removes the server's finalizer from the namespace's
// spec.finalizers; the namespace goes away when nothing else keeps it.
func (h *Handler) FinalizeNamespace(ctx context.Context, name string) error {
	s, err := h.namespaceScope(name)
	if err != nil {
		return err
	}
	s.sub = "finalize"
	return h.updateStored(ctx, s, func(old Object) Object {
		spec, _ := old["spec"].(map[string]any)
		var keep []string
		for _, f := range registry.Strings(spec["finalizers"]) {
			if f != h.brand.NamespaceFinalizer {
				keep = append(keep, f)
			}
		}
		if len(keep) == 0 {
			return Object{"spec": map[string]any{}}
		}
		return Object{"spec": map[string]any{"finalizers": registry.AnyList(keep)}}
	})
}

// updateStored writes, through the update path, the request body that
// change builds from the stored object, retrying when another writer wins
// the race. A missing object is not an error: there is nothing to change.
func (h *Handler) updateStored(ctx context.Context, s *scope, change func(old Object) Object) error {
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
		next, err := h.prepareUpdate(s, change(old), old)
		if err != nil {
			return err
		}
		_, retry, err := h.commitUpdate(ctx, s, kv, next, false)
		if !retry {
			return err
		}
	}
	return apierr.ConflictModified(s.d.Group, s.d.Resource, s.name)
}
