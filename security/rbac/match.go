package rbac

import (
	"strings"

	"platd/security"
)

// RuleAllows reports whether rule allows the request a.
func RuleAllows(a security.Attributes, rule *PolicyRule) bool {
	if !verbMatches(rule.Verbs, a.Verb) {
		return false
	}
	if !a.ResourceRequest {
		return nonResourceURLMatches(rule.NonResourceURLs, a.Path)
	}
	return groupMatches(rule.APIGroups, a.APIGroup) &&
		resourceMatches(rule.Resources, a.Resource, a.Subresource) &&
		resourceNameMatches(rule.ResourceNames, a.Name)
}

// RulesAllow reports whether any of rules allows the request a: for
// authorizers that hold a fixed rule list (the Node authorizer's
// system:node rules).
func RulesAllow(rules []PolicyRule, a security.Attributes) bool {
	for i := range rules {
		if RuleAllows(a, &rules[i]) {
			return true
		}
	}
	return false
}

// ResourceRulesAllow reports whether any of rules allows the resource
// request a, as a role holding them would: for authorizers over a fixed
// rule list (the Node authorizer's system:node rules). A non-resource
// request is never allowed.
func ResourceRulesAllow(rules []security.ResourceRule, a security.Attributes) bool {
	if !a.ResourceRequest {
		return false
	}
	for i := range rules {
		r := &rules[i]
		if verbMatches(r.Verbs, a.Verb) && groupMatches(r.APIGroups, a.APIGroup) &&
			resourceMatches(r.Resources, a.Resource, a.Subresource) && resourceNameMatches(r.ResourceNames, a.Name) {
			return true
		}
	}
	return false
}

func verbMatches(verbs []string, verb string) bool {
	for _, v := range verbs {
		if v == All || v == verb {
			return true
		}
	}
	return false
}

func groupMatches(groups []string, group string) bool {
	for _, g := range groups {
		if g == All || g == group {
			return true
		}
	}
	return false
}

// resourceMatches: "*" matches every resource and subresource; otherwise
// "resource" or "resource/sub" exactly, or "*/sub" for any resource's
// subresource sub. "pods/*" is no wildcard.
func resourceMatches(resources []string, resource, sub string) bool {
	for _, r := range resources {
		if r == All {
			return true
		}
		if sub == "" {
			if r == resource {
				return true
			}
			continue
		}
		if len(r) == len(resource)+1+len(sub) && strings.HasPrefix(r, resource) && r[len(resource)] == '/' && strings.HasSuffix(r, sub) {
			return true
		}
		if len(r) == len(sub)+2 && strings.HasPrefix(r, "*/") && strings.HasSuffix(r, sub) {
			return true
		}
	}
	return false
}

// resourceNameMatches: no names allows any object, and a request without
// a name (list, create) only that.
func resourceNameMatches(names []string, name string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// nonResourceURLMatches: "*", the exact path, or an entry ending in "*"
// whose text before the stars starts the path.
func nonResourceURLMatches(urls []string, path string) bool {
	for _, u := range urls {
		if u == All || u == path {
			return true
		}
		if strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimRight(u, "*")) {
			return true
		}
	}
	return false
}

// appliesTo returns the index of the first of b's subjects u is, or -1.
func appliesTo(u *security.User, b *Binding) int {
	for i := range b.Subjects {
		if subjectMatches(u, &b.Subjects[i], b.Namespace) {
			return i
		}
	}
	return -1
}

// subjectMatches: a User by name, a Group by membership, a ServiceAccount
// by its user name, its namespace defaulting to the binding's (none in a
// ClusterRoleBinding, which then matches nobody).
func subjectMatches(u *security.User, s *Subject, bindingNamespace string) bool {
	switch s.Kind {
	case KindUser:
		return u.Name == s.Name
	case KindGroup:
		return u.InGroup(s.Name)
	case KindServiceAccount:
		ns := serviceAccountNamespace(s, bindingNamespace)
		return ns != "" && u.Name == serviceAccountUser(ns, s.Name)
	}
	return false
}

func serviceAccountNamespace(s *Subject, bindingNamespace string) string {
	if s.Namespace != "" {
		return s.Namespace
	}
	return bindingNamespace
}

func serviceAccountUser(ns, name string) string {
	return serviceAccountPrefix + ns + ":" + name
}
