package security

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"platd/config"
)

var authzGroup = testBrand.Group("authorization")

// sarServer answers every SubjectAccessReview with status (JSON) and the
// apiVersion asked.
func sarServer(t *testing.T, status func(body string) string) *reviewServer {
	var rs *reviewServer
	rs = newReviewServer(t, func(w http.ResponseWriter, _ string) {
		body := rs.lastBody()
		av := authzGroup + "/v1"
		if strings.Contains(body, "/v1beta1") {
			av = authzGroup + "/v1beta1"
		}
		st := status(body)
		if strings.HasPrefix(st, "HTTP ") {
			http.Error(w, st, http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, `{"apiVersion":"`+av+`","kind":"SubjectAccessReview","status":`+st+`}`)
	})
	return rs
}

func newTestAuthz(t *testing.T, rs *reviewServer, cfg WebhookAuthorizerConfig, clock *fakeClock) (*WebhookAuthorizer, *[]time.Duration) {
	t.Helper()
	cfg.Client, cfg.Brand = rs.client, testBrand
	if cfg.Version == "" {
		cfg.Version = "v1"
	}
	if len(cfg.MatchConditions) > 0 {
		c, err := NewAuthzCompiler(nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Compiler = c
	}
	w, err := NewWebhookAuthorizer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	w.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	if clock != nil {
		w.now = clock.Now
	}
	t.Cleanup(w.Close)
	return w, &waits
}

var alice = &User{Name: "alice", UID: "1001", Groups: []string{"dev", "system:authenticated"}, Extra: map[string][]string{"scopes": {"a"}}}

func getPod() Attributes {
	return Attributes{User: alice, Verb: "get", Namespace: "ns1", APIVersion: "v1", Resource: "pods", Name: "p1", ResourceRequest: true}
}

func TestWebhookAuthorizerRequestBodies(t *testing.T) {
	t.Parallel()
	rs := sarServer(t, func(string) string { return `{"allowed":true}` })
	list := Attributes{User: alice, Verb: "list", APIGroup: "apps", APIVersion: "v1", Resource: "deployments", ResourceRequest: true,
		FieldSelector: []SelectorRequirement{{Key: "metadata.name", Operator: "In", Values: []string{"a"}}},
		LabelSelector: []SelectorRequirement{{Key: "tier", Operator: "Exists"}, {Key: "app", Operator: "NotIn", Values: []string{"x", "y"}}}}
	cases := []struct {
		name, version string
		a             Attributes
		want          string
	}{
		{"v1 resource", "v1", getPod(), `{"apiVersion":"` + authzGroup + `/v1","kind":"SubjectAccessReview","metadata":{"creationTimestamp":null},` +
			`"spec":{"resourceAttributes":{"namespace":"ns1","verb":"get","version":"v1","resource":"pods","name":"p1"},` +
			`"user":"alice","groups":["dev","system:authenticated"],"extra":{"scopes":["a"]},"uid":"1001"},"status":{"allowed":false}}`},
		{"v1beta1 resource", "v1beta1", getPod(), `{"apiVersion":"` + authzGroup + `/v1beta1","kind":"SubjectAccessReview","metadata":{"creationTimestamp":null},` +
			`"spec":{"resourceAttributes":{"namespace":"ns1","verb":"get","version":"v1","resource":"pods","name":"p1"},` +
			`"user":"alice","group":["dev","system:authenticated"],"extra":{"scopes":["a"]},"uid":"1001"},"status":{"allowed":false}}`},
		{"v1 non-resource", "v1", Attributes{User: &User{Name: "bob"}, Verb: "get", Path: "/healthz"},
			`{"apiVersion":"` + authzGroup + `/v1","kind":"SubjectAccessReview","metadata":{"creationTimestamp":null},` +
				`"spec":{"nonResourceAttributes":{"path":"/healthz","verb":"get"},"user":"bob"},"status":{"allowed":false}}`},
		{"v1 selectors", "v1", list, `{"apiVersion":"` + authzGroup + `/v1","kind":"SubjectAccessReview","metadata":{"creationTimestamp":null},` +
			`"spec":{"resourceAttributes":{"verb":"list","group":"apps","version":"v1","resource":"deployments",` +
			`"fieldSelector":{"requirements":[{"key":"metadata.name","operator":"In","values":["a"]}]},` +
			`"labelSelector":{"requirements":[{"key":"tier","operator":"Exists"},{"key":"app","operator":"NotIn","values":["x","y"]}]}},` +
			`"user":"alice","groups":["dev","system:authenticated"],"extra":{"scopes":["a"]},"uid":"1001"},"status":{"allowed":false}}`},
	}
	for _, tc := range cases {
		w, _ := newTestAuthz(t, rs, WebhookAuthorizerConfig{Name: "w", Version: tc.version}, nil)
		d, _, err := w.Authorize(context.Background(), tc.a)
		if err != nil || d != DecisionAllow {
			t.Fatalf("%s: %v %v", tc.name, d, err)
		}
		if got := rs.lastBody(); got != tc.want {
			t.Errorf("%s body:\n%s\nwant:\n%s", tc.name, got, tc.want)
		}
	}
}

func TestWebhookAuthorizerDecisions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status  string
		want    Decision
		reason  string
		wantErr error
	}{
		{`{"allowed":true,"reason":"ok"}`, DecisionAllow, "ok", nil},
		{`{"allowed":false,"denied":true,"reason":"no way"}`, DecisionDeny, "no way", nil},
		{`{"allowed":false,"reason":"dunno"}`, DecisionNoOpinion, "dunno", nil},
		{`{"allowed":true,"denied":true}`, DecisionDeny, "", ErrBothAllowedAndDenied},
	}
	for _, tc := range cases {
		rs := sarServer(t, func(string) string { return tc.status })
		w, _ := newTestAuthz(t, rs, WebhookAuthorizerConfig{Name: "w"}, nil)
		d, reason, err := w.Authorize(context.Background(), getPod())
		if d != tc.want || reason != tc.reason || !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: got %v %q %v", tc.status, d, reason, err)
		}
	}
	if tc := ErrBothAllowedAndDenied.Error(); tc != "webhook subject access review returned both allow and deny response" {
		t.Fatal(tc)
	}
}

