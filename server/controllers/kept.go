package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
)

// keptRetryDelay is how long a kept object whose write failed waits
// before the next attempt. Failures are rare (a cluster IP held by another
// service after a range change, storage errors) and need an operator's
// hand, so a slow fixed retry keeps the log readable.
const keptRetryDelay = 10 * time.Second

// Wanted is one object the server keeps as it wants it.
type Wanted struct {
	Descriptor *registry.Descriptor
	// Object is the wanted state, with namespace and name in its
	// metadata; it is created when the object is missing.
	Object registry.Object
	// Fields are the paths (see fieldPath) of the members that must hold
	// the wanted values; the rest of a stored object is left as it is.
	// A member of a map may be one, so that the map's other keys stay.
	Fields []string
	// Recreate are the fields that cannot change in place: an object
	// whose value differs is deleted and created again.
	Recreate []string
	// Equivalent, for some of the fields, says whether a stored value
	// counts as the wanted one, for a field kept looser than by equal
	// value; a field found differing is written with the wanted value.
	Equivalent map[string]func(want, have any) bool
}

// Kept keeps a fixed set of objects existing and, in the listed fields, as
// wanted: it creates them at start and whenever they are deleted, and
// writes the wanted values back when they are changed.
type Kept struct {
	Source  Source
	Objects Objects
	Wanted  []Wanted
	Log     *slog.Logger

	queue *queue
	// mu guards the wanted states Set replaces while Run works.
	mu    sync.Mutex
	byKey map[string]*Wanted
}

// Set replaces the wanted state of one of the kept objects (the one with
// w's descriptor, namespace and name) and has it checked again. An object
// not among Wanted is ignored. Safe to call while Run works.
func (c *Kept) Set(w Wanted) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := w.key()
	for i := range c.Wanted {
		if c.Wanted[i].key() == key {
			c.Wanted[i] = w
			if c.queue != nil {
				c.queue.add(key)
			}
			return
		}
	}
}

// wanted is a copy of the wanted state of key, which Set may replace.
func (c *Kept) wanted(key string) *Wanted {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := *c.byKey[key]
	return &w
}

// EnsureAll creates or repairs every wanted object once, and returns the
// first failure.
func (c *Kept) EnsureAll(ctx context.Context) error {
	// The objects do not depend on each other: written at once, they
	// share the store's commits.
	errs := make([]error, len(c.Wanted))
	var wg sync.WaitGroup
	for i := range c.Wanted {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.ensure(ctx, &c.Wanted[i])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Run keeps the objects until ctx ends.
func (c *Kept) Run(ctx context.Context) {
	c.mu.Lock()
	c.queue = newQueue()
	c.byKey = map[string]*Wanted{}
	// The keys and their prefixes never change, so the watches read them
	// without the lock Set takes.
	prefixOf := map[string]string{}
	for i := range c.Wanted {
		w := &c.Wanted[i]
		c.byKey[w.key()] = w
		prefixOf[w.key()] = w.Descriptor.Prefix(w.namespace())
	}
	c.mu.Unlock()
	prefixes := map[string]bool{}
	for _, p := range prefixOf {
		prefixes[p] = true
	}
	var wg sync.WaitGroup
	for prefix := range prefixes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			follow(ctx, c.Source, prefix, c.Log, func([]bolt.KV) {
				// Every object is checked after a (re)list, also the
				// missing ones.
				for key, p := range prefixOf {
					if p == prefix {
						c.queue.add(key)
					}
				}
			}, func(ev bolt.Event) {
				if _, ok := prefixOf[ev.KV.Key]; ok {
					c.queue.add(ev.KV.Key)
				}
			})
		}()
	}
	c.queue.work(ctx, c.Log, keptRetryDelay, func(ctx context.Context, key string) error {
		return c.ensure(ctx, c.wanted(key))
	})
	wg.Wait()
}

func (w *Wanted) namespace() string { return metaString(w.Object, "namespace") }
func (w *Wanted) name() string      { return metaString(w.Object, "name") }
func (w *Wanted) key() string       { return w.Descriptor.Key(w.namespace(), w.name()) }

