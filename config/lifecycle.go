package config

import (
	"fmt"
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
