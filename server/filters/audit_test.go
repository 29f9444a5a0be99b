package filters

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
	"platd/server/audit"
	"platd/server/request"
)

// recordSink keeps the events written.
type recordSink struct {
	mu     sync.Mutex
	events []map[string]any
}

func (s *recordSink) Write(line []byte) {
	var ev map[string]any
	if err := json.Unmarshal(line, &ev); err != nil {
		panic(err)
	}
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.mu.Unlock()
}

func (s *recordSink) stages() []string {
	var out []string
	for _, ev := range s.events {
		out = append(out, ev["stage"].(string))
	}
	return out
}

// auditRequest serves method path through the AuditID and Audit filters
// (the user already authenticated) to h.
func auditRequest(t *testing.T, p *config.AuditPolicy, h http.Handler, method, path, body string, header ...string) (*recordSink, *httptest.ResponseRecorder) {
	t.Helper()
	sink := &recordSink{}
	chain := AuditID(Audit(h, audit.NewPolicy(p), sink, config.Brands["plat"]))
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	r = r.WithContext(WithUser(request.WithInfo(r.Context(), request.Parse(r.Method, r.URL)), &security.User{Name: "bob", Groups: []string{"dev"}}))
	w := httptest.NewRecorder()
	chain.ServeHTTP(w, r)
	return sink, w
}

func policyAt(level string, omit ...string) *config.AuditPolicy {
	return &config.AuditPolicy{Rules: []config.AuditRule{{Level: level, OmitStages: omit}}}
}

func TestAuditStages(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	cases := []struct {
		name, path string
		policy     *config.AuditPolicy
		want       string
	}{
		{"get", "/api/v1/namespaces/a/pods/p", policyAt(config.AuditLevelMetadata), "RequestReceived ResponseComplete"},
		{"watch", "/api/v1/namespaces/a/pods?watch=1", policyAt(config.AuditLevelMetadata), "RequestReceived ResponseStarted ResponseComplete"},
		{"omitted", "/api/v1/namespaces/a/pods?watch=1", policyAt(config.AuditLevelMetadata, config.AuditStageRequestReceived, config.AuditStageResponseStarted), "ResponseComplete"},
		{"level None", "/api/v1/namespaces/a/pods/p", policyAt(config.AuditLevelNone), ""},
		{"non-resource", "/healthz", policyAt(config.AuditLevelMetadata), "RequestReceived ResponseComplete"},
	}
	for _, c := range cases {
		sink, _ := auditRequest(t, c.policy, ok, "GET", c.path, "")
		if got := strings.Join(sink.stages(), " "); got != c.want {
			t.Errorf("%s: stages %q, want %q", c.name, got, c.want)
		}
	}
}

func TestAuditPanic(t *testing.T) {
	t.Parallel()
	boom := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	defer func() {
		if v := recover(); v != "boom" {
			t.Errorf("recovered %v: the panic must go on to the recovery filter", v)
		}
	}()
	auditRequest(t, policyAt(config.AuditLevelMetadata), boom, "GET", "/api/v1/namespaces/a/pods/p", "")
}

func TestAuditPanicEvent(t *testing.T) {
	t.Parallel()
	sink := &recordSink{}
	boom := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	h := Recover(Audit(boom, audit.NewPolicy(policyAt(config.AuditLevelMetadata)), sink, config.Brands["plat"]), slog.New(slog.DiscardHandler))
	r := httptest.NewRequest("GET", "/api/v1/namespaces/a/pods/p", nil)
	r = r.WithContext(request.WithInfo(r.Context(), request.Parse(r.Method, r.URL)))
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got := strings.Join(sink.stages(), " "); got != "RequestReceived Panic" {
		t.Fatalf("stages %q", got)
	}
	st, _ := json.Marshal(sink.events[1]["responseStatus"])
	if want := `{"code":500,"message":"APIServer panic'd: boom","metadata":{},"reason":"InternalError","status":"Failure"}`; string(st) != want {
		t.Errorf("responseStatus %s", st)
	}
	if sink.events[1]["user"] == nil {
		t.Error("no user object")
	}
}

