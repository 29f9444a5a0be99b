package security

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/common/types"

	"platd/config"
)

// maxCachedReviews bounds a webhook authorizer's answer cache; past it,
// expired entries are dropped, and if that is not enough the cache is
// emptied: the cost is only repeated calls, never a wrong answer.
const maxCachedReviews = 8192

// maxCachedAttributesLen is upstream's limit on what is cached: a request
// whose names and path add up to this many bytes or more is always sent,
// so a client cannot fill the cache with huge keys.
const maxCachedAttributesLen = 10000

// ErrBothAllowedAndDenied is the error of a review that says both.
var ErrBothAllowedAndDenied = errors.New("webhook subject access review returned both allow and deny response")

// Webhook call results, the result label of the webhook metrics.
const (
	WebhookResultSuccess  = "success"
	WebhookResultCanceled = "canceled"
	WebhookResultTimeout  = "timeout"
	WebhookResultError    = "error"
)

// WebhookAuthorizerConfig configures NewWebhookAuthorizer.
type WebhookAuthorizerConfig struct {
	// Name labels the metrics ("webhook" for the flags' authorizer).
	Name string
	// Client says where the webhook is; Client.Server is the full URL
	// reviews are POSTed to.
	Client config.KubeconfigClient
	// Version is the SubjectAccessReview version sent: "v1" or "v1beta1".
	Version string
	// AuthorizedTTL and UnauthorizedTTL are how long allowed and other
	// answers are remembered; zero caches nothing of that kind.
	AuthorizedTTL, UnauthorizedTTL time.Duration
	// Timeout bounds one call.
	Timeout time.Duration
	// FailurePolicy is the decision when the webhook cannot be asked:
	// config.FailurePolicyNoOpinion (also "") or config.FailurePolicyDeny.
	FailurePolicy string
	// MatchConditions must all be true for the webhook to be asked;
	// Compiler compiles them.
	MatchConditions []string
	Compiler        *AuthzCompiler
	// Brand spells the authorization group.
	Brand config.Brand
	// Metrics accumulates the counters under Name; nil keeps them with
	// this authorizer only.
	Metrics *AuthzWebhookMetrics
}

// WebhookAuthorizer asks a remote webhook with a SubjectAccessReview and
// caches its answers. Safe for concurrent use.
type WebhookAuthorizer struct {
	*webhookClient
	name                           string
	apiVersion                     string
	v1beta1                        bool
	authorizedTTL, unauthorizedTTL time.Duration
	onError                        Decision
	conditions                     []*compiledExpr
	now                            func() time.Time

	metrics *AuthzWebhookMetrics

	mu    sync.Mutex
	cache map[string]reviewCacheEntry
}

type reviewCacheEntry struct {
	status  sarStatus
	expires time.Time
}

// WebhookAuthzMetrics are a webhook authorizer's counters, named after
// upstream's metrics; maps are keyed by the result label.
type WebhookAuthzMetrics struct {
	// Evaluations is apiserver_authorization_webhook_evaluations_total,
	// DurationSeconds the sum of
	// apiserver_authorization_webhook_duration_seconds.
	Evaluations     map[string]uint64
	DurationSeconds map[string]float64
	// FailOpen is apiserver_authorization_webhook_evaluations_fail_open_total:
	// failed calls that were taken as no opinion.
	FailOpen map[string]uint64
	// MatchConditionErrors, MatchConditionExclusions and
	// MatchConditionSeconds are the apiserver_authorization_match_condition_*
	// counters of this authorizer.
	MatchConditionErrors, MatchConditionExclusions uint64
	MatchConditionSeconds                          float64
}

