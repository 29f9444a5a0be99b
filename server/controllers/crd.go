package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/customresource"
	"platd/server/registry"
	"platd/server/schema"
)

// crdRetryDelay is how long a CRD whose cleanup failed waits before the
// next attempt.
const crdRetryDelay = time.Second

// CRDs keeps the registry serving exactly the resources the stored
// CustomResourceDefinitions define, and deletes the custom resources of a
// CRD being deleted before letting it go. Writes of CRDs wait (Await)
// until their effect is served, so a client can use a new resource in its
// very next request.
type CRDs struct {
	Source     Source
	Objects    Objects
	Registry   *registry.Registry
	Builder    *customresource.Builder
	Descriptor *registry.Descriptor
	// Forget, when set, is told of descriptors no longer served, so what
	// was built for them can go.
	Forget func([]*registry.Descriptor)
	// Finalizer is the cleanup finalizer a deleted CRD carries until its
	// custom resources are gone.
	Finalizer string
	// Leading, when set, says whether this replica leads: only the
	// leader cleans terminating CRDs up (a write once per cluster); a new
	// leader calls Requeue.
	Leading func() bool
	Log     *slog.Logger

	mu      sync.Mutex
	served  map[string]*servedCRD
	seen    int64
	changed *sync.Cond
	running bool
	queue   *queue
	// waiting tracks the watches of CRDs whose custom resources are
	// still going; Run waits for them.
	waiting sync.WaitGroup
}

// terminatingMark ends the fingerprint of a CRD being deleted.
const terminatingMark = " terminating"

// terminatingVerbs are the verbs discovery lists for the resources of a
// CRD being deleted, as upstream: no create, and neither patch nor update,
// though both are still served.
func terminatingVerbs() []string {
	return []string{registry.VerbDelete, registry.VerbDeleteCollection, registry.VerbGet, registry.VerbList, registry.VerbWatch}
}

// servedCRD is what one CRD currently has in the registry.
type servedCRD struct {
	fingerprint string
	descs       []*registry.Descriptor
	terminating bool
}

func (c *CRDs) init() {
	if c.served == nil {
		c.served = map[string]*servedCRD{}
		c.changed = sync.NewCond(&c.mu)
		c.queue = newQueue()
	}
}

// Load serves the resources of every stored CRD and returns the revision
// it read them at; the server calls it before it reports ready.
func (c *CRDs) Load() (int64, error) {
	c.init()
	res, err := c.Source.List(c.Descriptor.ResourcePrefix(), bolt.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing custom resource definitions: %w", err)
	}
	for _, kv := range res.Items {
		c.apply(kv)
	}
	c.mu.Lock()
	c.seen = res.Revision
	c.running = true
	c.mu.Unlock()
	return res.Revision, nil
}

// Run follows CRD changes from the revision Load read at until ctx ends.
func (c *CRDs) Run(ctx context.Context, from int64) {
	c.init()
	defer func() {
		c.mu.Lock()
		c.running = false
		c.changed.Broadcast()
		c.mu.Unlock()
	}()
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.changed.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	c.queue.workWhile(ctx, c.Log, crdRetryDelay, c.cleanup, func() {
		c.follow(ctx, from)
	})
	c.waiting.Wait()
	// A stopped server leaves no conversion webhook connection behind.
	c.mu.Lock()
	for _, cur := range c.served {
		customresource.Release(cur.descs)
	}
	c.mu.Unlock()
}

// follow hands CRD events to apply, from revision from.
func (c *CRDs) follow(ctx context.Context, from int64) {
	for ctx.Err() == nil {
		rev, err := followOnce(ctx, c.Source, c.Descriptor.ResourcePrefix(), bolt.ListOptions{}, from, c.relist, func(ev bolt.Event) {
			if ev.Type == bolt.Delete {
				c.remove(ev.KV.Key)
			} else {
				c.apply(ev.KV)
			}
			c.mu.Lock()
			c.seen = ev.Revision
			c.changed.Broadcast()
			c.mu.Unlock()
		})
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, bolt.ErrWatcherTooSlow) {
			c.Log.Warn("custom resource definition watch resuming", "revision", rev)
			from = rev
			continue
		}
		c.Log.Warn("custom resource definition watch restarting", "err", err)
		from = 0
		select {
		case <-ctx.Done():
		case <-time.After(restartDelay):
		}
	}
}