func TestWebhookAuthorizerCache(t *testing.T) {
	t.Parallel()
	allowed := true
	rs := sarServer(t, func(body string) string {
		if strings.Contains(body, `"verb":"get"`) && allowed {
			return `{"allowed":true}`
		}
		return `{"allowed":false}`
	})
	clock := &fakeClock{now: time.Unix(1000, 0)}
	w, _ := newTestAuthz(t, rs, WebhookAuthorizerConfig{Name: "w", AuthorizedTTL: time.Minute, UnauthorizedTTL: 10 * time.Second}, clock)
	ctx := context.Background()
	ask := func(a Attributes, want Decision, calls int32) {
		t.Helper()
		if d, _, err := w.Authorize(ctx, a); d != want || err != nil {
			t.Fatalf("decision %v %v, want %v", d, err, want)
		}
		if got := rs.calls.Load(); got != calls {
			t.Fatalf("%d webhook calls, want %d", got, calls)
		}
	}
	del := getPod()
	del.Verb = "delete"
	ask(getPod(), DecisionAllow, 1)
	ask(getPod(), DecisionAllow, 1) // hit
	ask(del, DecisionNoOpinion, 2)
	ask(del, DecisionNoOpinion, 2) // hit
	other := getPod()
	other.User = &User{Name: "bob"}
	allowed = false
	ask(other, DecisionNoOpinion, 3) // another user is another key
	clock.Step(10 * time.Second)
	ask(del, DecisionNoOpinion, 4)  // the unauthorized TTL is over
	ask(getPod(), DecisionAllow, 4) // the authorized one is not
	clock.Step(50 * time.Second)
	ask(getPod(), DecisionNoOpinion, 5)
	// A request whose names add up to 10000 bytes is never cached.
	long := getPod()
	long.Name = strings.Repeat("n", 10000-len("ns1getv1pods"))
	ask(long, DecisionNoOpinion, 6)
	ask(long, DecisionNoOpinion, 7)
	long.Name = long.Name[1:]
	ask(long, DecisionNoOpinion, 8)
	ask(long, DecisionNoOpinion, 8)
}

