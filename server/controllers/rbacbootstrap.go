package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"platd/config"
	"platd/server/apierr"
	"platd/server/rbacpolicy"
	"platd/server/registry"
)

// Upstream's bootstrap policy hook tries once a second for 30 seconds for
// the store to answer before the server gives up.
const (
	rbacBootstrapInterval = time.Second
	rbacBootstrapTimeout  = 30 * time.Second
)

// errRBACBootstrapTimeout is upstream's failure of the policy hook.
var errRBACBootstrapTimeout = errors.New("unable to initialize roles: timed out waiting for the condition")

// RBACBootstrap writes the default RBAC policy at start and reconciles
// what a data directory already holds with it (rbacpolicy.ReconcileRole,
// ReconcileBinding). A start that finds every object as wanted writes
// nothing.
type RBACBootstrap struct {
	Objects Objects
	Brand   config.Brand
	// The four rbac descriptors.
	ClusterRoles, ClusterRoleBindings, Roles, RoleBindings *registry.Descriptor
	Policy                                                 rbacpolicy.Objects
	// EnsureNamespace creates a namespace the namespaced objects need.
	EnsureNamespace func(ctx context.Context, name string) error
	Log             *slog.Logger
	// Interval and Timeout pace the attempts; zero means upstream's.
	Interval, Timeout time.Duration
}

// RBACBootstrapStats counts the writes of one run.
type RBACBootstrapStats struct {
	Created, Updated, Recreated, Protected, Failed int64
}

// Run writes the policy. Failures of single objects are logged and do not
// stop it; it fails, with upstream's text, only when the store does not
// answer its lists or the migration of older objects fails until the
// timeout (the causes are logged).
func (c *RBACBootstrap) Run(ctx context.Context) (RBACBootstrapStats, error) {
	interval, timeout := c.Interval, c.Timeout
	if interval == 0 {
		interval = rbacBootstrapInterval
	}
	if timeout == 0 {
		timeout = rbacBootstrapTimeout
	}
	deadline := time.Now().Add(timeout)
	for {
		stats, err := c.attempt(ctx)
		if err == nil {
			return stats, nil
		}
		// The cause is logged; the failure reads as upstream's.
		c.Log.Warn("writing the default RBAC policy", "err", err)
		if ctx.Err() != nil || time.Now().Add(interval).After(deadline) {
			return stats, errRBACBootstrapTimeout
		}
		select {
		case <-ctx.Done():
			return stats, fmt.Errorf("unable to initialize roles: %w", ctx.Err())
		case <-time.After(interval):
		}
	}
}

