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

// AlwaysAllow allows every request.
type AlwaysAllow struct{}

// Authorize returns DecisionAllow.
func (AlwaysAllow) Authorize(context.Context, Attributes) (Decision, string, error) {
	return DecisionAllow, "", nil
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

// NewChain returns the authorizer chain: members of SystemPrivilegedGroup
// are allowed outright; otherwise each authorizer is asked in order and the
// first Allow or Deny is final, returned with that authorizer's reason and
// error. When all have no opinion the result is DecisionDeny with the
// non-empty reasons joined by "\n" (usually "") and the errors joined.
func NewChain(authorizers ...Authorizer) Authorizer {
	return chain(append([]Authorizer(nil), authorizers...))
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
	return DecisionDeny, strings.Join(reasons, "\n"), errors.Join(errs...)
}
