package config

import (
	"bytes"
	"fmt"
)

// The EventRateLimit limit types: what one token bucket is shared by.
const (
	// EventRateLimitServer is one bucket for every event write.
	EventRateLimitServer = "Server"
	// EventRateLimitNamespace is a bucket per namespace.
	EventRateLimitNamespace = "Namespace"
	// EventRateLimitUser is a bucket per requesting user.
	EventRateLimitUser = "User"
	// EventRateLimitSourceAndObject is a bucket per event source and
	// involved object.
	EventRateLimitSourceAndObject = "SourceAndObject"
)

// eventRateLimitTypes are the limit types, in the order validation
// lists them.
var eventRateLimitTypes = []string{EventRateLimitServer, EventRateLimitNamespace, EventRateLimitUser, EventRateLimitSourceAndObject}

// DefaultEventRateLimitCacheSize is the number of buckets a limit other
// than Server keeps when its configuration gives no cacheSize, as
// upstream.
const DefaultEventRateLimitCacheSize = 4096

// EventRateLimitConfiguration is the EventRateLimit plugin's
// configuration: the limits each event write is counted against.
type EventRateLimitConfiguration struct {
	Limits []EventRateLimit `json:"limits"`
}

// EventRateLimit is one limit: a token bucket per key of its Type, holding
// at most Burst writes and refilled at QPS writes a second. Loaded,
// CacheSize (how many buckets the limit keeps, least recently used
// dropped first; a dropped bucket starts full again) is set for every
// type but Server, which has one bucket.
type EventRateLimit struct {
	Type      string `json:"type"`
	QPS       int32  `json:"qps"`
	Burst     int32  `json:"burst"`
	CacheSize int32  `json:"cacheSize,omitempty"`
}

// EventRateLimitConfigAPIVersions lists the apiVersions an EventRateLimit
// Configuration may declare.
func EventRateLimitConfigAPIVersions(b Brand) []string {
	return []string{b.Group("eventratelimit.admission") + "/v1alpha1"}
}

// eventRateLimitFile is the Configuration as written; upstream decodes
// it leniently.
type eventRateLimitFile struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Limits     []EventRateLimit `json:"limits"`
}

// decodeEventRateLimitPlugin reads the EventRateLimit configuration. The
// plugin has no default: none, as a configuration without limits, is
// refused with upstream's message.
func decodeEventRateLimitPlugin(data []byte, b Brand, into *AdmissionPlugins) error {
	var f eventRateLimitFile
	if len(bytes.TrimSpace(data)) > 0 {
		if err := decodeLenient(data, &f, EventRateLimitConfigurationKind, EventRateLimitConfigAPIVersions(b)); err != nil {
			return err
		}
	}
	if errs := validateEventRateLimits(f.Limits); len(errs) > 0 {
		return errs
	}
	c := &EventRateLimitConfiguration{Limits: f.Limits}
	for i := range c.Limits {
		if l := &c.Limits[i]; l.Type != EventRateLimitServer && l.CacheSize == 0 {
			l.CacheSize = DefaultEventRateLimitCacheSize
		}
	}
	into.EventRateLimit = c
	return nil
}

// goSyntax is a bad value upstream prints in Go syntax (its internal
// type's %#v), spelled as it prints it.
type goSyntax string

func (g goSyntax) String() string { return string(g) }

// validateEventRateLimits checks the limits with upstream's rules and
// messages: at least one, each of a known type with a positive qps and
// burst and, but for Server, a cacheSize that is not negative.
func validateEventRateLimits(limits []EventRateLimit) FieldErrors {
	var errs FieldErrors
	if len(limits) == 0 {
		// Upstream prints its internal list: nil when the file gave
		// none, empty when it gave [].
		v := goSyntax("[]eventratelimit.Limit(nil)")
		if limits != nil {
			v = "[]eventratelimit.Limit{}"
		}
		errs = append(errs, invalid("limits", v, "must not be empty"))
	}
	for i, l := range limits {
		p := fmt.Sprintf("limits[%d]", i)
		if !contains(eventRateLimitTypes, l.Type) {
			errs = append(errs, notSupported(p+".type", l.Type, eventRateLimitTypes))
		}
		if l.Burst <= 0 {
			errs = append(errs, invalid(p+".burst", l.Burst, "must be positive"))
		}
		if l.QPS <= 0 {
			errs = append(errs, invalid(p+".qps", l.QPS, "must be positive"))
		}
		if l.Type != EventRateLimitServer && l.CacheSize < 0 {
			errs = append(errs, invalid(p+".cacheSize", l.CacheSize, "must not be negative"))
		}
	}
	return errs
}
