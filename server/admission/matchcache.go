package admission

import "platd/server/registry"

// matchCache holds what matching one request against many policies,
// bindings or webhooks reads once: the namespaces the request names and
// the resources equivalent to the request's. It lives for one request
// and is not safe for concurrent use.
type matchCache struct {
	reg    *registry.Registry
	lookup registry.Lookup
	equiv  *equivalences
	// own is the request's resource, whose equivalents are kept.
	own *registry.Descriptor

	namespaces  map[string]registry.Object
	ownEquiv    []*registry.Descriptor
	equivLoaded bool
}

// newMatchCache returns an empty cache for a request on resource own:
// lookup reads namespaces (of reg's namespace resource), equiv answers
// equivalent resources.
func newMatchCache(reg *registry.Registry, lookup registry.Lookup, equiv *equivalences, own *registry.Descriptor) *matchCache {
	return &matchCache{reg: reg, lookup: lookup, equiv: equiv, own: own}
}

// namespace returns the namespace called name, read once; nil when the
// registry serves no namespaces. A failed read is not kept.
func (c *matchCache) namespace(name string) (registry.Object, error) {
	if ns, ok := c.namespaces[name]; ok {
		return ns, nil
	}
	d := c.reg.Namespaces()
	if d == nil {
		return nil, nil
	}
	ns, err := c.lookup.Get(d, "", name)
	if err != nil {
		return nil, err
	}
	if c.namespaces == nil {
		c.namespaces = map[string]registry.Object{}
	}
	c.namespaces[name] = ns
	return ns, nil
}

// nsLabels returns the labels of the namespace called name; it is a
// namespaceLabels.
func (c *matchCache) nsLabels(name string) (map[string]string, error) {
	ns, err := c.namespace(name)
	if err != nil {
		return nil, err
	}
	l, _ := labels(ns)
	return l, nil
}

// equivalents returns the other served versions of d's resource, those
// of the request's own resource computed once; it is an equivalents.
func (c *matchCache) equivalents(d *registry.Descriptor) []*registry.Descriptor {
	if d != c.own {
		return c.equiv.of(d)
	}
	if !c.equivLoaded {
		c.ownEquiv, c.equivLoaded = c.equiv.of(d), true
	}
	return c.ownEquiv
}
