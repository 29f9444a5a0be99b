package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"platd/server/request"
)

// component is upstream's component label of requests served by the API
// server itself.
const component = "apiserver"

// Request kinds of apiserver_current_inflight_requests, the two pools of
// filters.LimitInFlight.
const (
	kindReadOnly = "readOnly"
	kindMutating = "mutating"
)

// durationBuckets are upstream's apiserver_request_duration_seconds
// buckets, so dashboards' quantiles and SLO thresholds line up.
var durationBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60}

// requestMetrics are the apiserver_request_* families.
type requestMetrics struct {
	total       *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	inflight    *prometheus.GaugeVec
	longRunning *prometheus.GaugeVec
	// readOnly and mutating are the inflight gauges, looked up once.
	readOnly, mutating prometheus.Gauge
}

func newRequestMetrics() *requestMetrics {
	m := &requestMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: durationBuckets,
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests",
			Help: "Number of requests currently being served, by request kind (readOnly or mutating); long-running requests are not counted.",
		}, []string{"request_kind"}),
		longRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_longrunning_requests",
			Help: "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.",
		}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"}),
	}
	m.readOnly = m.inflight.WithLabelValues(kindReadOnly)
	m.mutating = m.inflight.WithLabelValues(kindMutating)
	return m
}

func (m *requestMetrics) register(reg *prometheus.Registry) {
	reg.MustRegister(m.total, m.duration, m.inflight, m.longRunning)
}

// Instrument counts and times every resource request next serves. It must
// run inside filters.RequestInfo and outside authentication and
// authorization, so that 401s, 403s and 429s are counted as upstream
// counts them. Non-resource requests (discovery, health, /metrics) are not
// counted, nor are requests for resources known reports unknown: their
// paths are the client's choice and would grow the label values without
// bound.
func (r *Registry) Instrument(next http.Handler, known func(group, version, resource string) bool) http.Handler {
	m := r.requests
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info := request.InfoFrom(req.Context())
		if info == nil || !info.IsResource || !known(info.Group, info.Version, info.Resource) {
			next.ServeHTTP(w, req)
			return
		}
		start := time.Now()
		scope := cleanScope(info)
		verb := reportedVerb(info, req)
		if verb == "WATCH" {
			g := m.longRunning.WithLabelValues(verb, info.Group, info.Version, info.Resource, info.Subresource, scope, component)
			g.Inc()
			defer g.Dec()
		} else {
			g := m.readOnly
			if isMutating(req.Method) {
				g = m.mutating
			}
			g.Inc()
			defer g.Dec()
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, req)
		dryRun := cleanDryRun(req)
		m.total.WithLabelValues(verb, dryRun, info.Group, info.Version, info.Resource, info.Subresource, scope, component, codeString(sw.code())).Inc()
		m.duration.WithLabelValues(verb, dryRun, info.Group, info.Version, info.Resource, info.Subresource, scope, component).Observe(time.Since(start).Seconds())
	})
}

// isMutating reports whether method is served from the mutating in-flight
// pool, as filters.LimitInFlight decides.
func isMutating(method string) bool {
	switch strings.ToUpper(method) {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// cleanScope is upstream's scope label: resource for a named object (not
// one named by a field selector: that is still a list) or a create,
// namespace within a namespace, cluster otherwise.
func cleanScope(info *request.Info) string {
	switch {
	case (info.Name != "" && !info.NameFromSelector) || info.Verb == "create":
		return "resource"
	case info.Namespace != "":
		return "namespace"
	}
	return "cluster"
}

// applyPatch is the content type of a server-side apply, counted as APPLY.
const applyPatch = "application/apply-patch+yaml"

// reportedVerb is upstream's verb label: the HTTP-ish verb the route was
// installed under (POST for create, PUT for update), WATCH for any watch,
// APPLY for an apply patch, and "other" for anything unknown.
func reportedVerb(info *request.Info, req *http.Request) string {
	switch info.Verb {
	case "get":
		return "GET"
	case "list":
		return "LIST"
	case "watch":
		return "WATCH"
	case "create":
		return "POST"
	case "update":
		return "PUT"
	case "patch":
		ct, _, _ := strings.Cut(req.Header.Get("Content-Type"), ";")
		if strings.TrimSpace(ct) == applyPatch {
			return "APPLY"
		}
		return "PATCH"
	case "delete":
		return "DELETE"
	case "deletecollection":
		return "DELETECOLLECTION"
	}
	return "other"
}

// cleanDryRun is the dry_run label: the sorted, de-duplicated dryRun
// values joined by commas, "" without any. The common case allocates
// nothing.
func cleanDryRun(req *http.Request) string {
	if !strings.Contains(req.URL.RawQuery, "dryRun") {
		return ""
	}
	vals := req.URL.Query()["dryRun"]
	switch {
	case len(vals) == 0:
		return ""
	case len(vals) == 1 && vals[0] == "All":
		return "All"
	}
	for _, v := range vals {
		if v != "All" {
			return "invalid"
		}
	}
	return "All"
}

// codeString spells common status codes without allocating.
func codeString(code int) string {
	switch code {
	case 200:
		return "200"
	case 201:
		return "201"
	case 202:
		return "202"
	case 400:
		return "400"
	case 401:
		return "401"
	case 403:
		return "403"
	case 404:
		return "404"
	case 409:
		return "409"
	case 422:
		return "422"
	case 429:
		return "429"
	case 500:
		return "500"
	}
	return strconv.Itoa(code)
}

// statusWriter remembers the status code written through it. It passes
// Flush on, for watches, and unwraps for http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 { // 1xx are interim: the final code follows
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() { _ = w.FlushError() }

// FlushError flushes and says whether the client could be written to,
// which a watch needs to know.
func (w *statusWriter) FlushError() error {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// code is the status written, 200 when the handler wrote nothing.
func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
