package security

import (
	"errors"
	"slices"
	"strings"
)

// Sentinel errors of the security package. Callers test with errors.Is; the
// returned errors wrap these with detail.
var (
	// ErrInvalidBearerToken is returned when a bearer token was presented
	// but no token authenticator accepted it. Its text is the upstream one.
	ErrInvalidBearerToken = errors.New("invalid bearer token")
	// ErrCertificateVerify is wrapped when a client certificate fails
	// verification against the client CA pool.
	ErrCertificateVerify = errors.New("client certificate verification failed")
	// ErrKeyMaterial is wrapped when a key or certificate file cannot be
	// loaded, parsed or does not match its counterpart.
	ErrKeyMaterial = errors.New("invalid key material")
	// ErrNoCertificates is wrapped when a PEM bundle holds no certificate.
	ErrNoCertificates = errors.New("no certificates found")
	// ErrKubeconfig is wrapped when a Kubeconfig value is incomplete.
	ErrKubeconfig = errors.New("invalid kubeconfig")
	// ErrTokenExpired is matched (errors.Is) by the errors of token
	// authenticators for a token past its expiry; their texts stay their
	// own (expiredError).
	ErrTokenExpired = errors.New("token expired")
)

// expiredError is an authenticator's own wording of an expired token that
// errors.Is matches to ErrTokenExpired.
type expiredError struct{ msg string }

func (e expiredError) Error() string { return e.msg }

func (e expiredError) Is(target error) bool { return target == ErrTokenExpired }

// aggregate is several errors read as one, worded as upstream's: a single
// distinct message alone, several distinct ones comma-separated in
// brackets. Nested aggregates are flattened.
type aggregate []error

func (a aggregate) Error() string {
	var msgs []string
	a.visit(func(err error) {
		if m := err.Error(); !slices.Contains(msgs, m) {
			msgs = append(msgs, m)
		}
	})
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

func (a aggregate) visit(f func(error)) {
	for _, err := range a {
		if inner, ok := err.(aggregate); ok {
			inner.visit(f)
			continue
		}
		f(err)
	}
}

// Unwrap lets errors.Is and errors.As see every member.
func (a aggregate) Unwrap() []error { return a }

// joinErrors returns errs as one error, nil when there are none.
func joinErrors(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return aggregate(errs)
}
