package registry

import (
	"sort"
	"sync"
)

// Registry is the set of served resource types. Lookups are safe for
// concurrent use with Add (custom resources are added at run time).
type Registry struct {
	mu    sync.RWMutex
	byGVR map[gvr]*Descriptor
	// groups lists group names in registration order, core ("") first.
	groups   []string
	versions map[string][]string
}

type gvr struct{ group, version, resource string }

// New returns an empty registry.
func New() *Registry {
	return &Registry{byGVR: map[gvr]*Descriptor{}, versions: map[string][]string{}}
}

// Add registers d, replacing any descriptor with the same group, version
// and resource.
func (r *Registry) Add(d *Descriptor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.versions[d.Group]; !ok {
		r.groups = append(r.groups, d.Group)
	}
	vs := r.versions[d.Group]
	found := false
	for _, v := range vs {
		if v == d.Version {
			found = true
		}
	}
	if !found {
		r.versions[d.Group] = append(vs, d.Version)
	}
	r.byGVR[gvr{d.Group, d.Version, d.Resource}] = d
}

// Lookup returns the descriptor of a resource, or nil.
func (r *Registry) Lookup(group, version, resource string) *Descriptor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byGVR[gvr{group, version, resource}]
}

// HasGroupVersion reports whether any resource is served in group/version.
func (r *Registry) HasGroupVersion(group, version string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, v := range r.versions[group] {
		if v == version {
			return true
		}
	}
	return false
}

// Groups returns the served group names in registration order; the core
// group is "".
func (r *Registry) Groups() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]string(nil), r.groups...)
}

// Versions returns the served versions of a group, preferred first.
func (r *Registry) Versions(group string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]string(nil), r.versions[group]...)
}

// Resources returns the descriptors of one group-version sorted by
// resource name.
func (r *Registry) Resources(group, version string) []*Descriptor {
	r.mu.RLock()
	var out []*Descriptor
	for k, d := range r.byGVR {
		if k.group == group && k.version == version {
			out = append(out, d)
		}
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}

// All returns every descriptor, sorted by group, version and resource.
func (r *Registry) All() []*Descriptor {
	r.mu.RLock()
	out := make([]*Descriptor, 0, len(r.byGVR))
	for _, d := range r.byGVR {
		out = append(out, d)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Resource < b.Resource
	})
	return out
}
