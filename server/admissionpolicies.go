package server

import (
	"fmt"

	"platd/server/admission"
	"platd/server/controllers"
	"platd/server/registry"
)

// admissionPolicies returns the enforcer of the ValidatingAdmissionPolicies
// when their API is served (nil otherwise). Its policies are loaded by
// followPolicies.
func (s *Server) admissionPolicies() *admission.Policies {
	g := s.opts.Brand.Group("admissionregistration")
	if s.reg.Lookup(g, "v1", "validatingadmissionpolicies") == nil || s.reg.Lookup(g, "v1", "validatingadmissionpolicybindings") == nil {
		return nil
	}
	return admission.NewPolicies(s.reg, restLookup{s}, serverChain{s}, s.opts.Brand)
}

// followPolicies loads the stored policies and bindings into p before
// the first request and follows the store with them from when the server
// serves.
func (s *Server) followPolicies(p *admission.Policies) error {
	g := s.opts.Brand.Group("admissionregistration")
	c := &controllers.AdmissionPolicies{Source: s.store, Policies: p, Log: s.log,
		Policy: s.reg.Lookup(g, "v1", "validatingadmissionpolicies"), Binding: s.reg.Lookup(g, "v1", "validatingadmissionpolicybindings")}
	if err := c.Load(); err != nil {
		return fmt.Errorf("loading the validating admission policies: %w", err)
	}
	s.background.run(c.Run)
	return nil
}

// restLookup reads objects through the server's handler, which exists
// once the server is built: policies read parameters and namespaces
// only while requests are served.
type restLookup struct{ s *Server }

func (l restLookup) Get(d *registry.Descriptor, ns, name string) (registry.Object, error) {
	return l.s.rest.Get(d, ns, name)
}

func (l restLookup) List(d *registry.Descriptor, ns string) ([]registry.Object, int64, error) {
	return l.s.rest.List(d, ns)
}