// NewWebhookAuthorizer builds the webhook authorizer cfg describes. Close
// releases its connections.
func NewWebhookAuthorizer(cfg WebhookAuthorizerConfig) (*WebhookAuthorizer, error) {
	if cfg.Version != "v1" && cfg.Version != "v1beta1" {
		return nil, fmt.Errorf("unsupported authorization webhook version %q, supported versions are %q, %q", cfg.Version, "v1", "v1beta1")
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = config.LegacyAuthzWebhookTimeout
	}
	c, err := newWebhookClient(cfg.Client, timeout)
	if err != nil {
		return nil, err
	}
	w := &WebhookAuthorizer{
		webhookClient: c, name: cfg.Name, apiVersion: cfg.Brand.Group("authorization") + "/" + cfg.Version, v1beta1: cfg.Version == "v1beta1",
		authorizedTTL: cfg.AuthorizedTTL, unauthorizedTTL: cfg.UnauthorizedTTL, onError: DecisionNoOpinion, now: time.Now,
		cache: map[string]reviewCacheEntry{}, metrics: cfg.Metrics,
	}
	if w.metrics == nil {
		w.metrics = NewAuthzWebhookMetrics()
	}
	switch cfg.FailurePolicy {
	case "", config.FailurePolicyNoOpinion:
	case config.FailurePolicyDeny:
		w.onError = DecisionDeny
	default:
		return nil, fmt.Errorf("unsupported failure policy %q", cfg.FailurePolicy)
	}
	for _, expr := range cfg.MatchConditions {
		if cfg.Compiler == nil {
			return nil, errors.New("match conditions need an expression compiler")
		}
		ce, err := cfg.Compiler.compile(expr)
		if err != nil {
			return nil, fmt.Errorf("match condition %q: %w", expr, err)
		}
		w.conditions = append(w.conditions, ce)
	}
	return w, nil
}

// Name is the authorizer's name in metrics.
func (w *WebhookAuthorizer) Name() string { return w.name }

// Close drops the idle connections to the webhook.
func (w *WebhookAuthorizer) Close() { w.closeIdle() }

// Metrics returns a copy of the counters under the authorizer's name.
func (w *WebhookAuthorizer) Metrics() WebhookAuthzMetrics { return w.metrics.Snapshot()[w.name] }

// AuthzWebhookMetrics holds webhook authorizers' counters by authorizer
// name. A server keeps one, so the counters outlive the authorizers a
// configuration reload replaces, as upstream's process-wide metrics do.
// Safe for concurrent use.
type AuthzWebhookMetrics struct {
	mu sync.Mutex
	by map[string]*WebhookAuthzMetrics
}

// NewAuthzWebhookMetrics returns an empty set of counters.
func NewAuthzWebhookMetrics() *AuthzWebhookMetrics {
	return &AuthzWebhookMetrics{by: map[string]*WebhookAuthzMetrics{}}
}

// Snapshot returns a copy of every authorizer's counters.
func (r *AuthzWebhookMetrics) Snapshot() map[string]WebhookAuthzMetrics {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]WebhookAuthzMetrics, len(r.by))
	for name, m := range r.by {
		c := *m
		c.Evaluations, c.DurationSeconds, c.FailOpen = maps.Clone(m.Evaluations), maps.Clone(m.DurationSeconds), maps.Clone(m.FailOpen)
		out[name] = c
	}
	return out
}

// update changes name's counters under the lock.
func (r *AuthzWebhookMetrics) update(name string, f func(m *WebhookAuthzMetrics)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.by[name]
	if m == nil {
		m = &WebhookAuthzMetrics{Evaluations: map[string]uint64{}, DurationSeconds: map[string]float64{}, FailOpen: map[string]uint64{}}
		r.by[name] = m
	}
	f(m)
}

// sar is the wire form of a SubjectAccessReview, v1 and v1beta1 alike
// (v1beta1 carries the groups under "group").
type sar struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		CreationTimestamp *string `json:"creationTimestamp"`
	} `json:"metadata"`
	Spec   sarSpec   `json:"spec"`
	Status sarStatus `json:"status"`
}

// The attribute types also carry the names match conditions read them by
// (celSARSpec).
type sarSpec struct {
	ResourceAttributes    *sarResourceAttributes    `json:"resourceAttributes,omitempty"`
	NonResourceAttributes *sarNonResourceAttributes `json:"nonResourceAttributes,omitempty"`
	User                  string                    `json:"user,omitempty"`
	Groups                []string                  `json:"groups,omitempty"`
	Group                 []string                  `json:"group,omitempty"`
	Extra                 map[string][]string       `json:"extra,omitempty"`
	UID                   string                    `json:"uid,omitempty"`
}

type sarResourceAttributes struct {
	Namespace     string       `json:"namespace,omitempty" cel:"namespace"`
	Verb          string       `json:"verb,omitempty" cel:"verb"`
	Group         string       `json:"group,omitempty" cel:"group"`
	Version       string       `json:"version,omitempty" cel:"version"`
	Resource      string       `json:"resource,omitempty" cel:"resource"`
	Subresource   string       `json:"subresource,omitempty" cel:"subresource"`
	Name          string       `json:"name,omitempty" cel:"name"`
	FieldSelector *sarSelector `json:"fieldSelector,omitempty" cel:"fieldSelector"`
	LabelSelector *sarSelector `json:"labelSelector,omitempty" cel:"labelSelector"`
}

