package health

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockingWriter holds every Write until release is closed.
type blockingWriter struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	return len(p), nil
}

// TestLogCheck: "log" passes while no write is stuck, fails with "logging
// blocked" once one has been in flight past logBlockedAfter, and failing
// probes (of log or of any other check) still answer, without a goroutine
// left behind, although their failure lines cannot be written.
func TestLogCheck(t *testing.T) {
	t.Parallel()
	bw := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
	lw := NewLogWatch()
	log := slog.New(lw.Handler(slog.NewTextHandler(bw, nil))).With("component", "test").WithGroup("g")
	r := NewRegistry(log)
	r.QuietWhileLogStuck(lw)
	must(t, r.Add([]string{Livez}, Ping, lw.Check()))
	must(t, r.Add([]string{Readyz}, Check{Name: "down", Fn: func(*http.Request) error { return errors.New("down") }}))
	h := mux(r)

	if rec := get(h, "/livez?verbose"); rec.Code != 200 || rec.Body.String() != "[+]ping ok\n[+]log ok\nlivez check passed\n" {
		t.Fatalf("no write: %d %q", rec.Code, rec.Body)
	}
	go log.Info("stuck")
	<-bw.entered
	for _, tc := range []struct {
		age        time.Duration
		code       int
		body, item string
	}{
		{time.Second, 200, "[+]ping ok\n[+]log ok\nlivez check passed\n", "ok"},
		{logBlockedAfter + time.Second, 500, "[+]ping ok\n[-]log failed: reason withheld\nlivez check failed\n", "internal server error: logging blocked\n"},
	} {
		lw.mu.Lock()
		for id := range lw.inFlight {
			lw.inFlight[id] = time.Now().Add(-tc.age)
		}
		lw.mu.Unlock()
		if rec := get(h, "/livez?verbose"); rec.Code != tc.code || rec.Body.String() != tc.body {
			t.Errorf("write in flight for %s: %d %q, want %d %q", tc.age, rec.Code, rec.Body, tc.code, tc.body)
		}
		if rec := get(h, "/livez/log"); rec.Body.String() != tc.item {
			t.Errorf("/livez/log, write in flight for %s: %q, want %q", tc.age, rec.Body, tc.item)
		}
		// Were a failing probe to log, it would wait for the release.
		before := runtime.NumGoroutine()
		for range 20 {
			if rec := get(h, "/readyz"); rec.Code != 500 {
				t.Errorf("failing readyz, write in flight for %s: %d %q", tc.age, rec.Code, rec.Body)
			}
		}
		if n := runtime.NumGoroutine(); n >= before+20 {
			t.Errorf("20 failing probes left %d goroutines more", n-before)
		}
	}
	close(bw.release)
	deadline := time.Now().Add(10 * time.Second)
	for lw.oldest(time.Now()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("writes still in flight 10s after their release")
		}
		time.Sleep(time.Millisecond)
	}
	if rec := get(h, "/livez/log"); rec.Code != 200 {
		t.Errorf("after the release: %d %q", rec.Code, rec.Body)
	}
}

// The watched handler writes what the handler it wraps would.
func TestLogWatchHandlerOutput(t *testing.T) {
	t.Parallel()
	var plain, watched bytes.Buffer
	opts := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	for _, w := range []struct {
		out     io.Writer
		handler func(slog.Handler) slog.Handler
	}{
		{&plain, func(h slog.Handler) slog.Handler { return h }},
		{&watched, NewLogWatch().Handler},
	} {
		l := slog.New(w.handler(slog.NewTextHandler(w.out, opts)))
		l.With("a", 1).WithGroup("g").Info("msg", "b", 2)
		l.Debug("hidden")
	}
	if plain.String() != watched.String() || !strings.Contains(plain.String(), "g.b=2") {
		t.Errorf("watched %q, plain %q", watched.String(), plain.String())
	}
}
