package controllers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

// namespaceRetryDelay is how long a namespace whose cleanup failed waits
// before the next attempt; failures are rare (storage errors), so a fixed
// delay keeps the controller simple.
const namespaceRetryDelay = time.Second

// Namespaces finalizes deleted namespaces: once a namespace is terminating
// it deletes the namespace's content and, when nothing is left, removes the
// server's finalizer so the namespace itself goes away.
type Namespaces struct {
	Source    Source
	Objects   Objects
	Registry  *registry.Registry
	Finalizer string
	Log       *slog.Logger

	mu          sync.Mutex
	terminating map[string]bool
	queue       *queue
}

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *Namespaces) Run(ctx context.Context) {
	c.terminating = map[string]bool{}
	c.queue = newQueue()
	c.queue.workWhile(ctx, c.Log, namespaceRetryDelay, c.sync, func() {
		follow(ctx, c.Source, "/", c.Log, asPuts(c.observe), c.observe)
	})
}

// observe follows namespaces, and re-queues a terminating namespace
// whenever something in it changes (a finalizer went away, say).
func (c *Namespaces) observe(ev bolt.Event) {
	d, ns, name := c.Registry.ByKey(ev.KV.Key)
	if d == nil {
		return
	}
	if !d.IsNamespace {
		if ns != "" && c.isTerminating(ns) {
			c.queue.add(ns)
		}
		return
	}
	// Every event of a namespace says whether it is terminating now: a
	// relist's puts correct what a missed delete left behind (a namespace
	// recreated since is live). A deletionTimestamp is read from the
	// metadata, never guessed from the bytes: a label or annotation may
	// bear that name.
	terminating := false
	if ev.Type != bolt.Delete && bytes.Contains(ev.KV.Value, deletionMark) {
		m, err := parseMeta(ev.KV.Value)
		terminating = err == nil && m.deleting()
	}
	c.mu.Lock()
	if terminating {
		c.terminating[name] = true
	} else {
		delete(c.terminating, name)
	}
	c.mu.Unlock()
	if terminating {
		c.queue.add(name)
	}
}

func (c *Namespaces) isTerminating(ns string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.terminating[ns]
}

// content is what a deletion pass left behind in a namespace.
type content struct {
	// remaining counts the objects still present per "<resource>.<group>".
	remaining map[string]int
	// finalizers counts the remaining objects carrying each finalizer.
	finalizers map[string]int
	// failures are the deletions that failed.
	failures []string
}

func (c content) empty() bool { return len(c.remaining) == 0 && len(c.failures) == 0 }

