package builtin

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/time/rate"

	"platd/config"
	"platd/server/apierr"
	"platd/server/filters"
	"platd/server/registry"
)

// eventRateLimit is the EventRateLimit admission plugin's step of the
// core group's events: every create and update of an event is counted
// against each configured limit, and refused with 429 when a limit has
// no token left. As upstream's, it sees only the core group's Event
// kind: a write through the events group is of another kind and is not
// counted. A dry run is not counted either: it stores nothing.
//
// Its state is token buckets in memory, bounded by each limit's
// cacheSize; it runs no goroutine. It may be used concurrently.
type eventRateLimit struct {
	limits []*eventLimit
	now    func() time.Time
}

// newEventRateLimit builds the plugin from its validated configuration,
// reading time from now.
func newEventRateLimit(c *config.EventRateLimitConfiguration, now func() time.Time) *eventRateLimit {
	p := &eventRateLimit{now: now}
	for _, l := range c.Limits {
		size := int(l.CacheSize)
		if l.Type == config.EventRateLimitServer || size <= 0 {
			// Server's one bucket has the one key "".
			size = 1
		}
		qps, burst := rate.Limit(l.QPS), int(l.Burst)
		p.limits = append(p.limits, &eventLimit{
			kind:    l.Type,
			key:     eventLimitKeys[l.Type],
			buckets: newLRU[*rate.Limiter](size),
			bucket:  func() *rate.Limiter { return rate.NewLimiter(qps, burst) },
		})
	}
	return p
}

// eventLimit is one configured limit: the bucket of each key of its type.
type eventLimit struct {
	kind string
	key  func(ctx context.Context, obj registry.Object) string
	// buckets hold the buckets of the keys last used (a dropped key
	// starts again with a full bucket, as upstream's cache does); bucket
	// makes a full one.
	buckets *lru[*rate.Limiter]
	bucket  func() *rate.Limiter
}

// eventLimitKeys are the keys that choose an event's bucket, per limit
// type: its namespace, its requesting user, or its source and involved
// object run together as upstream keys them.
var eventLimitKeys = map[string]func(ctx context.Context, obj registry.Object) string{
	config.EventRateLimitServer: func(context.Context, registry.Object) string { return "" },
	config.EventRateLimitNamespace: func(_ context.Context, obj registry.Object) string {
		return str(obj, "metadata", "namespace")
	},
	config.EventRateLimitUser: func(ctx context.Context, _ registry.Object) string {
		if u := filters.UserFrom(ctx); u != nil {
			return u.Name
		}
		return ""
	},
	config.EventRateLimitSourceAndObject: func(_ context.Context, obj registry.Object) string {
		return str(obj, "source", "component") + str(obj, "source", "host") +
			str(obj, "involvedObject", "kind") + str(obj, "involvedObject", "namespace") + str(obj, "involvedObject", "name") +
			str(obj, "involvedObject", "uid") + str(obj, "involvedObject", "apiVersion")
	},
}

// validate counts a write of obj against every limit, each taking a token
// from its bucket whether or not another refuses, and refuses it when
// any bucket was empty: 429 TooManyRequests naming each limit reached.
func (p *eventRateLimit) validate(ctx context.Context, _ registry.Lookup, obj, _ registry.Object) error {
	if registry.IsDryRun(ctx) {
		return nil
	}
	now := p.now()
	var reached []string
	for _, l := range p.limits {
		key := l.key(ctx, obj)
		if !l.buckets.getOrAdd(key, l.bucket).AllowN(now, 1) {
			reached = append(reached, fmt.Sprintf("limit reached on type %s for key %s", l.kind, key))
		}
	}
	if len(reached) == 0 {
		return nil
	}
	return apierr.New(http.StatusTooManyRequests, apierr.ReasonTooManyRequests,
		"Too many requests: "+apierr.Aggregate(reached), nil)
}