// relist serves exactly the CRDs of a fresh list at revision rev, after a
// watch that could not resume. Writes awaiting rev or older are in effect
// after it.
func (c *CRDs) relist(kvs []bolt.KV, rev int64) {
	defer func() {
		c.mu.Lock()
		c.seen = max(c.seen, rev)
		c.changed.Broadcast()
		c.mu.Unlock()
	}()
	listed := map[string]bool{}
	for _, kv := range kvs {
		c.apply(kv)
		_, name, _ := c.Descriptor.SplitKey(kv.Key)
		listed[name] = true
	}
	c.mu.Lock()
	var gone []string
	for name := range c.served {
		if !listed[name] {
			gone = append(gone, name)
		}
	}
	c.mu.Unlock()
	for _, name := range gone {
		c.remove(c.Descriptor.Key("", name))
	}
}

// Await waits until the CRD write at revision rev is in effect (its
// resources served or gone), or ctx ends.
func (c *CRDs) Await(ctx context.Context, rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.running && c.seen < rev && ctx.Err() == nil {
		c.changed.Wait()
	}
}

// Owns reports whether d serves a resource of the CRD called name.
func (c *CRDs) Owns(name string) func(*registry.Descriptor) bool {
	return func(d *registry.Descriptor) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		s := c.served[name]
		return s != nil && slices.Contains(s.descs, d)
	}
}

// apply serves what one stored CRD defines.
func (c *CRDs) apply(kv bolt.KV) {
	_, name, _ := c.Descriptor.SplitKey(kv.Key)
	crd, err := schema.DecodeStored(kv.Value, c.Descriptor.Schema)
	if err != nil {
		c.Log.Error("decoding a stored custom resource definition", "key", kv.Key, "err", err)
		return
	}
	terminating := child(crd, "metadata")["deletionTimestamp"] != nil
	if terminating {
		// Cleanup reads the state recorded below.
		defer c.queue.add(name)
	}
	var fp []byte
	if customresource.Established(crd) {
		fp = schema.Encode(nil, map[string]any{"spec": crd["spec"], "status": map[string]any{"acceptedNames": child(crd, "status")["acceptedNames"]}}, c.Descriptor.Schema)
		if terminating {
			fp = append(fp, terminatingMark...)
		}
	}
	c.mu.Lock()
	cur := c.served[name]
	c.mu.Unlock()
	if cur != nil && cur.fingerprint == string(fp) {
		c.mu.Lock()
		cur.terminating = terminating
		c.mu.Unlock()
		return
	}
	var descs []*registry.Descriptor
	if fp != nil {
		def, err := customresource.Read(crd)
		if err == nil {
			def.Revision = kv.ModRevision
			descs, err = c.Builder.Descriptors(def)
		}
		if terminating {
			for _, d := range descs {
				d.RefuseCreate = "create not allowed while custom resource definition is terminating"
				d.ListedVerbs = terminatingVerbs()
			}
		}
		if err != nil {
			c.Log.Error("serving a custom resource definition", "name", name, "err", err)
			descs = nil
		}
	}
	var old []*registry.Descriptor
	if cur != nil {
		old = cur.descs
	}
	keepUnversioned(old, descs)
	if cur != nil && string(fp) == cur.fingerprint+terminatingMark {
		// Only creates are refused from now on: watches carry on, as
		// upstream keeps a terminating CRD's storage until it is gone.
		c.Registry.Succeed(old, descs)
	} else {
		c.Registry.Replace(old, descs)
	}
	c.forget(old)
	c.mu.Lock()
	c.served[name] = &servedCRD{fingerprint: string(fp), descs: descs, terminating: terminating}
	c.mu.Unlock()
}

// keepUnversioned gives descs, a CRD's new descriptors, the version old,
// those they replace, read stored objects that name none in: objects
// stored before custom resources named their version (by an earlier
// build) are of the storage version of that time, and stay so when the
// CRD's storage version changes. That time is not recorded: a server
// started afresh reads them as of the storage version it starts with, as
// the builds that wrote them did.
func keepUnversioned(old, descs []*registry.Descriptor) {
	if len(old) == 0 || old[0].Storage == nil || old[0].Storage.Converter == nil {
		return
	}
	v := old[0].Storage.Unversioned
	if v == "" {
		v = old[0].StorageForm().Version
	}
	for _, d := range descs {
		if s := d.Storage; s != nil && s.Converter != nil {
			s.Unversioned = v
			if st := s.Descriptor.Storage; st != nil {
				st.Unversioned = v
			}
		}
	}
}

