package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

// The finalizers the delete path sets from a propagation policy.
const (
	finalizerOrphan     = "orphan"
	finalizerForeground = "foregroundDeletion"
)

// Propagation policies the collector deletes with.
const (
	policyForeground = "Foreground"
	policyBackground = "Background"
	policyOrphan     = "Orphan"
)

// gcRetryDelay is how long an object whose collection failed waits before
// the next attempt; failures are storage errors or lost races, both rare.
const gcRetryDelay = time.Second

// GarbageCollector deletes objects whose owners are gone, over every
// stored type, as upstream's garbage collector does:
//
//   - background: a dependent all of whose owner references point at
//     objects that no longer exist (or exist with another uid) is deleted;
//   - foreground: an owner being deleted with the foregroundDeletion
//     finalizer has its dependents deleted, and loses the finalizer once
//     no dependent that blocks owner deletion is left;
//   - orphan: an owner being deleted with the orphan finalizer has its
//     references removed from its dependents, then loses the finalizer.
//
// It keeps a graph of owners and dependents in memory, fed by one watch
// over every key; whether an owner exists is checked against the store
// when a dependent is worked on, never taken from the graph alone.
type GarbageCollector struct {
	Source   Source
	Objects  Objects
	Registry *registry.Registry
	Log      *slog.Logger

	mu    sync.Mutex
	nodes map[string]*gcNode
	queue *queue
	// unresolved holds the uids of dependents kept because an owner's
	// kind is not served; they are worked on again when the registry
	// changes (generation is the registry's last seen generation).
	unresolved map[string]bool
	generation uint64
}

// gcNode is one object of the graph, keyed by uid. A node whose object is
// not (or no longer) stored but that dependents still name is virtual.
type gcNode struct {
	uid string
	// d is the descriptor of the stored form; nil for a virtual node.
	d        *registry.Descriptor
	ns, name string
	owners   []ownerRef
	// dependents is nil until the first one.
	dependents map[string]bool
	deleting   bool
	finalizers []string
}

func (n *gcNode) virtual() bool { return n.d == nil }

func (n *gcNode) has(finalizer string) bool { return slices.Contains(n.finalizers, finalizer) }

// deletingDependents reports a foreground deletion in progress.
func (n *gcNode) deletingDependents() bool { return n.deleting && n.has(finalizerForeground) }

func (n *gcNode) orphaning() bool { return n.deleting && n.has(finalizerOrphan) }

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *GarbageCollector) Run(ctx context.Context) {
	c.nodes = map[string]*gcNode{}
	c.unresolved = map[string]bool{}
	c.generation = c.Registry.Generation()
	c.queue = newQueue()
	c.queue.workWhile(ctx, c.Log, gcRetryDelay, c.sync, func() {
		follow(ctx, c.Source, "/", c.Log, c.rebuild, c.observe)
	})
}

// rebuild builds the graph from a full list and queues everything that
// may need work.
func (c *GarbageCollector) rebuild(kvs []bolt.KV) {
	c.mu.Lock()
	c.nodes = map[string]*gcNode{}
	for _, kv := range kvs {
		c.put(kv)
	}
	var due []string
	for uid, n := range c.nodes {
		if n.virtual() || n.deletingDependents() {
			due = appendKeys(due, n.dependents)
		}
		if n.deletingDependents() || n.orphaning() {
			due = append(due, uid)
		}
		if !n.virtual() && c.suspect(n) {
			due = append(due, uid)
		}
	}
	c.mu.Unlock()
	for _, uid := range due {
		c.queue.add(uid)
	}
}

// observe applies one event to the graph and queues what it affects.
func (c *GarbageCollector) observe(ev bolt.Event) {
	c.mu.Lock()
	var due []string
	if ev.Type == bolt.Delete {
		due = c.remove(ev.KV)
	} else {
		due = c.put(ev.KV)
	}
	if g := c.Registry.Generation(); g != c.generation {
		// New types are served: owners of their kinds can be looked up.
		c.generation = g
		due = appendKeys(due, c.unresolved)
		clear(c.unresolved)
	}
	c.mu.Unlock()
	for _, uid := range due {
		c.queue.add(uid)
	}
}

