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
	"unicode/utf8"

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
	l.after = func(time.Duration, func()) func() bool { return func() bool { return true } } // TestAuthFailLogFlush
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
	l.record(r, AuthFailInvalidBearer)
	if got := buf.String(); !strings.Contains(got, `reason="invalid bearer token"`) || !strings.HasSuffix(got, " suppressed=31\n") {
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
	if buf.Len() != 0 || len(l.classes) != 0 {
		t.Errorf("logged %q, counted %v", buf.String(), l.classes)
	}
}

// Each reason class has its own limit: a flood of bad tokens does not
// hide a foreign certificate. A request without credentials is logged at
// debug only.
func TestAuthFailLogByReason(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := newAuthFailLog(slog.New(slog.NewTextHandler(&buf, nil)))
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	l.after = func(time.Duration, func()) func() bool { return func() bool { return true } }
	r := httptest.NewRequest("GET", "/api", nil)
	for i := 0; i < authFailLogBurst+10; i++ {
		l.record(r, AuthFailInvalidBearer)
	}
	l.record(r, AuthFailUnknownAuthority)
	if !strings.Contains(buf.String(), `reason="certificate signed by unknown authority"`) {
		t.Errorf("another class was suppressed by a flood:\n%s", buf.String())
	}
	buf.Reset()
	l.record(r, AuthFailNoCredentials)
	if buf.Len() != 0 {
		t.Errorf("no credentials logged at info: %s", buf.String())
	}
	var debug bytes.Buffer
	d := newAuthFailLog(slog.New(slog.NewTextHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug})))
	d.record(r, AuthFailNoCredentials)
	if !strings.Contains(debug.String(), `level=DEBUG msg="authentication failed" reason="no credentials"`) {
		t.Errorf("at debug: %q", debug.String())
	}
}

// Lines left out by a burst followed by silence are counted by a one-shot
// flush; a later line that counts them cancels it, and stop cancels it
// too.
func TestAuthFailLogFlush(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := newAuthFailLog(slog.New(slog.NewTextHandler(&buf, nil)))
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	var pending []func()
	cancelled := 0
	l.after = func(d time.Duration, f func()) func() bool {
		if d != authFailLogEvery {
			t.Errorf("flush after %v", d)
		}
		pending = append(pending, f)
		return func() bool { cancelled++; return true }
	}
	r := httptest.NewRequest("GET", "/api", nil)
	for i := 0; i < authFailLogBurst+7; i++ {
		l.record(r, AuthFailTokenExpired)
	}
	if len(pending) != 1 {
		t.Fatalf("%d flushes armed for one burst, want 1", len(pending))
	}
	buf.Reset()
	now = now.Add(authFailLogEvery)
	pending[0]()
	if got := buf.String(); !strings.HasSuffix(got, `level=INFO msg="authentication failures not logged" reason="expired token" suppressed=7`+"\n") {
		t.Errorf("flush: %q", got)
	}
	// Flushed once: the next line carries no count.
	buf.Reset()
	now = now.Add(time.Minute)
	l.record(r, AuthFailTokenExpired)
	if strings.Contains(buf.String(), "suppressed") {
		t.Errorf("counted twice: %q", buf.String())
	}
	// Another burst arms a flush; stop cancels it and a late run writes
	// nothing.
	for i := 0; i < authFailLogBurst+3; i++ {
		l.record(r, AuthFailTokenExpired)
	}
	if len(pending) != 2 {
		t.Fatalf("%d flushes armed, want 2", len(pending))
	}
	// The first flush running late (it fired as a line stopped it) does
	// nothing, and leaves the pending one to stop.
	buf.Reset()
	pending[0]()
	if buf.Len() != 0 {
		t.Errorf("a stale flush wrote %q", buf.String())
	}
	l.stop()
	pending[1]()
	if cancelled != 1 || buf.Len() != 0 {
		t.Errorf("after stop: cancelled %d, wrote %q", cancelled, buf.String())
	}
	l.record(r, AuthFailTokenExpired)
	if len(pending) != 2 {
		t.Error("a flush was armed after stop")
	}
}

// The user agent is cut on a rune boundary.
func TestTruncateUTF8(t *testing.T) {
	t.Parallel()
	ua := strings.Repeat("a", maxLoggedUserAgent-1) + "é" + "tail"
	got := truncateUTF8(ua, maxLoggedUserAgent)
	if !utf8.ValidString(got) || got != strings.Repeat("a", maxLoggedUserAgent-1)+"..." {
		t.Errorf("%q", got)
	}
	if truncateUTF8("short", maxLoggedUserAgent) != "short" {
		t.Error("a short agent was changed")
	}
}
