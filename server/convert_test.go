package server_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"platd/server/validation"
)

// Objects served in several versions from one stored form: autoscalers in
// autoscaling/v2 and v1, events in the core group and the events group.

const (
	hpaV1Path = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
	hpaV2Path = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %s\n want %s", what, mustJSON(t, got), mustJSON(t, want))
	}
}

// decodeJSON decodes s as JSON, failing the test when it does not parse.
func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	return v
}

func TestHPAv1CreateReadInV2(t *testing.T) {
	t.Parallel()
	e := start(t)
	ann := "autoscaling.alpha." + platBrand.LongDomain + "/"
	created := e.do("POST", hpaV1Path, map[string]any{
		"metadata": map[string]any{"name": "web"},
		"spec": map[string]any{
			"scaleTargetRef":                 map[string]any{"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
			"maxReplicas":                    5,
			"targetCPUUtilizationPercentage": 60,
		},
		"status": map[string]any{"currentReplicas": 3},
	}).mustCode(t, 201).obj(t)
	sameJSON(t, "v1 create spec", created["spec"], map[string]any{
		"scaleTargetRef": map[string]any{"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
		"minReplicas":    1.0, "maxReplicas": 5.0, "targetCPUUtilizationPercentage": 60.0,
	})
	if at(created, "status", "currentReplicas") != 0.0 {
		t.Errorf("create kept status: %v", created["status"])
	}
	if at(created, "metadata", "annotations") != nil {
		t.Errorf("v1 object grew annotations: %v", at(created, "metadata", "annotations"))
	}

	v2 := e.do("GET", hpaV2Path+"/web", nil).mustCode(t, 200).obj(t)
	if v2["apiVersion"] != "autoscaling/v2" {
		t.Errorf("apiVersion %v", v2["apiVersion"])
	}
	sameJSON(t, "v2 metrics", at(v2, "spec", "metrics"), decodeJSON(t,
		`[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}}]`))
	if at(v2, "spec", "minReplicas") != 1.0 {
		t.Errorf("minReplicas %v", at(v2, "spec", "minReplicas"))
	}
	if at(v2, "metadata", "resourceVersion") != at(created, "metadata", "resourceVersion") {
		t.Error("versions of one object disagree on resourceVersion")
	}

	// A v1 object without a target reads as 80% CPU in both versions.
	e.do("POST", hpaV1Path, map[string]any{
		"metadata": map[string]any{"name": "plain"},
		"spec":     map[string]any{"scaleTargetRef": map[string]any{"kind": "Deployment", "name": "x"}, "maxReplicas": 2},
	}).mustCode(t, 201)
	plain := e.do("GET", hpaV1Path+"/plain", nil).mustCode(t, 200).obj(t)
	if at(plain, "spec", "targetCPUUtilizationPercentage") != 80.0 {
		t.Errorf("v1 default target %v", at(plain, "spec", "targetCPUUtilizationPercentage"))
	}

	// Other metrics and a behavior written in v1 annotations land in v2
	// fields, and the annotations are not stored.
	e.do("POST", hpaV1Path, map[string]any{
		"metadata": map[string]any{"name": "rich", "annotations": map[string]any{
			"keep":             "me",
			ann + "metrics":    `[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]`,
			ann + "behavior":   `{"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":null,"Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":30}]}}`,
			ann + "conditions": `[{"type":"AbleToScale","status":"True","lastTransitionTime":null}]`,
		}},
		"spec": map[string]any{"scaleTargetRef": map[string]any{"kind": "Deployment", "name": "x"}, "maxReplicas": 4, "targetCPUUtilizationPercentage": 50},
	}).mustCode(t, 201)
	rich := e.do("GET", hpaV2Path+"/rich", nil).mustCode(t, 200).obj(t)
	sameJSON(t, "v2 metrics from v1", at(rich, "spec", "metrics"), decodeJSON(t,
		`[{"type":"Pods","pods":{"metric":{"name":"qps"},"target":{"type":"AverageValue","averageValue":"10"}}},`+
			`{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}]`))
	sameJSON(t, "v2 behavior from v1", at(rich, "spec", "behavior"), decodeJSON(t,
		`{"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]},`+
			`"scaleDown":{"stabilizationWindowSeconds":60,"selectPolicy":"Max","policies":[{"type":"Pods","value":1,"periodSeconds":30}]}}`))
	sameJSON(t, "v2 annotations", at(rich, "metadata", "annotations"), map[string]any{"keep": "me"})
	if at(rich, "status", "conditions") != nil {
		t.Errorf("create wrote conditions: %v", at(rich, "status", "conditions"))
	}

	// Read back in v1, the v2-only parts are annotations again.
	richV1 := e.do("GET", hpaV1Path+"/rich", nil).mustCode(t, 200).obj(t)
	sameJSON(t, "v1 annotations", at(richV1, "metadata", "annotations"), map[string]any{
		"keep":           "me",
		ann + "metrics":  `[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]`,
		ann + "behavior": `{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}]},"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":30}]}}`,
	})
}

func TestHPAv2CreateReadInV1(t *testing.T) {
	t.Parallel()
	e := start(t)
	ann := "autoscaling.alpha." + platBrand.LongDomain + "/"
	created := e.do("POST", hpaV2Path, map[string]any{
		"metadata": map[string]any{"name": "web"},
		"spec": map[string]any{
			"scaleTargetRef": map[string]any{"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
			"maxReplicas":    5,
			"metrics": decodeJSON(t, `[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":70}}},`+
				`{"type":"External","external":{"metric":{"name":"queue","selector":{"matchLabels":{"q":"a"}}},"target":{"type":"Value","value":"30"}}}]`),
		},
	}).mustCode(t, 201).obj(t)
	if at(created, "spec", "minReplicas") != 1.0 || at(created, "spec", "behavior") != nil {
		t.Errorf("v2 defaults: %s", mustJSON(t, created["spec"]))
	}

	// The status subresource in v2 writes conditions and current metrics.
	created["status"] = decodeJSON(t, `{"currentReplicas":2,"desiredReplicas":3,`+
		`"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":40,"averageValue":"100m"}}}],`+
		`"conditions":[{"type":"AbleToScale","status":"True","lastTransitionTime":"2024-01-02T03:04:05Z","reason":"Ready"}]}`)
	e.do("PUT", hpaV2Path+"/web/status", created).mustCode(t, 200)

	// Both versions print the stored form: the same row, each metric in
	// its place with its own current value.
	table := "application/json;as=Table;v=v1;g=" + platBrand.MetaGroup()
	row1, _ := at(e.do("GET", hpaV1Path+"/web", nil, "Accept", table).mustCode(t, 200).obj(t), "rows", 0, "cells").([]any)
	row2, _ := at(e.do("GET", hpaV2Path+"/web", nil, "Accept", table).mustCode(t, 200).obj(t), "rows", 0, "cells").([]any)
	if len(row1) != 7 || len(row2) != 7 {
		t.Fatalf("table rows %v and %v", row1, row2)
	}
	sameJSON(t, "v1 table row but its age", row1[:6], row2[:6])
	if got := row1[2]; got != "cpu: 40%/70%, <unknown>/30" {
		t.Errorf("v1 targets cell %v", got)
	}

	v1 := e.do("GET", hpaV1Path+"/web", nil).mustCode(t, 200).obj(t)
	sameJSON(t, "v1 spec", v1["spec"], map[string]any{
		"scaleTargetRef": map[string]any{"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
		"minReplicas":    1.0, "maxReplicas": 5.0, "targetCPUUtilizationPercentage": 70.0,
	})
	sameJSON(t, "v1 status", v1["status"], map[string]any{"currentReplicas": 2.0, "desiredReplicas": 3.0, "currentCPUUtilizationPercentage": 40.0})
	sameJSON(t, "v1 annotations", at(v1, "metadata", "annotations"), map[string]any{
		ann + "metrics":         `[{"type":"External","external":{"metricName":"queue","metricSelector":{"matchLabels":{"q":"a"}},"targetValue":"30"}}]`,
		ann + "current-metrics": `[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,"currentAverageValue":"100m"}}]`,
		ann + "conditions":      `[{"type":"AbleToScale","status":"True","lastTransitionTime":"2024-01-02T03:04:05Z","reason":"Ready"}]`,
	})

	// A v1 client that writes back what it read changes nothing of v2's.
	v1["spec"].(map[string]any)["maxReplicas"] = 6
	e.do("PUT", hpaV1Path+"/web", v1).mustCode(t, 200)
	v2 := e.do("GET", hpaV2Path+"/web", nil).mustCode(t, 200).obj(t)
	if at(v2, "spec", "maxReplicas") != 6.0 {
		t.Errorf("maxReplicas %v", at(v2, "spec", "maxReplicas"))
	}
	// v1 puts its CPU target after the metrics it carried in annotations.
	metrics := at(created, "spec", "metrics").([]any)
	sameJSON(t, "v2 metrics after v1 update", at(v2, "spec", "metrics"), []any{metrics[1], metrics[0]})
	if l, _ := at(v2, "status", "conditions").([]any); len(l) != 1 {
		t.Errorf("conditions after v1 update: %v", at(v2, "status", "conditions"))
	}
	if at(v2, "metadata", "annotations") != nil {
		t.Errorf("round-trip annotations stored: %v", at(v2, "metadata", "annotations"))
	}

	// Lists in both versions hold the same object in each shape.
	l1 := e.do("GET", hpaV1Path, nil).mustCode(t, 200).obj(t)
	l2 := e.do("GET", hpaV2Path, nil).mustCode(t, 200).obj(t)
	if l1["kind"] != "HorizontalPodAutoscalerList" || l1["apiVersion"] != "autoscaling/v1" || l2["apiVersion"] != "autoscaling/v2" {
		t.Errorf("list kinds: %v %v %v", l1["kind"], l1["apiVersion"], l2["apiVersion"])
	}
	if at(l1, "items", 0, "spec", "targetCPUUtilizationPercentage") != 70.0 || at(l2, "items", 0, "spec", "metrics", 0, "type") != "External" {
		t.Errorf("list items: v1 %s v2 %s", mustJSON(t, at(l1, "items", 0, "spec")), mustJSON(t, at(l2, "items", 0, "spec")))
	}
	if at(l1, "items", 0, "kind") != nil && at(l1, "items", 0, "kind") != "HorizontalPodAutoscaler" {
		t.Errorf("item kind %v", at(l1, "items", 0, "kind"))
	}

	// Protobuf answers carry each version's kind and fields.
	pb := e.do("GET", hpaV1Path+"/web", nil, "Accept", platBrand.ProtobufMediaType).mustCode(t, 200)
	if !strings.Contains(string(pb.body), "autoscaling/v1") || !strings.Contains(string(pb.body), "HorizontalPodAutoscaler") {
		t.Errorf("protobuf v1 answer %q", pb.body)
	}

	// Discovery prefers v2.
	group := e.do("GET", "/apis/autoscaling", nil).mustCode(t, 200).obj(t)
	if at(group, "preferredVersion", "version") != "v2" {
		t.Errorf("preferred version %v", group["preferredVersion"])
	}

	// A list Table of v1 prints the stored metrics too.
	tab := e.do("GET", hpaV1Path, nil, "Accept", "application/json;as=Table;v=v1;g="+platBrand.MetaGroup()).mustCode(t, 200).obj(t)
	cells, _ := at(tab, "rows", 0, "cells").([]any)
	if len(cells) < 3 || !strings.Contains(mustJSON(t, cells), "70%") {
		t.Errorf("v1 table row %s", mustJSON(t, cells))
	}
}

func TestHPAWatchAcrossVersions(t *testing.T) {
	t.Parallel()
	e := start(t)
	w := e.watch(hpaV1Path + "?watch=true")
	e.do("POST", hpaV2Path, map[string]any{
		"metadata": map[string]any{"name": "w"},
		"spec": map[string]any{
			"scaleTargetRef": map[string]any{"kind": "Deployment", "name": "w"},
			"maxReplicas":    3,
			"metrics":        decodeJSON(t, `[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":55}}}]`),
		},
	}).mustCode(t, 201)
	ev := w.expect("ADDED", "w")
	if ev.Object["apiVersion"] != "autoscaling/v1" || at(ev.Object, "spec", "targetCPUUtilizationPercentage") != 55.0 {
		t.Errorf("watch event object %s", mustJSON(t, ev.Object))
	}
	e.do("DELETE", hpaV2Path+"/w", nil).mustCode(t, 200)
	w.expect("DELETED", "w")
}

func TestHPAValidation(t *testing.T) {
	t.Parallel()
	e := start(t)
	tests := []struct {
		name, path string
		spec       string
		want       []string
	}{
		{"v2 target and replicas", hpaV2Path, `{"scaleTargetRef":{},"minReplicas":0,"maxReplicas":0}`, []string{
			"spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
			"spec.maxReplicas: Invalid value: 0: must be greater than 0",
			"spec.scaleTargetRef.kind: Required value",
			"spec.scaleTargetRef.name: Required value",
			"spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
		}},
		{"v2 max below min", hpaV2Path, `{"scaleTargetRef":{"kind":"D","name":"n"},"minReplicas":4,"maxReplicas":2}`, []string{
			"spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`",
		}},
		{"v2 metric", hpaV2Path, `{"scaleTargetRef":{"kind":"D","name":"n"},"maxReplicas":2,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":0,"averageValue":"1"}}}]}`, []string{
			"spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
			"spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization",
		}},
		{"v2 behavior", hpaV2Path, `{"scaleTargetRef":{"kind":"D","name":"n"},"maxReplicas":2,"behavior":{"scaleUp":{"stabilizationWindowSeconds":4000,"policies":[{"type":"Pods","value":0,"periodSeconds":15}]}}}`, []string{
			"spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600",
			"spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
		}},
		// v1 objects are checked in the stored shape, with its paths.
		{"v1 target", hpaV1Path, `{"scaleTargetRef":{"kind":"D","name":"a/b"},"maxReplicas":2,"targetCPUUtilizationPercentage":0}`, []string{
			`spec.scaleTargetRef.name: Invalid value: "a/b": may not contain '/'`,
			"spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
		}},
	}
	for _, tc := range tests {
		body := `{"metadata":{"name":"bad"},"spec":` + tc.spec + `}`
		r := e.do("POST", tc.path, body).mustCode(t, 422).obj(t)
		var got []string
		for _, c := range at(r, "details", "causes").([]any) {
			got = append(got, at(c, "field").(string)+": "+at(c, "message").(string))
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got  %q\n want %q", tc.name, got, tc.want)
		}
	}
}

const (
	coreEventsPath = "/api/v1/namespaces/default/events"
)

func eventsGroupPath() string {
	return "/apis/" + platBrand.Group("events") + "/v1/namespaces/default/events"
}

func TestEventsGroupSharesCoreEvents(t *testing.T) {
	t.Parallel()
	e := start(t)
	created := e.do("POST", eventsGroupPath(), map[string]any{
		"metadata":            map[string]any{"name": "ev1"},
		"eventTime":           "2024-01-02T03:04:05.000000Z",
		"type":                "Normal",
		"reason":              "Started",
		"action":              "Start",
		"note":                "started the pod",
		"reportingController": "example.com/ctl",
		"reportingInstance":   "ctl-1",
		"regarding":           map[string]any{"kind": "Pod", "namespace": "default", "name": "p1"},
		"series":              map[string]any{"count": 2, "lastObservedTime": "2024-01-02T03:04:06.000000Z"},
	}).mustCode(t, 201).obj(t)
	if created["note"] != "started the pod" || at(created, "regarding", "name") != "p1" {
		t.Errorf("events group create: %s", mustJSON(t, created))
	}

	core := e.do("GET", coreEventsPath+"/ev1", nil).mustCode(t, 200).obj(t)
	for f, want := range map[string]any{
		"message": "started the pod", "reportingComponent": "example.com/ctl", "reportingInstance": "ctl-1",
		"action": "Start", "reason": "Started", "type": "Normal",
	} {
		if core[f] != want {
			t.Errorf("core %s = %v, want %v", f, core[f], want)
		}
	}
	if at(core, "involvedObject", "name") != "p1" || at(core, "series", "count") != 2.0 {
		t.Errorf("core event %s", mustJSON(t, core))
	}
	for _, f := range []string{"note", "regarding", "reportingController"} {
		if _, ok := core[f]; ok {
			t.Errorf("core event has events-group member %s", f)
		}
	}

	// The reverse: an old-style core event reads with deprecated names.
	e.do("POST", coreEventsPath, map[string]any{
		"metadata":       map[string]any{"name": "old"},
		"involvedObject": map[string]any{"kind": "Pod", "namespace": "default", "name": "p2"},
		"reason":         "Pulled", "message": "pulled", "type": "Normal", "count": 3,
		"source":         map[string]any{"component": "kubelet", "host": "n1"},
		"firstTimestamp": "2024-01-02T03:04:05Z", "lastTimestamp": "2024-01-02T03:05:05Z",
	}).mustCode(t, 201)
	old := e.do("GET", eventsGroupPath()+"/old", nil).mustCode(t, 200).obj(t)
	for f, want := range map[string]any{
		"note": "pulled", "deprecatedCount": 3.0, "deprecatedFirstTimestamp": "2024-01-02T03:04:05Z",
		"deprecatedLastTimestamp": "2024-01-02T03:05:05Z",
	} {
		if old[f] != want {
			t.Errorf("events group %s = %v, want %v", f, old[f], want)
		}
	}
	if at(old, "deprecatedSource", "component") != "kubelet" || at(old, "regarding", "name") != "p2" {
		t.Errorf("events group event %s", mustJSON(t, old))
	}
	if old["apiVersion"] != platBrand.Group("events")+"/v1" {
		t.Errorf("apiVersion %v", old["apiVersion"])
	}

	// Field selectors: the events group's names, and source falling back
	// to the reporting controller in both groups.
	names := func(p string) []string {
		l := e.do("GET", p, nil).mustCode(t, 200).obj(t)
		var out []string
		for _, it := range l["items"].([]any) {
			out = append(out, at(it, "metadata", "name").(string))
		}
		return out
	}
	for _, c := range []struct {
		path string
		want []string
	}{
		{eventsGroupPath() + "?fieldSelector=regarding.name%3Dp2", []string{"old"}},
		{eventsGroupPath() + "?fieldSelector=reportingController%3Dexample.com/ctl", []string{"ev1"}},
		{eventsGroupPath() + "?fieldSelector=source%3Dexample.com/ctl", []string{"ev1"}},
		{eventsGroupPath() + "?fieldSelector=source%3Dkubelet", []string{"old"}},
		{coreEventsPath + "?fieldSelector=source%3Dexample.com/ctl", []string{"ev1"}},
		{coreEventsPath + "?fieldSelector=involvedObject.name%3Dp1", []string{"ev1"}},
	} {
		if got := names(c.path); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.path, got, c.want)
		}
	}
	e.do("GET", eventsGroupPath()+"?fieldSelector=involvedObject.name%3Dp1", nil).mustCode(t, 400).
		mustMessage(t, "field label not supported: involvedObject.name")

	// A watch through one group sees writes through the other.
	w := e.watch(eventsGroupPath() + "?watch=true&fieldSelector=metadata.name%3Dlive")
	e.do("POST", coreEventsPath, map[string]any{
		"metadata":       map[string]any{"name": "live"},
		"involvedObject": map[string]any{"kind": "Pod", "namespace": "default", "name": "p3"},
		"message":        "hello",
	}).mustCode(t, 201)
	ev := w.expect("ADDED", "live")
	if ev.Object["note"] != "hello" {
		t.Errorf("watched event %s", mustJSON(t, ev.Object))
	}
}

// qualifiedNameCauses are the causes of an invalid qualified name.
func qualifiedNameCauses(field, v string) []string {
	var out []string
	for _, msg := range validation.IsQualifiedName(v) {
		out = append(out, field+": Invalid value: "+strconv.Quote(v)+": "+msg)
	}
	return out
}

func TestEventsGroupValidation(t *testing.T) {
	t.Parallel()
	e := start(t)
	causes := func(r *resp) []string {
		var got []string
		for _, c := range at(r.obj(t), "details", "causes").([]any) {
			got = append(got, at(c, "field").(string)+": "+at(c, "message").(string))
		}
		return got
	}
	// Through the events group a create must be a complete new event.
	r := e.do("POST", eventsGroupPath(), map[string]any{
		"metadata":                 map[string]any{"name": "bad"},
		"type":                     "Odd",
		"regarding":                map[string]any{"kind": "Pod", "namespace": "default", "name": "p"},
		"deprecatedCount":          2,
		"deprecatedFirstTimestamp": "2024-01-02T03:04:05Z",
	}).mustCode(t, 422)
	want := []string{
		"eventTime: Required value",
		`type: Invalid value: "": has invalid value: Odd`,
		`firstTimestamp: Invalid value: "": needs to be unset`,
		`count: Invalid value: "": needs to be unset`,
	}
	if got := causes(r); !reflect.DeepEqual(got, want) {
		t.Errorf("events group create:\n got  %q\n want %q", got, want)
	}
	r = e.do("POST", eventsGroupPath(), map[string]any{
		"metadata":  map[string]any{"name": "bad2"},
		"eventTime": "2024-01-02T03:04:05.000000Z",
		"type":      "Warning",
		"regarding": map[string]any{"kind": "Pod", "namespace": "default", "name": "p"},
	}).mustCode(t, 422)
	want = []string{"reportingController: Required value"}
	want = append(want, qualifiedNameCauses("reportingController", "")...)
	want = append(want,
		"reportingInstance: Required value",
		"action: Required value",
		"reason: Required value",
	)
	if got := causes(r); !reflect.DeepEqual(got, want) {
		t.Errorf("events group create without reporter:\n got  %q\n want %q", got, want)
	}
	// The same body through the core group passes the legacy rules only.
	e.do("POST", coreEventsPath, map[string]any{
		"metadata":       map[string]any{"name": "legacy"},
		"type":           "Odd",
		"involvedObject": map[string]any{"kind": "Pod", "namespace": "default", "name": "p"},
		"count":          2,
	}).mustCode(t, 201)

	// An update through the events group may not change what happened.
	good := e.do("POST", eventsGroupPath(), map[string]any{
		"metadata": map[string]any{"name": "good"}, "eventTime": "2024-01-02T03:04:05.000000Z",
		"type": "Normal", "reason": "R", "action": "A", "reportingController": "c", "reportingInstance": "i",
		"regarding": map[string]any{"kind": "Pod", "namespace": "default", "name": "p"},
	}).mustCode(t, 201).obj(t)
	good["note"] = "changed"
	good["action"] = "B"
	r = e.do("PUT", eventsGroupPath()+"/good", good).mustCode(t, 422)
	want = []string{`message: Invalid value: "changed": field is immutable`, `action: Invalid value: "B": field is immutable`}
	if got := causes(r); !reflect.DeepEqual(got, want) {
		t.Errorf("events group update:\n got  %q\n want %q", got, want)
	}
	// Members compare as upstream's Go values: a related reference
	// added, however empty, is a change; empty strings are no change.
	cur := e.do("GET", eventsGroupPath()+"/good", nil).mustCode(t, 200).obj(t)
	cur["related"] = map[string]any{}
	r = e.do("PUT", eventsGroupPath()+"/good", cur).mustCode(t, 422)
	want = []string{`related: Invalid value: core.ObjectReference{Kind:"", Namespace:"", Name:"", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable`}
	if got := causes(r); !reflect.DeepEqual(got, want) {
		t.Errorf("events group update adding related:\n got  %q\n want %q", got, want)
	}
	delete(cur, "related")
	cur["note"] = ""
	cur["regarding"].(map[string]any)["uid"] = ""
	cur["metadata"].(map[string]any)["labels"] = map[string]any{"seen": "yes"}
	e.do("PUT", eventsGroupPath()+"/good", cur).mustCode(t, 200)
	if got := e.do("GET", eventsGroupPath()+"/good", nil).mustCode(t, 200).obj(t); at(got, "metadata", "labels", "seen") != "yes" || got["related"] != nil {
		t.Errorf("events group update with empty members: %s", mustJSON(t, got))
	}
}

// TestEventsGroupNameRules: a new event through the events group needs a
// subdomain name, but an event the core group created under another
// valid path segment can be replaced through the events group.
func TestEventsGroupNameRules(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", coreEventsPath, map[string]any{
		"metadata":       map[string]any{"name": "Foo_Bar"},
		"involvedObject": map[string]any{"kind": "Pod", "namespace": "default", "name": "p"},
		"reason":         "Started",
	}).mustCode(t, 201)
	ev := e.do("GET", eventsGroupPath()+"/Foo_Bar", nil).mustCode(t, 200).obj(t)
	ev["metadata"].(map[string]any)["labels"] = map[string]any{"seen": "yes"}
	e.do("PUT", eventsGroupPath()+"/Foo_Bar", ev).mustCode(t, 200)
	if got := e.do("GET", coreEventsPath+"/Foo_Bar", nil).mustCode(t, 200).obj(t); at(got, "metadata", "labels", "seen") != "yes" {
		t.Errorf("replaced event: %s", mustJSON(t, got))
	}
	subdomain := `metadata.name: Invalid value: "New_One": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	fresh := map[string]any{
		"metadata": map[string]any{"name": "New_One"}, "eventTime": "2024-01-02T03:04:05.000000Z",
		"type": "Normal", "reason": "R", "action": "A", "reportingController": "c", "reportingInstance": "i",
		"regarding": map[string]any{"kind": "Pod", "namespace": "default", "name": "p"},
	}
	for _, m := range []string{"POST", "PUT"} {
		path := eventsGroupPath()
		if m == "PUT" {
			path += "/New_One"
		}
		r := e.do(m, path, fresh).mustCode(t, 422)
		if !strings.Contains(r.obj(t)["message"].(string), subdomain) {
			t.Errorf("%s of a new event: %v", m, r.obj(t)["message"])
		}
	}
}

// TestEventCreateErrorOrder: a core event's own rules do not look at its
// metadata, and upstream checks the metadata only once they pass, so a
// create reports one or the other; through the events group the
// metadata's errors follow the legacy rules'.
func TestEventCreateErrorOrder(t *testing.T) {
	t.Parallel()
	e := start(t)
	causes := func(r *resp) []string {
		var got []string
		for _, c := range at(r.obj(t), "details", "causes").([]any) {
			got = append(got, at(c, "field").(string)+": "+at(c, "message").(string))
		}
		return got
	}
	badLabels := map[string]any{"a b": "c"}
	labelCause := `metadata.labels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`
	for _, c := range []struct {
		name, ns string
		want     []string
	}{
		{"mismatch", "other", []string{`involvedObject.namespace: Invalid value: "other": does not match event.namespace`}},
		{"metadata", "default", []string{labelCause}},
	} {
		r := e.do("POST", coreEventsPath, map[string]any{
			"metadata":       map[string]any{"name": "ev-" + c.name, "labels": badLabels},
			"involvedObject": map[string]any{"kind": "Pod", "namespace": c.ns, "name": "p"},
		}).mustCode(t, 422)
		if got := causes(r); !reflect.DeepEqual(got, c.want) {
			t.Errorf("core event, %s:\n got  %q\n want %q", c.name, got, c.want)
		}
	}
	r := e.do("POST", eventsGroupPath(), map[string]any{
		"metadata": map[string]any{"name": "ev-group", "labels": badLabels}, "eventTime": "2024-01-02T03:04:05.000000Z",
		"type": "Normal", "reason": "R", "action": "A", "reportingController": "c",
		"regarding": map[string]any{"kind": "Pod", "namespace": "default", "name": "p"},
	}).mustCode(t, 422)
	if got, want := causes(r), []string{"reportingInstance: Required value", labelCause}; !reflect.DeepEqual(got, want) {
		t.Errorf("events group event:\n got  %q\n want %q", got, want)
	}
}

// TestKubectlAutoscale: kubectl writes an autoscaler in the version it
// prefers and reads tables of both shapes.
func TestKubectlAutoscale(t *testing.T) {
	t.Parallel()
	k := newKubectlEnv(t)
	k.must(t, "create", "namespace", "kc-hpa")
	k.must(t, "create", "deployment", "web", "-n", "kc-hpa", "--image=registry.example/web:1")
	if out := k.must(t, "autoscale", "deployment", "web", "-n", "kc-hpa", "--max=5", "--cpu-percent=60"); !strings.Contains(out, "autoscaled") {
		t.Fatalf("autoscale printed %q", out)
	}
	code, v1 := k.apiGet(t, "/apis/autoscaling/v1/namespaces/kc-hpa/horizontalpodautoscalers/web")
	if code != 200 || at(v1, "spec", "targetCPUUtilizationPercentage") != 60.0 || at(v1, "spec", "maxReplicas") != 5.0 {
		t.Fatalf("autoscaler in v1: %d %s", code, mustJSON(t, v1))
	}
	table := k.must(t, "get", "hpa", "-n", "kc-hpa")
	if !strings.Contains(table, "REFERENCE") || !strings.Contains(table, "Deployment/web") || !strings.Contains(table, "60%") {
		t.Errorf("get hpa table:\n%s", table)
	}
	v1Table := k.must(t, "get", "horizontalpodautoscalers.v1.autoscaling", "-n", "kc-hpa")
	if !strings.Contains(v1Table, "Deployment/web") || !strings.Contains(v1Table, "60%") {
		t.Errorf("get v1 hpa table:\n%s", v1Table)
	}
}
