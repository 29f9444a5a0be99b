package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/quota"
	"platd/server/registry"
)

// Timing of the resource quota controller.
const (
	// quotaResyncPeriod is how often every quota's usage is counted again
	// from the objects, so that what no event tells (a pod whose deletion
	// grace ran out, a change missed while the controller was down)
	// heals: upstream's --resource-quota-sync-period default.
	quotaResyncPeriod = 5 * time.Minute
	// quotaRetryDelay is how long a quota whose status could not be
	// written waits before it is counted again.
	quotaRetryDelay = time.Second
	// maxQuotaSyncAttempts bounds how often one sync counts again at once
	// because admission charged the quota while it counted; then it
	// waits quotaRetryDelay.
	maxQuotaSyncAttempts = 5
)

// errQuotaStale says a quota changed while its usage was counted.
var errQuotaStale = errors.New("quota changed while its usage was counted")

// ResourceQuotas keeps each ResourceQuota's status, as upstream's resource
// quota controller: status.hard mirrors spec.hard and status.used is the
// usage of the limited resources by the objects of the quota's namespace.
// A quota is counted when it is created or its spec.hard changes, again
// when an object it counts is removed or changes its usage (a pod that
// finished), and every quotaResyncPeriod. Admission charges creates
// between counts.
type ResourceQuotas struct {
	Source   Source
	Objects  Objects
	Registry *registry.Registry
	Log      *slog.Logger
	// Resync overrides quotaResyncPeriod (tests); Now the clock.
	Resync time.Duration
	Now    func() time.Time

	mu sync.Mutex
	// hard holds the resource names each known quota limits (spec.hard),
	// by namespace and name.
	hard  map[string]map[string][]string
	queue *queue
}

func (c *ResourceQuotas) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *ResourceQuotas) Run(ctx context.Context) {
	c.hard = map[string]map[string][]string{}
	c.queue = newQueue()
	resync := c.Resync
	if resync <= 0 {
		resync = quotaResyncPeriod
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(resync)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				c.enqueueAll()
			}
		}
	}()
	c.queue.workWhile(ctx, c.Log, quotaRetryDelay, c.sync, func() {
		follow(ctx, c.Source, "/", c.Log, asPuts(c.observe), c.observe)
	})
	wg.Wait()
}

// quotaKey is how the queue names a quota.
func quotaKey(ns, name string) string { return ns + "/" + name }

func (c *ResourceQuotas) enqueueAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ns, quotas := range c.hard {
		for name := range quotas {
			c.queue.add(quotaKey(ns, name))
		}
	}
}

// observe follows quotas, and the objects of namespaces that have any.
func (c *ResourceQuotas) observe(ev bolt.Event) {
	d, ns, name := c.Registry.ByKey(ev.KV.Key)
	if d == nil || ns == "" {
		return
	}
	if d.IsQuota {
		// A quota is also an object other quotas may count.
		c.observeQuota(ev, ns, name)
	}
	c.mu.Lock()
	quotas := c.hard[ns]
	var matching []string
	eval := quota.For(d)
	for qname, hard := range quotas {
		if len(eval.MatchingResources(hard)) > 0 {
			matching = append(matching, qname)
		}
	}
	c.mu.Unlock()
	if len(matching) == 0 {
		return
	}
	// Creates are charged by admission. A removal frees what the object
	// used; a change frees or takes some when its usage changed.
	switch {
	case ev.Type == bolt.Delete:
	case ev.Prev == nil:
		return
	default:
		now := c.now()
		prev, cur := decodeJSON(ev.Prev.Value), decodeJSON(ev.KV.Value)
		if prev == nil || cur == nil {
			break
		}
		if quota.Usage(eval, prev, now).Equal(quota.Usage(eval, cur, now)) {
			return
		}
	}
	for _, qname := range matching {
		c.queue.add(quotaKey(ns, qname))
	}
}

// observeQuota tracks a quota and queues it when its status does not
// reflect its spec.
func (c *ResourceQuotas) observeQuota(ev bolt.Event, ns, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.Type == bolt.Delete {
		if m := c.hard[ns]; m != nil {
			delete(m, name)
			if len(m) == 0 {
				delete(c.hard, ns)
			}
		}
		return
	}
	obj := decodeJSON(ev.KV.Value)
	if obj == nil {
		return
	}
	q := quota.Read(obj)
	if c.hard[ns] == nil {
		c.hard[ns] = map[string][]string{}
	}
	c.hard[ns][name] = q.SpecHard.Names()
	// Status writes (admission's charges, this controller's counts) do not
	// queue the quota: being new, a changed spec.hard, or a status that
	// does not mirror it or lacks usage do.
	changed := ev.Prev == nil || !q.SpecHard.Equal(q.Hard) || (!q.UsedSet && len(q.SpecHard) > 0)
	if !changed {
		prev := decodeJSON(ev.Prev.Value)
		changed = prev == nil || !quota.Read(prev).SpecHard.Equal(q.SpecHard)
	}
	if changed {
		c.queue.add(quotaKey(ns, name))
	}
}

// decodeJSON decodes stored object bytes, nil when they are no object.
func decodeJSON(value []byte) registry.Object {
	var obj map[string]any
	if err := json.Unmarshal(value, &obj); err != nil {
		return nil
	}
	return obj
}

// types returns the resources a quota's usage is summed over: every
// stored namespaced resource once, whatever versions serve it.
func (c *ResourceQuotas) types(ns string) []quota.Type {
	seen := map[string]bool{}
	var out []quota.Type
	for _, d := range c.Registry.All() {
		if !d.Namespaced || !d.Stored() {
			continue
		}
		gr := d.Resource + "." + d.Group
		if seen[gr] {
			continue
		}
		seen[gr] = true
		out = append(out, quota.Type{Evaluator: quota.For(d), Objects: func() ([]registry.Object, error) {
			objs, _, err := c.Objects.List(d, ns)
			return objs, err
		}})
	}
	return out
}

// sync counts the usage of the quota at key and writes its status when it
// changed, expecting the quota as it was read: a charge admission made
// meanwhile makes it count again.
func (c *ResourceQuotas) sync(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	qd := c.Registry.Quotas()
	if qd == nil {
		return nil
	}
	for range maxQuotaSyncAttempts {
		err := c.syncOnce(ctx, qd, ns, name)
		if !errors.Is(err, errQuotaStale) {
			return err
		}
	}
	return errQuotaStale
}

func (c *ResourceQuotas) syncOnce(ctx context.Context, qd *registry.Descriptor, ns, name string) error {
	obj, err := c.Objects.Get(qd, ns, name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	q := quota.Read(obj)
	rv := resourceVersionOf(obj)
	hard, used, err := quota.Status(q, c.types(ns), c.now())
	if err != nil {
		return err
	}
	status, _ := obj["status"].(map[string]any)
	_, hardSet := status["hard"].(map[string]any)
	// An empty list may be stored as none.
	if hard.Equal(q.Hard) && used.Equal(q.Used) && (hardSet || len(hard) == 0) && (q.UsedSet || len(used) == 0) {
		return nil
	}
	stale := false
	_, err = c.Objects.Update(ctx, qd, ns, name, "status", func(old registry.Object) registry.Object {
		if resourceVersionOf(old) != rv {
			stale = true
			return nil
		}
		old["status"] = map[string]any{"hard": hard.Object(), "used": used.Object()}
		return old
	})
	if stale {
		return errQuotaStale
	}
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	return err
}

func resourceVersionOf(obj registry.Object) string {
	m, _ := obj["metadata"].(map[string]any)
	rv, _ := m["resourceVersion"].(string)
	return rv
}
