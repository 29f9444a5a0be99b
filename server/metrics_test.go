package server_test

import (
	"bytes"
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
}
