package controllers

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
)

// protectionRetryDelay is how long a release that failed waits before the
// next attempt; failures are rare (storage errors), so a fixed delay will
// do.
const protectionRetryDelay = time.Second

// volumeBound is the phase of a volume a claim is bound to.
const volumeBound = "Bound"

// ClaimProtection keeps the protection finalizers of storage objects, as
// upstream's two protection controllers do: it releases a deleted claim's
// once no scheduled pod uses it and a deleted volume's once no claim is
// bound to it, and gives them back to claims and volumes not being deleted
// that lack them (created before admission added them on create, or
// stripped by a client). Deleted claims are re-examined whenever a pod of
// their namespace changes.
type ClaimProtection struct {
	Source   Source
	Objects  Objects
	Registry *registry.Registry
	// Claims, Volumes and Pods are the descriptors involved. A nil Claims
	// or Volumes leaves that half off; with no Pods no claim is in use.
	Claims, Volumes, Pods *registry.Descriptor
	// ClaimFinalizer and VolumeFinalizer are the finalizers released.
	ClaimFinalizer, VolumeFinalizer string
	Log                             *slog.Logger

	mu sync.Mutex
	// deleting holds the keys of deleted claims still protected, by
	// namespace.
	deleting map[string]map[string]bool
	queue    *queue
}

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *ClaimProtection) Run(ctx context.Context) {
	c.deleting = map[string]map[string]bool{}
	c.queue = newQueue()
	c.queue.workWhile(ctx, c.Log, protectionRetryDelay, c.sync, func() {
		follow(ctx, c.Source, "/", c.Log, asPuts(c.observe), c.observe)
	})
}

// observe queues deleted protected objects, live ones without their
// finalizer, and the deleted claims of a namespace whose pods change.
func (c *ClaimProtection) observe(ev bolt.Event) {
	d, ns, _ := c.Registry.ByKey(ev.KV.Key)
	switch {
	case d == nil:
	case d == c.Pods:
		c.mu.Lock()
		keys := make([]string, 0, len(c.deleting[ns]))
		for k := range c.deleting[ns] {
			keys = append(keys, k)
		}
		c.mu.Unlock()
		slices.Sort(keys)
		for _, k := range keys {
			c.queue.add(k)
		}
	case d == c.Claims:
		protected, unprotected := c.state(ev, c.ClaimFinalizer)
		c.mu.Lock()
		if protected {
			if c.deleting[ns] == nil {
				c.deleting[ns] = map[string]bool{}
			}
			c.deleting[ns][ev.KV.Key] = true
		} else if c.deleting[ns] != nil {
			delete(c.deleting[ns], ev.KV.Key)
			if len(c.deleting[ns]) == 0 {
				delete(c.deleting, ns)
			}
		}
		c.mu.Unlock()
		if protected || unprotected {
			c.queue.add(ev.KV.Key)
		}
	case d == c.Volumes:
		if protected, unprotected := c.state(ev, c.VolumeFinalizer); protected || unprotected {
			c.queue.add(ev.KV.Key)
		}
	}
}

// state reports whether the object an event puts is being deleted and
// still holds finalizer f (protected), or is not being deleted and lacks
// it (unprotected). Objects that name f nowhere and are not being deleted
// are not parsed.
func (c *ClaimProtection) state(ev bolt.Event, f string) (protected, unprotected bool) {
	if ev.Type != bolt.Put {
		return false, false
	}
	value := ev.KV.Value
	if !bytes.Contains(value, deletionMark) && !bytes.Contains(value, []byte(f)) {
		return false, true
	}
	m, err := parseMeta(value)
	if err != nil {
		return false, false
	}
	has := m.hasFinalizer(f)
	return m.deleting() && has, !m.deleting() && !has
}

