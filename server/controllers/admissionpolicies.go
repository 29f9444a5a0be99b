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

// AdmissionPolicies keeps the enforced ValidatingAdmissionPolicies and
// bindings what the store holds: Load reads them before the first
// request, Run follows the store's watch.
type AdmissionPolicies struct {
	Source   Source
	Policies *admission.Policies
	// Policy and Binding are the descriptors of the followed resources.
	Policy, Binding *registry.Descriptor
	Log             *slog.Logger

	// from is the revision Load read each resource at.
	from [2]int64
}

// Load hands every stored policy and binding to Policies.
func (c *AdmissionPolicies) Load() error {
	for i, d := range []*registry.Descriptor{c.Policy, c.Binding} {
		res, err := c.Source.List(d.ResourcePrefix(), bolt.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing %s: %w", d.Resource, err)
		}
		c.replace(i == 1, res.Items)
		c.from[i] = res.Revision
	}
	return nil
}

// Run follows the changes of policies and bindings from what Load read
// until ctx ends.
func (c *AdmissionPolicies) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i, d := range []*registry.Descriptor{c.Policy, c.Binding} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			followFrom(ctx, c.Source, d.ResourcePrefix(), c.from[i], c.Log,
				func(kvs []bolt.KV) { c.replace(i == 1, kvs) },
				func(ev bolt.Event) { c.observe(d, i == 1, ev) })
		}()
	}
	wg.Wait()
}

func (c *AdmissionPolicies) decode(kv bolt.KV) (registry.Object, bool) {
	var obj registry.Object
	if err := json.Unmarshal(kv.Value, &obj); err != nil {
		c.Log.Error("admission policies: skipping an object", "key", kv.Key, "err", err)
		return nil, false
	}
	return obj, true
}

// replace makes kvs the only policies (or bindings).
func (c *AdmissionPolicies) replace(bindings bool, kvs []bolt.KV) {
	objs := make([]registry.Object, 0, len(kvs))
	for _, kv := range kvs {
		if obj, ok := c.decode(kv); ok {
			objs = append(objs, obj)
		}
	}
	if bindings {
		c.Policies.ReplaceBindings(objs)
	} else {
		c.Policies.ReplacePolicies(objs)
	}
}

// observe applies one change.
func (c *AdmissionPolicies) observe(d *registry.Descriptor, binding bool, ev bolt.Event) {
	if ev.Type == bolt.Delete {
		_, name, ok := d.SplitKey(ev.KV.Key)
		if !ok {
			return
		}
		if binding {
			c.Policies.DeleteBinding(name)
		} else {
			c.Policies.DeletePolicy(name)
		}
		return
	}
	obj, ok := c.decode(ev.KV)
	if !ok {
		return
	}
	if binding {
		c.Policies.SetBinding(obj)
	} else {
		c.Policies.SetPolicy(obj)
	}
}