func TestWebhookAuthorizerFailurePolicies(t *testing.T) {
	t.Parallel()
	rs := sarServer(t, func(string) string { return "HTTP 500" })
	for _, tc := range []struct {
		policy   string
		want     Decision
		failOpen uint64
	}{{"", DecisionNoOpinion, 1}, {config.FailurePolicyNoOpinion, DecisionNoOpinion, 1}, {config.FailurePolicyDeny, DecisionDeny, 0}} {
		before := rs.calls.Load()
		w, waits := newTestAuthz(t, rs, WebhookAuthorizerConfig{Name: "w", FailurePolicy: tc.policy, AuthorizedTTL: time.Minute, UnauthorizedTTL: time.Minute}, nil)
		d, _, err := w.Authorize(context.Background(), getPod())
		if d != tc.want || !errors.Is(err, ErrWebhook) || !strings.Contains(err.Error(), "status 500") {
			t.Fatalf("%q: %v %v", tc.policy, d, err)
		}
		if n := rs.calls.Load() - before; n != 5 || len(*waits) != 4 {
			t.Fatalf("%q: %d attempts, %d waits; want 5 and 4", tc.policy, n, len(*waits))
		}
		// Failures are not cached.
		_, _, _ = w.Authorize(context.Background(), getPod())
		if n := rs.calls.Load() - before; n != 10 {
			t.Fatalf("%q: %d attempts after a second request", tc.policy, n)
		}
		m := w.Metrics()
		if m.Evaluations[WebhookResultError] != 2 || m.FailOpen[WebhookResultError] != 2*tc.failOpen || m.Evaluations[WebhookResultSuccess] != 0 {
			t.Fatalf("%q: metrics %+v", tc.policy, m)
		}
	}
}

