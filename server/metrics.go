package server

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"platd/security"
	"platd/server/registry"
)

// Descriptions of the metrics the server keeps in memory elsewhere and
// reads when scraped, under upstream's names and labels.
var (
	descUserRequests = prometheus.NewDesc("authenticated_user_requests",
		"Counter of authenticated requests broken out by username.", []string{"username"}, nil)
	descAuthnAttempts = prometheus.NewDesc("authentication_attempts",
		"Counter of authenticated attempts.", []string{"result"}, nil)
	descAuthnDuration = prometheus.NewDesc("authentication_duration_seconds",
		"Authentication duration in seconds broken out by result.", []string{"result"}, nil)

	descWebhookEvals = prometheus.NewDesc("apiserver_authorization_webhook_evaluations_total",
		"Round-trips to authorization webhooks.", []string{"name", "result"}, nil)
	descWebhookDuration = prometheus.NewDesc("apiserver_authorization_webhook_duration_seconds",
		"Request latency in seconds.", []string{"name", "result"}, nil)
	descWebhookFailOpen = prometheus.NewDesc("apiserver_authorization_webhook_evaluations_fail_open_total",
		"NoOpinion results due to webhook timeout or error.", []string{"name", "result"}, nil)
	descMatchErrors = prometheus.NewDesc("apiserver_authorization_match_condition_evaluation_errors_total",
		"Total number of errors when an authorization webhook encounters a match condition error split by authorizer type and name.", []string{"type", "name"}, nil)
	descMatchExclusions = prometheus.NewDesc("apiserver_authorization_match_condition_exclusions_total",
		"Total number of exclusions when an authorization webhook is skipped because match conditions exclude it.", []string{"type", "name"}, nil)

	descAuthzReloads = prometheus.NewDesc("apiserver_authorization_config_controller_automatic_reloads_total",
		"Total number of automatic reloads of authorization configuration split by status and apiserver identity.", []string{"status", "apiserver_id_hash"}, nil)
	descAuthzReloadTime = prometheus.NewDesc("apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds",
		"Timestamp of the last automatic reload of authorization configuration split by status and apiserver identity.", []string{"status", "apiserver_id_hash"}, nil)
	descAuthnReloads = prometheus.NewDesc("apiserver_authentication_config_controller_automatic_reloads_total",
		"Total number of automatic reloads of authentication configuration split by status and apiserver identity.", []string{"status", "apiserver_id_hash"}, nil)
	descAuthnReloadTime = prometheus.NewDesc("apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds",
		"Timestamp of the last automatic reload of authentication configuration split by status and apiserver identity.", []string{"status", "apiserver_id_hash"}, nil)

	descStorageObjects = prometheus.NewDesc("apiserver_storage_objects",
		"Number of stored objects at the time of last check split by kind.", []string{"resource"}, nil)
	descStorageSize = prometheus.NewDesc("apiserver_storage_size_bytes",
		"Size of the storage database file physically allocated in bytes.", []string{"storage_cluster_id"}, nil)
	descStorageDefrags = prometheus.NewDesc("apiserver_storage_defrag_total",
		"Number of online rewrites of the storage database file that give its free pages back, by result.", []string{"result"}, nil)
	descStorageDefragPause = prometheus.NewDesc("apiserver_storage_defrag_pause_seconds",
		"Time writes waited while a rewritten storage database file was swapped in.", nil, nil)
	descHistoryBytes = prometheus.NewDesc("apiserver_storage_watch_history_bytes",
		"Bytes the watch history keeps in memory: the values its retained events replaced or deleted.", nil, nil)
	descHistoryMaxBytes = prometheus.NewDesc("apiserver_storage_watch_history_max_bytes",
		"Bound of apiserver_storage_watch_history_bytes (--watch-history-max-bytes); 0 when there is none.", nil, nil)
	descHistoryEvents = prometheus.NewDesc("apiserver_storage_watch_history_events",
		"Number of events the watch history keeps in memory.", nil, nil)
	descHistoryTrimmed = prometheus.NewDesc("apiserver_storage_watch_history_trimmed_events_total",
		"Number of watch history events dropped before their retention ended to keep the history within its byte bound.", nil, nil)
)

// webhookType is the type label of a webhook authorizer's match condition
// metrics.
const webhookType = "Webhook"

// serverCollector exposes, at scrape time, counters kept by the
// authenticator, the authorizers and the store. Its cost is on the scrape,
// never on a request.
type serverCollector struct {
	s *Server
	// idHash is the apiserver_id_hash label: this server's identity, as
	// upstream, hashed so that the host name does not leak into metrics.
	idHash string
}

func newServerCollector(s *Server) *serverCollector {
	return &serverCollector{s: s, idHash: apiserverIDHash()}
}

// apiserverIDHash is the apiserver_id_hash label of the reload metrics.
func apiserverIDHash() string {
	host, _ := os.Hostname()
	sum := sha256.Sum256([]byte("apiserver-" + host))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Describe sends nothing: the collector is unchecked, since which series
// exist depends on configuration and on what happened.
func (c *serverCollector) Describe(chan<- *prometheus.Desc) {}

// Collect reads every counter and the store's counts.
func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	c.collectAuthn(ch)
	c.collectAuthz(ch)
	c.collectStorage(ch)
}

