package security

import (
	"context"
	"errors"
	"strings"
)

// Attributes describe one request for authorization. Resource requests set
// ResourceRequest and the API fields; non-resource requests set Path.
type Attributes struct {
	User            *User
	Verb            string
	Namespace       string
	APIGroup        string
	APIVersion      string
	Resource        string
	Subresource     string
	Name            string
	Path            string
	ResourceRequest bool
	// FieldSelector and LabelSelector are the parsed selectors of a list,
	// watch or deletecollection that has them (upstream's
	// AuthorizeWithSelectors): authorizers may allow a narrower read.
	FieldSelector, LabelSelector []SelectorRequirement
}

// SelectorRequirement is one term of a field or label selector. Operator is
// "In", "NotIn", "Exists" or "DoesNotExist", as in SubjectAccessReview.
type SelectorRequirement struct {
	Key      string
	Operator string
	Values   []string
}

// Decision is an authorizer's verdict.
type Decision int

// Decisions. NoOpinion lets the next authorizer decide; Allow and Deny are
// final.
const (
	DecisionNoOpinion Decision = iota
	DecisionAllow
	DecisionDeny
)

// String returns the lower-case decision name used in logs and audit.
func (d Decision) String() string {
	switch d {
	case DecisionAllow:
		return "allow"
	case DecisionDeny:
		return "deny"
	default:
		return "no opinion"
	}
}

// Authorizer decides whether a request may proceed. The string is a
// human-readable reason appended to the 403 message when not empty; an
// error means the decision could not be made reliably. Implementations are
// safe for concurrent use.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (Decision, string, error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, a Attributes) (Decision, string, error)

// Authorize calls f.
func (f AuthorizerFunc) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	return f(ctx, a)
}

// RuleResolver lists what a user may do in a namespace, as
// SelfSubjectRulesReview reports it. incomplete says the list may miss
// rules the authorizer would allow (a webhook cannot list them).
type RuleResolver interface {
	RulesFor(ctx context.Context, u *User, namespace string) (rules Rules, incomplete bool, err error)
}

// Rules are the resource and non-resource rules of a rules review.
type Rules struct {
	Resource    []ResourceRule
	NonResource []NonResourceRule
}

// ResourceRule allows verbs on resources of API groups, optionally only on
// the named objects.
type ResourceRule struct {
	Verbs, APIGroups, Resources, ResourceNames []string
}

// NonResourceRule allows verbs on URL paths; an entry ending in "*" is a
// prefix.
type NonResourceRule struct {
	Verbs, NonResourceURLs []string
}

// AlwaysAllow allows every request.
type AlwaysAllow struct{}

// Authorize returns DecisionAllow.
func (AlwaysAllow) Authorize(context.Context, Attributes) (Decision, string, error) {
	return DecisionAllow, "", nil
}

// RulesFor allows everything.
func (AlwaysAllow) RulesFor(context.Context, *User, string) (Rules, bool, error) {
	return Rules{
		Resource:    []ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		NonResource: []NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
	}, false, nil
}

// AlwaysDenyReason is the reason AlwaysDeny gives; it ends up in the 403
// message.
const AlwaysDenyReason = "Everything is forbidden."

// AlwaysDeny has no opinion on any request and says so, so a chain of only
// AlwaysDeny forbids everything with AlwaysDenyReason.
type AlwaysDeny struct{}

// Authorize returns DecisionNoOpinion with AlwaysDenyReason.
func (AlwaysDeny) Authorize(context.Context, Attributes) (Decision, string, error) {
	return DecisionNoOpinion, AlwaysDenyReason, nil
}

// RulesFor lists nothing.
func (AlwaysDeny) RulesFor(context.Context, *User, string) (Rules, bool, error) {
	return Rules{}, false, nil
}

// NewChain returns the authorizer chain: members of SystemPrivilegedGroup
// are allowed outright; otherwise each authorizer is asked in order and the
// first Allow or Deny is final, returned with that authorizer's reason and
// error. When all have no opinion so has the chain, with the non-empty
// reasons joined by "\n" (usually "") and the errors joined: the request is
// then forbidden. The chain's RulesFor joins its members' rules.
func NewChain(authorizers ...Authorizer) Chain {
	return chain(append([]Authorizer(nil), authorizers...))
}

// Chain is an authorizer chain: it decides requests and lists rules.
type Chain interface {
	Authorizer
	RuleResolver
}

type chain []Authorizer

func (c chain) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	if a.User.InGroup(SystemPrivilegedGroup) {
		return DecisionAllow, "", nil
	}
	var reasons []string
	var errs []error
	for _, z := range c {
		d, reason, err := z.Authorize(ctx, a)
		if d == DecisionAllow || d == DecisionDeny {
			return d, reason, err
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return DecisionNoOpinion, strings.Join(reasons, "\n"), errors.Join(errs...)
}

// RulesFor concatenates the rules of every member that lists rules, in
// chain order; the privileged group's bypass lists none. The result is
// incomplete when any member's is, or when a member cannot list rules.
func (c chain) RulesFor(ctx context.Context, u *User, namespace string) (Rules, bool, error) {
	var all Rules
	incomplete := false
	var errs []error
	for _, z := range c {
		r, ok := z.(RuleResolver)
		if !ok {
			incomplete = true
			continue
		}
		rules, inc, err := r.RulesFor(ctx, u, namespace)
		all.Resource = append(all.Resource, rules.Resource...)
		all.NonResource = append(all.NonResource, rules.NonResource...)
		incomplete = incomplete || inc
		if err != nil {
			errs = append(errs, err)
		}
	}
	return all, incomplete, errors.Join(errs...)
}