// remove stops serving a deleted CRD's resources.
func (c *CRDs) remove(key string) {
	_, name, ok := c.Descriptor.SplitKey(key)
	if !ok {
		return
	}
	c.mu.Lock()
	cur := c.served[name]
	delete(c.served, name)
	c.mu.Unlock()
	if cur != nil {
		c.Registry.Replace(cur.descs, nil)
		c.forget(cur.descs)
	}
}

func (c *CRDs) forget(ds []*registry.Descriptor) {
	customresource.Release(ds)
	if c.Forget != nil && len(ds) > 0 {
		c.Forget(ds)
	}
}

// cleanup deletes the custom resources of a terminating CRD, and removes
// its finalizer once none is left.
func (c *CRDs) cleanup(ctx context.Context, name string) error {
	if c.Leading != nil && !c.Leading() {
		return nil
	}
	c.mu.Lock()
	cur := c.served[name]
	c.mu.Unlock()
	if cur == nil || !cur.terminating {
		return nil
	}
	crd, err := c.Objects.Get(c.Descriptor, "", name)
	if err != nil {
		return nil // gone already
	}
	if !slices.Contains(registry.Strings(child(crd, "metadata")["finalizers"]), c.Finalizer) {
		return nil
	}
	if _, err := c.Objects.Update(ctx, c.Descriptor, "", name, "status", func(old registry.Object) registry.Object {
		customresource.SetCondition(child(old, "status"), customresource.CondTerminating, "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress", time.Now())
		return old
	}); err != nil {
		return err
	}
	// The objects go through a served version, or through the storage
	// version when none is served: they are stored all the same.
	var through *registry.Descriptor
	if len(cur.descs) > 0 {
		through = cur.descs[0]
	} else if def, err := customresource.Read(crd); err == nil {
		if through, err = c.Builder.StorageDescriptor(def); err != nil {
			return err
		}
	}
	if through != nil {
		left, err := c.deleteAll(ctx, through)
		if err != nil {
			return err
		}
		if left > 0 {
			return c.waitForDeletion(ctx, through, name)
		}
	}
	_, err = c.Objects.Update(ctx, c.Descriptor, "", name, "", func(old registry.Object) registry.Object {
		if !removeFinalizer(child(old, "metadata"), "finalizers", c.Finalizer) {
			return nil
		}
		return old
	})
	return err
}

// Requeue queues every terminating CRD for cleanup, for a replica that
// has just become the leader.
func (c *CRDs) Requeue() {
	c.init()
	c.mu.Lock()
	var names []string
	for name, s := range c.served {
		if s.terminating {
			names = append(names, name)
		}
	}
	c.mu.Unlock()
	for _, name := range names {
		c.queue.add(name)
	}
}

// deleteAll deletes every object of d and returns how many are left
// (kept by their finalizers).
func (c *CRDs) deleteAll(ctx context.Context, d *registry.Descriptor) (int, error) {
	objs, _, err := c.Objects.List(d, "")
	if err != nil {
		return 0, err
	}
	left := 0
	for _, obj := range objs {
		ns, name := metaString(obj, "namespace"), metaString(obj, "name")
		gone, err := c.Objects.Delete(ctx, d, ns, name, registry.DeleteOptions{})
		if err != nil && apierr.Code(err) != http.StatusNotFound {
			return 0, fmt.Errorf("deleting %s %s: %w", d.Kind, name, err)
		}
		if !gone && err == nil {
			left++
		}
	}
	return left, nil
}

// waitForDeletion queues the CRD again once something of its resource
// changes: a finalizer going away lets an object go.
func (c *CRDs) waitForDeletion(ctx context.Context, d *registry.Descriptor, name string) error {
	// The list is read after the watch's start: what deleteAll left may
	// have gone before, and then no event would come.
	res, w, err := bolt.ListWatch(ctx, c.Source, d.ResourcePrefix(), bolt.ListOptions{Limit: 1})
	if err != nil {
		return err
	}
	if len(res.Items) == 0 {
		w.Stop()
		c.queue.add(name)
		return nil
	}
	c.waiting.Add(1)
	go func() {
		defer c.waiting.Done()
		defer w.Stop()
		select {
		case <-ctx.Done():
		case <-w.Events():
			c.queue.add(name)
		}
	}()
	return nil
}
