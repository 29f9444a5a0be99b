package config

import "fmt"

// Overload defaults, as upstream's: enough for any single client, small
// enough that a flood queues in TCP rather than in memory.
const (
	DefaultMaxRequestsInFlight         = 400
	DefaultMaxMutatingRequestsInFlight = 200
)

// validateLifecycle checks the overload and lifecycle flags.
func (o *Options) validateLifecycle() []string {
	var errs []string
	if o.MaxRequestsInFlight < 0 {
		errs = append(errs, fmt.Sprintf("--max-requests-inflight %d must not be negative (0 means no limit)", o.MaxRequestsInFlight))
	}
	if o.MaxMutatingRequestsInFlight < 0 {
		errs = append(errs, fmt.Sprintf("--max-mutating-requests-inflight %d must not be negative (0 means no limit)", o.MaxMutatingRequestsInFlight))
	}
	return errs
}
