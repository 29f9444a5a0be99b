package audit

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
)

// Sink takes finished event lines. Write may block (the log's buffer is
// full) but must not keep line after it returns.
type Sink interface {
	Write(line []byte)
}

// Context is the audit record of one request, shared by the layers that
// add to it (authorization, impersonation, the handler). It is safe for
// concurrent use: a timed-out handler may still write while the filter
// finishes.
type Context struct {
	cfg         RequestConfig
	sink        Sink
	longRunning bool
	now         func() time.Time

	mu sync.Mutex
	ev Event
	// started says ResponseStarted has been processed; requestSet that
	// the handler recorded the request object itself; failedEarly that the
	// request was refused authentication (its one event is
	// ResponseStarted).
	started, requestSet, failedEarly bool
	// reqBody and respBody are what the request and response carried, at
	// the levels that record them; respType and respEncoding describe the
	// response body.
	reqBody, respBody      bytes.Buffer
	reqType                string
	respType, respEncoding string
	// line is the buffer events are encoded in.
	line []byte
}

// Params describe a request to audit.
type Params struct {
	Config RequestConfig
	Sink   Sink
	Brand  config.Brand
	// Attributes are what the request addresses, with the authenticated
	// user (not the impersonated one).
	Attributes  *security.Attributes
	LongRunning bool
	AuditID     string
	Received    time.Time
	// Now is the clock of stage timestamps; nil means time.Now.
	Now func() time.Time
}

// NewContext starts the record of r; Received is when it arrived.
func NewContext(r *http.Request, p Params) *Context {
	now := p.Now
	if now == nil {
		now = time.Now
	}
	c := &Context{cfg: p.Config, sink: p.Sink, now: now, longRunning: p.LongRunning, reqType: r.Header.Get("Content-Type")}
	c.ev = Event{
		Kind: "Event", APIVersion: p.Brand.Group("audit") + "/v1", Level: p.Config.Level.String(), AuditID: p.AuditID,
		RequestURI: r.URL.RequestURI(), Verb: p.Attributes.Verb, User: userInfo(p.Attributes.User), SourceIPs: SourceIPs(r), UserAgent: userAgent(r),
		RequestReceivedTimestamp: MicroTime(p.Received),
	}
	if a := p.Attributes; a.ResourceRequest {
		c.ev.ObjectRef = &ObjectReference{Resource: a.Resource, Namespace: a.Namespace, Name: a.Name, APIGroup: a.APIGroup, APIVersion: a.APIVersion, Subresource: a.Subresource}
	}
	return c
}

type contextKey struct{}

// WithContext returns ctx carrying c.
func WithContext(ctx context.Context, c *Context) context.Context {
	return context.WithValue(ctx, contextKey{}, c)
}

// From returns the request's audit record, or nil when it is not audited.
func From(ctx context.Context) *Context {
	c, _ := ctx.Value(contextKey{}).(*Context)
	return c
}

// Level is the level the policy chose.
func (c *Context) Level() Level { return c.cfg.Level }

// AddAnnotation records key=value on the request's event; the first value
// of a key stays. Without audit it does nothing.
func AddAnnotation(ctx context.Context, key, value string) {
	From(ctx).Annotate(key, value)
}

// Annotate is AddAnnotation on a record already looked up; a nil record
// (the request is not audited) does nothing.
func (c *Context) Annotate(key, value string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ev.Annotations == nil {
		c.ev.Annotations = make(map[string]string, 4)
	}
	if _, ok := c.ev.Annotations[key]; !ok {
		c.ev.Annotations[key] = value
	}
}

// SetImpersonatedUser records the user an impersonating request acts as.
func SetImpersonatedUser(ctx context.Context, u *security.User) {
	c := From(ctx)
	if c == nil {
		return
	}
	ui := userInfo(u)
	c.mu.Lock()
	c.ev.ImpersonatedUser = &ui
	c.mu.Unlock()
}

// ObjectMeta is what a decoded request object says of itself.
type ObjectMeta struct {
	Namespace, Name, UID, ResourceVersion string
}

