package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

var (
	errShuttingDown = errors.New("process is shutting down")
	errNotFinished  = errors.New("not finished")
	// errStillNotFinished reads as errNotFinished but is a hook's failure
	// once it is late (hookExpected, or past a grace period): a failure
	// worth a warning, where errNotFinished is the expected state of a
	// start.
	errStillNotFinished = errors.New("not finished")
)

// hookExpected is how long a start-up hook may stay unfinished before its
// failing check is worth a warning: a start of a large store is ready in
// seconds.
const hookExpected = 30 * time.Second

// Ping is the check that always passes: it shows the server answers at all.
var Ping = Check{Name: "ping", Fn: func(*http.Request) error { return nil }}

// Shutdown returns readyz's "shutdown" check, which fails with "process is
// shutting down" once shuttingDown is closed, so load balancers drain the
// server before it stops.
func Shutdown(shuttingDown <-chan struct{}) Check {
	return Check{Name: "shutdown", Fn: func(*http.Request) error {
		select {
		case <-shuttingDown:
			return errShuttingDown
		default:
			return nil
		}
	}}
}

// Hook returns the check "poststarthook/<name>", which fails with "not
// finished" until done is closed.
func Hook(name string, done <-chan struct{}) Check {
	return hookSince("poststarthook/"+name, done, time.Now())
}

// Awaits returns the check name, which fails as a hook's does until done
// is closed: a start-up check that is no hook (upstream's
// "autoregister-completion").
func Awaits(name string, done <-chan struct{}) Check {
	return hookSince(name, done, time.Now())
}

// hookSince is the check name of a start-up step begun at began.
func hookSince(name string, done <-chan struct{}, began time.Time) Check {
	return Check{Name: name, Fn: func(*http.Request) error {
		select {
		case <-done:
			return nil
		default:
		}
		if time.Since(began) > hookExpected {
			return errStillNotFinished
		}
		return errNotFinished
	}}
}

// Grace returns c passing until the moment until, and c itself after: a
// start-up hook that has not finished is not yet a reason to restart the
// process (upstream's --livez-grace-period). Meant for livez only; readyz
// must fail until the start is complete.
func Grace(c Check, until time.Time) Check {
	fn := c.Fn
	c.Fn = func(r *http.Request) error {
		if !time.Now().After(until) {
			return nil
		}
		if err := fn(r); err != errNotFinished {
			return err
		}
		return errStillNotFinished
	}
	return c
}

// errLogBlocked is the log check's failure.
var errLogBlocked = errors.New("logging blocked")

// logBlockedAfter is how long one log write may take before logging counts
// as blocked: upstream's log check fails once its flush of the log has
// not come back for two minutes.
const logBlockedAfter = 2 * time.Minute

// LogWatch follows the writes of a slog.Handler so that the "log" check can
// tell when logging is blocked: a write stuck on a full pipe or a hung
// disk holds every goroutine that logs. Its methods may be called
// concurrently; the zero value is not usable, use NewLogWatch.
type LogWatch struct {
	mu       sync.Mutex
	next     uint64
	inFlight map[uint64]time.Time
}

// NewLogWatch returns a watch with no write in flight.
func NewLogWatch() *LogWatch {
	return &LogWatch{inFlight: map[uint64]time.Time{}}
}

// Handler returns h with every Handle call followed by w. Records go to h
// unchanged.
func (w *LogWatch) Handler(h slog.Handler) slog.Handler {
	return &watchedHandler{h: h, w: w}
}

// Check returns the check "log": it fails with "logging blocked" while a
// write has been in flight for longer than logBlockedAfter.
func (w *LogWatch) Check() Check {
	return Check{Name: "log", Fn: func(*http.Request) error {
		if w.oldest(time.Now()) > logBlockedAfter {
			return errLogBlocked
		}
		return nil
	}}
}

// logStuckAfter is how long a write may take before a health probe stops
// adding lines behind it.
const logStuckAfter = time.Second

// stuck reports whether a write has been in flight for over logStuckAfter.
func (w *LogWatch) stuck(now time.Time) bool { return w.oldest(now) > logStuckAfter }

// oldest is the age at now of the oldest write in flight, 0 without one.
func (w *LogWatch) oldest(now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var age time.Duration
	for _, began := range w.inFlight {
		age = max(age, now.Sub(began))
	}
	return age
}

func (w *LogWatch) begin() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next++
	w.inFlight[w.next] = time.Now()
	return w.next
}

func (w *LogWatch) end(id uint64) {
	w.mu.Lock()
	delete(w.inFlight, id)
	w.mu.Unlock()
}

// watchedHandler is a slog.Handler whose writes a LogWatch follows.
type watchedHandler struct {
	h slog.Handler
	w *LogWatch
}

func (h *watchedHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *watchedHandler) Handle(ctx context.Context, r slog.Record) error {
	id := h.w.begin()
	defer h.w.end(id)
	return h.h.Handle(ctx, r)
}

func (h *watchedHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &watchedHandler{h: h.h.WithAttrs(attrs), w: h.w}
}

func (h *watchedHandler) WithGroup(name string) slog.Handler {
	return &watchedHandler{h: h.h.WithGroup(name), w: h.w}
}

// InformerSync returns readyz's "informer-sync" check: it fails with
// "<n> informers not started yet: [<names>]" while pending names caches
// that serve requests but do not yet follow the store. pending is called
// on every probe and may be called concurrently.
func InformerSync(pending func() []string) Check {
	return Check{Name: "informer-sync", Fn: func(*http.Request) error {
		if p := pending(); len(p) > 0 {
			return fmt.Errorf("%d informers not started yet: %v", len(p), p)
		}
		return nil
	}}
}
