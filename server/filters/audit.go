package filters

import (
	"io"
	"net/http"
	"time"

	"platd/config"
	"platd/security"
	"platd/server/audit"
	"platd/server/request"
	"platd/uuid"
)

// auditIDHeader names a request's audit ID, the client's choice or ours.
const auditIDHeader = "Audit-Id"

// AuditID answers every request with an Audit-Id header: the one the
// client sent, else a new random UUID, so a client can find its request in
// the audit log whether or not audit is on.
func AuditID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Both maps hold canonical keys, which auditIDHeader is.
		id := ""
		if v := r.Header[auditIDHeader]; len(v) > 0 {
			id = v[0]
		}
		if id == "" {
			id = uuid.Fast()
		}
		w.Header()[auditIDHeader] = []string{id}
		next.ServeHTTP(w, r)
	})
}

// Audit records the requests policy selects to sink, stage by stage. It
// runs inside authentication (the policy matches the authenticated user)
// and outside impersonation and authorization, which add to the record
// (audit.SetImpersonatedUser, audit.AddAnnotation). With a nil policy it
// is not in the chain at all.
func Audit(next http.Handler, policy *audit.Policy, sink audit.Sink, b config.Brand) http.Handler {
	if policy == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := request.InfoFrom(r.Context())
		a := requestAttributes(r, info)
		cfg := policy.Evaluate(&a)
		if cfg.Level == audit.LevelNone {
			next.ServeHTTP(w, r)
			return
		}
		ac := audit.NewContext(r, audit.Params{Config: cfg, Sink: sink, Brand: b, Attributes: &a, LongRunning: info.LongRunning(),
			AuditID: w.Header().Get(auditIDHeader), Received: time.Now()})
		ac.RequestReceived()
		if ac.RecordsRequestBody() && r.Body != nil && r.Body != http.NoBody {
			r.Body = &teeBody{ReadCloser: r.Body, ac: ac}
		}
		aw := &auditWriter{ResponseWriter: w, ac: ac, body: ac.RecordsResponseBody()}
		defer func() {
			if v := recover(); v != nil {
				ac.Panic(v)
				panic(v)
			}
			ac.Complete()
		}()
		next.ServeHTTP(aw, r.WithContext(audit.WithContext(r.Context(), ac)))
	})
}

// FailedAudit prepares the record of a request refused before it was
// authenticated, with message: it returns the writer and request the
// error is written with.
type FailedAudit func(w http.ResponseWriter, r *http.Request, message string) (http.ResponseWriter, *http.Request)

// AuditFailedRequest records requests refused before authentication (a
// 401, a bad ?timeout=) as upstream does: evaluated by the policy with no
// user, one ResponseStarted event. nil when policy is nil.
func AuditFailedRequest(policy *audit.Policy, sink audit.Sink, b config.Brand) FailedAudit {
	if policy == nil {
		return nil
	}
	return func(w http.ResponseWriter, r *http.Request, message string) (http.ResponseWriter, *http.Request) {
		info := request.InfoFrom(r.Context())
		a := requestAttributes(r, info)
		a.User = nil
		cfg := policy.Evaluate(&a)
		if cfg.Level == audit.LevelNone {
			return w, r
		}
		ac := audit.NewContext(r, audit.Params{Config: cfg, Sink: sink, Brand: b, Attributes: &a, LongRunning: info.LongRunning(),
			AuditID: w.Header().Get(auditIDHeader), Received: time.Now()})
		ac.Failed(message)
		return &auditWriter{ResponseWriter: w, ac: ac}, r.WithContext(audit.WithContext(r.Context(), ac))
	}
}

// requestAttributes are what r asks, as the authorizers and the audit
// policy see it (without selectors).
func requestAttributes(r *http.Request, info *request.Info) security.Attributes {
	a := security.Attributes{User: UserFrom(r.Context()), Verb: info.Verb, Path: info.Path, ResourceRequest: info.IsResource}
	if info.IsResource {
		a.Namespace, a.APIGroup, a.APIVersion = info.Namespace, info.Group, info.Version
		a.Resource, a.Subresource, a.Name = info.Resource, info.Subresource, info.Name
	}
	return a
}

// teeBody keeps what the handler reads of the request body for the event.
type teeBody struct {
	io.ReadCloser
	ac *audit.Context
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 {
		t.ac.RecordRequestBody(p[:n])
	}
	return n, err
}

// auditWriter tells the record the response code when the response
// starts, and keeps the body when the level records it.
type auditWriter struct {
	http.ResponseWriter
	ac   *audit.Context
	body bool
}

func (w *auditWriter) WriteHeader(code int) {
	// Interim responses (100 Continue, 103 Early Hints) do not start the
	// response; 101 does, as the upgraded stream begins.
	if code >= 200 || code == http.StatusSwitchingProtocols {
		w.ac.ResponseStarted(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *auditWriter) Write(p []byte) (int, error) {
	w.ac.ResponseStarted(http.StatusOK)
	if w.body {
		w.ac.RecordResponseBody(w.Header(), p)
	}
	return w.ResponseWriter.Write(p)
}

func (w *auditWriter) Flush() { _ = w.FlushError() }

// FlushError flushes and says whether the client could be written to,
// which a watch needs to know.
func (w *auditWriter) FlushError() error {
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *auditWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
