package server

import (
	"platd/server/controllers"
	"platd/server/customresource"
)

// customResources prepares the serving of custom resources: the CRD
// descriptor gets the rules that tie it to what the server serves, and
// the resources of every stored CRD are registered before the first
// request. It returns nil when CRDs are not served (--runtime-config).
func (s *Server) customResources() (*controllers.CRDs, int64, error) {
	b := s.opts.Brand
	d := s.reg.Lookup(b.Group("apiextensions"), "v1", "customresourcedefinitions")
	if d == nil {
		return nil, 0, nil
	}
	ctrl := &controllers.CRDs{
		Source: s.store, Objects: s.rest, Registry: s.reg, Descriptor: d, Log: s.log, Forget: s.rest.Forget,
		Builder:   customresource.NewBuilder(d.Schema.Field("metadata").Schema, b),
		Finalizer: customresource.CleanupFinalizer(b),
	}
	customresource.Attach(d, s.reg, ctrl, b)
	s.informers.ch(crdInformer)
	rev, err := ctrl.Load()
	if err != nil {
		return nil, 0, err
	}
	s.hooks.finish(hookCRDSynced)
	return ctrl, rev, nil
}
