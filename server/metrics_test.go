package server_test

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"platd/config"
)

// scrape reads /metrics as admin and parses the text format.
func scrape(t *testing.T, e *env) map[string]*dto.MetricFamily {
	t.Helper()
	r := e.do("GET", "/metrics", nil).mustCode(t, 200)
	if ct := r.header.Get("Content-Type"); !bytes.HasPrefix([]byte(ct), []byte("text/plain")) {
		t.Fatalf("Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, r.body)
	}
	return fams
}

// sample finds the metric of family name whose labels are exactly want.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.Metric {
		if len(m.Label) != len(want) {
			continue
		}
		ok := true
		for _, l := range m.Label {
			if v, has := want[l.GetName()]; !has || v != l.GetValue() {
				ok = false
				break
			}
		}
		if ok {
			return m
		}
	}
	return nil
}

func TestMetricsAuthorization(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) {
		o.AuthorizationModes = []string{config.ModeRBAC}
		o.AnonymousAuth = true
	})
	fams := scrape(t, e)
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if fams[name] == nil {
			t.Errorf("no %s", name)
		}
	}
	e.send(req{method: "GET", path: "/metrics"}).mustCode(t, 403).
		mustMessage(t, `forbidden: User "system:anonymous" cannot get path "/metrics"`)
	e.send(req{method: "GET", path: "/metrics", token: aliceToken}).mustCode(t, 403).
		mustMessage(t, `forbidden: User "alice" cannot get path "/metrics"`)
	// RBAC allows anonymous health checks; its no-opinions above and the
	// admin's bypass are not terminal decisions of an authorizer.
	e.send(req{method: "GET", path: "/livez"}).mustCode(t, 200)
	e.send(req{method: "GET", path: "/readyz"}).mustCode(t, 200)
	fams = scrape(t, e)
	rbac := map[string]string{"type": config.ModeRBAC, "name": "rbac", "decision": "allowed"}
	if got := value(fams, "apiserver_authorization_decisions_total", rbac); got != 2 {
		t.Errorf("RBAC allowed decisions %v, want 2", got)
	}
	rbac["decision"] = "denied"
	if got := value(fams, "apiserver_authorization_decisions_total", rbac); got != -1 {
		t.Errorf("RBAC denied decisions %v, want no series", got)
	}
}

// value reads a counter or gauge; -1 when the sample is absent.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	m := sample(fams, name, labels)
	switch {
	case m == nil:
		return -1
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return -1
}

