package server

import (
	"fmt"

	"platd/config"
	"platd/server/builtin"
	"platd/server/registry"
	"platd/server/schema"
)

// serviceRanges are the ranges services are allocated from.
func serviceRanges(o config.Options) builtin.ServiceRanges {
	if o.ServiceCIDR.IsValid() {
		return builtin.RangesFrom(o.ServiceCIDR, o.NodePorts)
	}
	return builtin.DefaultServiceRanges()
}

// enabledAPIs resolves --runtime-config against the built-in resources. It
// needs no schema, so a bad value stops platd before any work is done.
func enabledAPIs(o config.Options, described []*registry.Descriptor) (config.EnabledAPIs, error) {
	resources, namespaces := builtin.ResourcesOf(described)
	known := make([]config.KnownResource, len(resources))
	for i, r := range resources {
		// Every built-in type platd has is one v1.32 serves by default.
		known[i] = config.KnownResource{GroupVersionResource: r, EnabledByDefault: true}
	}
	enabled, err := o.APIEnablement.Resolve(known)
	if err != nil {
		return enabled, err
	}
	if !enabled.Resource(namespaces) {
		return enabled, fmt.Errorf("%w: --runtime-config: namespaces cannot be disabled: every namespaced object lives in one", config.ErrInvalid)
	}
	return enabled, nil
}

// servedRegistry describes every built-in type and keeps the enabled ones.
// Objects of a disabled version stay in the store; they are only not
// served.
func servedRegistry(cat *schema.Catalog, o config.Options, enabled config.EnabledAPIs, described []*registry.Descriptor) (*registry.Registry, error) {
	every := registry.New()
	if err := builtin.RegisterDescribed(every, cat, o.Brand, described); err != nil {
		return nil, err
	}
	reg := registry.New()
	// Groups and versions are listed in the order of their APIServices.
	reg.SetPriorities(builtin.APIServicePriorities(o.Brand))
	for _, d := range every.All() {
		if enabled.Resource(config.GroupVersionResource{Group: d.Group, Version: d.Version, Resource: d.Resource}) {
			reg.Add(d)
		}
	}
	return reg, nil
}
