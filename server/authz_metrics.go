package server

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"platd/security"
)

// authzDecisions is apiserver_authorization_decisions_total, made once per
// server: every chain built from the flags, the configuration file or a
// reload counts into the same series.
type authzDecisions struct {
	once sync.Once
	vec  *prometheus.CounterVec
}

// counted wraps an authorizer of the chain so that its terminal decisions
// (allow and deny; no opinion passes the request on and is not counted,
// as upstream) are counted by type and name.
func (s *Server) counted(z security.Authorizer, typ, name string) security.Authorizer {
	s.authzCounts.once.Do(func() {
		s.authzCounts.vec = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_authorization_decisions_total",
			Help: "Total number of terminal decisions made by an authorizer split by authorizer type, name, and decision.",
		}, []string{"type", "name", "decision"})
		s.metrics.MustRegister(s.authzCounts.vec)
	})
	v := s.authzCounts.vec
	return &countedAuthorizer{z: z, allowed: lazyCounter{vec: v, labels: []string{typ, name, "allowed"}},
		denied: lazyCounter{vec: v, labels: []string{typ, name, "denied"}}}
}

// countedAuthorizer resolves each counter at its first decision, so a
// decision costs one atomic add and a scrape shows only decisions made.
type countedAuthorizer struct {
	z               security.Authorizer
	allowed, denied lazyCounter
}

type lazyCounter struct {
	once   sync.Once
	c      prometheus.Counter
	vec    *prometheus.CounterVec
	labels []string
}

func (l *lazyCounter) inc() {
	l.once.Do(func() { l.c = l.vec.WithLabelValues(l.labels...) })
	l.c.Inc()
}

func (c *countedAuthorizer) Authorize(ctx context.Context, a security.Attributes) (security.Decision, string, error) {
	d, reason, err := c.z.Authorize(ctx, a)
	switch d {
	case security.DecisionAllow:
		c.allowed.inc()
	case security.DecisionDeny:
		c.denied.inc()
	}
	return d, reason, err
}

// RulesFor lists the wrapped authorizer's rules; one that cannot list
// rules makes the chain's list incomplete, as it would unwrapped.
func (c *countedAuthorizer) RulesFor(ctx context.Context, u *security.User, namespace string) (security.Rules, bool, error) {
	r, ok := c.z.(security.RuleResolver)
	if !ok {
		return security.Rules{}, true, nil
	}
	return r.RulesFor(ctx, u, namespace)
}
