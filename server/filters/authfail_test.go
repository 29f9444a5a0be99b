package filters

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"platd/security"
)

func TestAuthFailureReason(t *testing.T) {
	t.Parallel()
	certErr := func(inner error) error {
		return fmt.Errorf("%w: verifying certificate SN=1 failed: %w", security.ErrCertificateVerify, inner)
	}
	cases := []struct {
		err  error
		want string
	}{
		{nil, AuthFailNoCredentials},
		{security.ErrInvalidBearerToken, AuthFailInvalidBearer},
		{errors.Join(security.ErrInvalidBearerToken, errors.New("webhook: connection refused")), AuthFailInvalidBearer},
		{certErr(x509.UnknownAuthorityError{}), AuthFailUnknownAuthority},
		{certErr(x509.CertificateInvalidError{Reason: x509.Expired}), AuthFailCertExpired},
		{certErr(x509.CertificateInvalidError{Reason: x509.IncompatibleUsage}), AuthFailCertUsage},
		{certErr(errors.New("x509: something else")), AuthFailCertInvalid},
		{errors.Join(security.ErrInvalidBearerToken, fmt.Errorf("wrapped: %w", security.ErrTokenExpired)), AuthFailTokenExpired},
		{errors.New("request header: proxy certificate refused"), AuthFailAuthenticatorFail},
	}
	for _, c := range cases {
		if got := AuthFailureReason(c.err); got != c.want {
			t.Errorf("%v: %q, want %q", c.err, got, c.want)
		}
	}
}

// The limiter logs the burst, then one line per interval carrying the
// count of the lines it left out; the user agent is truncated.
func TestAuthFailLogLimit(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := newAuthFailLog(slog.New(slog.NewTextHandler(&buf, nil)))
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	r := httptest.NewRequest("GET", "/api", nil)
	r.RemoteAddr = "192.0.2.7:4242"
	r.Header.Set("User-Agent", strings.Repeat("a", 1000))
	for i := 0; i < authFailLogBurst+30; i++ {
		l.record(r, AuthFailInvalidBearer)
	}
	if n := strings.Count(buf.String(), "\n"); n != authFailLogBurst {
		t.Fatalf("%d lines for a burst, want %d", n, authFailLogBurst)
	}
	first := strings.SplitN(buf.String(), "\n", 2)[0]
	if want := `level=INFO msg="authentication failed" reason="invalid bearer token" client=192.0.2.7:4242 userAgent=` + strings.Repeat("a", maxLoggedUserAgent) + `...`; !strings.HasSuffix(first, want) {
		t.Errorf("line %s\nwant suffix %s", first, want)
	}
	buf.Reset()
	now = now.Add(authFailLogEvery / 2)
	l.record(r, AuthFailInvalidBearer)
	if buf.Len() != 0 {
		t.Fatalf("logged before the limit refilled: %s", buf.String())
	}
	now = now.Add(authFailLogEvery / 2)
	l.record(r, AuthFailNoCredentials)
	if got := buf.String(); !strings.Contains(got, `reason="no credentials"`) || !strings.HasSuffix(got, " suppressed=31\n") {
		t.Errorf("after the refill: %q, want the 31 suppressed counted", got)
	}
	// A quiet minute refills the whole burst, and no more.
	buf.Reset()
	now = now.Add(time.Minute)
	for i := 0; i < authFailLogBurst+5; i++ {
		l.record(r, AuthFailInvalidBearer)
	}
	if n := strings.Count(buf.String(), "\n"); n != authFailLogBurst || strings.Contains(buf.String(), "suppressed") {
		t.Errorf("%d lines after a quiet minute, want %d without a suppressed count:\n%s", n, authFailLogBurst, buf.String())
	}
}

// Below info nothing is recorded, and nothing is counted as suppressed.
func TestAuthFailLogDisabled(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := newAuthFailLog(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	for i := 0; i < 100; i++ {
		l.record(httptest.NewRequest("GET", "/", nil), AuthFailInvalidBearer)
	}
	if buf.Len() != 0 || l.suppressed != 0 {
		t.Errorf("logged %q, suppressed %d", buf.String(), l.suppressed)
	}
}
