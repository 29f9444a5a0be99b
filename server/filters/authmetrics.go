package filters

import (
	"strings"
	"sync"
	"time"
)

// AuthMetrics counts what the authentication filter decides, under
// upstream's metric names and labels, for /metrics to expose. It is safe
// for concurrent use; the zero value is ready.
type AuthMetrics struct {
	// systemDefault is the user name of the system namespace's default
	// service account, one of the names counted as itself.
	systemDefault string

	mu sync.Mutex
	// users is authenticated_user_requests by username label.
	users map[string]uint64
	// attempts is authentication_attempts by result label; durations the
	// count and sum of authentication_duration_seconds by result.
	attempts  map[string]uint64
	durations map[string]time.Duration
}

// Results of an authentication attempt.
const (
	AuthSuccess = "success"
	AuthFailure = "failure"
	AuthError   = "error"
)

// NewAuthMetrics returns counters for a server whose system namespace is
// systemNamespace.
func NewAuthMetrics(systemNamespace string) *AuthMetrics {
	return &AuthMetrics{systemDefault: "system:serviceaccount:" + systemNamespace + ":default"}
}

// record counts one attempt that took d; user is "" unless it succeeded.
func (m *AuthMetrics) record(result, user string, d time.Duration) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.attempts == nil {
		m.users, m.attempts, m.durations = map[string]uint64{}, map[string]uint64{}, map[string]time.Duration{}
	}
	m.attempts[result]++
	m.durations[result] += d
	if result == AuthSuccess {
		m.users[m.usernameLabel(user)]++
	}
}

// usernameLabel keeps the label's values few, as upstream: a few known
// internal identities by name, e-mail addresses as one value, everyone
// else as another.
func (m *AuthMetrics) usernameLabel(name string) string {
	switch {
	case name == "admin" || name == "client" || name == "kube_proxy" || name == "kubelet" || name == m.systemDefault:
		return name
	case strings.Contains(name, "@"):
		return "email_id"
	}
	return "other"
}

// AuthCounts is a snapshot of AuthMetrics.
type AuthCounts struct {
	// UserRequests is authenticated_user_requests by username label.
	UserRequests map[string]uint64
	// Attempts is authentication_attempts by result.
	Attempts map[string]uint64
	// Durations is the sum of authentication_duration_seconds by result
	// (its count is Attempts).
	Durations map[string]time.Duration
}

// Snapshot returns copies of the counters.
func (m *AuthMetrics) Snapshot() AuthCounts {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := AuthCounts{UserRequests: map[string]uint64{}, Attempts: map[string]uint64{}, Durations: map[string]time.Duration{}}
	for k, v := range m.users {
		c.UserRequests[k] = v
	}
	for k, v := range m.attempts {
		c.Attempts[k] = v
	}
	for k, v := range m.durations {
		c.Durations[k] = v
	}
	return c
}
