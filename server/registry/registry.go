package registry

import (
	"slices"
	"sort"
	"sync"
)

// Registry is the set of served resource types. Lookups are safe for
// concurrent use with Add (custom resources are added at run time).
type Registry struct {
	mu    sync.RWMutex
	byGVR map[gvr]*Descriptor
	// byGVK finds a served descriptor by kind (owner references name
	// kinds); byPrefix finds the stored form of a key's resource.
	byGVK    map[gvr]*Descriptor
	byPrefix map[string]*Descriptor
	// namespaces is the descriptor marked IsNamespace.
	namespaces *Descriptor
	// quotas is the descriptor marked IsQuota.
	quotas *Descriptor
	// priority orders groups and versions (SetPriorities).
	priority func(group, version string) (Priority, bool)
	// groups lists group names in registration order, core ("") first.
	groups   []string
	versions map[string][]string
	// generation counts changes, for Generation and Snapshot.
	generation uint64
	// retired holds the channels Retired handed out, by descriptor.
	retired map[*Descriptor]chan struct{}
}

type gvr struct{ group, version, resource string }

// New returns an empty registry.
func New() *Registry {
	return &Registry{byGVR: map[gvr]*Descriptor{}, byGVK: map[gvr]*Descriptor{}, byPrefix: map[string]*Descriptor{}, versions: map[string][]string{}}
}

// Add registers d, replacing any descriptor with the same group, version
// and resource.
func (r *Registry) Add(d *Descriptor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addLocked(d)
	r.generation++
}

// Replace removes the descriptors old and adds add as one change: the
// resources of one custom resource definition come and go together, and
// derived documents never see half of them.
func (r *Registry) Replace(old, add []*Descriptor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range old {
		r.removeLocked(d)
	}
	for _, d := range add {
		r.addLocked(d)
	}
	r.generation++
}

func (r *Registry) addLocked(d *Descriptor) {
	if _, ok := r.versions[d.Group]; !ok {
		r.groups = append(r.groups, d.Group)
	}
	if vs := r.versions[d.Group]; !slices.Contains(vs, d.Version) {
		r.versions[d.Group] = append(vs, d.Version)
	}
	k := gvr{d.Group, d.Version, d.Resource}
	if old := r.byGVR[k]; old != nil && old != d {
		r.retireLocked(old)
	}
	r.byGVR[k] = d
	r.byGVK[gvr{d.Group, d.Version, d.Kind}] = d
	if d.Storage == nil {
		r.byPrefix[d.ResourcePrefix()] = d
	} else if _, ok := r.byPrefix[d.ResourcePrefix()]; !ok {
		// The stored form may be a version that is not served.
		r.byPrefix[d.ResourcePrefix()] = d.Storage.Descriptor
	}
	if d.IsNamespace {
		r.namespaces = d
	}
	if d.IsQuota {
		r.quotas = d
	}
}

// removeLocked drops d, if it is still the registered descriptor of its
// resource, and the group-version it leaves empty.
func (r *Registry) removeLocked(d *Descriptor) {
	k := gvr{d.Group, d.Version, d.Resource}
	if r.byGVR[k] != d {
		return
	}
	r.retireLocked(d)
	delete(r.byGVR, k)
	if kk := (gvr{d.Group, d.Version, d.Kind}); r.byGVK[kk] == d {
		delete(r.byGVK, kk)
	}
	if p := d.ResourcePrefix(); r.byPrefix[p] == d || d.Storage != nil && r.byPrefix[p] == d.Storage.Descriptor {
		delete(r.byPrefix, p)
	}
	for other := range r.byGVR {
		if other.group == d.Group && other.version == d.Version {
			return
		}
	}
	vs := slices.DeleteFunc(slices.Clone(r.versions[d.Group]), func(v string) bool { return v == d.Version })
	if len(vs) > 0 {
		r.versions[d.Group] = vs
		return
	}
	delete(r.versions, d.Group)
	r.groups = slices.DeleteFunc(r.groups, func(g string) bool { return g == d.Group })
}

// Retired returns a channel closed once d is no longer served (replaced or
// removed: its CRD changed or went), already closed when d is not served.
// Long-running requests of d, watches, end on it as upstream ends them
// when it tears a custom resource's storage down; clients then watch the
// resource again as it is now served, or learn that it is gone.
func (r *Registry) Retired(d *Descriptor) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byGVR[gvr{d.Group, d.Version, d.Resource}] != d {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	ch, ok := r.retired[d]
	if !ok {
		if r.retired == nil {
			r.retired = map[*Descriptor]chan struct{}{}
		}
		ch = make(chan struct{})
		r.retired[d] = ch
	}
	return ch
}