type sarSelector struct {
	RawSelector  string                   `json:"rawSelector,omitempty" cel:"rawSelector"`
	Requirements []sarSelectorRequirement `json:"requirements,omitempty" cel:"requirements"`
}

type sarSelectorRequirement struct {
	Key      string   `json:"key" cel:"key"`
	Operator string   `json:"operator" cel:"operator"`
	Values   []string `json:"values,omitempty" cel:"values"`
}

type sarNonResourceAttributes struct {
	Path string `json:"path,omitempty" cel:"path"`
	Verb string `json:"verb,omitempty" cel:"verb"`
}

type sarStatus struct {
	Allowed         bool   `json:"allowed"`
	Denied          bool   `json:"denied,omitempty"`
	Reason          string `json:"reason,omitempty"`
	EvaluationError string `json:"evaluationError,omitempty"`
}

// reviewSpec is the v1 spec of a; the webhook's version moves the groups.
func reviewSpec(a Attributes) sarSpec {
	var s sarSpec
	if a.User != nil {
		s.User, s.Groups, s.UID = a.User.Name, a.User.Groups, a.User.UID
		if len(a.User.Extra) > 0 {
			s.Extra = a.User.Extra
		}
	}
	if !a.ResourceRequest {
		s.NonResourceAttributes = &sarNonResourceAttributes{Path: a.Path, Verb: a.Verb}
		return s
	}
	s.ResourceAttributes = &sarResourceAttributes{Namespace: a.Namespace, Verb: a.Verb, Group: a.APIGroup, Version: a.APIVersion,
		Resource: a.Resource, Subresource: a.Subresource, Name: a.Name,
		FieldSelector: sarSelectorOf(a.FieldSelector), LabelSelector: sarSelectorOf(a.LabelSelector)}
	return s
}

func sarSelectorOf(reqs []SelectorRequirement) *sarSelector {
	if len(reqs) == 0 {
		return nil
	}
	s := &sarSelector{}
	for _, r := range reqs {
		s.Requirements = append(s.Requirements, sarSelectorRequirement{Key: r.Key, Operator: r.Operator, Values: r.Values})
	}
	return s
}

// reviewBody is the JSON sent for spec in the webhook's version.
func (w *WebhookAuthorizer) reviewBody(spec sarSpec) ([]byte, error) {
	r := sar{APIVersion: w.apiVersion, Kind: "SubjectAccessReview", Spec: spec}
	if w.v1beta1 {
		r.Spec.Group, r.Spec.Groups = r.Spec.Groups, nil
	}
	return json.Marshal(&r)
}

// cacheable is upstream's rule: only requests whose names are short.
func cacheable(a Attributes) bool {
	n := len(a.Namespace) + len(a.Verb) + len(a.APIGroup) + len(a.APIVersion) + len(a.Resource) + len(a.Subresource) + len(a.Name) + len(a.Path)
	return n < maxCachedAttributesLen
}

// Authorize asks the match conditions, then the cache, then the webhook.
// A webhook that cannot be asked yields the failure policy's decision
// with the error, so that the request fails with 500 unless a later
// authorizer allows it.
func (w *WebhookAuthorizer) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	spec := reviewSpec(a)
	if len(w.conditions) > 0 {
		call, err := w.match(&spec)
		if err != nil {
			return w.onError, "", err
		}
		if !call {
			return DecisionNoOpinion, "", nil
		}
	}
	key, err := json.Marshal(&spec)
	if err != nil {
		return w.onError, "", err
	}
	useCache := cacheable(a)
	if useCache {
		if st, ok := w.cached(string(key)); ok {
			return decisionOf(st)
		}
	}
	body, err := w.reviewBody(spec)
	if err != nil {
		return w.onError, "", err
	}
	start := w.now()
	data, err := w.post(ctx, body)
	var st sarStatus
	if err == nil {
		st, err = w.decode(data)
	}
	w.record(ctx, err, w.now().Sub(start))
	if err != nil {
		slog.Error("failed to make webhook authorizer request", "name", w.name, "err", err)
		return w.onError, "", err
	}
	if useCache {
		w.store(string(key), st)
	}
	return decisionOf(st)
}

