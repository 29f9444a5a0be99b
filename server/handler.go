package server

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"platd/codec"
	"platd/config"
	"platd/security"
	"platd/server/discovery"
	"platd/server/filters"
	"platd/server/metrics"
	"platd/server/openapi"
	"platd/server/request"
)

// handler builds the filter chain around the routes. Listed outermost
// first, each layer is one line.
func (s *Server) handler(ctx context.Context, authn security.Authenticator, authz security.Authorizer) http.Handler {
	failAudit := filters.AuditFailedRequest(s.auditPolicy, s.auditSink, s.opts.Brand)
	var h http.Handler = s.routes()
	h = filters.LimitInFlight(h, s.opts.MaxRequestsInFlight, s.opts.MaxMutatingRequestsInFlight)                                        // 429 beyond the in-flight limits
	h = filters.Authorize(h, authz, s.opts.FeatureGates.Enabled(config.AuthorizeWithSelectors), s.opts.Brand, s.log, s.rest.WriteError) // 403 unless the chain allows
	h = filters.FlowControl(h, s.flows)                                                                                                 // the flow schema and priority level, in the X-Kubernetes-PF-* headers
	h = filters.Impersonate(h, authz, s.opts.Brand, s.log, s.rest.WriteError)                                                           // act as Impersonate-* when allowed to
	h = filters.Audit(h, s.auditPolicy, s.auditSink, s.opts.Brand)                                                                      // audit events, when a policy is given
	h = filters.Authenticate(ctx, h, authn, s.log, s.rest.WriteError, s.authMetrics, failAudit)                                         // 401 for bad or missing credentials
	h = filters.Timeout(h, s.opts.RequestTimeout, s.rest.WriteError, failAudit, s.log)                                                  // 504 past the request's deadline
	h = filters.WarningRecorder(h)                                                                                                      // one record of a response's warnings, deduplicated and bounded
	h = s.drain.Handler(h)                                                                                                              // counted, so a stopping server knows when they are done
	h = filters.Goaway(h, s.opts.GoawayChance)                                                                                          // GOAWAY to a fraction of HTTP/2 requests (--goaway-chance)
	h = s.metrics.Instrument(h, s.servesResource)                                                                                       // apiserver_request_* of resource requests
	h = filters.RequestInfo(h)                                                                                                          // what the request addresses
	h = filters.DefaultHeaders(h)                                                                                                       // Cache-Control default
	h = filters.RetryAfter(h, s.stopping, s.opts.ShutdownSendRetryAfter)                                                                // 429 once the server stops taking requests
	h = filters.Recover(h, s.log)                                                                                                       // a panic is a 500, not a crash
	h = filters.AuditID(h)                                                                                                              // Audit-Id on every response
	if hint := s.opts.Brand.KubectlHint; hint != "" {
		h = filters.KubectlHint(h, hint) // kubectl is told to use the brand it speaks
	}
	if s.log.Enabled(context.Background(), slog.LevelDebug) {
		h = filters.LogRequests(h, s.log) // a debug line per request
	}
	h = filters.GrowStack(h) // one stack copy per request, not one per filter that outgrows it
	return h
}

