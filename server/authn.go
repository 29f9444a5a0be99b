package server

import (
	"context"
	"net/http"

	"platd/security"
	"platd/server/builtin"
	"platd/server/filters"
)

// services are the server parts the built-in types answer with. The types
// are built before the parts (the authenticator needs the store the types
// describe), so each is reached through the Server when a request comes.
func (s *Server) services() builtin.Services {
	return builtin.Services{Authenticator: security.AuthenticatorFunc(s.authenticate), APIAudiences: s.opts.ServiceAccounts.Audiences(),
		Authorizer: serverChain{s}, RBAC: s.builtRBAC, PodSecurity: s.opts.Admission.PodSecurity,
		EventRateLimit: s.opts.Admission.EventRateLimit, PodNodeSelector: s.opts.Admission.PodNodeSelector,
		PodTolerationRestriction: s.opts.Admission.PodTolerationRestriction, ImagePolicyWebhook: s.opts.Admission.ImagePolicyWebhook,
		Admission: s.opts.AdmissionOff, ForbidPrivileged: s.opts.ForbidPrivileged, OnStop: s.onStop}
}

// onStop registers release to run once the server has stopped serving;
// it is called while the server is built, before it serves.
func (s *Server) onStop(release func()) { s.stopHooks = append(s.stopHooks, release) }

// serverChain forwards to the server's authorizer chain, set in New before
// the first request is served.
type serverChain struct{ s *Server }

func (c serverChain) Authorize(ctx context.Context, a security.Attributes) (security.Decision, string, error) {
	return c.s.authz.Authorize(ctx, a)
}

func (c serverChain) RulesFor(ctx context.Context, u *security.User, namespace string) (security.Rules, bool, error) {
	return c.s.authz.RulesFor(ctx, u, namespace)
}

// authenticate runs the server's request authenticator, set in New before
// the first request is served.
func (s *Server) authenticate(r *http.Request) (*security.User, bool, error) {
	return s.authn.AuthenticateRequest(r)
}

// AuthCounts returns the authentication counters, for /metrics.
func (s *Server) AuthCounts() filters.AuthCounts { return s.authMetrics.Snapshot() }