// ensure creates the object when missing and writes the wanted fields
// back when they differ.
func (c *Kept) ensure(ctx context.Context, w *Wanted) error {
	d, ns, name := w.Descriptor, w.namespace(), w.name()
	cur, err := c.Objects.Get(d, ns, name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		err = c.Objects.CreateOnly(ctx, d, copyObject(w.Object))
		if apierr.ReasonOf(err) == apierr.ReasonAlreadyExists {
			// Created meanwhile; the watch brings it back here.
			return nil
		}
		if err != nil {
			return fmt.Errorf("creating %s %s/%s: %w", d.GroupResource(), ns, name, err)
		}
		c.Log.Info("kept object created", "resource", d.GroupResource(), "namespace", ns, "name", name)
		return nil
	}
	if err != nil {
		return err
	}
	if !w.holds(cur, w.Recreate) {
		_, err := c.Objects.Delete(ctx, d, ns, name, registry.DeleteOptions{PreconditionUID: metaString(cur, "uid")})
		if err != nil && apierr.ReasonOf(err) != apierr.ReasonNotFound {
			return fmt.Errorf("deleting %s %s/%s to recreate it: %w", d.GroupResource(), ns, name, err)
		}
		// The deletion event brings it back here to be created.
		return nil
	}
	if w.holds(cur, w.Fields) {
		return nil
	}
	_, err = c.Objects.Update(ctx, d, ns, name, "", func(old registry.Object) registry.Object {
		if w.holds(old, w.Fields) {
			return nil
		}
		for _, f := range w.Fields {
			if !w.holdsField(old, f) {
				setField(old, f, copyValue(getField(w.Object, f)))
			}
		}
		return old
	})
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		// Deleted meanwhile; the watch brings it back here.
		return nil
	}
	if err != nil {
		return fmt.Errorf("repairing %s %s/%s: %w", d.GroupResource(), ns, name, err)
	}
	c.Log.Info("kept object repaired", "resource", d.GroupResource(), "namespace", ns, "name", name)
	return nil
}

// holds reports whether obj holds the wanted values in every field.
func (w *Wanted) holds(obj registry.Object, fields []string) bool {
	for _, f := range fields {
		if !w.holdsField(obj, f) {
			return false
		}
	}
	return true
}

// holdsField reports whether obj holds the wanted value of field f.
func (w *Wanted) holdsField(obj registry.Object, f string) bool {
	same := sameJSON
	if eq := w.Equivalent[f]; eq != nil {
		same = eq
	}
	return same(getField(w.Object, f), getField(obj, f))
}

// sameJSON compares decoded values by their JSON form, so numbers of
// different Go types compare equal.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// fieldPath splits a path of nested maps into its keys: names joined by
// dots, where a key in brackets is taken as it is, for a map key holding
// dots or slashes (a label's): "metadata.labels[example.com/tier]".
func fieldPath(path string) []string {
	var keys []string
	for path != "" {
		if path[0] == '[' {
			end := strings.IndexByte(path, ']')
			if end < 0 {
				end = len(path)
			}
			keys = append(keys, path[1:end])
			path = strings.TrimPrefix(path[min(end+1, len(path)):], ".")
			continue
		}
		end := strings.IndexAny(path, ".[")
		if end < 0 {
			end = len(path)
		}
		keys = append(keys, path[:end])
		path = strings.TrimPrefix(path[end:], ".")
	}
	return keys
}

// getField reads a path of nested maps (see fieldPath).
func getField(obj registry.Object, path string) any {
	var cur any = obj
	for _, k := range fieldPath(path) {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// setField writes a path of nested maps (see fieldPath), creating the
// maps.
func setField(obj registry.Object, path string, v any) {
	keys := fieldPath(path)
	m := obj
	for _, k := range keys[:len(keys)-1] {
		m = child(m, k)
	}
	m[keys[len(keys)-1]] = v
}

// copyValue deep-copies a decoded JSON value.
func copyValue(v any) any { return schema.DeepCopy(v) }

// copyObject deep-copies a decoded object.
func copyObject(o registry.Object) registry.Object { return copyValue(o).(map[string]any) }
