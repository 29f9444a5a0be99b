package server

import (
	"context"
	"slices"
	"sync"
	"time"

	"platd/config"
	"platd/server/builtin"
	"platd/server/controllers"
	"platd/server/registry"
)

// seeds are the system objects written at every start, as upstream's
// post-start hooks do: a local APIService per served group-version (and
// none for a version no longer served), the system priority classes, and
// the bootstrap flow-control configuration, which the leader then keeps
// (see flowControlKeeper). A type switched off by --runtime-config gets
// no seed. Each seed names the start-up hook whose job it does; its
// objects are built when it is planted, so naming the hooks builds none.
func (s *Server) seeds() []hookSeed {
	b := s.opts.Brand
	var out []hookSeed
	if d := s.reg.ByKind(b.Group("apiregistration"), "v1", "APIService"); d != nil {
		out = append(out, hookSeed{hookAutoregistration, controllers.Seed{
			Resource: d, Reconcile: controllers.ReconcileSpec,
			Prune: func(o registry.Object) bool { return labelOf(o, b.AutomanagedLabel) == "onstart" },
		}, func() []registry.Object {
			var local []registry.Object
			for _, g := range s.reg.Groups() {
				for _, v := range s.reg.Versions(g) {
					if o := builtin.LocalAPIService(g, v, b); o != nil {
						local = append(local, o)
					}
				}
			}
			return local
		}})
	}
	if d := s.reg.ByKind(b.Group("scheduling"), "v1", "PriorityClass"); d != nil {
		out = append(out, hookSeed{hookPriorityClasses, controllers.Seed{Resource: d},
			func() []registry.Object { return builtin.SystemPriorityClasses(b) }})
	}
	// Both kinds come from one bootstrap configuration, built once.
	flowControl := sync.OnceValues(func() ([]registry.Object, []registry.Object) { return builtin.FlowControlBootstrap(b) })
	for _, fc := range []struct {
		kind    string
		objects func() []registry.Object
		reviser func(config.Brand, *registry.Descriptor) func(have, want registry.Object) registry.Object
	}{
		{"PriorityLevelConfiguration", func() []registry.Object { levels, _ := flowControl(); return levels }, builtin.PriorityLevelReviser},
		{"FlowSchema", func() []registry.Object { _, schemas := flowControl(); return schemas }, builtin.FlowSchemaReviser},
	} {
		if d := s.reg.ByKind(b.Group("flowcontrol.apiserver"), "v1", fc.kind); d != nil {
			out = append(out, hookSeed{hookFlowControl, controllers.Seed{
				Resource: d, Reconcile: fc.reviser(b, d), Prune: builtin.FlowControlRemovable(b),
			}, fc.objects})
		}
	}
	return out
}

// flowControlPeriod is how often the bootstrap flow-control configuration
// is planted again after the start, as upstream's configuration producer
// ensures it every minute: a deleted object comes back and a changed
// auto-updated one is restored within the period, while an operator has
// the period to finish an edit (marking a suggested object "false", say)
// before it is looked at.
const flowControlPeriod = time.Minute

// flowControlKeeper is the controller that plants the flow-control seeds
// every period; nil when neither type is served.
func (s *Server) flowControlKeeper() *controllers.Replant {
	var seeds []controllers.Seed
	for _, seed := range s.seeds() {
		if seed.hook == hookFlowControl {
			seed.Objects = seed.objects()
			seeds = append(seeds, seed.Seed)
		}
	}
	if len(seeds) == 0 {
		return nil
	}
	return &controllers.Replant{Seeds: seeds, Objects: s.rest, Interval: flowControlPeriod, Log: s.log}
}

// hookSeed is a seed, the start-up hook it does the job of, and how its
// objects are built.
type hookSeed struct {
	hook string
	controllers.Seed
	objects func() []registry.Object
}

// seedHooks are the hooks of the seeds written at this start, in order.
func (s *Server) seedHooks() []string {
	var out []string
	for _, seed := range s.seeds() {
		if !slices.Contains(out, seed.hook) {
			out = append(out, seed.hook)
		}
	}
	return out
}

// plantSeeds writes every seed, all at once so their writes share the
// store's commits; a hook is finished once all its seeds are written.
func (s *Server) plantSeeds(ctx context.Context) {
	var wg sync.WaitGroup
	seeds := s.seeds()
	left := map[string]int{}
	var mu sync.Mutex
	for _, seed := range seeds {
		left[seed.hook]++
	}
	for _, seed := range seeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seed.Objects = seed.objects()
			what := "writing the system " + seed.Resource.GroupResource()
			if !s.hookWork(ctx, seed.hook, what, 0, func() error { return seed.Plant(ctx, s.rest) }) {
				return
			}
			mu.Lock()
			left[seed.hook]--
			done := left[seed.hook] == 0
			mu.Unlock()
			if done {
				s.hooks.finish(seed.hook)
			}
		}()
	}
	wg.Wait()
}

func labelOf(o registry.Object, key string) string      { return metaMapValue(o, "labels", key) }
func annotationOf(o registry.Object, key string) string { return metaMapValue(o, "annotations", key) }

func metaMapValue(o registry.Object, field, key string) string {
	meta, _ := o["metadata"].(map[string]any)
	m, _ := meta[field].(map[string]any)
	v, _ := m[key].(string)
	return v
}
