package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"
)

// TestHookWork: a start-up hook's work is retried until it succeeds; one
// that keeps failing past the retry period stops the server naming the
// hook, as upstream's failed hooks do; one cut short by the server's end
// stops nothing.
func TestHookWork(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	newServer := func() *Server {
		return &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil)), fatal: make(chan error, 1)}
	}
	t.Run("succeeds after failures", func(t *testing.T) {
		s, calls := newServer(), 0
		ok := s.hookWork(context.Background(), "h", "doing", time.Minute, func() error {
			if calls++; calls < 3 {
				return boom
			}
			return nil
		})
		if !ok || calls != 3 || len(s.fatal) != 0 {
			t.Errorf("ok %v after %d calls, fatal %d", ok, calls, len(s.fatal))
		}
	})
	t.Run("keeps failing", func(t *testing.T) {
		s := newServer()
		if s.hookWork(context.Background(), "h", "doing", 100*time.Millisecond, func() error { return boom }) {
			t.Fatal("work that always fails succeeded")
		}
		select {
		case err := <-s.fatal:
			if want := `PostStartHook "h" failed: doing: boom`; err.Error() != want || !errors.Is(err, boom) {
				t.Errorf("fatal %q, want %q", err, want)
			}
		default:
			t.Error("the server was not stopped")
		}
	})
	t.Run("server ends", func(t *testing.T) {
		s := newServer()
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		ok := s.hookWork(ctx, "h", "doing", time.Hour, func() error {
			if calls++; calls == 2 {
				cancel()
			}
			return boom
		})
		if ok || len(s.fatal) != 0 || calls != 2 {
			t.Errorf("ok %v, fatal %d, calls %d", ok, len(s.fatal), calls)
		}
	})
}
