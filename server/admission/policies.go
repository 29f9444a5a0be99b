package admission

import (
	"sort"
	"sync"
	"sync/atomic"

	"platd/config"
	"platd/security"
	"platd/server/registry"
)

// Policies holds the ValidatingAdmissionPolicies and their bindings,
// compiled, and enforces them (Validate). A policy is compiled when it
// is first set and again only when its generation (or uid) changes. All
// methods are safe for concurrent use.
type Policies struct {
	reg    *registry.Registry
	lookup registry.Lookup
	authz  security.Authorizer
	brand  config.Brand

	mu       sync.RWMutex
	policies map[string]*policy
	bindings map[string]*binding
	// hooks is the sorted view Validate reads, rebuilt on change; nil
	// when stale.
	hooks []hook

	// equiv are the equivalent resources of each descriptor.
	equiv equivalences
}

// hook is a policy with its bindings, in name order.
type hook struct {
	policy   *policy
	bindings []*binding
}

// NewPolicies returns an empty set of policies. reg resolves parameter
// kinds; lookup reads parameters and namespaces; authz decides the
// checks of the expressions' authorizer (nil: every check errs).
func NewPolicies(reg *registry.Registry, lookup registry.Lookup, authz security.Authorizer, brand config.Brand) *Policies {
	return &Policies{reg: reg, lookup: lookup, authz: authz, brand: brand, equiv: equivalences{reg: reg},
		policies: map[string]*policy{}, bindings: map[string]*binding{}}
}

// SetPolicy adds or replaces a policy, given in its decoded form.
func (p *Policies) SetPolicy(obj registry.Object) {
	meta := mapAt(obj, "metadata")
	name := str(meta, "name")
	p.mu.RLock()
	old := p.policies[name]
	p.mu.RUnlock()
	if old != nil && old.uid == str(meta, "uid") && old.generation == registry.Int64(meta["generation"]) {
		return
	}
	compiled := compilePolicy(obj)
	p.mu.Lock()
	p.policies[name] = compiled
	p.hooks = nil
	p.mu.Unlock()
}

// DeletePolicy removes a policy.
func (p *Policies) DeletePolicy(name string) {
	p.mu.Lock()
	delete(p.policies, name)
	p.hooks = nil
	p.mu.Unlock()
}

// ReplacePolicies makes objs the only policies.
func (p *Policies) ReplacePolicies(objs []registry.Object) {
	keep := map[string]bool{}
	for _, o := range objs {
		keep[str(mapAt(o, "metadata"), "name")] = true
		p.SetPolicy(o)
	}
	p.mu.Lock()
	for name := range p.policies {
		if !keep[name] {
			delete(p.policies, name)
		}
	}
	p.hooks = nil
	p.mu.Unlock()
}

// SetBinding adds or replaces a binding, given in its decoded form.
func (p *Policies) SetBinding(obj registry.Object) {
	b := parseBinding(obj)
	p.mu.Lock()
	p.bindings[b.name] = b
	p.hooks = nil
	p.mu.Unlock()
}

// DeleteBinding removes a binding.
func (p *Policies) DeleteBinding(name string) {
	p.mu.Lock()
	delete(p.bindings, name)
	p.hooks = nil
	p.mu.Unlock()
}

// ReplaceBindings makes objs the only bindings.
func (p *Policies) ReplaceBindings(objs []registry.Object) {
	next := make(map[string]*binding, len(objs))
	for _, o := range objs {
		b := parseBinding(o)
		next[b.name] = b
	}
	p.mu.Lock()
	p.bindings = next
	p.hooks = nil
	p.mu.Unlock()
}

// snapshot returns the policies that have bindings, each with its
// bindings, in name order.
func (p *Policies) snapshot() []hook {
	p.mu.RLock()
	hooks := p.hooks
	p.mu.RUnlock()
	if hooks != nil {
		return hooks
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hooks != nil {
		return p.hooks
	}
	byPolicy := map[string][]*binding{}
	for _, b := range p.bindings {
		if _, ok := p.policies[b.policyName]; ok {
			byPolicy[b.policyName] = append(byPolicy[b.policyName], b)
		}
	}
	hooks = make([]hook, 0, len(byPolicy))
	for name, bs := range byPolicy {
		sort.Slice(bs, func(i, j int) bool { return bs[i].name < bs[j].name })
		hooks = append(hooks, hook{policy: p.policies[name], bindings: bs})
	}
	sort.Slice(hooks, func(i, j int) bool { return hooks[i].policy.name < hooks[j].policy.name })
	p.hooks = hooks
	return hooks
}

// equivalence maps each stored descriptor to the others sharing its
// stored form, as of registry generation gen. Immutable once built.
type equivalence struct {
	gen uint64
	of  map[*registry.Descriptor][]*registry.Descriptor
}

// equivalences computes the equivalent resources of each descriptor of
// a registry once per registry generation. Safe for concurrent use.
type equivalences struct {
	reg *registry.Registry
	mu  sync.Mutex
	cur atomic.Pointer[equivalence]
}

// of returns the other served versions of d's resource: the
// descriptors that share its stored form (upstream's equivalent
// resources), in the registry's order.
func (q *equivalences) of(d *registry.Descriptor) []*registry.Descriptor {
	gen := q.reg.Generation()
	if e := q.cur.Load(); e != nil && e.gen == gen {
		return e.of[d]
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if e := q.cur.Load(); e != nil && e.gen == gen {
		return e.of[d]
	}
	byPrefix := map[string][]*registry.Descriptor{}
	for _, e := range q.reg.All() {
		if e.Stored() {
			byPrefix[e.ResourcePrefix()] = append(byPrefix[e.ResourcePrefix()], e)
		}
	}
	e := &equivalence{gen: gen, of: map[*registry.Descriptor][]*registry.Descriptor{}}
	for _, group := range byPrefix {
		for _, x := range group {
			for _, y := range group {
				if x != y {
					e.of[x] = append(e.of[x], y)
				}
			}
		}
	}
	q.cur.Store(e)
	return e.of[d]
}

// equivalents returns the other served versions of d's resource.
func (p *Policies) equivalents(d *registry.Descriptor) []*registry.Descriptor { return p.equiv.of(d) }

// Empty reports whether no policy is bound: Validate then admits every
// request, and a caller may skip building its attributes.
func (p *Policies) Empty() bool { return len(p.snapshot()) == 0 }