// routes maps paths to handlers: the root listing, health, version and
// OpenAPI by path, and everything under /api and /apis to discovery or the
// resource handler.
func (s *Server) routes() http.Handler {
	v := Version()
	discOpts := discovery.Options{Version: v.VersionInfo, Pretty: func(r *http.Request) bool {
		return codec.WantPretty(r.URL.Query(), r.UserAgent(), nil)
	}}
	s.discoveryAddresses(&discOpts)
	discOpts.Remote = s.agg.RemoteGroupVersions
	discOpts.Schema = s.cat.Schema
	disc := discovery.New(s.reg, s.opts.Brand, discOpts)
	oaOpts := []openapi.Option{openapi.WithSchemas(s.cat.Schema), openapi.WithKinds(s.cat.ByGVK), openapi.WithSchemaKinds(s.cat.KindsOf), openapi.WithVersion()}
	cfg, jwks := s.issuerDiscovery()
	if cfg != nil {
		oaOpts = append(oaOpts, openapi.WithIssuerDiscovery(security.OpenIDConfigurationPath, security.JWKSPath, security.JWKSMediaType))
	}
	if s.opts.NoLoopbackCompression {
		oaOpts = append(oaOpts, openapi.WithoutLoopbackCompression())
	}
	if s.opts.FeatureGates.Enabled(config.CBORServingAndStorage) {
		oaOpts = append(oaOpts, openapi.WithCBOR())
	}
	oaOpts = append(oaOpts, openapi.WithRemote(s.agg.OpenAPIKeys))
	oa := openapi.New(s.reg, s.opts.Brand, oaOpts...)
	s.oa = oa
	hr := s.healthChecks(s.startHooks())

	router := httprouter.New()
	router.RedirectTrailingSlash = false
	router.RedirectFixedPath = false
	router.HandleMethodNotAllowed = false
	// Documents served by path; the root listing names each by its path,
	// a pattern by the prefix it serves.
	type doc struct {
		listed, pattern string
		h               http.Handler
	}
	docs := []doc{
		{"/version", "/version", disc},
		{metrics.Path, metrics.Path, s.metrics},
		{"/openapi/v2", "/openapi/v2", oa},
		{"/openapi/v3", "/openapi/v3", oa},
		{"/openapi/v3/", "/openapi/v3/*path", s.remoteOpenAPI(oa)},
	}
	if cfg != nil {
		docs = append(docs, doc{security.OpenIDConfigurationPath, security.OpenIDConfigurationPath, cfg}, doc{security.JWKSPath, security.JWKSPath, jwks})
	}
	var listed []string
	for _, d := range docs {
		listed = append(listed, d.listed)
	}
	root := s.rootPaths(hr, listed)
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		router.Handler(m, "/", root)
		router.Handler(m, "/index.html", root)
		for _, d := range docs {
			router.Handler(m, d.pattern, d.h)
		}
	}
	// The health endpoints answer every method, not only GET and HEAD:
	// upstream serves them from its path mux, which does not look at the
	// method (whether a POST may probe is the authorizer's question).
	healthByRoot := make(map[string]http.Handler, len(healthEndpoints))
	for _, ep := range healthEndpoints {
		healthByRoot["/"+ep] = hr.Handler(ep)
	}
	router.NotFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := request.InfoFrom(r.Context())
		switch {
		case s.proxied(w, r):
		case info != nil && info.IsResource:
			s.rest.ServeHTTP(w, r)
		case r.URL.Path == "/api" || r.URL.Path == "/apis" || strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/apis/"):
			disc.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := healthByRoot[healthRoot(r.URL.Path)]; h != nil {
			h.ServeHTTP(w, r)
			return
		}
		router.ServeHTTP(w, r)
	})
}

// healthRoot is the first segment of path with its slash: "/readyz" of
// "/readyz" and of "/readyz/etcd".
func healthRoot(path string) string {
	if len(path) > 1 {
		if i := strings.IndexByte(path[1:], '/'); i >= 0 {
			return path[:i+1]
		}
	}
	return path
}

// proxied forwards r to an extension API server when its path is under
// /apis/<group>/<version> of a group-version platd does not serve whose
// APIService names a service, and reports whether it did.
func (s *Server) proxied(w http.ResponseWriter, r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/apis/")
	if !ok {
		return false
	}
	parts := strings.SplitN(rest, "/", 3)
	// What platd serves itself is served whatever an APIService says, so
	// that one naming a service can never shut the API out, its own
	// group's included (upstream's aggregator serves that group itself).
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" || s.reg.HasGroupVersion(parts[0], parts[1]) {
		return false
	}
	as, ok := s.agg.Lookup(parts[0], parts[1])
	if !ok {
		return false
	}
	s.agg.Proxy(w, r, as, filters.UserFrom(r.Context()))
	return true
}

// remoteOpenAPI serves the OpenAPI v3 document of a group-version an
// extension server serves by proxying the request to it (the index lists
// it, openapi.WithRemote); every other document is next's.
func (s *Server) remoteOpenAPI(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/openapi/v3/apis/")
		parts := strings.Split(rest, "/")
		if ok && len(parts) == 2 && parts[0] != "" && parts[1] != "" && !s.reg.HasGroupVersion(parts[0], parts[1]) {
			if as, remote := s.agg.Lookup(parts[0], parts[1]); remote {
				s.agg.Proxy(w, r, as, filters.UserFrom(r.Context()))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// servesResource reports whether a resource is served, so that metrics
// label only resources that exist.
func (s *Server) servesResource(group, version, resource string) bool {
	return s.reg.Lookup(group, version, resource) != nil
}

// servedKind is the kind of a served resource, "" when it is not served.
func (s *Server) servedKind(group, version, resource string) string {
	if d := s.reg.Lookup(group, version, resource); d != nil {
		return d.Kind
	}
	return ""
}
