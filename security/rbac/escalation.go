package rbac

import (
	"fmt"
	"slices"
	"strings"

	"platd/security"
)

// FullAuthority is every verb on everything: what a user must hold to
// write an aggregating cluster role, which can gather any rule.
var FullAuthority = []PolicyRule{
	{Verbs: []string{All}, APIGroups: []string{All}, Resources: []string{All}},
	{Verbs: []string{All}, NonResourceURLs: []string{All}},
}

// Covers reports whether owner's rules cover every rule of requested,
// and returns the single-permission rules they do not cover, in the order
// requested names them.
func Covers(owner, requested []PolicyRule) (bool, []PolicyRule) {
	var missing []PolicyRule
	for _, r := range requested {
		// A rule one owner rule covers whole has every part covered:
		// it is not broken down.
		if slices.ContainsFunc(owner, func(o PolicyRule) bool { return coversWhole(&o, &r) }) {
			continue
		}
		for _, sub := range Breakdown(r) {
			if !slices.ContainsFunc(owner, func(o PolicyRule) bool { return ruleCovers(&o, &sub) }) {
				missing = append(missing, sub)
			}
		}
	}
	return len(missing) == 0, missing
}

// Breakdown splits a rule into rules of one verb on one group and
// resource (and one name when it names objects), then one verb on one
// URL.
func Breakdown(r PolicyRule) []PolicyRule {
	var subs []PolicyRule
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				if len(r.ResourceNames) == 0 {
					subs = append(subs, PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}})
					continue
				}
				for _, n := range r.ResourceNames {
					subs = append(subs, PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}, ResourceNames: []string{n}})
				}
			}
		}
	}
	for _, u := range r.NonResourceURLs {
		for _, v := range r.Verbs {
			subs = append(subs, PolicyRule{NonResourceURLs: []string{u}, Verbs: []string{v}})
		}
	}
	return subs
}

// coversWhole reports whether owner covers every part Breakdown splits r
// into. The URL parts name no objects, which an owner naming objects does
// not cover: such an owner answers for r whole only without URLs.
func coversWhole(owner, r *PolicyRule) bool {
	if len(owner.ResourceNames) > 0 && len(r.NonResourceURLs) > 0 {
		return false
	}
	return ruleCovers(owner, r)
}

// ruleCovers reports whether owner allows everything sub does.
func ruleCovers(owner, sub *PolicyRule) bool {
	return coversAll(owner.Verbs, sub.Verbs) &&
		coversAll(owner.APIGroups, sub.APIGroups) &&
		resourcesCover(owner.Resources, sub.Resources) &&
		urlsCover(owner.NonResourceURLs, sub.NonResourceURLs) &&
		namesCover(owner.ResourceNames, sub.ResourceNames)
}

// coversAll: "*" covers anything, else each value must be listed.
func coversAll(set, values []string) bool {
	if slices.Contains(set, All) {
		return true
	}
	for _, v := range values {
		if !slices.Contains(set, v) {
			return false
		}
	}
	return true
}

// resourcesCover: "*", the resource itself, or for "r/sub" also "*/sub".
func resourcesCover(set, resources []string) bool {
	if coversAll(set, resources) {
		return true
	}
	for _, r := range resources {
		if slices.Contains(set, r) {
			continue
		}
		_, sub, ok := strings.Cut(r, "/")
		if !ok || !slices.Contains(set, "*/"+sub) {
			return false
		}
	}
	return true
}

func urlsCover(set, urls []string) bool {
	for _, u := range urls {
		if !slices.ContainsFunc(set, func(o string) bool {
			return o == u || strings.HasSuffix(o, "*") && strings.HasPrefix(u, strings.TrimRight(o, "*"))
		}) {
			return false
		}
	}
	return true
}

// namesCover: an owner naming no objects covers all; one naming some
// covers only requests for those, never a request for all.
func namesCover(owner, names []string) bool {
	if len(owner) == 0 {
		return true
	}
	if len(names) == 0 {
		return false
	}
	for _, n := range names {
		if !slices.Contains(owner, n) {
			return false
		}
	}
	return true
}

// Compact merges simple rules (one group, one resource, at most one name,
// verbs) on the same group, resource and name into one rule whose verbs
// are theirs in order; other rules are kept as they are, first.
func Compact(rules []PolicyRule) []PolicyRule {
	type simple struct {
		group, resource string
		named           bool
		name            string
	}
	var out []PolicyRule
	var order []simple
	merged := map[simple]*PolicyRule{}
	for _, r := range rules {
		if len(r.ResourceNames) > 1 || len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 {
			out = append(out, r)
			continue
		}
		k := simple{group: r.APIGroups[0], resource: r.Resources[0], named: len(r.ResourceNames) == 1}
		if k.named {
			k.name = r.ResourceNames[0]
		}
		if m, ok := merged[k]; ok {
			m.Verbs = append(m.Verbs, r.Verbs...)
			continue
		}
		c := PolicyRule{Verbs: slices.Clone(r.Verbs), APIGroups: slices.Clone(r.APIGroups), Resources: slices.Clone(r.Resources), ResourceNames: slices.Clone(r.ResourceNames)}
		merged[k] = &c
		order = append(order, k)
	}
	for _, k := range order {
		out = append(out, *merged[k])
	}
	return out
}

// CompactString renders a rule as upstream's escalation errors list it:
// {APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}, with
// only the fields that are set.
func CompactString(r PolicyRule) string {
	var parts []string
	field := func(name string, v []string) {
		if len(v) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", name, v))
		}
	}
	field("APIGroups", r.APIGroups)
	field("Resources", r.Resources)
	field("NonResourceURLs", r.NonResourceURLs)
	field("ResourceNames", r.ResourceNames)
	field("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}

// ConfirmNoEscalation checks that owner, the rules u holds (resolveErr
// being what went wrong finding them), cover requested. The error text is
// upstream's: the uncovered permissions compacted, one per line, sorted.
func ConfirmNoEscalation(u *security.User, owner []PolicyRule, resolveErr error, requested []PolicyRule) error {
	ok, missing := Covers(owner, requested)
	if ok {
		return nil
	}
	var lines []string
	for _, r := range Compact(missing) {
		if s := CompactString(r); !slices.Contains(lines, s) {
			lines = append(lines, s)
		}
	}
	slices.Sort(lines)
	var name string
	var groups []string
	if u != nil {
		name, groups = u.Name, u.Groups
	}
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", name, groups, strings.Join(lines, "\n"))
	if resolveErr != nil {
		msg += fmt.Sprintf("; resolution errors: [%v]", resolveErr)
	}
	return &EscalationError{msg}
}

// EscalationError is a write that would grant permissions the writer
// does not hold.
type EscalationError struct{ msg string }

func (e *EscalationError) Error() string { return e.msg }