// sync releases the object at key when it is deleted and nothing uses it
// any more, and gives it its finalizer back when it is not deleted.
func (c *ClaimProtection) sync(ctx context.Context, key string) error {
	d, ns, name := c.Registry.ByKey(key)
	if d == nil || (d != c.Claims && d != c.Volumes) {
		return nil
	}
	obj, err := c.Objects.Get(d, ns, name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	finalizer := c.VolumeFinalizer
	if d == c.Claims {
		finalizer = c.ClaimFinalizer
	}
	deleting := metaString(obj, "deletionTimestamp") != ""
	has := slices.Contains(registry.Strings(child(obj, "metadata")["finalizers"]), finalizer)
	if !deleting && !has {
		return c.protect(ctx, d, ns, name, metaString(obj, "uid"), finalizer)
	}
	if !deleting || !has {
		return nil
	}
	if d == c.Claims {
		used, err := c.claimInUse(obj, ns, name)
		if err != nil || used {
			return err
		}
	} else if phase, _ := child(obj, "status")["phase"].(string); phase == volumeBound {
		return nil
	}
	uid := metaString(obj, "uid")
	_, err = c.Objects.Update(ctx, d, ns, name, "", func(cur registry.Object) registry.Object {
		if metaString(cur, "uid") != uid {
			return nil
		}
		removeFinalizer(child(cur, "metadata"), "finalizers", finalizer)
		return cur
	})
	switch apierr.ReasonOf(err) {
	case apierr.ReasonNotFound, apierr.ReasonConflict:
		return nil
	}
	if err == nil {
		c.Log.Debug("protection finalizer released", "key", key)
	}
	return err
}

// protect appends finalizer to the finalizers of the object of d called
// name in ns, unless it has been replaced (another uid), is being deleted
// or has the finalizer already.
func (c *ClaimProtection) protect(ctx context.Context, d *registry.Descriptor, ns, name, uid, finalizer string) error {
	_, err := c.Objects.Update(ctx, d, ns, name, "", func(cur registry.Object) registry.Object {
		md := child(cur, "metadata")
		if metaString(cur, "uid") != uid || metaString(cur, "deletionTimestamp") != "" || slices.Contains(registry.Strings(md["finalizers"]), finalizer) {
			return nil
		}
		fins, _ := md["finalizers"].([]any)
		md["finalizers"] = append(fins, finalizer)
		return cur
	})
	switch apierr.ReasonOf(err) {
	case apierr.ReasonNotFound, apierr.ReasonConflict:
		return nil
	}
	if err == nil {
		c.Log.Debug("protection finalizer added", "namespace", ns, "name", name, "resource", d.Resource)
	}
	return err
}

// claimInUse reports whether a scheduled pod of the namespace mounts the
// claim (podUsesClaim).
func (c *ClaimProtection) claimInUse(claim registry.Object, ns, name string) (bool, error) {
	if c.Pods == nil {
		return false, nil
	}
	pods, _, err := c.Objects.List(c.Pods, ns)
	if err != nil {
		return false, err
	}
	for _, pod := range pods {
		if podUsesClaim(pod, claim, name) {
			return true, nil
		}
	}
	return false, nil
}

// podUsesClaim: only a scheduled pod can hold a claim (no node starts a
// pod whose claim is being deleted). A claim the pod names holds for as
// long as the pod exists; its own ephemeral claim is released once the
// pod is shut down (deleted with no grace left), as upstream breaks a
// cycle of a pod's finalizer waiting on the claim that waits on the pod.
func podUsesClaim(pod, claim registry.Object, name string) bool {
	spec := child(pod, "spec")
	if nodeName, _ := spec["nodeName"].(string); nodeName == "" {
		return false
	}
	podName, podUID := metaString(pod, "name"), metaString(pod, "uid")
	vols, _ := spec["volumes"].([]any)
	for _, v := range vols {
		vol, _ := v.(map[string]any)
		if src, ok := vol["persistentVolumeClaim"].(map[string]any); ok && src["claimName"] == name {
			return true
		}
		if _, ok := vol["ephemeral"].(map[string]any); ok && !podShutDown(pod) && podName+"-"+asString(vol["name"]) == name && ownedBy(claim, podUID) {
			return true
		}
	}
	return false
}

// podShutDown reports whether a pod is done with its volumes: deleted
// with a grace period of zero, by its node or by force.
func podShutDown(pod registry.Object) bool {
	if metaString(pod, "deletionTimestamp") == "" {
		return false
	}
	g, ok := child(pod, "metadata")["deletionGracePeriodSeconds"].(int64)
	return ok && g == 0
}

// ownedBy reports whether obj names uid as its controlling owner.
func ownedBy(obj registry.Object, uid string) bool {
	refs, _ := child(obj, "metadata")["ownerReferences"].([]any)
	for _, r := range refs {
		ref, _ := r.(map[string]any)
		if ctl, _ := ref["controller"].(bool); ctl && ref["uid"] == uid {
			return true
		}
	}
	return false
}

func asString(v any) string { s, _ := v.(string); return s }
