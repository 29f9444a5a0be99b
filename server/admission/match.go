package admission

import (
	"slices"
	"strings"

	"platd/server/registry"
	"platd/server/selector"
)

// The rule scopes, as upstream names them.
const (
	scopeNamespaced = "Namespaced"
	scopeCluster    = "Cluster"
	scopeAll        = "*"
)

// matchResources is a policy's matchConstraints or a binding's
// matchResources.
type matchResources struct {
	nsSelector, objSelector selector.Labels
	// nsErr and objErr are selectors that do not parse: a request the
	// rules match fails with them.
	nsErr, objErr  error
	rules, exclude []rule
	// exact is matchPolicy Exact; otherwise (Equivalent) a request the
	// rules do not name matches through another version of its resource
	// that the rules name.
	exact bool
}

// rule is one NamedRuleWithOperations.
type rule struct {
	names                                   []string
	operations, groups, versions, resources []string
	scope                                   string
}

func parseMatchResources(m map[string]any) *matchResources {
	mr := &matchResources{exact: str(m, "matchPolicy") == matchPolicyExact}
	if sel, ok := m["namespaceSelector"].(map[string]any); ok {
		mr.nsSelector, mr.nsErr = selector.FromLabelSelector(sel)
	}
	if sel, ok := m["objectSelector"].(map[string]any); ok {
		mr.objSelector, mr.objErr = selector.FromLabelSelector(sel)
	}
	mr.rules = parseRules(m, "resourceRules")
	mr.exclude = parseRules(m, "excludeResourceRules")
	return mr
}

func parseRules(m map[string]any, key string) []rule {
	var out []rule
	for _, r := range mapsOf(m[key]) {
		out = append(out, rule{
			names: stringsAt(r, "resourceNames"), operations: stringsAt(r, "operations"),
			groups: stringsAt(r, "apiGroups"), versions: stringsAt(r, "apiVersions"),
			resources: stringsAt(r, "resources"), scope: str(r, "scope"),
		})
	}
	return out
}

// namespaceLabels reads the labels of a namespace.
type namespaceLabels func(name string) (labels map[string]string, err error)

// equivalents lists the other served versions of a resource: those that
// share its stored form.
type equivalents func(d *registry.Descriptor) []*registry.Descriptor

// matches reports whether a request falls under m, as upstream's
// matcher: the namespace and object selectors, then the exclusions and
// the rules. A selector error counts only for a request the rules match.
// It returns the version of the resource the rules matched: the
// request's own, or an equivalent one (nil when nothing matched).
func (m *matchResources) matches(a *Attributes, nsLabels namespaceLabels, equiv equivalents) (*registry.Descriptor, error) {
	nsOK, nsErr := m.matchNamespace(a, nsLabels)
	if !nsOK && nsErr == nil {
		return nil, nil
	}
	objOK, objErr := m.matchObject(a)
	if !objOK && objErr == nil {
		return nil, nil
	}
	if m.matchRules(m.exclude, a, equiv) != nil {
		return nil, nil
	}
	matched := a.Descriptor
	if len(m.rules) > 0 {
		if matched = m.matchRules(m.rules, a, equiv); matched == nil {
			return nil, nil
		}
	}
	if nsErr != nil {
		return nil, nsErr
	}
	if objErr != nil {
		return nil, objErr
	}
	return matched, nil
}

// matchNamespace applies the namespace selector: requests for
// cluster-scoped objects other than namespaces always pass it; a
// namespace being created or updated is judged by its new labels.
func (m *matchResources) matchNamespace(a *Attributes, nsLabels namespaceLabels) (bool, error) {
	ns := a.namespace()
	if ns == "" && !a.Descriptor.IsNamespace {
		return true, nil
	}
	if m.nsErr != nil {
		return false, m.nsErr
	}
	if m.nsSelector.Empty() {
		return true, nil
	}
	if a.Descriptor.IsNamespace && a.Subresource == "" && (a.Operation == OpCreate || a.Operation == OpUpdate) {
		l, _ := labels(a.Object)
		return m.nsSelector.Matches(l), nil
	}
	l, err := nsLabels(ns)
	if err != nil {
		return false, err
	}
	return m.nsSelector.Matches(l), nil
}

// matchObject applies the object selector to the new or the old object.
func (m *matchResources) matchObject(a *Attributes) (bool, error) {
	if m.objErr != nil {
		return false, m.objErr
	}
	if m.objSelector.Empty() {
		return true, nil
	}
	for _, obj := range []map[string]any{a.Object, a.OldObject} {
		if l, ok := labels(obj); ok && m.objSelector.Matches(l) {
			return true, nil
		}
	}
	return false, nil
}

// matchRules returns the version of the request's resource a rule
// matches (by resource and, when the rule names objects, by name): the
// request's own, or under Equivalent another resource sharing its
// stored form (another version, or the same resource served by another
// group, as core and events-group events); nil when none does.
func (m *matchResources) matchRules(rules []rule, a *Attributes, equiv equivalents) *registry.Descriptor {
	if len(rules) == 0 {
		return nil
	}
	for _, r := range rules {
		if r.matches(a, a.Descriptor) && r.matchName(a) {
			return a.Descriptor
		}
	}
	if m.exact || equiv == nil {
		return nil
	}
	others := equiv(a.Descriptor)
	for _, r := range rules {
		for _, e := range others {
			if a.Subresource != "" && e.Subresource(a.Subresource) == nil {
				continue
			}
			if r.matches(a, e) && r.matchName(a) {
				return e
			}
		}
	}
	return nil
}

func (r *rule) matchName(a *Attributes) bool {
	return len(r.names) == 0 || slices.Contains(r.names, a.Name)
}

// matches reports whether the rule matches the request as a request for
// d (the request's resource, or an equivalent version of it).
func (r *rule) matches(a *Attributes, d *registry.Descriptor) bool {
	return r.matchScope(a) && matchValue(r.operations, a.Operation, opAll) &&
		matchValue(r.groups, d.Group, "*") && matchValue(r.versions, d.Version, "*") && r.matchResource(d.Resource, a.Subresource)
}

func (r *rule) matchScope(a *Attributes) bool {
	switch r.scope {
	case "", scopeAll:
		return true
	case scopeNamespaced:
		return !a.Descriptor.IsNamespace && a.Namespace != ""
	case scopeCluster:
		return a.Descriptor.IsNamespace || a.Namespace == ""
	}
	return false
}

func matchValue(allowed []string, v, all string) bool {
	for _, x := range allowed {
		if x == all || x == v {
			return true
		}
	}
	return false
}

// matchResource matches "resource", "resource/subresource", with "*" for
// either part ("*" alone is every main resource, "*/*" everything).
func (r *rule) matchResource(resource, sub string) bool {
	for _, x := range r.resources {
		res, s, _ := strings.Cut(x, "/")
		if (res == "*" || res == resource) && (s == "*" || s == sub) {
			return true
		}
	}
	return false
}
