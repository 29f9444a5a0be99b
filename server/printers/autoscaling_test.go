package printers

import (
	"reflect"
	"testing"
	"time"
)

var hpaCols = []colSpec{nameSpec, str0("Reference"), str0("Targets"), str0("MinPods"), str0("MaxPods"), str0("Replicas"), ageSpec}

func TestHPAv2Printer(t *testing.T) {
	p := New(testBrand(t, "plat"))
	ref := `"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}`
	checkTable(t, p.For("autoscaling", "v2", "horizontalpodautoscalers"), hpaCols, []printerCase{
		{
			name: "cpu utilization with current value",
			obj: `{` + meta("web") + `,"spec":{` + ref + `,"minReplicas":2,"maxReplicas":10,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":70}}}]},
				"status":{"currentReplicas":3,"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":45,"averageValue":"120m"}}}]}}`,
			cells: []any{"web", "Deployment/web", "cpu: 45%/70%", "2", int64(10), int64(3), "60m"},
		},
		{
			name:  "no metrics, no min",
			obj:   `{` + meta("h") + `,"spec":{` + ref + `,"maxReplicas":5}}`,
			cells: []any{"h", "Deployment/web", "<none>", "<unset>", int64(5), int64(0), "60m"},
		},
		{
			name: "every kind, three shown as two and more",
			obj: `{` + meta("h") + `,"spec":{` + ref + `,"maxReplicas":5,"metrics":[
				{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"512Mi"}}},
				{"type":"Pods","pods":{"metric":{"name":"qps"},"target":{"type":"AverageValue","averageValue":"1k"}}},
				{"type":"External","external":{"metric":{"name":"queue"},"target":{"type":"Value","value":"30"}}}]},
				"status":{"currentMetrics":[
				{"type":"Resource","resource":{"name":"memory","current":{"averageValue":"200Mi"}}},
				{"type":"Pods","pods":{"metric":{"name":"qps"},"current":{"averageValue":"1500m"}}}]}}`,
			cells: []any{"h", "Deployment/web", "memory: 200Mi/512Mi, 1500m/1k + 1 more...", "<unset>", int64(5), int64(0), "60m"},
		},
		{
			name: "object and external averages, unknown current, container resource",
			obj: `{` + meta("h") + `,"spec":{` + ref + `,"maxReplicas":5,"metrics":[
				{"type":"Object","object":{"describedObject":{"kind":"Ingress","name":"i"},"metric":{"name":"rps"},"target":{"type":"AverageValue","averageValue":"10"}}},
				{"type":"ContainerResource","containerResource":{"name":"cpu","container":"app","target":{"type":"Utilization"}}}]},
				"status":{"currentMetrics":[{"type":"Object","object":{"metric":{"name":"rps"},"current":{"value":"4"}}},
				{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":12}}}]}}`,
			cells: []any{"h", "Deployment/web", "<unknown>/10 (avg), cpu: <unknown>/<auto>", "<unset>", int64(5), int64(0), "60m"},
		},
		{
			name: "status of another type at the position does not count; nil values print as such",
			obj: `{` + meta("h") + `,"spec":{` + ref + `,"maxReplicas":5,"metrics":[
				{"type":"External","external":{"metric":{"name":"q"},"target":{"type":"Value"}}},
				{"type":"Pods","pods":{"metric":{"name":"x"},"target":{"type":"AverageValue","averageValue":"2"}}}]},
				"status":{"currentMetrics":[{"type":"External","external":{"current":{}}},{"type":"Resource","resource":{"current":{"averageValue":"1"}}}]}}`,
			cells: []any{"h", "Deployment/web", "<nil>/<nil>, <unknown>/2", "<unset>", int64(5), int64(0), "60m"},
		},
		{
			name:  "unknown type",
			obj:   `{` + meta("h") + `,"spec":{"maxReplicas":1,"metrics":[{"type":"Magic"}]}}`,
			cells: []any{"h", "/", "<unknown type>", "<unset>", int64(1), int64(0), "60m"},
		},
	})
}

// TestHPAv1Printer: autoscaling/v1 prints the stored v2 form with the v2
// printer, so its rows are v2's, metric for metric.
func TestHPAv1Printer(t *testing.T) {
	p := New(testBrand(t, "plat"))
	v1, v2 := p.For("autoscaling", "v1", "horizontalpodautoscalers"), p.For("autoscaling", "v2", "horizontalpodautoscalers")
	if !v1.StoredForm || v2.StoredForm || !reflect.DeepEqual(v1.Columns, v2.Columns) {
		t.Fatalf("v1 table: stored form %v, columns %v; v2 columns %v", v1.StoredForm, v1.Columns, v2.Columns)
	}
	stored := decode(t, `{"metadata":{"name":"web","creationTimestamp":"`+ago(time.Hour)+`"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":4,
		"metrics":[{"type":"Pods","pods":{"metric":{"name":"qps"},"target":{"type":"AverageValue","averageValue":"100"}}},
			{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}}]},
		"status":{"currentMetrics":[{"type":"Pods","pods":{"metric":{"name":"qps"},"current":{"averageValue":"7"}}},
			{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":10}}}]}}`)
	got, _ := v1.Row(stored, testNow)
	want, _ := v2.Row(stored, testNow)
	if !reflect.DeepEqual(got, want) || got[2] != "7/100, cpu: 10%/60%" {
		t.Errorf("v1 row %v, v2 row %v", got, want)
	}
}
