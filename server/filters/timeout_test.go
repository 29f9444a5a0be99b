package filters

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platd/server/apierr"
)

// timeoutThrough serves target through RequestInfo and Timeout(max);
// next blocks until its context ends when block is set.
func timeoutThrough(t *testing.T, max time.Duration, target string, next http.HandlerFunc) *httptest.ResponseRecorder {
	t.Helper()
	writeErr := func(w http.ResponseWriter, r *http.Request, err error) {
		var ae *apierr.Error
		if !errors.As(err, &ae) {
			t.Fatalf("not a Status: %v", err)
		}
		w.WriteHeader(int(ae.Status.Code))
		_ = json.NewEncoder(w).Encode(ae.Status)
	}
	rec := httptest.NewRecorder()
	RequestInfo(Timeout(next, max, writeErr, nil, slog.New(slog.DiscardHandler))).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	const timedOut = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}` + "\n"
	// stuck waits for the request's deadline, then for the test to end,
	// and reports the deadline it saw.
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	deadlines := make(chan time.Duration, 8)
	stuck := func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		<-r.Context().Done()
		deadlines <- time.Since(began)
		<-release
		w.Header().Set("X-Late", "1")
		_, _ = w.Write([]byte("late"))
	}
	quick := func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Context().Deadline(); ok {
			w.Header().Set("X-Deadline", "set")
		}
		w.WriteHeader(http.StatusTeapot)
	}

	t.Run("server limit", func(t *testing.T) {
		rec := timeoutThrough(t, 20*time.Millisecond, "/api/v1/configmaps", stuck)
		if rec.Code != http.StatusGatewayTimeout || rec.Body.String() != timedOut {
			t.Errorf("got %d %q, want 504 %q", rec.Code, rec.Body, timedOut)
		}
		if rec.Header().Get("X-Late") != "" {
			t.Error("a header set after the timeout reached the client")
		}
		<-deadlines
	})
	t.Run("?timeout= lowers the limit", func(t *testing.T) {
		rec := timeoutThrough(t, time.Hour, "/api/v1/configmaps?timeout=20ms", stuck)
		if rec.Code != http.StatusGatewayTimeout || rec.Body.String() != timedOut {
			t.Errorf("got %d %q, want 504", rec.Code, rec.Body)
		}
		if d := <-deadlines; d > 10*time.Second {
			t.Errorf("deadline after %s, want about 20ms", d)
		}
	})
	t.Run("?timeout= applies without a server limit", func(t *testing.T) {
		if rec := timeoutThrough(t, 0, "/api/v1/configmaps?timeout=20ms", stuck); rec.Code != http.StatusGatewayTimeout {
			t.Errorf("got %d, want 504", rec.Code)
		}
		<-deadlines
	})
	for _, tc := range []struct {
		name, target string
		max          time.Duration
		want         string
	}{
		{"quick request keeps its answer", "/api/v1/configmaps", time.Hour, "set"},
		{"no limit sets no deadline", "/api/v1/configmaps", 0, ""},
		{"timeout=0 leaves the server limit", "/api/v1/configmaps?timeout=0", time.Hour, "set"},
		{"watch is long-running", "/api/v1/configmaps?watch=true", time.Hour, ""},
		{"exec is long-running", "/api/v1/namespaces/a/pods/p/exec", time.Hour, ""},
	} {
		rec := timeoutThrough(t, tc.max, tc.target, quick)
		if rec.Code != http.StatusTeapot || rec.Header().Get("X-Deadline") != tc.want {
			t.Errorf("%s: %d deadline %q, want 418 deadline %q", tc.name, rec.Code, rec.Header().Get("X-Deadline"), tc.want)
		}
	}
	rec := timeoutThrough(t, time.Hour, "/api/v1/configmaps?timeout=soon", quick)
	const bad = `invalid timeout specified in the request URL - time: invalid duration \"soon\"`
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"message":"`+bad+`"`) {
		t.Errorf("bad timeout: %d %s, want 400 %s", rec.Code, rec.Body, bad)
	}
}

// A panic in the handler reaches the layers outside, as without a timeout.
func TestTimeoutPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "boom") {
			t.Errorf("recovered %v, want the handler's panic", v)
		}
	}()
	timeoutThrough(t, time.Hour, "/api/v1/configmaps", func(http.ResponseWriter, *http.Request) { panic("boom") })
}

// deadlineWriter is a connection's writer whose writes block, as for a
// client that stopped reading, until a write deadline in the past is set;
// once pass is set writes reach the recorder instead.
type deadlineWriter struct {
	*httptest.ResponseRecorder
	mu        sync.Mutex
	deadlines []time.Time
	cut       chan struct{}
	cutOnce   sync.Once
	entered   chan struct{} // closed when a write first blocks
	enterOnce sync.Once
	pass      atomic.Bool
}

func newDeadlineWriter() *deadlineWriter {
	return &deadlineWriter{ResponseRecorder: httptest.NewRecorder(), cut: make(chan struct{}), entered: make(chan struct{})}
}

func (w *deadlineWriter) SetWriteDeadline(d time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadlines = append(w.deadlines, d)
	if !d.IsZero() && d.Before(time.Now()) {
		w.unblock()
	}
	return nil
}

func (w *deadlineWriter) unblock() { w.cutOnce.Do(func() { close(w.cut) }) }

func (w *deadlineWriter) Write(p []byte) (int, error) {
	if w.pass.Load() {
		return w.ResponseRecorder.Write(p)
	}
	w.enterOnce.Do(func() { close(w.entered) })
	<-w.cut
	return 0, errors.New("write deadline exceeded")
}

func (w *deadlineWriter) seen() []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.deadlines...)
}

// waitFor fails the test when ch is not ready long after it should be: a
// guard against a hang, not a measure of time.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("still waiting for %s", what)
		panic("unreachable")
	}
}

// A handler blocked writing to a client that stopped reading is cut off
// at the deadline: its write fails, the connection is aborted and the
// handler returns. A watch clears the connection's write deadline.
func TestTimeoutCutsBlockedWrites(t *testing.T) {
	t.Parallel()
	w := newDeadlineWriter()
	returned := make(chan error, 1)
	h := RequestInfo(Timeout(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := w.Write([]byte("a large list"))
		returned <- err
	}), time.Hour, nil, nil, slog.New(slog.DiscardHandler)))
	// The deadline is the parent's cancellation, once the write blocks.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	aborted := make(chan any, 1)
	go func() {
		defer func() { aborted <- recover() }()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil).WithContext(ctx))
	}()
	waitFor(t, w.entered, "the handler's write")
	cancel()
	if v := waitFor(t, aborted, "the request to end at its deadline"); v != http.ErrAbortHandler {
		t.Errorf("recovered %v, want http.ErrAbortHandler", v)
	}
	if err := waitFor(t, returned, "the handler's write to fail"); err == nil {
		t.Error("the blocked write succeeded")
	}

	w = newDeadlineWriter()
	RequestInfo(Timeout(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), time.Hour, nil, nil, slog.New(slog.DiscardHandler))).
		ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/configmaps?watch=true", nil))
	if d := w.seen(); len(d) != 1 || !d[0].IsZero() {
		t.Errorf("watch: write deadlines %v, want one cleared", d)
	}
	w = newDeadlineWriter()
	RequestInfo(Timeout(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), 0, nil, nil, slog.New(slog.DiscardHandler))).
		ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/configmaps?watch=true", nil))
	if d := w.seen(); len(d) != 0 {
		t.Errorf("watch without a request timeout: write deadlines %v, want none", d)
	}
}

// A write the handler starts after the filter looked for writes to cut,
// and before it answers, never reaches the connection: it would block on
// a client that stopped reading with nothing left to cut it. The request
// is answered 504. Not parallel: it sets the package's hook.
func TestTimeoutWriteAfterCut(t *testing.T) {
	w := newDeadlineWriter()
	write, returned := make(chan struct{}), make(chan error, 1)
	testHookExpiring = func() {
		close(write)
		select {
		case err := <-returned:
			returned <- err
		case <-w.entered:
			t.Error("a write started after the deadline and was not cut")
			w.unblock()
		}
		w.pass.Store(true)
	}
	defer func() { testHookExpiring = nil }()
	h := RequestInfo(Timeout(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-write
		_, err := w.Write([]byte("a large list"))
		returned <- err
	}), time.Hour, nil, nil, slog.New(slog.DiscardHandler)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil).WithContext(ctx))
	if err := waitFor(t, returned, "the handler's write"); err != http.ErrHandlerTimeout {
		t.Errorf("write after the deadline: %v, want %v", err, http.ErrHandlerTimeout)
	}
	if w.Code != http.StatusGatewayTimeout {
		t.Errorf("got %d, want 504", w.Code)
	}
}

// A handler that panics after its request timed out is logged.
func TestTimeoutLogsLatePanic(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var buf strings.Builder
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))
	release := make(chan struct{})
	h := RequestInfo(Timeout(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		panic("late boom")
	}), time.Hour, nil, nil, log))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil).WithContext(ctx))
	if rec.Code != http.StatusGatewayTimeout {
		t.Fatalf("got %d, want 504", rec.Code)
	}
	close(release)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		got := buf.String()
		mu.Unlock()
		if strings.Contains(got, "handler panic after timeout") && strings.Contains(got, "late boom") && strings.Contains(got, "path=/api/v1/configmaps") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log %q, want the late panic", got)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
