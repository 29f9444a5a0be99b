package rbac

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"platd/config"
	"platd/security"
)

// Authorizer decides requests from the roles and bindings it was given,
// and lists a user's rules. It allows or has no opinion, never denies.
// All methods are safe for concurrent use: decisions read under a shared
// lock, Put and Delete change the index under the exclusive one.
type Authorizer struct {
	// group is the rbac API group, as "not found" errors name it.
	group string

	mu    sync.RWMutex
	roles map[objectKey]*Role
	// bindings holds every binding by namespace and name, bySubject the
	// same bindings under each subject key that can match them.
	bindings  map[objectKey]*Binding
	bySubject map[subjectKey]map[*Binding]struct{}
}

// objectKey names a role or binding; Namespace is empty for the cluster
// kinds.
type objectKey struct{ namespace, name string }

// subjectKey is a user name (users and service accounts) or a group name,
// among the bindings of a namespace ("" for cluster role bindings).
type subjectKey struct {
	namespace string
	group     bool
	name      string
}

// New returns an empty Authorizer for brand b's rbac group.
func New(b config.Brand) *Authorizer {
	return &Authorizer{
		group:     b.Group("rbac.authorization"),
		roles:     map[objectKey]*Role{},
		bindings:  map[objectKey]*Binding{},
		bySubject: map[subjectKey]map[*Binding]struct{}{},
	}
}

// PutRole adds or replaces a role (a cluster role when r.Namespace is
// empty). r must not change afterwards.
func (a *Authorizer) PutRole(r *Role) {
	a.mu.Lock()
	a.roles[objectKey{r.Namespace, r.Name}] = r
	a.mu.Unlock()
}

// DeleteRole removes a role.
func (a *Authorizer) DeleteRole(namespace, name string) {
	a.mu.Lock()
	delete(a.roles, objectKey{namespace, name})
	a.mu.Unlock()
}

// ReplaceRoles makes roles the only roles of their scope: namespaced
// roles when namespaced is set, else cluster roles.
func (a *Authorizer) ReplaceRoles(namespaced bool, roles []*Role) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range a.roles {
		if (k.namespace != "") == namespaced {
			delete(a.roles, k)
		}
	}
	for _, r := range roles {
		a.roles[objectKey{r.Namespace, r.Name}] = r
	}
}

// PutBinding adds or replaces a binding (a cluster role binding when
// b.Namespace is empty). b must not change afterwards.
func (a *Authorizer) PutBinding(b *Binding) {
	a.mu.Lock()
	a.putBinding(b)
	a.mu.Unlock()
}

// DeleteBinding removes a binding.
func (a *Authorizer) DeleteBinding(namespace, name string) {
	a.mu.Lock()
	a.deleteBinding(objectKey{namespace, name})
	a.mu.Unlock()
}

// ReplaceBindings makes bindings the only bindings of their scope:
// role bindings when namespaced is set, else cluster role bindings.
func (a *Authorizer) ReplaceBindings(namespaced bool, bindings []*Binding) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range a.bindings {
		if (k.namespace != "") == namespaced {
			a.deleteBinding(k)
		}
	}
	for _, b := range bindings {
		a.putBinding(b)
	}
}

func (a *Authorizer) putBinding(b *Binding) {
	k := objectKey{b.Namespace, b.Name}
	a.deleteBinding(k)
	a.bindings[k] = b
	b.reasons = make([]string, len(b.Subjects))
	for i := range b.Subjects {
		b.reasons[i] = "RBAC: allowed by " + describe(b, &b.Subjects[i])
	}
	for _, sk := range subjectKeys(b) {
		set := a.bySubject[sk]
		if set == nil {
			set = map[*Binding]struct{}{}
			a.bySubject[sk] = set
		}
		set[b] = struct{}{}
	}
}

func (a *Authorizer) deleteBinding(k objectKey) {
	b, ok := a.bindings[k]
	if !ok {
		return
	}
	delete(a.bindings, k)
	for _, sk := range subjectKeys(b) {
		if set := a.bySubject[sk]; set != nil {
			delete(set, b)
			if len(set) == 0 {
				delete(a.bySubject, sk)
			}
		}
	}
}

// subjectKeys are the index keys a binding is found under: the user
// name a User or ServiceAccount subject matches, or a group name.
func subjectKeys(b *Binding) []subjectKey {
	keys := make([]subjectKey, 0, len(b.Subjects))
	for i := range b.Subjects {
		s := &b.Subjects[i]
		switch s.Kind {
		case KindUser:
			keys = append(keys, subjectKey{b.Namespace, false, s.Name})
		case KindGroup:
			keys = append(keys, subjectKey{b.Namespace, true, s.Name})
		case KindServiceAccount:
			if ns := serviceAccountNamespace(s, b.Namespace); ns != "" {
				keys = append(keys, subjectKey{b.Namespace, false, serviceAccountUser(ns, s.Name)})
			}
		}
	}
	return keys
}

// candidates appends to buf the bindings of namespace (the cluster role
// bindings for "") that may apply to u, once each, ordered by name.
// The caller holds the read lock.
func (a *Authorizer) candidates(buf []*Binding, namespace string, u *security.User) []*Binding {
	start := len(buf)
	buf = a.addCandidates(buf, start, subjectKey{namespace, false, u.Name})
	for _, g := range u.Groups {
		buf = a.addCandidates(buf, start, subjectKey{namespace, true, g})
	}
	if len(buf)-start > 1 {
		slices.SortFunc(buf[start:], func(x, y *Binding) int { return cmp.Compare(x.Name, y.Name) })
	}
	return buf
}

