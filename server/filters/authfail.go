package filters

import (
	"context"
	"crypto/x509"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

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
// lines left out ("suppressed"), and if none comes, a one-shot timer
// writes the count authFailLogEvery after the first line left out. Each
// reason class has its own limit, so a flood of one kind (a client with a
// stale token) does not hide another (a foreign certificate). That bounds
// a flood to about 200 bytes a second per class (there are eight), and
// the authentication_attempts metric still counts every failure.
const (
	authFailLogBurst = 20
	authFailLogEvery = time.Second
)

// maxLoggedUserAgent bounds the user agent quoted in a line, in bytes: it
// is the client's to choose.
const maxLoggedUserAgent = 256

// authFailLog writes the lines of failed authentications under the rate
// limits. A request without credentials is logged at debug only: it is
// what every probe and curl without a token sends, and upstream logs only
// authenticator errors. Safe for concurrent use; stop ends the pending
// flushes.
type authFailLog struct {
	log   *slog.Logger
	now   func() time.Time
	after func(time.Duration, func()) (stop func() bool)

	mu      sync.Mutex
	stopped bool
	classes map[string]*authFailLimit // by reason class, a fixed set
}

// authFailLimit is the token bucket of one reason class.
type authFailLimit struct {
	tokens     float64
	last       time.Time
	suppressed uint64
	// flushing stops the pending one-shot flush of suppressed, nil when
	// there is none; armed numbers the flushes, so that one that fired
	// while being stopped does nothing.
	flushing func() bool
	armed    uint64
}

func newAuthFailLog(log *slog.Logger) *authFailLog {
	return &authFailLog{log: log, now: time.Now, classes: map[string]*authFailLimit{},
		after: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }}
}

// limit returns reason's bucket refilled up to now. l.mu is held.
func (l *authFailLog) limit(reason string, now time.Time) *authFailLimit {
	b := l.classes[reason]
	if b == nil {
		b = &authFailLimit{tokens: authFailLogBurst}
		l.classes[reason] = b
	}
	if !b.last.IsZero() {
		b.tokens = min(authFailLogBurst, b.tokens+float64(now.Sub(b.last))/float64(authFailLogEvery))
	}
	b.last = now
	return b
}

// record logs the failure of r for reason, or counts it as suppressed.
func (l *authFailLog) record(r *http.Request, reason string) {
	level := slog.LevelInfo
	if reason == AuthFailNoCredentials {
		level = slog.LevelDebug
	}
	if !l.log.Enabled(r.Context(), level) {
		return
	}
	l.mu.Lock()
	b := l.limit(reason, l.now())
	if b.tokens < 1 {
		b.suppressed++
		if b.flushing == nil && !l.stopped {
			b.armed++
			armed := b.armed
			b.flushing = l.after(authFailLogEvery, func() { l.flush(reason, level, armed) })
		}
		l.mu.Unlock()
		return
	}
	b.tokens--
	suppressed := b.suppressed
	b.suppressed = 0
	if b.flushing != nil {
		b.flushing()
		b.flushing = nil
	}
	l.mu.Unlock()
	attrs := []slog.Attr{slog.String("reason", reason), slog.String("client", r.RemoteAddr), slog.String("userAgent", truncateUTF8(r.UserAgent(), maxLoggedUserAgent))}
	if suppressed > 0 {
		attrs = append(attrs, slog.Uint64("suppressed", suppressed))
	}
	l.log.LogAttrs(context.Background(), level, "authentication failed", attrs...)
}

// flush writes the count of reason's lines left out since the last one,
// when no later failure has written it.
func (l *authFailLog) flush(reason string, level slog.Level, armed uint64) {
	l.mu.Lock()
	b := l.classes[reason]
	if b.armed != armed || b.flushing == nil {
		l.mu.Unlock()
		return // stopped after it fired: a later line counted
	}
	b.flushing = nil
	n := b.suppressed
	if l.stopped || n == 0 {
		l.mu.Unlock()
		return
	}
	b.suppressed = 0
	b = l.limit(reason, l.now())
	b.tokens = max(0, b.tokens-1)
	l.mu.Unlock()
	l.log.LogAttrs(context.Background(), level, "authentication failures not logged", slog.String("reason", reason), slog.Uint64("suppressed", n))
}

// stop cancels the pending flushes; later failures arm none.
func (l *authFailLog) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	for _, b := range l.classes {
		if b.flushing != nil {
			b.flushing()
			b.flushing = nil
		}
	}
}

// truncateUTF8 cuts s to at most n bytes on a rune boundary, marking the
// cut with "...".
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