// sync runs one deletion pass over a terminating namespace.
func (c *Namespaces) sync(ctx context.Context, name string) error {
	if !c.isTerminating(name) {
		return nil
	}
	nd := c.Registry.Namespaces()
	ns, err := c.Objects.Get(nd, "", name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if metaString(ns, "deletionTimestamp") == "" {
		// Not terminating (any more): a later event says so.
		return nil
	}
	if !slices.Contains(registry.Strings(child(ns, "spec")["finalizers"]), c.Finalizer) {
		// Someone else finalizes it.
		return nil
	}
	left, err := c.deleteContent(ctx, name)
	if err != nil {
		return err
	}
	if err := c.setConditions(ctx, name, left); err != nil {
		return err
	}
	if !left.empty() {
		if len(left.failures) > 0 {
			return errors.New(strings.Join(left.failures, "; "))
		}
		// Objects waiting for their finalizers; their updates re-queue us.
		return nil
	}
	c.Log.Info("namespace content removed", "namespace", name)
	return c.finalize(ctx, name)
}

// deleteContent deletes every object in namespace ns, as DELETE would, and
// reports what remains.
func (c *Namespaces) deleteContent(ctx context.Context, ns string) (content, error) {
	left := content{remaining: map[string]int{}, finalizers: map[string]int{}}
	deleted := map[string]bool{}
	for _, d := range c.Registry.All() {
		// Each stored object is deleted once: through its stored form's
		// resource when that is served, else through the first version
		// served that stores it.
		if !d.Namespaced || !d.HasVerb(registry.VerbDelete) {
			continue
		}
		if st := d.Storage; st != nil && c.Registry.Lookup(st.Descriptor.Group, st.Descriptor.Version, st.Descriptor.Resource) == st.Descriptor {
			continue
		}
		if p := d.ResourcePrefix(); deleted[p] {
			continue
		} else {
			deleted[p] = true
		}
		objs, _, err := c.Objects.List(d, ns)
		if err != nil {
			return left, fmt.Errorf("listing %s in %s: %w", d.GroupResource(), ns, err)
		}
		for _, obj := range objs {
			name := metaString(obj, "name")
			// In the background whatever the type's default, as
			// upstream's namespace deleter: a Job or ReplicationController
			// would otherwise wait for the garbage collector to orphan
			// its pods, and with it switched off hold the namespace.
			gone, err := c.Objects.Delete(ctx, d, ns, name, registry.DeleteOptions{PropagationPolicy: policyBackground})
			if err != nil {
				if apierr.ReasonOf(err) == apierr.ReasonNotFound {
					continue
				}
				left.failures = append(left.failures, fmt.Sprintf("%s %q: %v", d.GroupResource(), name, err))
				continue
			}
			if !gone {
				left.remaining[d.Resource+"."+d.Group]++
				for _, f := range registry.Strings(child(obj, "metadata")["finalizers"]) {
					left.finalizers[f]++
				}
			}
		}
	}
	return left, nil
}

// conditions renders the five deletion conditions upstream's namespace
// controller writes on every pass, in its order.
func (left content) conditions() []map[string]string {
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
		cond("NamespaceDeletionContentFailure", len(left.failures) > 0, "ContentDeletionFailed",
			fmt.Sprintf("Failed to delete all resource types, %d remaining: %s", len(left.failures), strings.Join(left.failures, ", ")),
			"ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
		cond("NamespaceContentRemaining", len(left.remaining) > 0, "SomeResourcesRemain",
			"Some resources are remaining: "+counts(left.remaining, "%s has %d resource instances"),
			"ContentRemoved", "All content successfully removed"),
		cond("NamespaceFinalizersRemaining", len(left.finalizers) > 0, "SomeFinalizerRemain",
			"Some finalizers are remaining: "+counts(left.finalizers, "%s in %d resource instances"),
			"ContentRemoved", "All content successfully removed"),
	}
}

// setConditions records a deletion pass in the namespace's status
// conditions; a condition keeps its lastTransitionTime while its status
// stays the same.
func (c *Namespaces) setConditions(ctx context.Context, name string, left content) error {
	now := time.Now().UTC().Format(time.RFC3339)
	_, err := c.Objects.Update(ctx, c.Registry.Namespaces(), "", name, "status", func(ns registry.Object) registry.Object {
		status := child(ns, "status")
		prior := map[string]map[string]any{}
		for _, x := range list(status["conditions"]) {
			if m, ok := x.(map[string]any); ok {
				t, _ := m["type"].(string)
				prior[t] = m
			}
		}
		var conds []any
		for _, nc := range left.conditions() {
			m := map[string]any{"type": nc["type"], "status": nc["status"], "reason": nc["reason"], "message": nc["message"], "lastTransitionTime": now}
			if p := prior[nc["type"]]; p != nil && p["status"] == nc["status"] {
				m["lastTransitionTime"] = p["lastTransitionTime"]
			}
			conds = append(conds, m)
		}
		status["conditions"] = conds
		return ns
	})
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	return err
}

// finalize removes the server's finalizer from the namespace's
// spec.finalizers; the namespace goes away when nothing else keeps it.
func (c *Namespaces) finalize(ctx context.Context, name string) error {
	_, err := c.Objects.Update(ctx, c.Registry.Namespaces(), "", name, "finalize", func(ns registry.Object) registry.Object {
		removeFinalizer(child(ns, "spec"), "finalizers", c.Finalizer)
		return ns
	})
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	return err
}

// child returns the map at obj[key], creating it when absent.
func child(obj map[string]any, key string) map[string]any {
	m, ok := obj[key].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj[key] = m
	}
	return m
}

func list(v any) []any { l, _ := v.([]any); return l }

func metaString(obj registry.Object, field string) string {
	m, _ := obj["metadata"].(map[string]any)
	s, _ := m[field].(string)
	return s
}
