package controllers

import (
	"context"
	"log/slog"

	"platd/server/admission"
	"platd/server/registry"
)

// AdmissionPolicies keeps the enforced ValidatingAdmissionPolicies and
// bindings what the store holds: Load reads them before the first
// request, Run follows the store's watch.
type AdmissionPolicies struct {
	Source   Source
	Policies *admission.Policies
	// Policy and Binding are the descriptors of the followed resources.
	Policy, Binding *registry.Descriptor
	Log             *slog.Logger

	m *mirror
}

func (c *AdmissionPolicies) mirror() *mirror {
	if c.m == nil {
		p := c.Policies
		c.m = &mirror{source: c.Source, log: c.Log, what: "admission policies", kinds: []mirrored{
			{d: c.Policy, replace: p.ReplacePolicies, set: p.SetPolicy, delete: p.DeletePolicy},
			{d: c.Binding, replace: p.ReplaceBindings, set: p.SetBinding, delete: p.DeleteBinding},
		}}
	}
	return c.m
}

// Load hands every stored policy and binding to Policies.
func (c *AdmissionPolicies) Load() error { return c.mirror().load() }

// Run follows the changes of policies and bindings from what Load read
// until ctx ends.
func (c *AdmissionPolicies) Run(ctx context.Context) { c.mirror().run(ctx) }