// Succeed is Replace for descriptors that serve the same objects as the
// old ones they follow (a CRD being deleted refusing creates): what
// Retired handed out for an old descriptor passes to its successor of the
// same resource instead of closing.
func (r *Registry) Succeed(old, add []*Descriptor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	carried := map[gvr]chan struct{}{}
	for _, d := range old {
		if ch, ok := r.retired[d]; ok && r.byGVR[gvr{d.Group, d.Version, d.Resource}] == d {
			carried[gvr{d.Group, d.Version, d.Resource}] = ch
			delete(r.retired, d)
		}
	}
	for _, d := range old {
		r.removeLocked(d)
	}
	for _, d := range add {
		r.addLocked(d)
		k := gvr{d.Group, d.Version, d.Resource}
		if ch, ok := carried[k]; ok {
			r.retired[d] = ch
			delete(carried, k)
		}
	}
	for _, ch := range carried {
		close(ch)
	}
	r.generation++
}

// retireLocked closes the channel Retired handed out for d, if any.
func (r *Registry) retireLocked(d *Descriptor) {
	if ch, ok := r.retired[d]; ok {
		close(ch)
		delete(r.retired, d)
	}
}

// ByKind returns the served descriptor of a kind, or nil.
func (r *Registry) ByKind(group, version, kind string) *Descriptor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byGVK[gvr{group, version, kind}]
}

// ByKey returns the descriptor of the stored form a key belongs to, with
// the key's namespace and name; d is nil for a key no registered resource
// stores.
func (r *Registry) ByKey(key string) (d *Descriptor, ns, name string) {
	r.mu.RLock()
	d = r.byPrefix[resourceOfKey(key)]
	r.mu.RUnlock()
	if d == nil {
		return nil, "", ""
	}
	ns, name, ok := d.SplitKey(key)
	if !ok {
		return nil, "", ""
	}
	return d, ns, name
}

// Namespaces returns the descriptor of namespaces, or nil before it is
// registered.
func (r *Registry) Namespaces() *Descriptor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namespaces
}

// Quotas returns the descriptor of ResourceQuotas, or nil when none is
// registered.
func (r *Registry) Quotas() *Descriptor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.quotas
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

// Groups returns the served group names in priority order; the core
// group is "" and comes first.
func (r *Registry) Groups() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	groups, _ := r.orderLocked()
	return groups
}

// Versions returns the served versions of a group, preferred first.
func (r *Registry) Versions(group string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	groups, versions := r.orderLocked()
	if i := slices.Index(groups, group); i >= 0 {
		return versions[i]
	}
	return nil
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

// Snapshot is a consistent view of the registry: what derived documents
// (discovery, OpenAPI) are built from.
type Snapshot struct {
	// Generation changes whenever a descriptor is added or replaced.
	Generation uint64
	// Groups are the group names in priority order, core first.
	Groups []string
	// Versions holds each group's versions, preferred first, in Groups
	// order.
	Versions [][]string
	// Descriptors are sorted by group, version and resource.
	Descriptors []*Descriptor
}

// Generation returns a number that changes whenever the set of
// descriptors does; comparing it is how caches of derived documents stay
// current without rebuilding them.
func (r *Registry) Generation() uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.generation
}

// Snapshot returns the current state.
func (r *Registry) Snapshot() Snapshot {
	r.mu.RLock()
	s := Snapshot{Generation: r.generation}
	s.Groups, s.Versions = r.orderLocked()
	r.mu.RUnlock()
	s.Descriptors = r.All()
	return s
}

// Resources returns the descriptors of one group-version of the snapshot,
// sorted by resource.
func (s Snapshot) Resources(group, version string) []*Descriptor {
	var out []*Descriptor
	for _, d := range s.Descriptors {
		if d.Group == group && d.Version == version {
			out = append(out, d)
		}
	}
	return out
}

// ByGroupVersion splits the descriptors per group and version, each list
// sorted by resource.
func (s Snapshot) ByGroupVersion() map[string]map[string][]*Descriptor {
	out := map[string]map[string][]*Descriptor{}
	for _, d := range s.Descriptors {
		if out[d.Group] == nil {
			out[d.Group] = map[string][]*Descriptor{}
		}
		out[d.Group][d.Version] = append(out[d.Group][d.Version], d)
	}
	return out
}
