package health

import (
	"errors"
	"net/http"
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
	return hookSince(name, done, time.Now())
}

// hookSince is Hook for a hook begun at began.
func hookSince(name string, done <-chan struct{}, began time.Time) Check {
	return Check{Name: "poststarthook/" + name, Fn: func(*http.Request) error {
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