func decisionOf(st sarStatus) (Decision, string, error) {
	switch {
	case st.Allowed && st.Denied:
		return DecisionDeny, st.Reason, ErrBothAllowedAndDenied
	case st.Denied:
		return DecisionDeny, st.Reason, nil
	case st.Allowed:
		return DecisionAllow, st.Reason, nil
	}
	return DecisionNoOpinion, st.Reason, nil
}

// decode reads a webhook's answer: a SubjectAccessReview of the group
// asked.
func (w *WebhookAuthorizer) decode(data []byte) (sarStatus, error) {
	var resp sar
	if err := json.Unmarshal(data, &resp); err != nil {
		return sarStatus{}, fmt.Errorf("%w: decoding the response: %w", ErrWebhook, err)
	}
	group, _, _ := strings.Cut(w.apiVersion, "/")
	g, v, _ := strings.Cut(resp.APIVersion, "/")
	if resp.Kind != "SubjectAccessReview" || g != group || (v != "v1" && v != "v1beta1") {
		return sarStatus{}, fmt.Errorf("%w: the response is %s %q, not a SubjectAccessReview of %s", ErrWebhook, resp.APIVersion, resp.Kind, group)
	}
	return resp.Status, nil
}

// match evaluates the match conditions: any false skips the webhook (even
// when another failed to evaluate), else any evaluation error is the
// error.
func (w *WebhookAuthorizer) match(spec *sarSpec) (bool, error) {
	start := w.now()
	vars := map[string]any{"request": celRequest(spec)}
	var errs []error
	for _, c := range w.conditions {
		v, err := c.eval(vars)
		if err == nil && v.Type() != types.BoolType {
			err = fmt.Errorf("eval result type should be bool but got %v", v.Type())
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cel evaluation error: expression '%s' resulted in error: %w", c.expr, err))
			continue
		}
		if v.Value() == false {
			w.recordMatch(start, false, true)
			return false, nil
		}
	}
	w.recordMatch(start, len(errs) > 0, false)
	return len(errs) == 0, errors.Join(errs...)
}

func (w *WebhookAuthorizer) recordMatch(start time.Time, failed, excluded bool) {
	d := w.now().Sub(start)
	w.metrics.update(w.name, func(m *WebhookAuthzMetrics) {
		m.MatchConditionSeconds += d.Seconds()
		if failed {
			m.MatchConditionErrors++
		}
		if excluded {
			m.MatchConditionExclusions++
		}
	})
}

func (w *WebhookAuthorizer) record(ctx context.Context, err error, d time.Duration) {
	result := WebhookResultSuccess
	if err != nil {
		var ne net.Error
		switch {
		case errors.Is(err, context.Canceled) || ctx.Err() == context.Canceled:
			result = WebhookResultCanceled
		case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
			result = WebhookResultTimeout
		default:
			result = WebhookResultError
		}
	}
	failOpen := err != nil && w.onError == DecisionNoOpinion
	w.metrics.update(w.name, func(m *WebhookAuthzMetrics) {
		m.Evaluations[result]++
		m.DurationSeconds[result] += d.Seconds()
		if failOpen {
			m.FailOpen[result]++
		}
	})
}

func (w *WebhookAuthorizer) cached(key string) (sarStatus, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.cache[key]
	if !ok {
		return sarStatus{}, false
	}
	if !w.now().Before(e.expires) {
		delete(w.cache, key)
		return sarStatus{}, false
	}
	return e.status, true
}

func (w *WebhookAuthorizer) store(key string, st sarStatus) {
	ttl := w.unauthorizedTTL
	if st.Allowed {
		ttl = w.authorizedTTL
	}
	if ttl <= 0 {
		return
	}
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.cache) >= maxCachedReviews {
		for k, e := range w.cache {
			if !now.Before(e.expires) {
				delete(w.cache, k)
			}
		}
		if len(w.cache) >= maxCachedReviews {
			clear(w.cache)
		}
	}
	w.cache[key] = reviewCacheEntry{status: st, expires: now.Add(ttl)}
}

// RulesFor lists nothing: a webhook cannot enumerate what it allows, so
// the list is incomplete.
func (w *WebhookAuthorizer) RulesFor(context.Context, *User, string) (Rules, bool, error) {
	return Rules{}, true, nil
}