func TestMetricsRequests(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "metrics-req"}}).mustCode(t, 201)
	base := "/api/v1/namespaces/metrics-req/configmaps"
	e.do("POST", base, cm("a", nil, nil)).mustCode(t, 201)
	e.do("POST", base+"?dryRun=All", cm("b", nil, nil)).mustCode(t, 201)
	e.do("POST", base, cm("a", nil, nil)).mustCode(t, 409)
	e.do("GET", base+"/a", nil).mustCode(t, 200)
	e.do("GET", base+"/a", nil).mustCode(t, 200)
	e.do("GET", base+"/missing", nil).mustCode(t, 404)
	e.do("GET", base, nil).mustCode(t, 200)
	e.do("GET", base+"?fieldSelector=metadata.name%3Da", nil).mustCode(t, 200)
	e.do("PATCH", base+"/a", `{"data":{"k":"v"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	e.do("PATCH", base+"/a?fieldManager=m", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", "Content-Type", "application/apply-patch+yaml").mustCode(t, 200)
	e.do("PUT", base+"/a", cm("a", map[string]string{"k": "w"}, nil)).mustCode(t, 200)
	e.do("DELETE", base+"/a", nil).mustCode(t, 200)
	e.send(req{method: "GET", path: base + "/a", token: "bad-token"}).mustCode(t, 401)
	e.do("GET", "/api/v1/namespaces/metrics-req/nonesuch", nil).mustCode(t, 404) // not counted

	w := e.watch(base + "?watch=true")
	watchLabels := map[string]string{"verb": "WATCH", "group": "", "version": "v1", "resource": "configmaps", "subresource": "", "scope": "namespace", "component": "apiserver"}
	eventually(t, "the watch counted as long-running", func() bool {
		return value(scrape(t, e), "apiserver_longrunning_requests", watchLabels) == 1
	})
	w.stop()
	eventually(t, "the closed watch no longer counted", func() bool {
		return value(scrape(t, e), "apiserver_longrunning_requests", watchLabels) == 0
	})

	fams := scrape(t, e)
	for _, c := range []struct {
		verb, dryRun, scope, code string
		want                      float64
	}{
		{"POST", "", "resource", "201", 1},
		{"POST", "All", "resource", "201", 1},
		{"POST", "", "resource", "409", 1},
		{"GET", "", "resource", "200", 2},
		{"GET", "", "resource", "404", 1},
		{"GET", "", "resource", "401", 1},
		{"LIST", "", "namespace", "200", 2},
		{"PATCH", "", "resource", "200", 1},
		{"APPLY", "", "resource", "200", 1},
		{"PUT", "", "resource", "200", 1},
		{"DELETE", "", "resource", "200", 1},
		{"WATCH", "", "namespace", "200", 1},
	} {
		l := map[string]string{"verb": c.verb, "dry_run": c.dryRun, "group": "", "version": "v1", "resource": "configmaps",
			"subresource": "", "scope": c.scope, "component": "apiserver", "code": c.code}
		if got := value(fams, "apiserver_request_total", l); got != c.want {
			t.Errorf("apiserver_request_total%v = %v, want %v", l, got, c.want)
		}
	}
	// The histogram has no code label: every GET of an object is one
	// sample, whatever it answered.
	for verb, want := range map[string]uint64{"POST": 2, "GET": 4, "PUT": 1, "DELETE": 1, "APPLY": 1} {
		l := map[string]string{"verb": verb, "dry_run": "", "group": "", "version": "v1", "resource": "configmaps",
			"subresource": "", "scope": "resource", "component": "apiserver"}
		m := sample(fams, "apiserver_request_duration_seconds", l)
		if m == nil || m.Histogram == nil || m.Histogram.GetSampleCount() != want {
			t.Errorf("apiserver_request_duration_seconds%v: %v, want %v samples", l, m, want)
			continue
		}
		var bounds []float64
		for _, b := range m.Histogram.Bucket {
			bounds = append(bounds, b.GetUpperBound())
		}
		// Upstream's buckets, and the +Inf one the text format adds.
		wantBounds := []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60, math.Inf(1)}
		if !slices.Equal(bounds, wantBounds) {
			t.Errorf("buckets %v, want %v", bounds, wantBounds)
		}
	}
	// The scrape itself is in flight while it is served; nothing mutates.
	if got := value(fams, "apiserver_current_inflight_requests", map[string]string{"request_kind": "mutating"}); got != 0 {
		t.Errorf("mutating in flight = %v", got)
	}
	if got := value(fams, "apiserver_current_inflight_requests", map[string]string{"request_kind": "readOnly"}); got != 0 {
		t.Errorf("readOnly in flight = %v (non-resource requests are not counted)", got)
	}

	if f := fams["apiserver_request_total"]; f != nil {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == "resource" && l.GetValue() == "nonesuch" {
					t.Errorf("an unknown resource is a label value: %v", m)
				}
			}
		}
	}
	// Counters kept elsewhere, read at scrape time.
	if got := value(fams, "authentication_attempts", map[string]string{"result": "error"}); got != 1 {
		t.Errorf("authentication_attempts{result=error} = %v, want the one unknown token", got)
	}
	if got := value(fams, "authenticated_user_requests", map[string]string{"username": "admin"}); got < 15 {
		t.Errorf("authenticated_user_requests{username=admin} = %v, want at least the test's requests", got)
	}
	if m := sample(fams, "authentication_duration_seconds", map[string]string{"result": "error"}); m == nil || m.Histogram.GetSampleCount() != 1 {
		t.Errorf("authentication_duration_seconds{result=error}: %v", m)
	}
	if f := fams["apiserver_storage_size_bytes"]; f == nil || len(f.Metric) != 1 || f.Metric[0].Gauge.GetValue() <= 0 {
		t.Errorf("apiserver_storage_size_bytes: %v", f)
	}
	e.do("POST", base, cm("c", nil, nil)).mustCode(t, 201)
	e.do("POST", base, cm("d", nil, nil)).mustCode(t, 201)
	eventually(t, "apiserver_storage_objects to match a list of configmaps", func() bool {
		var list struct{ Items []any }
		if err := json.Unmarshal(e.do("GET", "/api/v1/configmaps", nil).mustCode(t, 200).body, &list); err != nil {
			t.Fatal(err)
		}
		return value(scrape(t, e), "apiserver_storage_objects", map[string]string{"resource": "configmaps"}) == float64(len(list.Items))
	})
	fams = scrape(t, e)
	if got := value(fams, "apiserver_storage_objects", map[string]string{"resource": "namespaces"}); got < 1 {
		t.Errorf("apiserver_storage_objects{resource=namespaces} = %v", got)
	}
	if f := fams["apiserver_storage_objects"]; f == nil || sample(fams, "apiserver_storage_objects", map[string]string{"resource": "deployments.apps"}) == nil {
		t.Errorf("apiserver_storage_objects has no deployments.apps: %v", f)
	}
	for _, r := range []string{"tokenreviews.authentication." + platBrand.Domain, "bindings", "componentstatuses"} {
		if m := sample(fams, "apiserver_storage_objects", map[string]string{"resource": r}); m != nil {
			t.Errorf("apiserver_storage_objects counts %s, which is never stored", r)
		}
	}

	// Each event sent to a watcher counts once, by the watched kind.
	kind := map[string]string{"group": "", "version": "v1", "kind": "ConfigMap"}
	sent := func() (float64, uint64) {
		fams := scrape(t, e)
		var n uint64
		if m := sample(fams, "apiserver_watch_events_sizes", kind); m != nil {
			n = m.Histogram.GetSampleCount()
		}
		return max(value(fams, "apiserver_watch_events_total", kind), 0), n
	}
	events0, sizes0 := sent()
	rv := rvOf(e.do("GET", base, nil).mustCode(t, 200).obj(t))
	w = e.watch(base + "?watch=true&resourceVersion=" + rv)
	e.do("POST", base, cm("w1", nil, nil)).mustCode(t, 201)
	e.do("POST", base, cm("w2", nil, nil)).mustCode(t, 201)
	w.expect("ADDED", "w1")
	w.expect("ADDED", "w2")
	w.stop()
	if events, sizes := sent(); events != events0+2 || sizes != sizes0+2 {
		t.Errorf("watch events %v (sizes %d), want %v (%d)", events, sizes, events0+2, sizes0+2)
	}
	// The API's requests to the store, timed by operation and resource.
	fams = scrape(t, e)
	for _, op := range []string{"get", "list", "create"} {
		m := sample(fams, "bolt_request_duration_seconds", map[string]string{"operation": op, "type": "configmaps"})
		if m == nil || m.Histogram.GetSampleCount() < 1 || m.Histogram.GetSampleSum() <= 0 {
			t.Errorf("bolt_request_duration_seconds{operation=%s,type=configmaps}: %v", op, m)
		}
	}
}
