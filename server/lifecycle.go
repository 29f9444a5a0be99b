package server

import (
	"context"
	"fmt"
	"time"
)

// The stop of a server, in upstream's order:
//
//  1. ctx ends: shuttingDown closes and /readyz fails ("shutdown").
//  2. For --shutdown-delay-duration every request is still served, so
//     load balancers that saw readyz fail stop sending first.
//  3. stopping closes: the server takes no new requests. Without
//     --shutdown-send-retry-after the listener closes at once; with it
//     the listener stays open and new requests get 429 with Retry-After
//     until those in flight have finished, then it closes. Open watches
//     are told to end; with --shutdown-watch-termination-grace-period
//     their ends are spread out and waited for, up to that period.
//  4. Controllers stop and the database closes: every write acknowledged
//     before is committed.

// shutdownGrace is how long in-flight requests get to finish once the
// listener closes, before their connections are cut.
const shutdownGrace = 30 * time.Second

// retryAfterShutdownGrace is the listener's grace with
// --shutdown-send-retry-after: the requests have drained already, and an
// HTTP/2 peer gets a second to answer GOAWAY (upstream's 2 s).
const retryAfterShutdownGrace = 2 * time.Second

// awaitShutdown waits for ctx to end, then for the shutdown delay; a
// serving or fatal error ends the wait early and is returned.
func (s *Server) awaitShutdown(ctx context.Context, serveErr <-chan error) error {
	var err error
	select {
	case <-ctx.Done():
		close(s.shuttingDown)
		d := s.opts.ShutdownDelayDuration
		if d <= 0 {
			return nil
		}
		s.log.Info("shutdown delay", "duration", d)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case err = <-serveErr:
			return fmt.Errorf("serving: %w", err)
		case err = <-s.fatal:
		}
	case err = <-serveErr:
		close(s.shuttingDown)
		return fmt.Errorf("serving: %w", err)
	case err = <-s.fatal:
		close(s.shuttingDown)
	}
	s.log.Error("stopping", "err", err)
	return err
}

// stopServing stops taking requests and returns when those in flight
// have finished or their grace has passed.
func (s *Server) stopServing() {
	// The drain starts pacing before watches are told to end, so that
	// every watch ends paced, not only those still open once it starts.
	var drained <-chan struct{}
	if s.drain != nil {
		drained = s.drain.Wait()
	}
	close(s.stopping)
	s.log.Info("stop taking requests", "sendRetryAfter", s.opts.ShutdownSendRetryAfter)
	// Without the retry-after wait, the HTTP server's own grace covers the
	// watches' too.
	grace := shutdownGrace + s.opts.ShutdownWatchTerminationGracePeriod
	if s.drain != nil {
		if s.opts.ShutdownSendRetryAfter {
			// The listener stays open, refusing new requests, until
			// those in flight are done.
			limit := time.NewTimer(shutdownGrace + s.opts.ShutdownWatchTerminationGracePeriod)
			select {
			case <-drained:
				s.log.Info("drained")
			case <-limit.C:
				s.log.Warn("shutdown: requests still in flight after the grace")
			}
			limit.Stop()
			grace = retryAfterShutdownGrace
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := s.http.Shutdown(ctx); err != nil {
		s.log.Warn("shutdown: closing connections that did not finish", "err", err)
		_ = s.http.Close()
	}
}