func (c *serverCollector) collectAuthn(ch chan<- prometheus.Metric) {
	a := c.s.AuthCounts()
	for user, n := range a.UserRequests {
		ch <- prometheus.MustNewConstMetric(descUserRequests, prometheus.CounterValue, float64(n), user)
	}
	for result, n := range a.Attempts {
		ch <- prometheus.MustNewConstMetric(descAuthnAttempts, prometheus.CounterValue, float64(n), result)
		// Only the count and sum are kept, so the histogram has no
		// finite buckets.
		ch <- prometheus.MustNewConstHistogram(descAuthnDuration, n, a.Durations[result].Seconds(), nil, result)
	}
	if c.s.jwt != nil {
		c.reloads(ch, descAuthnReloads, descAuthnReloadTime, c.s.jwt.Stats())
	}
}

func (c *serverCollector) collectAuthz(ch chan<- prometheus.Metric) {
	for name, m := range c.s.AuthorizationWebhookMetrics() {
		for result, n := range m.Evaluations {
			ch <- prometheus.MustNewConstMetric(descWebhookEvals, prometheus.CounterValue, float64(n), name, result)
			ch <- prometheus.MustNewConstHistogram(descWebhookDuration, n, m.DurationSeconds[result], nil, name, result)
		}
		for result, n := range m.FailOpen {
			ch <- prometheus.MustNewConstMetric(descWebhookFailOpen, prometheus.CounterValue, float64(n), name, result)
		}
		if m.MatchConditionErrors > 0 {
			ch <- prometheus.MustNewConstMetric(descMatchErrors, prometheus.CounterValue, float64(m.MatchConditionErrors), webhookType, name)
		}
		if m.MatchConditionExclusions > 0 {
			ch <- prometheus.MustNewConstMetric(descMatchExclusions, prometheus.CounterValue, float64(m.MatchConditionExclusions), webhookType, name)
		}
	}
	if c.s.opts.AuthorizationConfigFile != "" {
		c.reloads(ch, descAuthzReloads, descAuthzReloadTime, c.s.AuthorizationConfigReloads())
	}
}

// reloads sends a configuration file's reload counters, a status once it
// has happened, as upstream's counters appear on first increment.
func (c *serverCollector) reloads(ch chan<- prometheus.Metric, total, last *prometheus.Desc, st security.ReloadStats) {
	for _, r := range []struct {
		status string
		n      uint64
		at     float64
	}{
		{"success", st.Success, float64(st.LastSuccess.UnixNano()) / 1e9},
		{"failure", st.Failure, float64(st.LastFailure.UnixNano()) / 1e9},
	} {
		if r.n == 0 {
			continue
		}
		ch <- prometheus.MustNewConstMetric(total, prometheus.CounterValue, float64(r.n), r.status, c.idHash)
		ch <- prometheus.MustNewConstMetric(last, prometheus.GaugeValue, r.at, r.status, c.idHash)
	}
}

// collectStorage counts each resource's objects from the store's index
// (no disk read) and stats the database file.
func (c *serverCollector) collectStorage(ch chan<- prometheus.Metric) {
	if c.s.store == nil || c.s.reg == nil {
		return // not opened yet
	}
	seen := map[string]bool{}
	for _, d := range c.s.reg.All() {
		if d.Serve != registry.ServeObject || d.Computed != nil {
			continue // nothing stored: reviews, bindings, component statuses
		}
		p := d.ResourcePrefix()
		if seen[p] {
			continue // another version of a resource stored once
		}
		seen[p] = true
		ch <- prometheus.MustNewConstMetric(descStorageObjects, prometheus.GaugeValue, float64(c.s.store.Count(p)), strings.Trim(p, "/"))
	}
	if f, ok := c.s.store.(fileStore); ok {
		if fi, err := os.Stat(f.Path()); err == nil {
			// The one file is the whole cluster's storage: its path names it.
			ch <- prometheus.MustNewConstMetric(descStorageSize, prometheus.GaugeValue, float64(fi.Size()), f.Path())
		}
	}
	if ds, ok := c.s.store.(defragStore); ok {
		d := ds.DefragStats()
		ch <- prometheus.MustNewConstMetric(descStorageDefrags, prometheus.CounterValue, float64(d.Runs), "success")
		ch <- prometheus.MustNewConstMetric(descStorageDefrags, prometheus.CounterValue, float64(d.Failures), "failure")
		// Only the count and sum are kept, so the histogram has no finite
		// buckets.
		ch <- prometheus.MustNewConstHistogram(descStorageDefragPause, uint64(d.Runs), d.PauseTotal.Seconds(), nil)
	}
	if hs, ok := c.s.store.(historyStore); ok {
		h := hs.HistoryStats()
		ch <- prometheus.MustNewConstMetric(descHistoryBytes, prometheus.GaugeValue, float64(h.Bytes))
		ch <- prometheus.MustNewConstMetric(descHistoryMaxBytes, prometheus.GaugeValue, float64(h.MaxBytes))
		ch <- prometheus.MustNewConstMetric(descHistoryEvents, prometheus.GaugeValue, float64(h.Events))
		ch <- prometheus.MustNewConstMetric(descHistoryTrimmed, prometheus.CounterValue, float64(h.Trimmed))
	}
}
