package security

import (
	"crypto/x509"
	"net/http"
	"slices"

	"platd/config"
)

// Authenticator identifies the user behind a request. It returns ok=false
// with a nil error when the request carries no credential it understands,
// and an error when it carries one that is invalid. Implementations are safe
// for concurrent use.
type Authenticator interface {
	AuthenticateRequest(r *http.Request) (u *User, ok bool, err error)
}

// AuthenticatorFunc adapts a function to Authenticator.
type AuthenticatorFunc func(r *http.Request) (*User, bool, error)

// AuthenticateRequest calls f.
func (f AuthenticatorFunc) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	return f(r)
}

// AuthConfig selects the authenticators NewAuthenticator assembles. The zero
// value authenticates nobody.
type AuthConfig struct {
	// Brand names the user-extra keys.
	Brand config.Brand
	// Front authenticators are tried before all others (the
	// request-header proxy belongs here).
	Front []Authenticator
	// ClientRoots, when set, enables x509 client-certificate
	// authentication against the pool it returns, asked on every request
	// so that a reloaded bundle takes effect at once.
	ClientRoots func() *x509.CertPool
	// LoopbackToken, when set, authenticates as APIServerUser in groups
	// AllAuthenticated and SystemPrivilegedGroup; it is the first bearer
	// token source.
	LoopbackToken string
	// Tokens is the static token file; the first bearer token source.
	Tokens []config.Token
	// TokenAuthenticators follow the static tokens inside the bearer
	// union (service-account, bootstrap, OIDC and webhook tokens).
	TokenAuthenticators []TokenAuthenticator
	// Anonymous enables the anonymous fallback for requests without a
	// credential.
	Anonymous bool
	// APIAudiences are the audiences a request's credential must be valid
	// for (--api-audiences); empty means credentials are not checked for
	// audiences. The Front and client-certificate authenticators and
	// static tokens are audience agnostic; TokenAuthenticators that are so
	// too must be wrapped with AudienceAgnosticToken by whoever adds them.
	APIAudiences []string
	// AnonymousPaths, when not empty, limits the anonymous fallback to
	// requests whose URL path equals one of them exactly.
	AnonymousPaths []string
}

// NewAuthenticator assembles the authentication chain: a union of the
// configured authenticators (first success wins, errors are collected), the
// authenticated-group adder, and, if enabled, the anonymous fallback, which
// applies only when no authenticator reported an error. With nothing
// configured and anonymous off, every request yields ok=false. A request
// that authenticates loses the headers of the configured request-header
// proxy, so no handler reads a client's own claim.
func NewAuthenticator(cfg AuthConfig) Authenticator {
	auds := cfg.APIAudiences
	var members []Authenticator
	for _, a := range cfg.Front {
		members = append(members, AudienceAgnostic(auds, a))
	}
	if cfg.ClientRoots != nil {
		members = append(members, AudienceAgnostic(auds, NewDynamicX509Authenticator(cfg.ClientRoots, cfg.Brand)))
	}
	var tokens []TokenAuthenticator
	if cfg.LoopbackToken != "" {
		tokens = append(tokens, newLoopbackToken(cfg.LoopbackToken))
	}
	if len(cfg.Tokens) > 0 {
		tokens = append(tokens, AudienceAgnosticToken(auds, NewTokenFile(cfg.Tokens)))
	}
	tokens = append(tokens, cfg.TokenAuthenticators...)
	if len(tokens) > 0 {
		members = append(members, NewBearerAuthenticator(tokens...), NewWebSocketAuthenticator(cfg.Brand, tokens...))
	}
	var chain Authenticator = groupAdder{union(members)}
	if cfg.Anonymous {
		chain = anonymousFallback{next: chain, paths: slices.Clone(cfg.AnonymousPaths)}
	}
	if len(auds) > 0 {
		chain = apiAudiences{auds: slices.Clone(auds), next: chain}
	}
	stripper := identityHeaderStripper{next: chain}
	for _, a := range cfg.Front {
		if c, ok := a.(headerClearer); ok {
			stripper.clearers = append(stripper.clearers, c)
		}
	}
	if len(stripper.clearers) == 0 {
		return chain
	}
	return stripper
}

// union tries each member in order; the first ok=true wins. When none
// succeeds the members' errors are returned joined (nil if there were none).
type union []Authenticator

func (u union) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	var errs []error
	for _, a := range u {
		user, ok, err := a.AuthenticateRequest(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return user, true, nil
		}
	}
	return nil, false, joinErrors(errs)
}

// groupAdder appends AllAuthenticated to every non-anonymous user that is
// in neither AllAuthenticated nor AllUnauthenticated.
type groupAdder struct{ next Authenticator }

func (g groupAdder) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	u, ok, err := g.next.AuthenticateRequest(r)
	if err != nil || !ok {
		return nil, ok, err
	}
	if u.Name == Anonymous || u.InGroup(AllAuthenticated) || u.InGroup(AllUnauthenticated) {
		return u, true, nil
	}
	out := *u
	out.Groups = append(slices.Clone(u.Groups), AllAuthenticated)
	return &out, true, nil
}

// anonymousFallback turns "no credential" into the anonymous user. Errors
// pass through untouched: a bad credential is never downgraded.
type anonymousFallback struct {
	next  Authenticator
	paths []string
}

func (a anonymousFallback) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	u, ok, err := a.next.AuthenticateRequest(r)
	if err != nil || ok {
		return u, ok, err
	}
	if len(a.paths) > 0 && !slices.Contains(a.paths, r.URL.Path) {
		return nil, false, nil
	}
	return AnonymousUser(), true, nil
}

// AnonymousUser returns a fresh anonymous identity.
func AnonymousUser() *User {
	return &User{Name: Anonymous, Groups: []string{AllUnauthenticated}}
}
