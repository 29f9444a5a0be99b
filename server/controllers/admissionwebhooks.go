package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"platd/bolt"
	"platd/server/admission"
	"platd/server/registry"
)

// AdmissionWebhooks keeps the called admission webhooks what the stored
// webhook configurations say: Load reads them before the first request,
// Run follows the store's watch.
type AdmissionWebhooks struct {
	Source   Source
	Webhooks *admission.Webhooks
	// Validating and Mutating are the descriptors of the followed
	// configurations.
	Validating, Mutating *registry.Descriptor
	Log                  *slog.Logger

	// from is the revision Load read each resource at.
	from [2]int64
}

// kinds are the followed descriptors, the mutating one second.
func (c *AdmissionWebhooks) kinds() []*registry.Descriptor {
	return []*registry.Descriptor{c.Validating, c.Mutating}
}

// Load hands every stored webhook configuration to Webhooks.
func (c *AdmissionWebhooks) Load() error {
	for i, d := range c.kinds() {
		res, err := c.Source.List(d.ResourcePrefix(), bolt.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing %s: %w", d.Resource, err)
		}
		c.replace(i == 1, res.Items)
		c.from[i] = res.Revision
	}
	return nil
}

// Run follows the changes of the configurations from what Load read
// until ctx ends.
func (c *AdmissionWebhooks) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i, d := range c.kinds() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			followFrom(ctx, c.Source, d.ResourcePrefix(), c.from[i], c.Log,
				func(kvs []bolt.KV) { c.replace(i == 1, kvs) },
				func(ev bolt.Event) { c.observe(d, i == 1, ev) })
		}()
	}
	wg.Wait()
	c.Webhooks.CloseIdle()
}

func (c *AdmissionWebhooks) decode(kv bolt.KV) (registry.Object, bool) {
	var obj registry.Object
	if err := json.Unmarshal(kv.Value, &obj); err != nil {
		c.Log.Error("admission webhooks: skipping an object", "key", kv.Key, "err", err)
		return nil, false
	}
	return obj, true
}

// replace makes kvs the only configurations of their kind.
func (c *AdmissionWebhooks) replace(mutating bool, kvs []bolt.KV) {
	objs := make([]registry.Object, 0, len(kvs))
	for _, kv := range kvs {
		if obj, ok := c.decode(kv); ok {
			objs = append(objs, obj)
		}
	}
	c.Webhooks.ReplaceConfigs(mutating, objs)
}

// observe applies one change.
func (c *AdmissionWebhooks) observe(d *registry.Descriptor, mutating bool, ev bolt.Event) {
	if ev.Type == bolt.Delete {
		if _, name, ok := d.SplitKey(ev.KV.Key); ok {
			c.Webhooks.DeleteConfig(mutating, name)
		}
		return
	}
	if obj, ok := c.decode(ev.KV); ok {
		c.Webhooks.SetConfig(mutating, obj)
	}
}
