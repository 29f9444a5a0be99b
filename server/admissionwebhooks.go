package server

import (
	"context"
	"fmt"

	"platd/server/admission"
	"platd/server/controllers"
	"platd/server/registry"
	"platd/server/rest"
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

// validatingAdmission is the validating admission of every write, in
// upstream's plugin order: the built-in plugins that check every write
// (NamespaceExists), the ValidatingAdmissionPolicies, then the
// validating webhooks. Any may be nil.
type validatingAdmission struct {
	checks   []rest.PolicyAdmission
	policies *admission.Policies
	webhooks *admission.Webhooks
}

func (v validatingAdmission) Validate(ctx context.Context, a *admission.Attributes) error {
	for _, c := range v.checks {
		if err := c.Validate(ctx, a); err != nil {
			return err
		}
	}
	if v.policies != nil {
		if err := v.policies.Validate(ctx, a); err != nil {
			return err
		}
	}
	if v.webhooks != nil {
		return v.webhooks.Validate(ctx, a)
	}
	return nil
}

func (v validatingAdmission) Empty() bool {
	return len(v.checks) == 0 && (v.policies == nil || v.policies.Empty()) && (v.webhooks == nil || v.webhooks.ValidatingEmpty())
}

// mutatingChain runs mutating admissions in order, each seeing the
// object as the one before left it: the built-in plugins that see every
// write (NodeRestriction), the webhooks, then AlwaysDeny.
type mutatingChain []rest.MutatingAdmission

func (c mutatingChain) Mutate(ctx context.Context, a *admission.Attributes) (registry.Object, error) {
	var out registry.Object
	for _, m := range c {
		if m.MutatingEmpty() {
			continue
		}
		got, err := m.Mutate(ctx, a)
		if err != nil {
			return nil, err
		}
		if got != nil {
			out = got
			next := *a
			next.Object = got
			a = &next
		}
	}
	return out, nil
}

func (c mutatingChain) MutatingEmpty() bool {
	for _, m := range c {
		if !m.MutatingEmpty() {
			return false
		}
	}
	return true
}
