// Package filters holds the layers every request passes before its handler:
// panic recovery, default headers, request info, authentication,
// authorization and the in-flight limit.
package filters

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"platd/config"
	"platd/security"
	"platd/security/flowcontrol"
	"platd/server/apierr"
	"platd/server/audit"
	"platd/server/request"
	"platd/server/selector"
)

// ErrorWriter renders an error as a Status negotiated to the request.
type ErrorWriter func(w http.ResponseWriter, r *http.Request, err error)

// panicMessage is upstream's answer to a request whose handler panicked:
// what panicked, and where, goes to the log only.
const panicMessage = "This request caused apiserver to panic. Look in the logs for details."

// Recover turns a panic in a handler into upstream's plain-text 500 and a
// log line with the panic and its stack, so one bad request never takes
// the server down and the client learns nothing of the server's insides.
func Recover(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				http.Error(w, panicMessage, http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// DefaultHeaders sets Cache-Control: no-cache, private on every response
// whose handler does not choose its own.
func DefaultHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache, private")
		next.ServeHTTP(w, r)
	})
}

// RequestInfo parses what the request addresses once, for every later layer.
// A URL that cannot be understood is a plain-text 500, as upstream answers
// it.
func RequestInfo(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := request.Parse(r.Method, r.URL)
		if info.Err != nil {
			internalError(w, r, fmt.Errorf("failed to create RequestInfo: %w", info.Err))
			return
		}
		next.ServeHTTP(w, r.WithContext(request.WithInfo(r.Context(), info)))
	})
}

type userKey struct{}

// WithUser returns ctx carrying the authenticated user.
func WithUser(ctx context.Context, u *security.User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the authenticated user, or nil.
func UserFrom(ctx context.Context) *security.User {
	u, _ := ctx.Value(userKey{}).(*security.User)
	return u
}

// Authenticate identifies the user; a request that fails is answered 401,
// whatever its path: a bad credential is never served as anonymous. On
// success the credential headers are removed, so no handler or proxied
// backend sees them. m, when not nil, counts the outcomes; failAudit, when
// not nil, records the refusals. Each refusal is logged at info with its
// reason class, rate-limited (authfail.go).
// The rate limiter's pending flush ends with ctx.
func Authenticate(ctx context.Context, next http.Handler, authn security.Authenticator, log *slog.Logger, writeErr ErrorWriter, m *AuthMetrics, failAudit FailedAudit) http.Handler {
	// The request log line names the user; it exists only at debug.
	logUser := log.Enabled(context.Background(), slog.LevelDebug)
	failures := newAuthFailLog(log)
	context.AfterFunc(ctx, failures.stop)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var warnings []string
		wctx := security.WithWarnings(r.Context(), func(m string) { warnings = append(warnings, m) })
		began := time.Now()
		u, ok, err := authn.AuthenticateRequest(r.WithContext(wctx))
		took := time.Since(began)
		AddWarnings(r.Context(), w.Header(), warnings...)
		if err != nil || !ok {
			result := AuthFailure
			if err != nil {
				result = AuthError
				log.Debug("unable to authenticate the request", "err", err)
			}
			m.record(result, "", took)
			failures.record(r, AuthFailureReason(err))
			if r.ProtoMajor == 2 {
				w.Header().Set("Connection", "close")
			}
			if failAudit != nil {
				w, r = failAudit(w, r, audit.AuthMethods(r))
			}
			writeErr(w, r, apierr.Unauthorized())
			return
		}
		m.record(AuthSuccess, u.Name, took)
		if logUser {
			noteUser(r.Context(), u.Name)
		}
		removeCredentialHeaders(r.Header)
		if r.ProtoMajor == 2 && u.IsAnonymous() {
			// An anonymous client cannot hold an HTTP/2 connection open
			// for others' streams: each request costs it a new one.
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r.WithContext(WithUser(r.Context(), u)))
	})
}

// removeCredentialHeaders drops the Authorization header and the
// authenticating proxy's standard identity headers.
func removeCredentialHeaders(h http.Header) {
	h.Del("Authorization")
	h.Del("X-Remote-User")
	h.Del("X-Remote-Uid")
	h.Del("X-Remote-Group")
	for k := range h {
		if len(k) >= len(remoteExtraPrefix) && strings.EqualFold(k[:len(remoteExtraPrefix)], remoteExtraPrefix) {
			delete(h, k)
		}
	}
}

const remoteExtraPrefix = "X-Remote-Extra-"

// Values of the authorization audit annotations.
const (
	decisionAllow  = "allow"
	decisionForbid = "forbid"
	reasonError    = "internal error"
)

// Authorize asks the authorizer chain; anything but Allow is 403. The
// decision and the authorizer's reason are recorded as the audit
// annotations authorization.<domain>/decision and /reason. With
// withSelectors false (AuthorizeWithSelectors off) authorizers see no
// field or label selector, as before that feature.
func Authorize(next http.Handler, authz security.Authorizer, withSelectors bool, b config.Brand, log *slog.Logger, writeErr ErrorWriter) http.Handler {
	decisionKey, reasonKey := b.Group("authorization")+"/decision", b.Group("authorization")+"/reason"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := request.InfoFrom(r.Context())
		a := requestAttributes(r, info)
		if info.IsResource && withSelectors {
			a.FieldSelector, a.LabelSelector = selectorRequirements(info)
		}
		decision, reason, err := authz.Authorize(r.Context(), a)
		ac := audit.From(r.Context()) // looked up once: nil unless audited
		// The decision is checked first: an authorizer may allow despite
		// an error of another.
		if decision == security.DecisionAllow {
			ac.Annotate(decisionKey, decisionAllow)
			ac.Annotate(reasonKey, reason)
			next.ServeHTTP(w, r)
			return
		}
		if err != nil {
			ac.Annotate(reasonKey, reasonError)
			log.Error("authorization failed", "path", r.URL.Path, "err", err)
			internalError(w, r, err)
			return
		}
		ac.Annotate(decisionKey, decisionForbid)
		ac.Annotate(reasonKey, reason)
		writeErr(w, r, forbidden(a, reason))
	})
}

