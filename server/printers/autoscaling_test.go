package printers

import (
	"strconv"
	"testing"
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

func TestHPAv1Printer(t *testing.T) {
	b := testBrand(t, "plat")
	p := New(b)
	ann := func(key, value string) string {
		return `"annotations":{"autoscaling.alpha.` + b.LongDomain + `/` + key + `":` + strconv.Quote(value) + `}`
	}
	ref := `"scaleTargetRef":{"kind":"Deployment","name":"web"}`
	checkTable(t, p.For("autoscaling", "v1", "horizontalpodautoscalers"), hpaCols, []printerCase{
		{
			name:  "cpu target and current",
			obj:   `{` + meta("web") + `,"spec":{` + ref + `,"minReplicas":1,"maxReplicas":4,"targetCPUUtilizationPercentage":50},"status":{"currentReplicas":2,"currentCPUUtilizationPercentage":33}}`,
			cells: []any{"web", "Deployment/web", "cpu: 33%/50%", "1", int64(4), int64(2), "60m"},
		},
		{
			name:  "no target means the default",
			obj:   `{` + meta("web") + `,"spec":{` + ref + `,"maxReplicas":4}}`,
			cells: []any{"web", "Deployment/web", "cpu: <unknown>/80%", "<unset>", int64(4), int64(0), "60m"},
		},
		{
			name: "metrics carried in annotations come before the cpu target",
			obj: `{"metadata":{"name":"web",` + ann("metrics", `[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"100"}}]`) + `},
				"spec":{` + ref + `,"maxReplicas":4,"targetCPUUtilizationPercentage":60},"status":{"currentCPUUtilizationPercentage":10}}`,
			cells: []any{"web", "Deployment/web", "<unknown>/100, cpu: <unknown>/60%", "<unset>", int64(4), int64(0), "<unknown>"},
		},
		{
			name: "current metrics annotation replaces the cpu status",
			obj: `{"metadata":{"name":"web","annotations":{` +
				`"autoscaling.alpha.` + b.LongDomain + `/metrics":` + strconv.Quote(`[{"type":"External","external":{"metricName":"q","targetAverageValue":"5"}},{"type":"Resource","resource":{"name":"memory","targetAverageValue":"1Gi"}}]`) + `,` +
				`"autoscaling.alpha.` + b.LongDomain + `/current-metrics":` + strconv.Quote(`[{"type":"External","external":{"metricName":"q","currentValue":"0","currentAverageValue":"3"}},{"type":"Resource","resource":{"name":"memory"}}]`) + `}},
				"spec":{` + ref + `,"maxReplicas":4},"status":{"currentCPUUtilizationPercentage":99}}`,
			cells: []any{"web", "Deployment/web", "3/5 (avg), memory: 0/1Gi", "<unset>", int64(4), int64(0), "<unknown>"},
		},
		{
			name:  "unreadable annotation is ignored",
			obj:   `{"metadata":{"name":"web",` + ann("metrics", `not json`) + `},"spec":{` + ref + `,"maxReplicas":4}}`,
			cells: []any{"web", "Deployment/web", "cpu: <unknown>/80%", "<unset>", int64(4), int64(0), "<unknown>"},
		},
	})
}
