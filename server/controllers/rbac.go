package controllers

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"

	"platd/bolt"
	"platd/security/rbac"
	"platd/server/registry"
)

// RBAC keeps an RBAC authorizer's roles and bindings what the store holds:
// Load reads them before the first request, Run follows the store's watch.
type RBAC struct {
	Source     Source
	Authorizer *rbac.Authorizer
	// Roles, ClusterRoles, RoleBindings and ClusterRoleBindings are the
	// rbac group's descriptors, whose objects are followed.
	Roles, ClusterRoles, RoleBindings, ClusterRoleBindings *registry.Descriptor
	Log                                                    *slog.Logger

	// from is the revision Load read each kind at.
	from [4]int64
}

// rbacKind is one of the four followed resources.
type rbacKind struct {
	d       *registry.Descriptor
	binding bool
}

func (c *RBAC) kinds() [4]rbacKind {
	return [4]rbacKind{{c.Roles, false}, {c.ClusterRoles, false}, {c.RoleBindings, true}, {c.ClusterRoleBindings, true}}
}

// Load hands every stored role and binding to the authorizer.
func (c *RBAC) Load() error {
	for i, k := range c.kinds() {
		res, err := c.Source.List(k.d.ResourcePrefix(), bolt.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing %s: %w", k.d.Resource, err)
		}
		c.replace(k, res.Items)
		c.from[i] = res.Revision
	}
	return nil
}

// Run follows the changes of roles and bindings from what Load read until
// ctx ends.
func (c *RBAC) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i, k := range c.kinds() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			followFrom(ctx, c.Source, k.d.ResourcePrefix(), c.from[i], c.Log,
				func(kvs []bolt.KV) { c.replace(k, kvs) },
				func(ev bolt.Event) { c.observe(k, ev) })
		}()
	}
	wg.Wait()
}

// replace makes kvs the only objects of kind k.
func (c *RBAC) replace(k rbacKind, kvs []bolt.KV) {
	if k.binding {
		bs := decodeEach(kvs, rbac.DecodeBinding, func(kv bolt.KV, err error) {
			c.Log.Error("rbac: skipping a binding", "key", kv.Key, "err", err)
		})
		c.Authorizer.ReplaceBindings(k.d.Namespaced, bs)
		return
	}
	rs := decodeEach(kvs, rbac.DecodeRole, func(kv bolt.KV, err error) {
		c.Log.Error("rbac: skipping a role", "key", kv.Key, "err", err)
	})
	c.Authorizer.ReplaceRoles(k.d.Namespaced, rs)
}

// decodeMinPerWorker is the fewest values a decoding goroutine of
// decodeEach takes on: below it one goroutine decodes them all.
const decodeMinPerWorker = 16

// decodeEach decodes the values of kvs in order; those decode fails on are
// handed to skip (in order) and left out. A long list is decoded on as many
// goroutines as there are processors: every start decodes each stored role
// and binding before it serves the first request.
func decodeEach[T any](kvs []bolt.KV, decode func([]byte) (T, error), skip func(bolt.KV, error)) []T {
	out := make([]T, len(kvs))
	errs := make([]error, len(kvs))
	decodeRange := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i], errs[i] = decode(kvs[i].Value)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(kvs)/decodeMinPerWorker)
	if workers <= 1 {
		decodeRange(0, len(kvs))
	} else {
		var wg sync.WaitGroup
		per := (len(kvs) + workers - 1) / workers
		for lo := 0; lo < len(kvs); lo += per {
			wg.Add(1)
			go func() {
				defer wg.Done()
				decodeRange(lo, min(lo+per, len(kvs)))
			}()
		}
		wg.Wait()
	}
	kept := out[:0]
	for i, v := range out {
		if errs[i] != nil {
			skip(kvs[i], errs[i])
			continue
		}
		kept = append(kept, v)
	}
	return kept
}

// observe applies one change of kind k.
func (c *RBAC) observe(k rbacKind, ev bolt.Event) {
	if ev.Type == bolt.Delete {
		ns, name, ok := k.d.SplitKey(ev.KV.Key)
		if !ok {
			return
		}
		if k.binding {
			c.Authorizer.DeleteBinding(ns, name)
		} else {
			c.Authorizer.DeleteRole(ns, name)
		}
		return
	}
	if k.binding {
		b, err := rbac.DecodeBinding(ev.KV.Value)
		if err != nil {
			c.Log.Error("rbac: skipping a binding", "key", ev.KV.Key, "err", err)
			return
		}
		c.Authorizer.PutBinding(b)
		return
	}
	r, err := rbac.DecodeRole(ev.KV.Value)
	if err != nil {
		c.Log.Error("rbac: skipping a role", "key", ev.KV.Key, "err", err)
		return
	}
	c.Authorizer.PutRole(r)
}
