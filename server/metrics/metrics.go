// Package metrics serves /metrics in the Prometheus text format from a
// registry of the server's own (never the process-global one), so two
// servers in one process, as in tests, count apart.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is the non-resource URL /metrics is served at; the default policy's
// system:monitoring role allows get on it.
const Path = "/metrics"

// Registry holds one server's metrics. It is safe for concurrent use.
type Registry struct {
	reg        *prometheus.Registry
	handler    http.Handler
	requests   *requestMetrics
	deprecated *prometheus.GaugeVec
	watch      *watchMetrics
	storage    *prometheus.HistogramVec
}

// New returns a registry with the process and Go runtime collectors and the
// request metrics that Instrument feeds.
func New() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(collectors.NewGoCollector())
	r := &Registry{reg: reg, requests: newRequestMetrics(), deprecated: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_requested_deprecated_apis",
		Help: "Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.",
	}, []string{"group", "version", "resource", "subresource", "removed_release"}), watch: newWatchMetrics(), storage: newStorageDuration()}
	r.requests.register(reg)
	reg.MustRegister(r.deprecated, r.watch.events, r.watch.sizes, r.storage)
	r.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	return r
}

// MustRegister adds collectors; it panics on a name registered twice,
// which is a programming error.
func (r *Registry) MustRegister(cs ...prometheus.Collector) { r.reg.MustRegister(cs...) }

// Gatherer is the registry, for tests that read values without HTTP.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// ServeHTTP writes every metric in the text format (or what the scraper
// negotiates).
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) { r.handler.ServeHTTP(w, req) }

// RequestedDeprecated records that a deprecated API was requested: its
// series of apiserver_requested_deprecated_apis is 1 from then on.
func (r *Registry) RequestedDeprecated(group, version, resource, subresource, removedRelease string) {
	r.deprecated.WithLabelValues(group, version, resource, subresource, removedRelease).Set(1)
}

// watchMetrics are apiserver_watch_events_total and
// apiserver_watch_events_sizes: every event sent to a watcher, by the
// watched kind, as upstream 1.32 labels them.
type watchMetrics struct {
	events *prometheus.CounterVec
	sizes  *prometheus.HistogramVec
}

func newWatchMetrics() *watchMetrics {
	return &watchMetrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_watch_events_total",
			Help: "Number of events sent in watch clients",
		}, []string{"group", "version", "kind"}),
		sizes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_watch_events_sizes",
			Help:    "Watch event size distribution in bytes",
			Buckets: prometheus.ExponentialBuckets(1024, 2, 8), // 1 KiB to 128 KiB
		}, []string{"group", "version", "kind"}),
	}
}

// WatchEvents is what a watch of one kind counts its events with; the
// series are resolved once per watch, so an event costs two atomic adds.
type WatchEvents struct {
	count prometheus.Counter
	size  prometheus.Observer
}

// Sent counts one event of n bytes.
func (w WatchEvents) Sent(n int) {
	w.count.Inc()
	w.size.Observe(float64(n))
}

// WatchEvents returns the counters of watches of group/version kind.
func (r *Registry) WatchEvents(group, version, kind string) WatchEvents {
	return WatchEvents{count: r.watch.events.WithLabelValues(group, version, kind), size: r.watch.sizes.WithLabelValues(group, version, kind)}
}

// storageDuration is bolt_request_duration_seconds, the store's
// counterpart of upstream's etcd_request_duration_seconds: how long each
// request of the API to the store took, by operation and resource.
func newStorageDuration() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "bolt_request_duration_seconds",
		Help:    "Bolt store request latency in seconds for each operation and object type.",
		Buckets: durationBuckets,
	}, []string{"operation", "type"})
}

// ObserveStorage records one store request of the API.
func (r *Registry) ObserveStorage(operation, typ string, d time.Duration) {
	r.storage.WithLabelValues(operation, typ).Observe(d.Seconds())
}