func TestAuditResponseStatus(t *testing.T) {
	t.Parallel()
	notFound := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := apierr.NotFound("", "pods", "p")
		audit.LogResponseStatus(r.Context(), &e.Status)
		w.WriteHeader(http.StatusNotFound)
	})
	sink, w := auditRequest(t, policyAt(config.AuditLevelMetadata), notFound, "GET", "/api/v1/namespaces/a/pods/p", "", "Audit-ID", "mine")
	if got := w.Header().Get("Audit-Id"); got != "mine" {
		t.Errorf("Audit-Id %q", got)
	}
	ev := sink.events[len(sink.events)-1]
	st, _ := json.Marshal(ev["responseStatus"])
	if want := `{"code":404,"details":{"kind":"pods","name":"p"},"message":"pods \"p\" not found","metadata":{},"reason":"NotFound","status":"Failure"}`; string(st) != want {
		t.Errorf("responseStatus %s", st)
	}
	if ev["auditID"] != "mine" {
		t.Errorf("auditID %v", ev["auditID"])
	}
}

func TestAuditBodies(t *testing.T) {
	t.Parallel()
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 100)
		n, _ := r.Body.Read(b)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"kind":"ConfigMap","metadata":{"name":"c","managedFields":[{"manager":"m"}]},"got":`))
		_, _ = w.Write(b[:n])
		_, _ = w.Write([]byte("}\n"))
	})
	cases := []struct {
		level, contentType string
		omitManaged        bool
		req, resp          string
	}{
		{config.AuditLevelMetadata, "application/json", false, "", ""},
		{config.AuditLevelRequest, "application/json", false, `{"a": 1}`, ""},
		{config.AuditLevelRequest, "application/yaml", false, `{"a":1}`, ""},
		{config.AuditLevelRequest, config.Brands["plat"].ProtobufMediaType, false, "", ""},
		{config.AuditLevelRequestResponse, "application/merge-patch+json", false, `{"a": 1}`,
			`{"kind":"ConfigMap","metadata":{"name":"c","managedFields":[{"manager":"m"}]},"got":{"a": 1}}`},
		{config.AuditLevelRequestResponse, "application/json", true, `{"a": 1}`, `{"kind":"ConfigMap","metadata":{"name":"c"},"got":{"a": 1}}`},
	}
	for _, c := range cases {
		body := `{"a": 1}`
		if c.contentType == "application/yaml" {
			body = "a: 1\n"
		}
		p := policyAt(c.level)
		p.OmitManagedFields = c.omitManaged
		sink, _ := auditRequest(t, p, echo, "PATCH", "/api/v1/namespaces/a/configmaps/c", body, "Content-Type", c.contentType)
		ev := sink.events[len(sink.events)-1]
		compact := func(s string) string {
			if s == "" {
				return "null"
			}
			var v any
			_ = json.Unmarshal([]byte(s), &v)
			b, _ := json.Marshal(v)
			return string(b)
		}
		got := func(k string) string { b, _ := json.Marshal(ev[k]); return string(b) }
		if g, w := got("requestObject"), compact(c.req); g != w {
			t.Errorf("%s %s: requestObject %s, want %s", c.level, c.contentType, g, w)
		}
		if g, w := got("responseObject"), compact(c.resp); g != w {
			t.Errorf("%s %s: responseObject %s, want %s", c.level, c.contentType, g, w)
		}
	}
}

func TestAuthorizeAnnotations(t *testing.T) {
	t.Parallel()
	cases := []struct {
		z    security.Authorizer
		want string
	}{
		{security.AuthorizerFunc(func(context.Context, security.Attributes) (security.Decision, string, error) {
			return security.DecisionAllow, "by rule", nil
		}), `{"authorization.DOMAIN/decision":"allow","authorization.DOMAIN/reason":"by rule"}`},
		{security.AuthorizerFunc(func(context.Context, security.Attributes) (security.Decision, string, error) {
			return security.DecisionDeny, "no", nil
		}), `{"authorization.DOMAIN/decision":"forbid","authorization.DOMAIN/reason":"no"}`},
		{security.AuthorizerFunc(func(context.Context, security.Attributes) (security.Decision, string, error) {
			return security.DecisionNoOpinion, "", errors.New("webhook down")
		}), `{"authorization.DOMAIN/reason":"internal error"}`},
	}
	b := config.Brands["plat"]
	for _, c := range cases {
		h := Authorize(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), c.z, false, b, slog.New(slog.DiscardHandler), func(w http.ResponseWriter, r *http.Request, err error) {
			w.WriteHeader(403)
		})
		sink, _ := auditRequest(t, policyAt(config.AuditLevelMetadata), h, "GET", "/api/v1/namespaces/a/pods/p", "")
		got, _ := json.Marshal(sink.events[len(sink.events)-1]["annotations"])
		if want := strings.ReplaceAll(c.want, "DOMAIN", b.Domain); string(got) != want {
			t.Errorf("annotations %s, want %s", got, want)
		}
	}
}

func TestAuditFailedRequest(t *testing.T) {
	t.Parallel()
	sink := &recordSink{}
	p := audit.NewPolicy(&config.AuditPolicy{Rules: []config.AuditRule{
		{Level: config.AuditLevelNone, Users: []string{"bob"}},
		{Level: config.AuditLevelMetadata},
	}})
	fail := AuditFailedRequest(p, sink, config.Brands["plat"])
	for _, c := range []struct{ auth, want string }{
		{"Bearer x", "Authentication failed, attempted: bearer"},
		{"", "Authentication failed, no credentials provided"},
	} {
		r := httptest.NewRequest("GET", "/api/v1/pods", nil)
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		r = r.WithContext(WithUser(request.WithInfo(r.Context(), request.Parse(r.Method, r.URL)), &security.User{Name: "bob"}))
		w, _ := fail(httptest.NewRecorder(), r, audit.AuthMethods(r))
		w.WriteHeader(http.StatusUnauthorized)
		ev := sink.events[len(sink.events)-1]
		st, _ := json.Marshal(ev["responseStatus"])
		// The policy sees no user: the rule for bob does not apply.
		if want := `{"code":401,"message":"` + c.want + `","metadata":{}}`; string(st) != want || ev["stage"] != "ResponseStarted" {
			t.Errorf("%s event: %v", st, ev)
		}
	}
	if AuditFailedRequest(nil, sink, config.Brands["plat"]) != nil {
		t.Error("no policy must mean no hook")
	}
}

// A handler panic, even one the timeout filter carries over from its
// worker with the stack, is answered with upstream's plain text alone:
// the panic and its stack go to the log, not to the client.
func TestPanicAnswerHidesTheStack(t *testing.T) {
	t.Parallel()
	boom := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("secret detail") })
	writeErr := func(w http.ResponseWriter, r *http.Request, err error) { w.WriteHeader(apierr.Code(err)) }
	var logged strings.Builder
	h := Recover(RequestInfo(Timeout(boom, time.Minute, writeErr, nil, slog.New(slog.DiscardHandler))), slog.New(slog.NewTextHandler(&logged, nil)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces/a/configmaps", nil))
	if rec.Code != 500 || rec.Body.String() != "This request caused apiserver to panic. Look in the logs for details.\n" ||
		rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("answer %d %q %v", rec.Code, rec.Body, rec.Header())
	}
	if !strings.Contains(logged.String(), "secret detail") || !strings.Contains(logged.String(), "goroutine") {
		t.Errorf("the log lacks the panic and its stack: %.300s", logged.String())
	}
}