// LogRequestObject completes the object reference from a decoded body (a
// create names its object only there) and, at Request level and above,
// records the object encode returns (compact JSON; called only then).
func LogRequestObject(ctx context.Context, m ObjectMeta, encode func() []byte) {
	c := From(ctx)
	if c == nil {
		return
	}
	var obj []byte
	if c.cfg.Level >= LevelRequest && encode != nil {
		obj = encode()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ref := c.ev.ObjectRef; ref != nil {
		fill(&ref.Namespace, m.Namespace)
		fill(&ref.Name, m.Name)
		fill(&ref.UID, m.UID)
		fill(&ref.ResourceVersion, m.ResourceVersion)
	}
	if obj != nil {
		c.ev.RequestObject, c.requestSet = obj, true
	}
}

func fill(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// LogResponseStatus records the Status a response carries.
func LogResponseStatus(ctx context.Context, st *apierr.Status) {
	c := From(ctx)
	if c == nil || st == nil {
		return
	}
	c.mu.Lock()
	c.ev.ResponseStatus = &ResponseStatus{Status: st.Status, Message: st.Message, Reason: st.Reason, Details: st.Details, Code: st.Code}
	c.mu.Unlock()
}

// RecordsRequestBody and RecordsResponseBody say whether the bodies are
// kept for the event.
func (c *Context) RecordsRequestBody() bool { return c.cfg.Level >= LevelRequest }
func (c *Context) RecordsResponseBody() bool {
	return c.cfg.Level >= LevelRequestResponse && !c.longRunning
}

// RecordRequestBody appends what the handler read of the request body.
func (c *Context) RecordRequestBody(p []byte) {
	c.mu.Lock()
	c.reqBody.Write(p)
	c.mu.Unlock()
}

// RecordResponseBody appends what the handler wrote; h is the response's
// header.
func (c *Context) RecordResponseBody(h http.Header, p []byte) {
	c.mu.Lock()
	if c.respBody.Len() == 0 {
		c.respType, c.respEncoding = h.Get("Content-Type"), h.Get("Content-Encoding")
	}
	c.respBody.Write(p)
	c.mu.Unlock()
}

// RequestReceived writes the first stage.
func (c *Context) RequestReceived() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ev.Stage = config.AuditStageRequestReceived
	c.ev.StageTimestamp = c.ev.RequestReceivedTimestamp
	c.emit()
}

// ResponseStarted records the response code; a long-running request
// writes its ResponseStarted stage then.
func (c *Context) ResponseStarted(code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return
	}
	c.started = true
	if c.ev.ResponseStatus == nil {
		c.ev.ResponseStatus = &ResponseStatus{}
	}
	c.ev.ResponseStatus.Code = int32(code)
	if c.longRunning || c.failedEarly {
		c.ev.Stage = config.AuditStageResponseStarted
		c.ev.StageTimestamp = MicroTime(c.now())
		c.emit()
	}
}

// Failed marks a request refused before it was authenticated (a 401, an
// unparsable timeout): its record is the one ResponseStarted event,
// carrying message unless the response's Status replaces it.
func (c *Context) Failed(message string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failedEarly = true
	c.ev.ResponseStatus = &ResponseStatus{Message: message}
}

// AuthMethods is the audit message of a request refused authentication:
// which credentials it carried.
func AuthMethods(r *http.Request) string {
	var tried []string
	if _, _, ok := r.BasicAuth(); ok {
		tried = append(tried, "basic")
	}
	if scheme, _, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " "); ok && strings.EqualFold(scheme, "bearer") {
		tried = append(tried, "bearer")
	}
	if strings.Contains(r.URL.RawQuery, "access_token") && strings.TrimSpace(r.URL.Query().Get("access_token")) != "" {
		tried = append(tried, "access_token")
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		tried = append(tried, "x509")
	}
	if len(tried) == 0 {
		return "Authentication failed, no credentials provided"
	}
	return "Authentication failed, attempted: " + strings.Join(tried, ", ")
}

// earlyClose is the status of a response that wrote nothing.
func earlyClose() *ResponseStatus {
	return &ResponseStatus{Code: http.StatusOK, Status: apierr.StatusSuccess, Message: "Connection closed early"}
}

