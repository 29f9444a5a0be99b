package server

import (
	"context"

	"platd/config"
	"platd/server/admission"
	"platd/server/builtin"
	"platd/server/registry"
	"platd/server/rest"
)

// admissionChains assembles, from the admission plugins o enables, the
// validating and the mutating admission every write of every resource
// passes besides its type's own steps; nil for none. webhooks is
// returned nil when neither webhook plugin runs: then no webhook
// configuration is followed.
func (s *Server) admissionChains(o config.Options, policies *admission.Policies, webhooks *admission.Webhooks) (rest.PolicyAdmission, rest.MutatingAdmission, *admission.Webhooks) {
	on := o.AdmissionOff.Enabled
	if !on(config.PluginValidatingAdmissionPolicy) {
		policies = nil
	}
	validating := webhooks
	if !on(config.PluginValidatingAdmissionWebhook) {
		validating = nil
	}
	var checks []rest.PolicyAdmission
	if on(config.PluginNamespaceExists) {
		checks = append(checks, builtin.NewNamespaceExists(lookupServed(s.reg, "", "namespaces")))
	}
	if on(config.PluginOwnerReferencesPermissionEnforcement) {
		checks = append(checks, builtin.NewOwnerReferencesPermissionEnforcement(serverChain{s}, s.reg.ByKind))
	}
	var validate rest.PolicyAdmission
	if policies != nil || validating != nil || len(checks) > 0 {
		validate = validatingAdmission{checks: checks, policies: policies, webhooks: validating}
	}
	var mutators mutatingChain
	if on(config.PluginNodeRestriction) {
		mutators = append(mutators, builtin.NewNodeRestriction(o.Brand, lookupServed(s.reg, "", "pods"), lookupServed(s.reg, "", "nodes"),
			o.FeatureGates.Enabled(config.RecoverVolumeExpansionFailure)))
	}
	if webhooks != nil && on(config.PluginMutatingAdmissionWebhook) {
		mutators = append(mutators, webhooks)
	} else if validating == nil {
		webhooks = nil
	}
	if on(config.PluginAlwaysDeny) {
		mutators = append(mutators, builtin.AlwaysDeny{})
	}
	switch len(mutators) {
	case 0:
		return validate, nil, webhooks
	case 1:
		return validate, mutators[0], webhooks
	}
	return validate, mutators, webhooks
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

func (c mutatingChain) MayChange() bool {
	for _, m := range c {
		if m.MayChange() {
			return true
		}
	}
	return false
}

func (c mutatingChain) MutatingEmpty() bool {
	for _, m := range c {
		if !m.MutatingEmpty() {
			return false
		}
	}
	return true
}
