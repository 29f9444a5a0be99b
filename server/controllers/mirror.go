package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"platd/bolt"
	"platd/server/registry"
)

// mirrored is one resource an in-memory set is kept in step with: Replace
// gets all its objects, Set one written object, Delete the name of a
// removed one. Objects are in their stored form, decoded.
type mirrored struct {
	d       *registry.Descriptor
	replace func(objs []registry.Object)
	set     func(obj registry.Object)
	delete  func(name string)
}

// mirror keeps in-memory sets in step with the stored objects of some
// resources (admission policies, webhook configurations): load hands
// them over before the first request, run follows the store's watch from
// the revisions load read. what names the objects in logs.
type mirror struct {
	source Source
	log    *slog.Logger
	what   string
	kinds  []mirrored
	from   []int64
}

// load hands every stored object of each resource to its replace.
func (m *mirror) load() error {
	m.from = make([]int64, len(m.kinds))
	for i, k := range m.kinds {
		res, err := m.source.List(k.d.ResourcePrefix(), bolt.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing %s: %w", k.d.Resource, err)
		}
		m.replaceAll(k, res.Items)
		m.from[i] = res.Revision
	}
	return nil
}

// run follows the changes of every resource until ctx ends.
func (m *mirror) run(ctx context.Context) {
	if m.from == nil {
		m.from = make([]int64, len(m.kinds))
	}
	var wg sync.WaitGroup
	for i, k := range m.kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			followFrom(ctx, m.source, k.d.ResourcePrefix(), m.from[i], m.log,
				func(kvs []bolt.KV) { m.replaceAll(k, kvs) },
				func(ev bolt.Event) { m.observe(k, ev) })
		}()
	}
	wg.Wait()
}

func (m *mirror) decode(kv bolt.KV) (registry.Object, bool) {
	var obj registry.Object
	if err := json.Unmarshal(kv.Value, &obj); err != nil {
		m.log.Error(m.what+": skipping an object", "key", kv.Key, "err", err)
		return nil, false
	}
	return obj, true
}

func (m *mirror) replaceAll(k mirrored, kvs []bolt.KV) {
	objs := make([]registry.Object, 0, len(kvs))
	for _, kv := range kvs {
		if obj, ok := m.decode(kv); ok {
			objs = append(objs, obj)
		}
	}
	k.replace(objs)
}

func (m *mirror) observe(k mirrored, ev bolt.Event) {
	if ev.Type == bolt.Delete {
		if _, name, ok := k.d.SplitKey(ev.KV.Key); ok {
			k.delete(name)
		}
		return
	}
	if obj, ok := m.decode(ev.KV); ok {
		k.set(obj)
	}
}