// Complete writes the ResponseComplete stage.
func (c *Context) Complete() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ev.ResponseStatus == nil {
		c.ev.ResponseStatus = earlyClose()
		if c.longRunning {
			c.ev.Stage = config.AuditStageResponseStarted
			c.ev.StageTimestamp = MicroTime(c.now())
			c.emit()
		}
	}
	c.bodies()
	c.ev.Stage = config.AuditStageResponseComplete
	c.ev.StageTimestamp = MicroTime(c.now())
	c.emit()
}

// Panic writes the Panic stage of a handler that panicked with v.
func (c *Context) Panic(v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ev.ResponseStatus = &ResponseStatus{Code: http.StatusInternalServerError, Status: apierr.StatusFailure,
		Reason: apierr.ReasonInternalError, Message: fmt.Sprintf("APIServer panic'd: %v", v)}
	c.ev.Stage = config.AuditStagePanic
	c.ev.StageTimestamp = MicroTime(c.now())
	c.emit()
}

// bodies turns the recorded bodies into the event's objects.
func (c *Context) bodies() {
	if !c.requestSet && c.cfg.Level >= LevelRequest && c.reqBody.Len() > 0 {
		c.ev.RequestObject = asJSON(c.reqBody.Bytes(), c.reqType, "")
	}
	if c.cfg.Level >= LevelRequestResponse && c.respBody.Len() > 0 {
		c.ev.ResponseObject = asJSON(c.respBody.Bytes(), c.respType, c.respEncoding)
	}
	if c.cfg.OmitManagedFields {
		c.ev.RequestObject = withoutManagedFields(c.ev.RequestObject)
		c.ev.ResponseObject = withoutManagedFields(c.ev.ResponseObject)
	}
}

// eventBufferSize fits a Metadata event of a common request.
const eventBufferSize = 1024

// emit encodes the event as it stands and hands it to the sink, unless
// the policy omits the stage. Called with mu held.
func (c *Context) emit() {
	if c.cfg.omits(c.ev.Stage) {
		return
	}
	if c.line == nil {
		c.line = make([]byte, 0, eventBufferSize)
	}
	line, err := appendEvent(c.line[:0], &c.ev)
	if err != nil {
		return
	}
	// The sink copies the line: the buffer serves every stage.
	c.line = append(line, '\n')
	c.sink.Write(c.line)
}

// asJSON returns a body as compact JSON when its media type is JSON or
// YAML, else nil (protobuf and other bodies are not recorded).
func asJSON(body []byte, contentType, encoding string) []byte {
	if strings.EqualFold(encoding, "gzip") {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil
		}
		if body, err = io.ReadAll(zr); err != nil {
			return nil
		}
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
	case mt == "application/yaml" || strings.HasSuffix(mt, "+yaml"):
		j, err := yaml.YAMLToJSON(body)
		if err != nil {
			return nil
		}
		body = j
	default:
		return nil
	}
	var out bytes.Buffer
	if err := json.Compact(&out, body); err != nil {
		return nil
	}
	return out.Bytes()
}

// withoutManagedFields drops metadata.managedFields from an object, or
// from each item of a list, keeping the order of every other member.
func withoutManagedFields(js []byte) []byte {
	if !bytes.Contains(js, []byte(`"managedFields"`)) {
		return js
	}
	out, err := rewriteMembers(js, func(key string, v json.RawMessage) (json.RawMessage, bool, error) {
		switch key {
		case "metadata":
			m, err := rewriteMembers(v, func(k string, v json.RawMessage) (json.RawMessage, bool, error) {
				return v, k != "managedFields", nil
			})
			return m, true, err
		case "items":
			var items []json.RawMessage
			if err := json.Unmarshal(v, &items); err != nil {
				return v, true, nil
			}
			for i, it := range items {
				if clean := withoutManagedFields(it); clean != nil {
					items[i] = clean
				}
			}
			m, err := json.Marshal(items)
			return m, true, err
		}
		return v, true, nil
	})
	if err != nil {
		return js
	}
	return out
}

// rewriteMembers re-writes the JSON object js member by member, in order:
// edit returns each member's new value and whether to keep it. A value
// that is not an object is returned as it is.
func rewriteMembers(js []byte, edit func(key string, v json.RawMessage) (json.RawMessage, bool, error)) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return js, err
	}
	var out bytes.Buffer
	out.WriteByte('{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		v, keep, err := edit(key, v)
		if err != nil {
			return nil, err
		}
		if !keep {
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}
