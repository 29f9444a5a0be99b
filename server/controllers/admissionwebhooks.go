package controllers

import (
	"context"
	"log/slog"

	"platd/server/admission"
	"platd/server/registry"
)

// AdmissionWebhooks keeps the called admission webhooks what the stored
// webhook configurations say: Load reads them before the first request,
// Run follows the store's watch.
type AdmissionWebhooks struct {
	Source   Source
	Webhooks *admission.Webhooks
	// Validating and Mutating are the descriptors of the followed
	// configurations.
	Validating, Mutating *registry.Descriptor
	Log                  *slog.Logger

	m *mirror
}

func (c *AdmissionWebhooks) mirror() *mirror {
	if c.m == nil {
		w := c.Webhooks
		kind := func(d *registry.Descriptor, mutating bool) mirrored {
			return mirrored{d: d,
				replace: func(objs []registry.Object) { w.ReplaceConfigs(mutating, objs) },
				set:     func(obj registry.Object) { w.SetConfig(mutating, obj) },
				delete:  func(name string) { w.DeleteConfig(mutating, name) }}
		}
		c.m = &mirror{source: c.Source, log: c.Log, what: "admission webhooks",
			kinds: []mirrored{kind(c.Validating, false), kind(c.Mutating, true)}}
	}
	return c.m
}

// Load hands every stored webhook configuration to Webhooks.
func (c *AdmissionWebhooks) Load() error { return c.mirror().load() }

// Run follows the changes of the configurations from what Load read
// until ctx ends, then closes the webhooks' idle connections.
func (c *AdmissionWebhooks) Run(ctx context.Context) {
	c.mirror().run(ctx)
	c.Webhooks.CloseIdle()
}
