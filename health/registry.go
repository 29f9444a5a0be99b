// Package health holds the registry of health checks and the handlers
// that serve them at /livez, /readyz and /healthz.
//
// The package imports nothing else of this module.
package health

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
)

// Endpoint names. Each is both the URL path segment and the word in the
// "<name> check passed" line.
const (
	Healthz = "healthz"
	Livez   = "livez"
	Readyz  = "readyz"
)

// Sentinel errors returned by Registry.Add.
var (
	// ErrInvalidCheck reports a check without a name or function.
	ErrInvalidCheck = errors.New("invalid health check")
	// ErrDuplicateCheck reports a name already registered on an endpoint.
	ErrDuplicateCheck = errors.New("duplicate health check")
)

// Check is one named health check. Fn returns nil when healthy; its error
// text is logged, and shown to clients only on the single-check path
// (/readyz/<name>). Fn receives the probing request, may be called
// concurrently, and should return promptly: probes wait for it.
type Check struct {
	// Name appears in output and in the single-check path; it may contain
	// slashes ("poststarthook/rbac/bootstrap-roles").
	Name string
	Fn   func(r *http.Request) error
}

// entry is a check and the endpoints it is served on.
type entry struct {
	Check
	endpoints []string
}

// Registry holds checks in registration order, each on an explicit set of
// endpoints. It is safe for concurrent use: checks may be added while
// handlers serve, and a probe sees the checks registered when it started.
type Registry struct {
	log *slog.Logger
	// logWatch, when set, follows log's writes: failed probes are not
	// logged while one is stuck (see QuietWhileLogStuck).
	logWatch *LogWatch

	mu      sync.RWMutex
	entries []entry
}

// NewRegistry returns an empty registry that logs check failures to log
// (slog.Default when nil).
func NewRegistry(log *slog.Logger) *Registry {
	if log == nil {
		log = slog.Default()
	}
	return &Registry{log: log}
}

// QuietWhileLogStuck makes failed probes write no log line while w (which
// follows the registry's logger) sees a write in flight for over a
// second: a blocked log then holds no probe. Call it before serving.
func (r *Registry) QuietWhileLogStuck(w *LogWatch) { r.logWatch = w }

// Add registers checks, in order, on every endpoint in endpoints. Output
// lists checks in registration order, so register a check meant to come
// last (readyz's "shutdown") last. Add registers nothing if endpoints is
// empty or a check lacks a name or function (ErrInvalidCheck), or if a
// name repeats within checks or is already on one of the endpoints
// (ErrDuplicateCheck).
func (r *Registry) Add(endpoints []string, checks ...Check) error {
	if len(endpoints) == 0 {
		return fmt.Errorf("%w: no endpoints given", ErrInvalidCheck)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range checks {
		if c.Name == "" || c.Fn == nil {
			return fmt.Errorf("%w: %q", ErrInvalidCheck, c.Name)
		}
		for _, ep := range endpoints {
			if r.has(ep, c.Name) || slices.ContainsFunc(checks[:i], func(o Check) bool { return o.Name == c.Name }) {
				return fmt.Errorf("%w: %q on %s", ErrDuplicateCheck, c.Name, ep)
			}
		}
	}
	eps := slices.Clone(endpoints)
	for _, c := range checks {
		r.entries = append(r.entries, entry{Check: c, endpoints: eps})
	}
	return nil
}

// has reports whether name is registered on endpoint; r.mu must be held.
func (r *Registry) has(endpoint, name string) bool {
	for _, e := range r.entries {
		if e.Name == name && slices.Contains(e.endpoints, endpoint) {
			return true
		}
	}
	return false
}

// Checks returns a copy of the checks served on endpoint, in order.
func (r *Registry) Checks(endpoint string) []Check {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Check
	for _, e := range r.entries {
		if slices.Contains(e.endpoints, endpoint) {
			out = append(out, e.Check)
		}
	}
	return out
}
