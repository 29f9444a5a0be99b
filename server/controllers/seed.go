package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"platd/server/apierr"
	"platd/server/registry"
)

// Seed is a set of system objects of one type the server writes at every
// start, so that a fresh data directory and one written by an older
// release hold the same ones (local APIServices, flow-control
// configuration, system priority classes).
type Seed struct {
	Resource *registry.Descriptor
	Objects  []registry.Object
	// Reconcile, when set, returns the object an existing one should
	// become given the wanted one, or nil to leave it alone; when nil,
	// existing objects are never changed. It may change have, which is
	// decoded for it alone.
	Reconcile func(have, want registry.Object) registry.Object
	// Prune, when set, selects existing objects that are no longer
	// wanted and are deleted: those this server wrote before (by label)
	// and that no Object names now.
	Prune func(have registry.Object) bool
}

// Plant writes the seed through objs: it creates the missing objects,
// reconciles the existing ones and prunes the stale ones. It tries every
// object and returns every failure.
func (s Seed) Plant(ctx context.Context, objs Objects) error {
	d := s.Resource
	existing, _, err := objs.List(d, "")
	if err != nil {
		return fmt.Errorf("listing %s: %w", d.GroupResource(), err)
	}
	have := make(map[string]registry.Object, len(existing))
	for _, o := range existing {
		have[seedKey(o)] = o
	}
	// Each object is written on its own: concurrent writes share the
	// store's commits, so a first start pays for one or two syncs, not
	// one per object.
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	wanted := make(map[string]bool, len(s.Objects))
	for _, want := range s.Objects {
		wanted[seedKey(want)] = true
		old, ok := have[seedKey(want)]
		// old is not read again: the update reconciles what the store
		// holds then.
		if ok && (s.Reconcile == nil || s.Reconcile(old, want) == nil) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns, name := metaString(want, "namespace"), metaString(want, "name")
			if !ok {
				err := objs.CreateOnly(ctx, d, copyObject(want))
				if err != nil && apierr.ReasonOf(err) != apierr.ReasonAlreadyExists {
					fail(fmt.Errorf("creating %s %q: %w", d.GroupResource(), name, err))
				}
				return
			}
			_, err := objs.Update(ctx, d, ns, name, "", func(cur registry.Object) registry.Object {
				return s.Reconcile(cur, want)
			})
			if err != nil {
				fail(fmt.Errorf("updating %s %q: %w", d.GroupResource(), name, err))
			}
		}()
	}
	if s.Prune != nil {
		for key, o := range have {
			if wanted[key] || !s.Prune(o) {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := metaString(o, "name")
				_, err := objs.Delete(ctx, d, metaString(o, "namespace"), name, registry.DeleteOptions{})
				if err != nil && apierr.ReasonOf(err) != apierr.ReasonNotFound {
					fail(fmt.Errorf("deleting %s %q: %w", d.GroupResource(), name, err))
				}
			}()
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ReconcileSpec makes an existing object's spec the wanted one, keeping
// everything else; nil when they already agree.
func ReconcileSpec(have, want registry.Object) registry.Object {
	if reflect.DeepEqual(have["spec"], want["spec"]) {
		return nil
	}
	have["spec"] = copyValue(want["spec"])
	return have
}

func seedKey(o registry.Object) string {
	return metaString(o, "namespace") + "/" + metaString(o, "name")
}

// Replant plants seeds again every Interval: for system objects upstream
// keeps on a period rather than on each change (the flow-control
// bootstrap configuration), so that an operator's edit is looked at only
// once the period has passed, as there.
type Replant struct {
	Seeds   []Seed
	Objects Objects
	// Interval is the period; the first planting comes one period after
	// Run starts, the server having planted the seeds at its start.
	Interval time.Duration
	Log      *slog.Logger
}

// Run plants the seeds, in order, every Interval until ctx ends. A seed
// that fails is logged and planted again at the next period.
func (c *Replant) Run(ctx context.Context) {
	t := time.NewTicker(c.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, s := range c.Seeds {
			if err := s.Plant(ctx, c.Objects); err != nil && ctx.Err() == nil {
				c.Log.Warn("system objects not planted; trying again next period", "resource", s.Resource.GroupResource(), "err", err)
			}
		}
	}
}