func (a *Authorizer) addCandidates(buf []*Binding, start int, k subjectKey) []*Binding {
	for b := range a.bySubject[k] {
		if !slices.Contains(buf[start:], b) {
			buf = append(buf, b)
		}
	}
	return buf
}

// roleRules returns the rules of the role b grants. The caller holds the
// read lock.
func (a *Authorizer) roleRules(b *Binding) ([]PolicyRule, error) {
	return a.refRules(b.RoleRef, b.Namespace)
}

func (a *Authorizer) refRules(ref RoleRef, namespace string) ([]PolicyRule, error) {
	switch ref.Kind {
	case KindRole:
		r, ok := a.roles[objectKey{namespace, ref.Name}]
		if !ok || namespace == "" {
			return nil, &NotFoundError{Resource: "role." + a.group, Name: ref.Name}
		}
		return r.Rules, nil
	case KindClusterRole:
		r, ok := a.roles[objectKey{"", ref.Name}]
		if !ok {
			return nil, &NotFoundError{Resource: "clusterrole." + a.group, Name: ref.Name}
		}
		return r.Rules, nil
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// RoleRefRules returns the rules of the role a binding in namespace
// ("" for a cluster role binding) refers to by ref, or why there are none.
func (a *Authorizer) RoleRefRules(ref RoleRef, namespace string) ([]PolicyRule, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	rules, err := a.refRules(ref, namespace)
	return slices.Clone(rules), err
}

// NotFoundError is a binding's reference to a role that does not exist.
type NotFoundError struct {
	// Resource is "<role|clusterrole>.<rbac group>".
	Resource, Name string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %q not found", e.Resource, e.Name) }

// candidateBuffer is how many bindings a decision finds without
// allocating: a user is rarely bound more often than that.
const candidateBuffer = 16

// Authorize allows a request that a rule of a role bound to the user (by
// a cluster role binding, or a role binding of the request's namespace)
// allows; otherwise it has no opinion, with the roles it could not find
// as the reason.
func (a *Authorizer) Authorize(_ context.Context, attr security.Attributes) (security.Decision, string, error) {
	u := attr.User
	if u == nil {
		u = &security.User{}
	}
	var errs []error
	var arr [candidateBuffer]*Binding
	a.mu.RLock()
	defer a.mu.RUnlock()
	for i, ns := range scopes(attr.Namespace) {
		if i > 0 && ns == "" {
			break
		}
		for _, b := range a.candidates(arr[:0], ns, u) {
			s := appliesTo(u, b)
			if s < 0 {
				continue
			}
			rules, err := a.roleRules(b)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if RulesAllow(rules, attr) {
				return security.DecisionAllow, b.reasons[s], nil
			}
		}
	}
	if len(errs) > 0 {
		return security.DecisionNoOpinion, "RBAC: " + aggregate(errs), nil
	}
	return security.DecisionNoOpinion, "", nil
}

// scopes are the binding namespaces that apply to a request namespace:
// the cluster's, then the namespace's.
func scopes(namespace string) [2]string { return [2]string{"", namespace} }

// describe names the binding and subject that allowed a request, as
// upstream's allow reason does.
func describe(b *Binding, s *Subject) string {
	subject := fmt.Sprintf("%s %q", s.Kind, s.Name)
	if s.Kind == KindServiceAccount {
		subject = fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+serviceAccountNamespace(s, b.Namespace))
	}
	if b.Namespace == "" {
		return fmt.Sprintf("ClusterRoleBinding %q of %s %q to %s", b.Name, b.RoleRef.Kind, b.RoleRef.Name, subject)
	}
	return fmt.Sprintf("RoleBinding %q of %s %q to %s", b.Name+"/"+b.Namespace, b.RoleRef.Kind, b.RoleRef.Name, subject)
}

// PolicyRulesFor returns the rules of every role bound to u by a cluster
// role binding, then by a role binding of namespace, in binding name
// order. Roles that are missing are reported in the error, and the
// rules found returned all the same.
func (a *Authorizer) PolicyRulesFor(u *security.User, namespace string) ([]PolicyRule, error) {
	if u == nil {
		u = &security.User{}
	}
	var rules []PolicyRule
	var errs []error
	a.mu.RLock()
	defer a.mu.RUnlock()
	for i, ns := range scopes(namespace) {
		if i > 0 && ns == "" {
			break
		}
		for _, b := range a.candidates(nil, ns, u) {
			if appliesTo(u, b) < 0 {
				continue
			}
			rs, err := a.roleRules(b)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			rules = append(rules, rs...)
		}
	}
	if len(errs) > 0 {
		return rules, errors.New(aggregate(errs))
	}
	return rules, nil
}

// RulesFor lists u's rules in namespace as a rules review reports them:
// each policy rule as a resource rule when it names resources and as a
// non-resource rule when it names URLs. The list is complete.
func (a *Authorizer) RulesFor(_ context.Context, u *security.User, namespace string) (security.Rules, bool, error) {
	rules, err := a.PolicyRulesFor(u, namespace)
	var out security.Rules
	for _, r := range rules {
		if len(r.Resources) > 0 {
			out.Resource = append(out.Resource, security.ResourceRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
		}
		if len(r.NonResourceURLs) > 0 {
			out.NonResource = append(out.NonResource, security.NonResourceRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
		}
	}
	return out, false, err
}

// aggregate renders errors as upstream's error list does: one error as
// itself, several (repeated messages once) as "[a, b]".
func aggregate(errs []error) string {
	var msgs []string
	for _, e := range errs {
		if m := e.Error(); !slices.Contains(msgs, m) {
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}
