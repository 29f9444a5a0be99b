package security

import (
	"context"
	"strings"

	"platd/config"
)

// ABACNoMatchReason is the reason ABAC gives when no policy line matches.
const ABACNoMatchReason = "No policy matched."

// ABAC authorizes by an ABAC policy file's lines: the first line that
// matches allows the request; when none does it has no opinion. It never
// denies. The lines are fixed at construction (the file is read at start).
type ABAC struct {
	policies []config.ABACPolicy
}

// NewABAC returns the authorizer of policies, in file order. It keeps its
// own copy.
func NewABAC(policies []config.ABACPolicy) *ABAC {
	return &ABAC{policies: append([]config.ABACPolicy(nil), policies...)}
}

// Authorize allows a request the first matching line covers.
func (z *ABAC) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	for _, p := range z.policies {
		if abacSubject(p, a.User) && (!p.Readonly || readOnly(a.Verb)) && abacRequest(p, a) {
			return DecisionAllow, "", nil
		}
	}
	return DecisionNoOpinion, ABACNoMatchReason, nil
}

// RulesFor lists, for each line whose subject matches u and whose
// namespace is "*" or namespace, a resource rule when it names a resource
// and a non-resource rule when it names a path: verbs get, list and watch
// for a read-only line, "*" otherwise. The list is complete.
func (z *ABAC) RulesFor(_ context.Context, u *User, namespace string) (Rules, bool, error) {
	var r Rules
	for _, p := range z.policies {
		if !abacSubject(p, u) || (p.Namespace != "*" && p.Namespace != namespace) {
			continue
		}
		verbs := []string{"*"}
		if p.Readonly {
			verbs = []string{"get", "list", "watch"}
		}
		if p.Resource != "" {
			r.Resource = append(r.Resource, ResourceRule{Verbs: verbs, APIGroups: []string{p.APIGroup}, Resources: []string{p.Resource}})
		}
		if p.NonResourcePath != "" {
			r.NonResource = append(r.NonResource, NonResourceRule{Verbs: verbs, NonResourceURLs: []string{p.NonResourcePath}})
		}
	}
	return r, false, nil
}

// readOnly reports whether verb only reads.
func readOnly(verb string) bool { return verb == "get" || verb == "list" || verb == "watch" }

// abacSubject reports whether a line's user and group both match u (each
// when set; "*" matches anyone). A line with neither matches no one.
func abacSubject(p config.ABACPolicy, u *User) bool {
	if u == nil {
		return false
	}
	matched := false
	if p.User != "" {
		if p.User != "*" && p.User != u.Name {
			return false
		}
		matched = true
	}
	if p.Group != "" {
		if p.Group != "*" && !u.InGroup(p.Group) {
			return false
		}
		matched = true
	}
	return matched
}

// abacRequest matches the request's object or path: a resource request
// by namespace, resource (its subresource is not looked at) and API group,
// a non-resource request by exact path, "*" or a "prefix*".
func abacRequest(p config.ABACPolicy, a Attributes) bool {
	if a.ResourceRequest {
		return (p.Namespace == "*" || p.Namespace == a.Namespace) &&
			(p.Resource == "*" || p.Resource == a.Resource) &&
			(p.APIGroup == "*" || p.APIGroup == a.APIGroup)
	}
	path := p.NonResourcePath
	if path == "*" || path == a.Path {
		return true
	}
	prefix, ok := strings.CutSuffix(path, "*")
	return ok && strings.HasPrefix(a.Path, strings.TrimRight(prefix, "*"))
}
