package config

import (
	"context"
	"fmt"
	"net"
	"time"
)

// Overload defaults, as upstream's: enough for any single client, small
// enough that a flood queues in TCP rather than in memory.
const (
	DefaultMaxRequestsInFlight         = 400
	DefaultMaxMutatingRequestsInFlight = 200
)

// DefaultRequestTimeout is upstream's --request-timeout: a minute, long
// enough for a large list, short enough that a stuck request frees its
// in-flight slot.
const DefaultRequestTimeout = time.Minute

// DefaultEventTTL is upstream's --event-ttl: an event is removed an hour
// after its last write, long enough to read what just happened, short
// enough that a busy cluster's events do not fill the store.
const DefaultEventTTL = time.Hour

// MaxGoawayChance is the largest --goaway-chance upstream accepts: one
// request in 50 already makes clients reconnect often.
const MaxGoawayChance = 0.02

// ConnTimeouts are connection timeouts that upstream fixes and no flag
// sets; a zero field means upstream's value. Tests shorten them to see
// a connection close without waiting for minutes.
type ConnTimeouts struct {
	// Idle closes a keep-alive connection with no request in flight
	// (upstream: 90 s).
	Idle time.Duration
	// ReadHeader bounds the TLS handshake and the reading of a request's
	// headers (upstream: 32 s).
	ReadHeader time.Duration
	// WriteGrace is how long past the request timeout a response may
	// still be written before its writes fail (platd: 5 s).
	WriteGrace time.Duration
	// Context, when set, is the parent context of every request on a
	// connection (http.Server.ConnContext): a test ends a connection's
	// requests through it as their deadline would, without a clock.
	Context func(ctx context.Context, c net.Conn) context.Context
}

// validateLifecycle checks the overload and lifecycle flags.
func (o *Options) validateLifecycle() []string {
	var errs []string
	if o.MaxRequestsInFlight < 0 {
		errs = append(errs, fmt.Sprintf("--max-requests-inflight %d must not be negative (0 means no limit)", o.MaxRequestsInFlight))
	}
	if o.MaxMutatingRequestsInFlight < 0 {
		errs = append(errs, fmt.Sprintf("--max-mutating-requests-inflight %d must not be negative (0 means no limit)", o.MaxMutatingRequestsInFlight))
	}
	if o.RequestTimeout < 0 {
		errs = append(errs, fmt.Sprintf("--request-timeout %s must not be negative (0 means no limit)", o.RequestTimeout))
	}
	if o.EventTTL < 0 {
		errs = append(errs, fmt.Sprintf("--event-ttl %s must not be negative (0 keeps events until they are deleted)", o.EventTTL))
	}
	if o.ClusterSigningDuration < 0 {
		errs = append(errs, fmt.Sprintf("--cluster-signing-duration %s must not be negative (0 means the default of a year)", o.ClusterSigningDuration))
	}
	if o.HTTP2MaxStreamsPerConnection < 0 {
		errs = append(errs, fmt.Sprintf("--http2-max-streams-per-connection %d must not be negative (0 means the default of 100)", o.HTTP2MaxStreamsPerConnection))
	}
	if o.GoawayChance < 0 || o.GoawayChance > MaxGoawayChance {
		errs = append(errs, fmt.Sprintf("--goaway-chance can not be less than 0 or greater than %g", MaxGoawayChance))
	}
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{
		{"--shutdown-delay-duration", o.ShutdownDelayDuration},
		{"--shutdown-watch-termination-grace-period", o.ShutdownWatchTerminationGracePeriod},
		{"--livez-grace-period", o.LivezGracePeriod},
	} {
		if d.value < 0 {
			errs = append(errs, fmt.Sprintf("%s %s must not be negative", d.flag, d.value))
		}
	}
	return errs
}