// put records a created or updated object and returns the uids to work
// on. c.mu is held.
func (c *GarbageCollector) put(kv bolt.KV) []string {
	d, ns, name := c.Registry.ByKey(kv.Key)
	if d == nil || d.NoGarbageCollection || !d.HasVerb(registry.VerbDelete) {
		return nil
	}
	m, err := parseMeta(kv.Value)
	if err != nil || m.UID == "" {
		return nil
	}
	n := c.nodes[m.UID]
	isNew := n == nil || n.virtual()
	if n == nil {
		n = &gcNode{uid: m.UID}
		c.nodes[m.UID] = n
	}
	wasForeground, wasOrphaning := n.deletingDependents(), n.orphaning()
	oldOwners := n.owners
	n.d, n.ns, n.name = d, ns, name
	n.deleting, n.finalizers, n.owners = m.deleting(), m.Finalizers, m.OwnerReferences

	var due []string
	for _, r := range oldOwners {
		now := refTo(n.owners, r.UID)
		if now != nil && now.blocks() == r.blocks() {
			continue
		}
		// A reference went or stopped blocking: an owner waiting for its
		// dependents may be free now.
		if o := c.nodes[r.UID]; o != nil {
			if now == nil {
				c.unlink(o, n.uid)
			}
			if o.deletingDependents() {
				due = append(due, o.uid)
			}
		}
	}
	for _, r := range n.owners {
		if refTo(oldOwners, r.UID) != nil {
			continue
		}
		o := c.nodes[r.UID]
		if o == nil {
			o = &gcNode{uid: r.UID}
			c.nodes[r.UID] = o
		}
		if o.dependents == nil {
			o.dependents = map[string]bool{}
		}
		o.dependents[n.uid] = true
	}
	if !wasOrphaning && n.orphaning() {
		due = append(due, n.uid)
	}
	if !wasForeground && n.deletingDependents() {
		due = append(due, n.uid)
		due = appendKeys(due, n.dependents)
	}
	ownersChanged := !slices.EqualFunc(oldOwners, n.owners, func(a, b ownerRef) bool { return a.UID == b.UID })
	if (isNew || ownersChanged) && c.suspect(n) {
		due = append(due, n.uid)
	}
	return due
}

// suspect reports whether one of n's owner references may not hold: its
// owner is not in the graph as named, or is being deleted. c.mu is held.
func (c *GarbageCollector) suspect(n *gcNode) bool {
	for _, r := range n.owners {
		o := c.nodes[r.UID]
		if o == nil || o.virtual() || o.deleting || o.name != r.Name || o.d.Kind != r.Kind || (o.d.Namespaced && o.ns != n.ns) {
			return true
		}
	}
	return false
}

// remove records a deleted object and returns the uids to work on: its
// dependents, and owners waiting for it. c.mu is held.
func (c *GarbageCollector) remove(kv bolt.KV) []string {
	m, err := parseMeta(kv.Value)
	if err != nil {
		return nil
	}
	n := c.nodes[m.UID]
	if n == nil || n.virtual() {
		return nil
	}
	var due []string
	for _, r := range n.owners {
		if o := c.nodes[r.UID]; o != nil {
			c.unlink(o, n.uid)
			if o.deletingDependents() {
				due = append(due, o.uid)
			}
		}
	}
	if len(n.dependents) == 0 {
		delete(c.nodes, n.uid)
		return due
	}
	// Dependents still name it: it stays as a virtual node.
	*n = gcNode{uid: n.uid, dependents: n.dependents}
	return appendKeys(due, n.dependents)
}

// unlink drops dependent from o, and o with it when o is virtual and no
// one names it any more. c.mu is held.
func (c *GarbageCollector) unlink(o *gcNode, dependent string) {
	delete(o.dependents, dependent)
	if o.virtual() && len(o.dependents) == 0 {
		delete(c.nodes, o.uid)
	}
}

// target is where a node's object is, copied out of the graph.
type target struct {
	uid      string
	d        *registry.Descriptor
	ns, name string
}

