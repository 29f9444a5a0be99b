package security

import (
	"context"
	"fmt"
	"net/http"
	"slices"
)

// Audiences say whom a credential is meant for. A request is checked for
// the API audiences (--api-audiences); a TokenReview for those its spec
// names. Authenticators that understand audiences (service-account and
// OIDC tokens, the token webhook) read them with AudiencesFrom and report
// those they accepted in User.Audiences; the others are wrapped with
// AudienceAgnostic or AudienceAgnosticToken.

type audiencesKey struct{}

// WithAudiences returns a context asking authenticators for auds.
func WithAudiences(ctx context.Context, auds []string) context.Context {
	return context.WithValue(ctx, audiencesKey{}, auds)
}

// AudiencesFrom returns the audiences ctx asks for, and whether it asks.
func AudiencesFrom(ctx context.Context) ([]string, bool) {
	auds, ok := ctx.Value(audiencesKey{}).([]string)
	return auds, ok
}

// IntersectAudiences returns the members of a also in b, in a's order.
func IntersectAudiences(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// AudienceAgnosticToken makes a token authenticator that knows nothing of
// audiences (static tokens, bootstrap tokens) answer for the API
// audiences: when the context asks for audiences none of which is an API
// audience, the token is not recognised; otherwise the user is reported
// valid for the intersection. Without API audiences, t is returned as is.
func AudienceAgnosticToken(apiAuds []string, t TokenAuthenticator) TokenAuthenticator {
	if len(apiAuds) == 0 {
		return t
	}
	return agnosticToken{auds: slices.Clone(apiAuds), next: t}
}

type agnosticToken struct {
	auds []string
	next TokenAuthenticator
}

func (a agnosticToken) AuthenticateToken(ctx context.Context, token string) (*User, bool, error) {
	return agnostic(ctx, a.auds, func() (*User, bool, error) { return a.next.AuthenticateToken(ctx, token) })
}

// AudienceAgnostic is AudienceAgnosticToken for a request authenticator
// (client certificates, the request-header proxy).
func AudienceAgnostic(apiAuds []string, a Authenticator) Authenticator {
	if len(apiAuds) == 0 {
		return a
	}
	return agnosticRequest{auds: slices.Clone(apiAuds), next: a}
}

type agnosticRequest struct {
	auds []string
	next Authenticator
}

func (a agnosticRequest) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	return agnostic(r.Context(), a.auds, func() (*User, bool, error) { return a.next.AuthenticateRequest(r) })
}

func agnostic(ctx context.Context, apiAuds []string, authenticate func() (*User, bool, error)) (*User, bool, error) {
	want, ok := AudiencesFrom(ctx)
	if !ok {
		return authenticate()
	}
	auds := IntersectAudiences(apiAuds, want)
	if len(auds) == 0 {
		return nil, false, nil
	}
	u, ok, err := authenticate()
	if u != nil {
		c := u.clone()
		c.Audiences = auds
		u = c
	}
	return u, ok, err
}

// apiAudiences asks the chain for the API audiences when the request's
// context names none, and refuses a user reported valid only for other
// audiences, as upstream's authentication filter does.
type apiAudiences struct {
	auds []string
	next Authenticator
}

func (a apiAudiences) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	if _, asked := AudiencesFrom(r.Context()); asked {
		return a.next.AuthenticateRequest(r)
	}
	r = r.WithContext(WithAudiences(r.Context(), a.auds))
	u, ok, err := a.next.AuthenticateRequest(r)
	if err != nil || !ok {
		return u, ok, err
	}
	if len(u.Audiences) > 0 && len(IntersectAudiences(u.Audiences, a.auds)) == 0 {
		return nil, false, fmt.Errorf("unable to match the audience: %v , accepted: %v", u.Audiences, a.auds)
	}
	return u, true, nil
}
