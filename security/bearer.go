package security

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"platd/config"
)

// BearerExtraSpaceWarning is the warning added when the Authorization
// header has two spaces between "Bearer" and the token; such a header is
// ignored rather than rejected.
const BearerExtraSpaceWarning = "the provided Authorization header contains extra space before the bearer token, and is ignored"

// TokenAuthenticator maps a bearer token to a user. It returns ok=false and
// a nil error for a token it does not recognise, and an error for one it
// recognises but rejects. Implementations are safe for concurrent use.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (u *User, ok bool, err error)
}

// NewBearerAuthenticator reads "Authorization: Bearer <token>" and asks
// each token authenticator in turn; the first ok=true wins. Other schemes
// and empty tokens are ignored (ok=false, nil error). A token that nobody
// accepts yields the joined errors, or ErrInvalidBearerToken if there were
// none.
func NewBearerAuthenticator(tokens ...TokenAuthenticator) Authenticator {
	return bearer(tokens)
}

// NewTokenAuthenticator authenticates bearer tokens from the static token
// file.
func NewTokenAuthenticator(tokens []config.Token) Authenticator {
	return NewBearerAuthenticator(NewTokenFile(tokens))
}

type bearer []TokenAuthenticator

func (b bearer) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	if auth == "" {
		return nil, false, nil
	}
	parts := strings.SplitN(auth, " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") {
		return nil, false, nil
	}
	token := parts[1]
	if token == "" {
		if len(parts) == 3 {
			AddWarning(r.Context(), BearerExtraSpaceWarning)
		}
		return nil, false, nil
	}
	u, ok, err := authenticateToken(r, b, token)
	if err != nil && !errors.Is(err, ErrInvalidBearerToken) {
		// Upstream asks for its loopback token first, which answers any
		// other bearer token with this error: failures read with it.
		err = aggregate{ErrInvalidBearerToken, err}
	}
	return u, ok, err
}

// authenticateToken asks each token authenticator in turn; the first
// ok=true wins. A token nobody accepts yields the joined errors, or
// ErrInvalidBearerToken if there were none.
func authenticateToken(r *http.Request, tokens []TokenAuthenticator, token string) (*User, bool, error) {
	var errs []error
	for _, t := range tokens {
		u, ok, err := t.AuthenticateToken(r.Context(), token)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return u, true, nil
		}
	}
	if len(errs) == 0 {
		return nil, false, ErrInvalidBearerToken
	}
	return nil, false, joinErrors(errs)
}

type warningKey struct{}

// WithWarnings returns a context whose AddWarning calls go to sink. The
// sink is called from the request's goroutine only.
func WithWarnings(ctx context.Context, sink func(msg string)) context.Context {
	return context.WithValue(ctx, warningKey{}, sink)
}

// AddWarning passes msg to the sink installed by WithWarnings, if any.
func AddWarning(ctx context.Context, msg string) {
	if sink, ok := ctx.Value(warningKey{}).(func(string)); ok && sink != nil {
		sink(msg)
	}
}