// selectorRequirements parses the selectors the request info kept. One that
// does not parse is left out: the request is then authorized as unlimited,
// and the handler refuses the selector itself.
func selectorRequirements(info *request.Info) (fields, labels []security.SelectorRequirement) {
	if info.FieldSelector != "" {
		if fs, err := selector.ParseFields(info.FieldSelector); err == nil {
			fields = fs.AuthzRequirements()
		}
	}
	if info.LabelSelector != "" {
		if ls, err := selector.ParseLabels(info.LabelSelector); err == nil {
			labels = ls.AuthzRequirements()
		}
	}
	return fields, labels
}

// forbidden is the 403 of a request the authorizer refused.
func forbidden(a security.Attributes, reason string) *apierr.Error {
	msg := security.ForbiddenMessage(a, reason)
	if a.ResourceRequest {
		return apierr.NewForbidden(a.APIGroup, a.Resource, a.Name, msg)
	}
	return apierr.NewForbidden("", "", "", msg)
}

// tooManyRequestsRetryAfter is the Retry-After of an in-flight refusal:
// one second, as upstream, since slots free up at request speed.
const tooManyRequestsRetryAfter = "1"

// LimitInFlight answers 429 when more than readOnly reads (get, list) or
// mutating writes are being served at once; a limit of 0 means none.
// Long-running requests (watches, streams) do not count. A request
// FlowControl classified into an exempt priority level is served even
// when the slots are full, so an administrator, a kubelet or a load
// balancer can always reach a flooded server (upstream's default flow
// schemas put the privileged group and health probes there); before the
// flow schemas are read, those two are.
func LimitInFlight(next http.Handler, readOnly, mutating int) http.Handler {
	if readOnly == 0 && mutating == 0 {
		return next
	}
	var ro, mu chan struct{}
	if readOnly > 0 {
		ro = make(chan struct{}, readOnly)
	}
	if mutating > 0 {
		mu = make(chan struct{}, mutating)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := request.InfoFrom(r.Context())
		if info.LongRunning() {
			next.ServeHTTP(w, r)
			return
		}
		sem := mu
		if info.Verb == "get" || info.Verb == "list" {
			sem = ro
		}
		if sem == nil {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
			next.ServeHTTP(w, r)
		default:
			if exempt(r, info) {
				next.ServeHTTP(w, r)
				return
			}
			// Plain text, not a Status: upstream's max-in-flight
			// refusal is written before any negotiation.
			w.Header().Set("Retry-After", tooManyRequestsRetryAfter)
			http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
		}
	})
}

// exempt reports whether r may exceed the in-flight limits: its priority
// level is exempt, or, unclassified, it is a privileged user's or a
// health probe.
func exempt(r *http.Request, info *request.Info) bool {
	if m, ok := flowFrom(r.Context()); ok {
		return m.Exempt
	}
	return UserFrom(r.Context()).InGroup(security.SystemPrivilegedGroup) || isProbe(info)
}

// isProbe reports whether info is a health probe: a GET of /healthz,
// /readyz or /livez itself. A single check (/readyz/ping) and HEAD are
// not.
func isProbe(info *request.Info) bool {
	if info.IsResource || info.Verb != "get" {
		return false
	}
	switch info.Path {
	case "/healthz", "/readyz", "/livez":
		return true
	}
	return false
}

// Response headers naming where priority and fairness classified a
// request (upstream's X-Kubernetes-PF-FlowSchema-UID and
// X-Kubernetes-PF-PriorityLevel-UID, brand-independent), in canonical
// form, as upstream writes them.
const (
	headerFlowSchemaUID    = "X-Kubernetes-Pf-Flowschema-Uid"
	headerPriorityLevelUID = "X-Kubernetes-Pf-Prioritylevel-Uid"
)

type flowKey struct{}

// flowFrom returns the classification FlowControl made of the request.
func flowFrom(ctx context.Context) (flowcontrol.Match, bool) {
	m, ok := ctx.Value(flowKey{}).(flowcontrol.Match)
	return m, ok
}

// FlowControl classifies each request by the stored flow schemas, as
// upstream's priority and fairness does, and names the flow schema and
// priority level matched in the X-Kubernetes-PF-* response headers;
// LimitInFlight then exempts a request of an exempt priority level. The
// concurrency limits stay LimitInFlight's: requests are not queued per
// priority level. Long-running requests other than watches are not
// classified, as upstream serves them outside priority and fairness. A
// nil c classifies nothing.
func FlowControl(next http.Handler, c *flowcontrol.Classifier) http.Handler {
	if c == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := request.InfoFrom(r.Context())
		if info.LongRunning() && info.Verb != "watch" {
			next.ServeHTTP(w, r)
			return
		}
		m, ok := c.Classify(requestAttributes(r, info))
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h[headerFlowSchemaUID] = []string{m.FlowSchemaUID}
		h[headerPriorityLevelUID] = []string{m.PriorityLevelUID}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), flowKey{}, m)))
	})
}