func (c *RBACBootstrap) attempt(ctx context.Context) (RBACBootstrapStats, error) {
	var stats RBACBootstrapStats
	have := map[*registry.Descriptor]map[string]registry.Object{}
	for _, d := range []*registry.Descriptor{c.ClusterRoles, c.ClusterRoleBindings, c.Roles, c.RoleBindings} {
		list, _, err := c.Objects.List(d, "")
		if err != nil {
			return stats, fmt.Errorf("listing %s: %w", d.GroupResource(), err)
		}
		m := make(map[string]registry.Object, len(list))
		for _, o := range list {
			m[seedKey(o)] = o
		}
		have[d] = m
	}
	if err := c.prime(ctx, have); err != nil {
		return stats, err
	}
	// Every object is written on its own: concurrent writes share the
	// store's commits, so a first start pays for a few syncs. An object
	// found as wanted is only compared: no goroutine for it.
	var wg sync.WaitGroup
	run := func(d *registry.Descriptor, wants []registry.Object, rec func(config.Brand, registry.Object, registry.Object) rbacpolicy.Result) {
		for _, want := range wants {
			had := have[d][seedKey(want)]
			if had != nil {
				if res := rec(c.Brand, had, want); res.Object == nil && !res.Recreate && !res.Protected {
					continue
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.reconcile(ctx, d, had, want, rec, &stats)
			}()
		}
	}
	run(c.ClusterRoles, c.Policy.ClusterRoles, rbacpolicy.ReconcileRole)
	run(c.ClusterRoleBindings, c.Policy.ClusterRoleBindings, rbacpolicy.ReconcileBinding)
	// The namespaced objects wait for their namespaces.
	namespaces := map[string]bool{}
	for _, l := range [][]registry.Object{c.Policy.Roles, c.Policy.RoleBindings} {
		for _, o := range l {
			namespaces[rbacpolicy.Namespace(o)] = true
		}
	}
	var nsWG sync.WaitGroup
	for ns := range namespaces {
		nsWG.Add(1)
		go func() {
			defer nsWG.Done()
			if err := c.EnsureNamespace(ctx, ns); err != nil {
				c.Log.Error("creating namespace for the default RBAC policy", "namespace", ns, "err", err)
			}
		}()
	}
	nsWG.Wait()
	run(c.Roles, c.Policy.Roles, rbacpolicy.ReconcileRole)
	run(c.RoleBindings, c.Policy.RoleBindings, rbacpolicy.ReconcileBinding)
	wg.Wait()
	return stats, nil
}

// prime migrates what older policies kept elsewhere, as upstream does
// before reconciling: the rules of admin, edit and view from before they
// were aggregated move to the roles they now aggregate, and the subjects of
// the system:discovery binding carry over to the system:public-info-viewer
// one split off it.
func (c *RBACBootstrap) prime(ctx context.Context, have map[*registry.Descriptor]map[string]registry.Object) error {
	roles := have[c.ClusterRoles]
	for old, moved := range rbacpolicy.AggregatedLegacy {
		legacy, ok := roles[seedKey(nameOnly(old))]
		if _, exists := roles[seedKey(nameOnly(moved))]; exists || !ok || legacy["aggregationRule"] != nil {
			continue
		}
		c.Log.Info("migrating cluster role", "from", old, "to", moved)
		obj := copyObject(legacy)
		obj["metadata"] = renamedMeta(child(obj, "metadata"), moved)
		created, err := c.Objects.Create(ctx, c.ClusterRoles, obj)
		if err != nil && apierr.ReasonOf(err) != apierr.ReasonAlreadyExists {
			return fmt.Errorf("migrating clusterrole %s to %s: %w", old, moved, err)
		}
		if err == nil {
			roles[seedKey(created)] = created
		}
	}
	bindings := have[c.ClusterRoleBindings]
	from, ok := bindings[seedKey(nameOnly(rbacpolicy.SplitFrom))]
	if _, exists := bindings[seedKey(nameOnly(rbacpolicy.SplitTo))]; !ok || exists {
		return nil
	}
	var tmpl registry.Object
	for _, o := range c.Policy.ClusterRoleBindings {
		if rbacpolicy.Name(o) == rbacpolicy.SplitTo {
			tmpl = copyObject(o)
		}
	}
	if tmpl == nil {
		return nil
	}
	c.Log.Info("copying cluster role binding subjects", "from", rbacpolicy.SplitFrom, "to", rbacpolicy.SplitTo)
	from = copyObject(from)
	tmpl["subjects"] = from["subjects"]
	tmpl["metadata"] = renamedMeta(child(from, "metadata"), rbacpolicy.SplitTo)
	created, err := c.Objects.Create(ctx, c.ClusterRoleBindings, tmpl)
	if err != nil && apierr.ReasonOf(err) != apierr.ReasonAlreadyExists {
		return fmt.Errorf("copying clusterrolebinding %s to %s: %w", rbacpolicy.SplitFrom, rbacpolicy.SplitTo, err)
	}
	if err == nil {
		bindings[seedKey(created)] = created
	}
	return nil
}

// renamedMeta is the metadata of a copy called name: only the labels and
// annotations carry over.
func renamedMeta(md map[string]any, name string) map[string]any {
	out := map[string]any{"name": name}
	for _, k := range []string{"labels", "annotations"} {
		if v, ok := md[k]; ok {
			out[k] = v
		}
	}
	return out
}

func nameOnly(name string) registry.Object {
	return registry.Object{"metadata": map[string]any{"name": name}}
}

// reconcile writes one object: creates it when missing, else changes or
// recreates it as rec says.
func (c *RBACBootstrap) reconcile(ctx context.Context, d *registry.Descriptor, have, want registry.Object,
	rec func(config.Brand, registry.Object, registry.Object) rbacpolicy.Result, stats *RBACBootstrapStats) {
	ns, name := rbacpolicy.Namespace(want), rbacpolicy.Name(want)
	// The logger naming the object is made only when there is something
	// to say: a start reconciles every default object and logs few.
	log := func() *slog.Logger { return c.Log.With("resource", d.GroupResource(), "namespace", ns, "name", name) }
	err := func() error {
		if have == nil {
			err := c.Objects.CreateOnly(ctx, d, copyObject(want))
			if apierr.ReasonOf(err) != apierr.ReasonAlreadyExists {
				if err == nil {
					atomic.AddInt64(&stats.Created, 1)
				}
				return err
			}
			// Created meanwhile: reconcile with it.
			if have, err = c.Objects.Get(d, ns, name); err != nil {
				return err
			}
		}
		res := rec(c.Brand, have, want)
		switch {
		case res.Protected:
			atomic.AddInt64(&stats.Protected, 1)
			log().Warn("skipped reconcile-protected default RBAC object that differs from the default", "missingRules", fmt.Sprint(res.Missing))
			return nil
		case res.Recreate:
			_, err := c.Objects.Delete(ctx, d, ns, name, registry.DeleteOptions{PreconditionUID: metaString(have, "uid")})
			if err != nil && apierr.ReasonOf(err) != apierr.ReasonNotFound {
				return err
			}
			if err := c.Objects.CreateOnly(ctx, d, copyObject(want)); err != nil {
				return err
			}
			atomic.AddInt64(&stats.Recreated, 1)
			log().Info("recreated default RBAC binding with a different roleRef")
			return nil
		case res.Object == nil:
			return nil
		}
		wrote := false
		_, err := c.Objects.Update(ctx, d, ns, name, "", func(cur registry.Object) registry.Object {
			r := rec(c.Brand, cur, want)
			wrote = r.Object != nil
			return r.Object
		})
		if err == nil && wrote {
			atomic.AddInt64(&stats.Updated, 1)
			log().Info("updated default RBAC object", "addedRules", len(res.Missing))
		}
		return err
	}()
	if err != nil && !errors.Is(err, context.Canceled) {
		atomic.AddInt64(&stats.Failed, 1)
		log().Error("unable to reconcile default RBAC object", "err", err)
	}
}
