package builtin

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
	"platd/server/filters"
	"platd/server/registry"
)

// eventWrite is one event write a limiter test makes: by user (none when
// ""), in namespace, after the clock moved by wait; want is the refusal's
// message, "" when admitted.
type eventWrite struct {
	user, ns string
	source   string // the event's source.component
	dryRun   bool
	wait     time.Duration
	want     string
}

func TestEventRateLimit(t *testing.T) {
	t.Parallel()
	limit := func(typ string, qps, burst, cacheSize int32) config.EventRateLimit {
		return config.EventRateLimit{Type: typ, QPS: qps, Burst: burst, CacheSize: cacheSize}
	}
	const reached = "Too many requests: limit reached on type "
	tests := []struct {
		name   string
		limits []config.EventRateLimit
		writes []eventWrite
	}{
		{name: "server: the burst, then qps a second", limits: []config.EventRateLimit{limit("Server", 1, 2, 0)},
			writes: []eventWrite{{ns: "a"}, {ns: "b", user: "u"}, {ns: "c", want: reached + "Server for key "},
				{wait: time.Second, ns: "a"}, {ns: "a", want: reached + "Server for key "},
				{wait: 10 * time.Second}, {}, {want: reached + "Server for key "}}},
		{name: "namespace: a bucket each", limits: []config.EventRateLimit{limit("Namespace", 1, 1, 4096)},
			writes: []eventWrite{{ns: "a"}, {ns: "a", want: reached + "Namespace for key a"}, {ns: "b"}, {ns: "b", want: reached + "Namespace for key b"}}},
		{name: "user: a bucket each, none is the key \"\"", limits: []config.EventRateLimit{limit("User", 1, 2, 4096)},
			writes: []eventWrite{{user: "alice"}, {user: "alice"}, {user: "alice", want: reached + "User for key alice"},
				{user: "bob"}, {}, {}, {want: reached + "User for key "}}},
		{name: "source and object: the fields run together", limits: []config.EventRateLimit{limit("SourceAndObject", 1, 1, 4096)},
			writes: []eventWrite{{source: "kubelet"}, {source: "kubelet", want: reached + "SourceAndObject for key kubeletnode-1Podnsp1uid-1v1"},
				{source: "scheduler"}}},
		{name: "every limit takes a token, all reached are named", limits: []config.EventRateLimit{limit("Server", 1, 1, 0), limit("User", 1, 2, 4096)},
			writes: []eventWrite{{user: "alice"}, {user: "alice", want: reached + "Server for key "},
				{wait: time.Second, user: "alice"},
				{user: "alice", want: "Too many requests: [limit reached on type Server for key , limit reached on type User for key alice]"}}},
		{name: "the same message once", limits: []config.EventRateLimit{limit("Server", 1, 1, 0), limit("Server", 1, 1, 0)},
			writes: []eventWrite{{}, {want: reached + "Server for key "}}},
		{name: "dry runs are not counted", limits: []config.EventRateLimit{limit("Server", 1, 1, 0)},
			writes: []eventWrite{{dryRun: true}, {dryRun: true}, {}, {dryRun: true}, {want: reached + "Server for key "}}},
		{name: "an evicted bucket starts full", limits: []config.EventRateLimit{limit("User", 1, 1, 1)},
			writes: []eventWrite{{user: "alice"}, {user: "alice", want: reached + "User for key alice"}, {user: "bob"}, {user: "alice"},
				{user: "alice", want: reached + "User for key alice"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
			p := newEventRateLimit(&config.EventRateLimitConfiguration{Limits: tc.limits}, func() time.Time { return now })
			for i, w := range tc.writes {
				now = now.Add(w.wait)
				err := p.validate(eventWriteContext(w), nil, eventObject(t, w), nil)
				if w.want == "" {
					if err != nil {
						t.Fatalf("write %d: %v, want admitted", i, err)
					}
					continue
				}
				se := apierr.FromError(err)
				if err == nil || se.Status.Code != http.StatusTooManyRequests || se.Status.Reason != apierr.ReasonTooManyRequests ||
					se.Status.Message != w.want || se.Status.Details != nil {
					t.Fatalf("write %d: %v (%+v), want 429 TooManyRequests %q without details", i, err, err, w.want)
				}
			}
		})
	}
}

func eventWriteContext(w eventWrite) context.Context {
	ctx := context.Background()
	if w.user != "" {
		ctx = filters.WithUser(ctx, &security.User{Name: w.user, Groups: []string{"system:authenticated"}})
	}
	if w.dryRun {
		ctx = registry.WithDryRun(ctx)
	}
	return ctx
}

func eventObject(t *testing.T, w eventWrite) registry.Object {
	return decodeJSON(t, fmt.Sprintf(`{"apiVersion":"v1","kind":"Event","metadata":{"name":"e","namespace":%q},"reason":"R",
		"source":{"component":%q,"host":"node-1"},
		"involvedObject":{"kind":"Pod","namespace":"ns","name":"p1","uid":"uid-1","apiVersion":"v1"}}`, w.ns, w.source))
}

// The buckets of a limit are bounded by its cacheSize, and may be taken
// from concurrently.
func TestEventRateLimitBounded(t *testing.T) {
	t.Parallel()
	p := newEventRateLimit(&config.EventRateLimitConfiguration{Limits: []config.EventRateLimit{
		{Type: config.EventRateLimitServer, QPS: 1, Burst: 1000},
		{Type: config.EventRateLimitNamespace, QPS: 1, Burst: 1, CacheSize: 8},
	}}, time.Now)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				_ = p.validate(context.Background(), nil, eventObject(t, eventWrite{ns: fmt.Sprintf("ns-%d-%d", g, i)}), nil)
			}
		}()
	}
	wg.Wait()
	if n := p.limits[0].buckets.len(); n != 1 {
		t.Errorf("Server holds %d buckets, want 1", n)
	}
	if n := p.limits[1].buckets.len(); n != 8 {
		t.Errorf("Namespace holds %d buckets, want its cacheSize 8", n)
	}
}

// The plugin is a step of the core group's events only, and only when it
// is configured and enabled.
func TestEventRateLimitStep(t *testing.T) {
	t.Parallel()
	c := &config.EventRateLimitConfiguration{Limits: []config.EventRateLimit{{Type: config.EventRateLimitServer, QPS: 1, Burst: 1}}}
	allOn := config.AdmissionPluginsOff{}
	for _, tc := range []struct {
		name    string
		sv      Services
		limited bool
	}{
		{name: "configured and on", sv: Services{EventRateLimit: c, Admission: allOn}, limited: true},
		{name: "configured, off", sv: Services{EventRateLimit: c, Admission: config.AdmissionPluginsOff{config.PluginEventRateLimit: true}}},
		{name: "not configured", sv: Services{Admission: allOn}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ds := Describe(brand, DefaultServiceRanges(), tc.sv)
			var core, group *registry.Descriptor
			for _, d := range ds {
				if d.Kind == "Event" && d.Group == "" {
					core = d
				} else if d.Kind == "Event" {
					group = d
				}
			}
			write := func(d *registry.Descriptor) error {
				if d.Strategy.ValidateAdmission == nil {
					return nil
				}
				return d.Strategy.ValidateAdmission(context.Background(), nil, eventObject(t, eventWrite{ns: "ns"}), nil)
			}
			for i := range 3 {
				if err := write(group); err != nil {
					t.Fatalf("events group write %d: %v", i, err)
				}
			}
			first, second := write(core), write(core)
			if first != nil || (second != nil) != tc.limited {
				t.Errorf("core writes: %v, %v; want the second limited: %v", first, second, tc.limited)
			}
		})
	}
}
