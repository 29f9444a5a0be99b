package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidateLifecycle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		want string
	}{
		{"defaults", func(o *Options) {
			o.MaxRequestsInFlight, o.MaxMutatingRequestsInFlight = DefaultMaxRequestsInFlight, DefaultMaxMutatingRequestsInFlight
			o.RequestTimeout = DefaultRequestTimeout
		}, ""},
		{"zero means no limit", func(o *Options) {}, ""},
		{"negative reads", func(o *Options) { o.MaxRequestsInFlight = -1 }, "--max-requests-inflight -1 must not be negative (0 means no limit)"},
		{"negative writes", func(o *Options) { o.MaxMutatingRequestsInFlight = -2 }, "--max-mutating-requests-inflight -2 must not be negative (0 means no limit)"},
		{"negative timeout", func(o *Options) { o.RequestTimeout = -time.Second }, "--request-timeout -1s must not be negative (0 means no limit)"},
		{"negative event ttl", func(o *Options) { o.EventTTL = -time.Minute }, "--event-ttl -1m0s must not be negative (0 keeps events until they are deleted)"},
		{"event ttl set", func(o *Options) { o.EventTTL = DefaultEventTTL }, ""},
		{"negative cluster signing duration", func(o *Options) { o.ClusterSigningDuration = -time.Hour }, "--cluster-signing-duration -1h0m0s must not be negative (0 means the default of a year)"},
		{"cluster signing duration set", func(o *Options) { o.ClusterSigningDuration = time.Hour }, ""},
		{"negative delay", func(o *Options) { o.ShutdownDelayDuration = -time.Second }, "--shutdown-delay-duration -1s must not be negative"},
		{"negative watch grace", func(o *Options) { o.ShutdownWatchTerminationGracePeriod = -time.Second }, "--shutdown-watch-termination-grace-period -1s must not be negative"},
		{"negative livez grace", func(o *Options) { o.LivezGracePeriod = -2 * time.Second }, "--livez-grace-period -2s must not be negative"},
		{"negative streams", func(o *Options) { o.HTTP2MaxStreamsPerConnection = -1 }, "--http2-max-streams-per-connection -1 must not be negative (0 means the default of 100)"},
		{"streams set", func(o *Options) { o.HTTP2MaxStreamsPerConnection = 1000 }, ""},
		{"negative goaway chance", func(o *Options) { o.GoawayChance = -0.1 }, "--goaway-chance can not be less than 0 or greater than 0.02"},
		{"goaway chance too high", func(o *Options) { o.GoawayChance = 0.03 }, "--goaway-chance can not be less than 0 or greater than 0.02"},
		{"goaway chance at most", func(o *Options) { o.GoawayChance = 0.02 }, ""},
		{"lifecycle set", func(o *Options) {
			o.ShutdownDelayDuration, o.ShutdownWatchTerminationGracePeriod, o.LivezGracePeriod = time.Second, time.Second, time.Second
			o.ShutdownSendRetryAfter = true
		}, ""},
	} {
		o := validOptions()
		tc.mod(&o)
		err := o.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalid saying %q", tc.name, err, tc.want)
		}
	}
}