func TestWebhookAuthorizerUnreachableAndCanceled(t *testing.T) {
	t.Parallel()
	rs := sarServer(t, func(string) string { return `{"allowed":true}` })
	w, _ := newTestAuthz(t, rs, WebhookAuthorizerConfig{Name: "w"}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d, _, err := w.Authorize(ctx, getPod()); d != DecisionNoOpinion || err == nil {
		t.Fatalf("canceled: %v %v", d, err)
	}
	if m := w.Metrics(); m.Evaluations[WebhookResultCanceled] != 1 {
		t.Fatalf("metrics %+v", m)
	}
	d, _, err := w.Authorize(context.Background(), getPod())
	if d != DecisionAllow || err != nil {
		t.Fatalf("%v %v", d, err)
	}
	if m := w.Metrics(); m.Evaluations[WebhookResultSuccess] != 1 {
		t.Fatalf("metrics %+v", m)
	}
	if _, inc, err := w.RulesFor(context.Background(), alice, "ns1"); !inc || err != nil {
		t.Fatalf("RulesFor: incomplete=%v err=%v", inc, err)
	}
}

func TestWebhookAuthorizerMatchConditions(t *testing.T) {
	t.Parallel()
	rs := sarServer(t, func(string) string { return `{"allowed":true}` })
	ctx := context.Background()
	w, _ := newTestAuthz(t, rs, WebhookAuthorizerConfig{Name: "w", MatchConditions: []string{
		"has(request.resourceAttributes)",
		"!(request.user in ['admin'])",
		"!('system:masters' in request.groups)",
		"request.resourceAttributes.namespace != 'skip'",
	}}, nil)
	if d, _, err := w.Authorize(ctx, getPod()); d != DecisionAllow || err != nil || rs.calls.Load() != 1 {
		t.Fatalf("all true: %v %v, %d calls", d, err, rs.calls.Load())
	}
	for _, a := range []Attributes{
		{User: alice, Verb: "get", Path: "/healthz"},
		{User: &User{Name: "admin"}, Verb: "get", Resource: "pods", ResourceRequest: true},
		{User: &User{Name: "x", Groups: []string{"system:masters"}}, Verb: "get", Resource: "pods", ResourceRequest: true},
		{User: alice, Verb: "get", Namespace: "skip", Resource: "pods", ResourceRequest: true},
	} {
		if d, _, err := w.Authorize(ctx, a); d != DecisionNoOpinion || err != nil {
			t.Fatalf("%+v: %v %v", a, d, err)
		}
	}
	if n := rs.calls.Load(); n != 1 {
		t.Fatalf("webhook called %d times, want 1", n)
	}
	if m := w.Metrics(); m.MatchConditionExclusions != 4 || m.MatchConditionErrors != 0 {
		t.Fatalf("metrics %+v", m)
	}

	// An evaluation error applies the failure policy and is returned,
	// unless another condition is false.
	for _, tc := range []struct {
		policy string
		want   Decision
	}{{config.FailurePolicyNoOpinion, DecisionNoOpinion}, {config.FailurePolicyDeny, DecisionDeny}} {
		w, _ := newTestAuthz(t, rs, WebhookAuthorizerConfig{Name: "w", FailurePolicy: tc.policy, MatchConditions: []string{
			"request.extra['missing'][0] == 'x'", "request.user != 'carol'",
		}}, nil)
		d, _, err := w.Authorize(ctx, getPod())
		if d != tc.want || err == nil || !strings.Contains(err.Error(), "cel evaluation error: expression 'request.extra['missing'][0] == 'x'' resulted in error: no such key: missing") {
			t.Fatalf("%s: %v %v", tc.policy, d, err)
		}
		carol := getPod()
		carol.User = &User{Name: "carol"}
		if d, _, err := w.Authorize(ctx, carol); d != DecisionNoOpinion || err != nil {
			t.Fatalf("%s, false wins over error: %v %v", tc.policy, d, err)
		}
		if m := w.Metrics(); m.MatchConditionErrors != 1 || m.MatchConditionExclusions != 1 {
			t.Fatalf("metrics %+v", m)
		}
	}
}

func TestAuthzCompilerCheck(t *testing.T) {
	t.Parallel()
	c, err := NewAuthzCompiler(nil)
	if err != nil {
		t.Fatal(err)
	}
	for expr, want := range map[string]string{
		"has(request.resourceAttributes) && request.resourceAttributes.fieldSelector.requirements.exists(r, r.key == 'a')": "",
		"request.nonResourceAttributes.path.startsWith('/x') && request.uid == '' && size(request.extra) == 0":             "",
		"request.resourceAttributes.labelSelector.rawSelector == ''":                                                       "",
		"request.user": `Invalid value: "request.user": must evaluate to bool but got string`,
		"request.nope": `Invalid value: "request.nope": compilation failed: ERROR: <input>:1:8: undefined field 'nope'`,
	} {
		fe := c.Check(expr)
		if want == "" {
			if fe != nil {
				t.Errorf("%s: %v", expr, fe)
			}
			continue
		}
		if fe == nil {
			t.Errorf("%s: no error", expr)
			continue
		}
		fe.Field = "f"
		if got := fe.Error(); !strings.HasPrefix(got, "f: "+want) {
			t.Errorf("%s:\n%s\nwant prefix\nf: %s", expr, got, want)
		}
	}
}

func TestWebhookAuthorizerTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	rs := newReviewServer(t, func(http.ResponseWriter, string) { <-release })
	t.Cleanup(func() { close(release) })
	w, waits := newTestAuthz(t, rs, WebhookAuthorizerConfig{Name: "slow", Timeout: 30 * time.Millisecond, FailurePolicy: config.FailurePolicyDeny}, nil)
	d, _, err := w.Authorize(context.Background(), getPod())
	if d != DecisionDeny || err == nil {
		t.Fatalf("%v %v", d, err)
	}
	if len(*waits) != 4 {
		t.Fatalf("%d retries, want 4", len(*waits))
	}
	if m := w.Metrics(); m.Evaluations[WebhookResultTimeout] != 1 || len(m.FailOpen) != 0 {
		t.Fatalf("metrics %+v", m)
	}
}
