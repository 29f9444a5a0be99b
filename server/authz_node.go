package server

import (
	"context"
	"sync"

	"platd/security"
	"platd/server/controllers"
	"platd/server/rbacpolicy"
	"platd/server/registry"
)

// nodeRules returns the rules of the system:node role that the Node
// authorizer applies to requests its graph does not decide.
var nodeRules = rbacpolicy.NodeRules

// nodeAuthorizer builds the Node authorizer: its graph is loaded from the
// store now, before the first request, and followed from the store's
// watch while the server serves.
func (s *Server) nodeAuthorizer() (*security.NodeAuthorizer, error) {
	b := s.opts.Brand
	graph := security.NewNodeGraph()
	ctrl := &controllers.NodeGraph{
		Source: s.store, Graph: graph, Log: s.log,
		Pods:              s.reg.Lookup("", "v1", "pods"),
		PersistentVolumes: s.reg.Lookup("", "v1", "persistentvolumes"),
		VolumeAttachments: lookupServed(s.reg, b.Group("storage"), "volumeattachments"),
		ResourceSlices:    lookupServed(s.reg, b.Group("resource"), "resourceslices"),
	}
	if err := ctrl.Load(); err != nil {
		return nil, err
	}
	s.informers.ch(nodeInformer)
	s.background.run(func(ctx context.Context) {
		s.informers.finish(nodeInformer)
		ctrl.Run(ctx)
	})
	return security.NewNodeAuthorizer(graph, nodeRules(b), b), nil
}

// lookupServed returns a descriptor of resource in any served version of
// group (all share the storage prefix), or nil.
func lookupServed(reg *registry.Registry, group, resource string) *registry.Descriptor {
	for _, v := range reg.Versions(group) {
		if d := reg.Lookup(group, v, resource); d != nil {
			return d
		}
	}
	return nil
}

// backgroundRuns are loops that serve requests from the first one on
// (authorizers following the store), whenever they were built: those built
// before Serve start with it, later ones (a reloaded authorization
// configuration) at once. They stop with the controllers, before the
// store closes.
type backgroundRuns struct {
	mu      sync.Mutex
	ctx     context.Context
	wg      *sync.WaitGroup
	pending []func(context.Context)
}

// run starts fn now when serving, else when serving starts.
func (b *backgroundRuns) run(fn func(context.Context)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx == nil {
		b.pending = append(b.pending, fn)
		return
	}
	if b.ctx.Err() != nil {
		return // shutting down
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		fn(b.ctx)
	}()
}

// start runs the pending loops and later ones until ctx ends; wg counts
// them.
func (b *backgroundRuns) start(ctx context.Context, wg *sync.WaitGroup) {
	b.mu.Lock()
	b.ctx, b.wg = ctx, wg
	pending := b.pending
	b.pending = nil
	b.mu.Unlock()
	for _, fn := range pending {
		b.run(fn)
	}
}
