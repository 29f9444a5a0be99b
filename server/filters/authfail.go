package filters

import (
	"context"
	"crypto/x509"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"platd/security"
)

// Reason classes of a failed authentication, as the info line names them.
// The error itself is not logged at info: some authenticators' errors
// quote claims, and none of this vocabulary can carry a credential.
const (
	AuthFailNoCredentials     = "no credentials"
	AuthFailUnknownAuthority  = "certificate signed by unknown authority"
	AuthFailCertExpired       = "certificate expired or not yet valid"
	AuthFailCertUsage         = "certificate not valid for client authentication"
	AuthFailCertInvalid       = "invalid client certificate"
	AuthFailTokenExpired      = "expired token"
	AuthFailInvalidBearer     = "invalid bearer token"
	AuthFailAuthenticatorFail = "authenticator error"
)

// AuthFailureReason classes the outcome of a failed authentication: err
// is what the authenticator returned, nil when the request carried no
// credential that anyone accepted and anonymous requests are off.
func AuthFailureReason(err error) string {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	switch {
	case err == nil:
		return AuthFailNoCredentials
	case errors.Is(err, security.ErrTokenExpired):
		return AuthFailTokenExpired
	case errors.As(err, &unknown):
		return AuthFailUnknownAuthority
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return AuthFailCertExpired
	case errors.As(err, &invalid) && invalid.Reason == x509.IncompatibleUsage:
		return AuthFailCertUsage
	case errors.Is(err, security.ErrCertificateVerify):
		return AuthFailCertInvalid
	case errors.Is(err, security.ErrInvalidBearerToken):
		return AuthFailInvalidBearer
	}
	return AuthFailAuthenticatorFail
}

// A client sending bad credentials as fast as it can would write one line
// per request (thousands a second). The lines are rate-limited instead of
// sampled, so a lone failure is always logged: authFailLogBurst lines at
// once, then one per authFailLogEvery; the next line written counts the
// lines left out ("suppressed"). That bounds a flood to about 200 bytes a
// second (~17 MB a day), and the authentication_attempts metric still
// counts every failure.
const (
	authFailLogBurst = 20
	authFailLogEvery = time.Second
)

// maxLoggedUserAgent bounds the user agent quoted in a line: it is the
// client's to choose.
const maxLoggedUserAgent = 256

// authFailLog writes the info line of failed authentications under the
// rate limit. Safe for concurrent use.
type authFailLog struct {
	log *slog.Logger
	now func() time.Time

	mu         sync.Mutex
	tokens     float64
	last       time.Time
	suppressed uint64
}

func newAuthFailLog(log *slog.Logger) *authFailLog {
	return &authFailLog{log: log, now: time.Now, tokens: authFailLogBurst}
}

// record logs the failure of r for reason, or counts it as suppressed.
func (l *authFailLog) record(r *http.Request, reason string) {
	if !l.log.Enabled(r.Context(), slog.LevelInfo) {
		return
	}
	l.mu.Lock()
	now := l.now()
	if !l.last.IsZero() {
		l.tokens = min(authFailLogBurst, l.tokens+float64(now.Sub(l.last))/float64(authFailLogEvery))
	}
	l.last = now
	if l.tokens < 1 {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	l.tokens--
	suppressed := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	ua := r.UserAgent()
	if len(ua) > maxLoggedUserAgent {
		ua = ua[:maxLoggedUserAgent] + "..."
	}
	attrs := []slog.Attr{slog.String("reason", reason), slog.String("client", r.RemoteAddr), slog.String("userAgent", ua)}
	if suppressed > 0 {
		attrs = append(attrs, slog.Uint64("suppressed", suppressed))
	}
	l.log.LogAttrs(context.Background(), slog.LevelInfo, "authentication failed", attrs...)
}
