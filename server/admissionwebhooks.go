package server

import (
	"fmt"

	"platd/server/admission"
	"platd/server/controllers"
	"platd/server/registry"
)

// admissionWebhooks returns the caller of the admission webhooks when
// the webhook configurations are served (nil otherwise). Its
// configurations are loaded by followWebhooks.
func (s *Server) admissionWebhooks() *admission.Webhooks {
	validating, mutating := s.webhookConfigurations()
	if validating == nil || mutating == nil {
		return nil
	}
	return admission.NewWebhooks(s.reg, restLookup{s}, serverChain{s}, s.opts.Brand)
}

// webhookConfigurations are the descriptors of the v1 validating and
// mutating webhook configurations.
func (s *Server) webhookConfigurations() (validating, mutating *registry.Descriptor) {
	g := s.opts.Brand.Group("admissionregistration")
	return s.reg.Lookup(g, "v1", "validatingwebhookconfigurations"), s.reg.Lookup(g, "v1", "mutatingwebhookconfigurations")
}

// followWebhooks loads the stored webhook configurations into w before
// the first request and follows the store with them from when the
// server serves.
func (s *Server) followWebhooks(w *admission.Webhooks) error {
	validating, mutating := s.webhookConfigurations()
	c := &controllers.AdmissionWebhooks{Source: s.store, Webhooks: w, Log: s.log, Validating: validating, Mutating: mutating}
	if err := c.Load(); err != nil {
		return fmt.Errorf("loading the admission webhook configurations: %w", err)
	}
	s.background.run(c.Run)
	return nil
}
