package server

import (
	"fmt"

	"platd/config"
	"platd/server/builtin"
	"platd/server/registry"
	"platd/server/schema"
)

// servedRegistry describes every built-in type and keeps the ones
// --runtime-config leaves served. Objects of a disabled version stay in the
// store; they are only not served.
func servedRegistry(cat *schema.Catalog, o config.Options) (*registry.Registry, error) {
	every := registry.New()
	ranges := builtin.DefaultServiceRanges()
	if o.ServiceCIDR.IsValid() {
		ranges = builtin.RangesFrom(o.ServiceCIDR, o.NodePorts)
	}
	if err := builtin.RegisterWith(every, cat, o.Brand, ranges); err != nil {
		return nil, err
	}
	all := every.All()
	known := make([]config.KnownResource, len(all))
	for i, d := range all {
		known[i] = config.KnownResource{
			GroupVersionResource: config.GroupVersionResource{Group: d.Group, Version: d.Version, Resource: d.Resource},
			// Every built-in type platd has is one v1.32 serves by default.
			EnabledByDefault: true,
		}
	}
	enabled, err := o.APIEnablement.Resolve(known)
	if err != nil {
		return nil, err
	}
	reg := registry.New()
	// Groups and versions are listed in the order of their APIServices.
	reg.SetPriorities(builtin.APIServicePriorities(o.Brand))
	for _, d := range all {
		if enabled.Resource(config.GroupVersionResource{Group: d.Group, Version: d.Version, Resource: d.Resource}) {
			reg.Add(d)
		}
	}
	if reg.Namespaces() == nil {
		return nil, fmt.Errorf("%w: --runtime-config: namespaces cannot be disabled: every namespaced object lives in one", config.ErrInvalid)
	}
	return reg, nil
}