func (c *GarbageCollector) target(uid string) (target, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[uid]
	if n == nil || n.virtual() {
		return target{}, false
	}
	return target{uid: uid, d: n.d, ns: n.ns, name: n.name}, true
}

// sync works on the object with uid: finishes its own orphan or
// foreground deletion, or collects it when its owners are gone. A change
// the API refuses is not tried again until the object changes.
func (c *GarbageCollector) sync(ctx context.Context, uid string) error {
	err := c.syncOnce(ctx, uid)
	if refused(err) {
		c.Log.Warn("garbage collector change refused", "uid", uid, "err", err)
		return nil
	}
	return err
}

func (c *GarbageCollector) syncOnce(ctx context.Context, uid string) error {
	t, ok := c.target(uid)
	if !ok {
		return nil
	}
	obj, err := c.Objects.Get(t.d, t.ns, t.name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	m, err := metaOf(obj)
	if err != nil || m.UID != uid {
		// Replaced by a new object: its events bring it here.
		return err
	}
	if m.deleting() {
		// The dependents to orphan or wait for are the graph's, so it
		// must have seen the deletion first: then it has seen every
		// dependent created before it too. Until then the stored object
		// is ahead of the graph, and the event that catches it up queues
		// this object again.
		orphaning, foreground := c.deletionSeen(uid)
		if orphaning && m.hasFinalizer(finalizerOrphan) {
			if err := c.orphanDependents(ctx, t); err != nil {
				return err
			}
		}
		if foreground && m.hasFinalizer(finalizerForeground) {
			return c.finishForeground(ctx, t)
		}
		// Being deleted already.
		return nil
	}
	return c.collect(ctx, t, m)
}

// deletionSeen reports whether the graph has seen the object with uid
// being deleted with the orphan finalizer, and with the foreground one.
func (c *GarbageCollector) deletionSeen(uid string) (orphaning, foreground bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[uid]
	if n == nil {
		return false, false
	}
	return n.orphaning(), n.deletingDependents()
}

// orphanDependents removes t's references from its dependents, then the
// orphan finalizer from t.
func (c *GarbageCollector) orphanDependents(ctx context.Context, t target) error {
	for _, dep := range c.dependents(t.uid) {
		err := c.editOwners(ctx, dep, func(refs []any) []any {
			return slices.DeleteFunc(refs, func(r any) bool { return refUID(r) == t.uid })
		})
		if err != nil {
			return fmt.Errorf("orphaning %s %s/%s: %w", dep.d.GroupResource(), dep.ns, dep.name, err)
		}
	}
	c.Log.Debug("garbage collector orphaned dependents", "resource", t.d.GroupResource(), "namespace", t.ns, "name", t.name)
	return c.dropFinalizer(ctx, t, finalizerOrphan)
}

// finishForeground removes the foregroundDeletion finalizer from t once
// no dependent blocks it; until then it works on the blocking dependents.
func (c *GarbageCollector) finishForeground(ctx context.Context, t target) error {
	c.mu.Lock()
	blocking := 0
	var work []string
	if n := c.nodes[t.uid]; n != nil {
		for dep := range n.dependents {
			dn := c.nodes[dep]
			if dn == nil || dn.virtual() {
				continue
			}
			if r := refTo(dn.owners, t.uid); r != nil && r.blocks() {
				blocking++
				if !dn.deletingDependents() {
					work = append(work, dep)
				}
			}
		}
	}
	c.mu.Unlock()
	if blocking == 0 {
		c.Log.Debug("garbage collector finished foreground deletion", "resource", t.d.GroupResource(), "namespace", t.ns, "name", t.name)
		return c.dropFinalizer(ctx, t, finalizerForeground)
	}
	for _, dep := range work {
		c.queue.add(dep)
	}
	return nil
}

// collect deletes dependent t when none of its owners remains, and drops
// its references to owners that are gone when some other owner remains.
func (c *GarbageCollector) collect(ctx context.Context, t target, m objectMeta) error {
	if len(m.OwnerReferences) == 0 {
		return nil
	}
	var solid, dangling, waiting []string
	for _, r := range m.OwnerReferences {
		state, err := c.ownerState(t, r)
		if err != nil {
			return err
		}
		switch state {
		case ownerInvalid:
			// A cluster-scoped object cannot have a namespaced owner:
			// upstream leaves such an object alone.
			c.Log.Debug("garbage collector ignores a namespaced owner of a cluster-scoped object", "resource", t.d.GroupResource(), "name", t.name, "owner", r.Kind+"/"+r.Name)
			return nil
		case ownerUnknown:
			c.mu.Lock()
			c.unresolved[t.uid] = true
			c.mu.Unlock()
			solid = append(solid, r.UID)
		case ownerSolid:
			solid = append(solid, r.UID)
		case ownerGone:
			dangling = append(dangling, r.UID)
		case ownerWaiting:
			waiting = append(waiting, r.UID)
		}
	}
	switch {
	case len(solid) > 0:
		gone := append(dangling, waiting...)
		if len(gone) == 0 {
			return nil
		}
		// Another owner keeps it: only the references to owners that are
		// gone or going are dropped.
		return c.editOwners(ctx, t, func(refs []any) []any {
			return slices.DeleteFunc(refs, func(r any) bool { return slices.Contains(gone, refUID(r)) })
		})
	case len(waiting) > 0 && c.hasDependents(t.uid):
		// An owner is deleted in the foreground and t has dependents of
		// its own: t goes in the foreground too. If one of them is also
		// deleting in the foreground, t's references stop blocking, so
		// two such deletions cannot wait for each other.
		if c.dependentDeletingDependents(t.uid) {
			if err := c.editOwners(ctx, t, func(refs []any) []any {
				for _, r := range refs {
					if rm, ok := r.(map[string]any); ok && slices.Contains(waiting, refUID(r)) {
						rm["blockOwnerDeletion"] = false
					}
				}
				return refs
			}); err != nil {
				return err
			}
		}
		return c.delete(ctx, t, policyForeground)
	}
	policy := policyBackground
	switch {
	case m.hasFinalizer(finalizerOrphan):
		policy = policyOrphan
	case m.hasFinalizer(finalizerForeground):
		policy = policyForeground
	}
	return c.delete(ctx, t, policy)
}

// ownerState is what a lookup of an owner reference found.
type ownerState int

const (
	// ownerSolid exists and is not waiting for its dependents.
	ownerSolid ownerState = iota
	// ownerGone does not exist, or exists with another uid.
	ownerGone
	// ownerWaiting is being deleted in the foreground.
	ownerWaiting
	// ownerInvalid is a namespaced owner of a cluster-scoped object.
	ownerInvalid
	// ownerUnknown is of a kind the server does not serve (yet): the
	// reference may hold, so it counts as solid.
	ownerUnknown
)

// ownerState looks the owner of reference r of t up in the store.
func (c *GarbageCollector) ownerState(t target, r ownerRef) (ownerState, error) {
	group, version, found := strings.Cut(r.APIVersion, "/")
	if !found {
		group, version = "", r.APIVersion
	}
	od := c.Registry.ByKind(group, version, r.Kind)
	if od == nil {
		c.Log.Debug("garbage collector cannot resolve an owner kind", "apiVersion", r.APIVersion, "kind", r.Kind)
		return ownerUnknown, nil
	}
	ns := ""
	if od.Namespaced {
		if !t.d.Namespaced {
			return ownerInvalid, nil
		}
		ns = t.ns
	}
	owner, err := c.Objects.Get(od, ns, r.Name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return ownerGone, nil
	}
	if err != nil {
		return ownerSolid, fmt.Errorf("looking up owner %s %q: %w", r.Kind, r.Name, err)
	}
	om, err := metaOf(owner)
	if err != nil {
		return ownerSolid, err
	}
	switch {
	case om.UID != r.UID:
		return ownerGone, nil
	case om.deleting() && om.hasFinalizer(finalizerForeground):
		return ownerWaiting, nil
	}
	return ownerSolid, nil
}

// dependents returns the objects that name uid as their owner.
func (c *GarbageCollector) dependents(uid string) []target {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[uid]
	if n == nil {
		return nil
	}
	var out []target
	for dep := range n.dependents {
		if dn := c.nodes[dep]; dn != nil && !dn.virtual() {
			out = append(out, target{uid: dep, d: dn.d, ns: dn.ns, name: dn.name})
		}
	}
	return out
}

func (c *GarbageCollector) hasDependents(uid string) bool { return len(c.dependents(uid)) > 0 }

func (c *GarbageCollector) dependentDeletingDependents(uid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.nodes[uid]; n != nil {
		for dep := range n.dependents {
			if dn := c.nodes[dep]; dn != nil && dn.deletingDependents() {
				return true
			}
		}
	}
	return false
}

// delete deletes t with a propagation policy, unless t was replaced.
func (c *GarbageCollector) delete(ctx context.Context, t target, policy string) error {
	_, err := c.Objects.Delete(ctx, t.d, t.ns, t.name, registry.DeleteOptions{PropagationPolicy: policy, PreconditionUID: t.uid})
	switch apierr.ReasonOf(err) {
	case "":
		c.Log.Debug("garbage collector deleted an object", "resource", t.d.GroupResource(), "namespace", t.ns, "name", t.name, "propagationPolicy", policy)
		return nil
	case apierr.ReasonNotFound, apierr.ReasonConflict:
		// Gone already, or replaced by a new object of the same name.
		return nil
	}
	return fmt.Errorf("deleting %s %s/%s: %w", t.d.GroupResource(), t.ns, t.name, err)
}

// editOwners rewrites t's metadata.ownerReferences with edit, unless t
// was replaced.
func (c *GarbageCollector) editOwners(ctx context.Context, t target, edit func(refs []any) []any) error {
	_, err := c.Objects.Update(ctx, t.d, t.ns, t.name, "", func(obj registry.Object) registry.Object {
		meta := child(obj, "metadata")
		if meta["uid"] != t.uid {
			return nil
		}
		before, _ := json.Marshal(meta["ownerReferences"])
		refs := edit(slices.Clone(list(meta["ownerReferences"])))
		if len(refs) == 0 {
			delete(meta, "ownerReferences")
		} else {
			meta["ownerReferences"] = refs
		}
		if after, _ := json.Marshal(meta["ownerReferences"]); string(after) == string(before) {
			return nil
		}
		return obj
	})
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	return err
}

// dropFinalizer removes finalizer f from t, unless t was replaced.
func (c *GarbageCollector) dropFinalizer(ctx context.Context, t target, f string) error {
	_, err := c.Objects.Update(ctx, t.d, t.ns, t.name, "", func(obj registry.Object) registry.Object {
		meta := child(obj, "metadata")
		if meta["uid"] != t.uid || !removeFinalizer(meta, "finalizers", f) {
			return nil
		}
		return obj
	})
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	return err
}

// refused reports an error no retry can fix: the API refuses the change
// (a protected object, a change the type's rules rule out).
func refused(err error) bool {
	switch apierr.ReasonOf(err) {
	case apierr.ReasonForbidden, apierr.ReasonInvalid, apierr.ReasonBadRequest, apierr.ReasonMethodNotAllowed:
		return true
	}
	return false
}

// metaOf reads the metadata the collector needs from a decoded object.
func metaOf(obj registry.Object) (objectMeta, error) {
	b, err := json.Marshal(map[string]any{"metadata": obj["metadata"]})
	if err != nil {
		return objectMeta{}, fmt.Errorf("encoding metadata: %w", err)
	}
	return parseMeta(b)
}

// refTo returns the reference to uid among refs, or nil.
func refTo(refs []ownerRef, uid string) *ownerRef {
	for i := range refs {
		if refs[i].UID == uid {
			return &refs[i]
		}
	}
	return nil
}

func refUID(r any) string {
	m, _ := r.(map[string]any)
	s, _ := m["uid"].(string)
	return s
}

func appendKeys(dst []string, set map[string]bool) []string {
	for k := range set {
		dst = append(dst, k)
	}
	return dst
}
