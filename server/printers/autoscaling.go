package printers

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"platd/config"
	"platd/server/registry"
)

// hpaDefaultCPUUtilization is the CPU target an autoscaling/v1 object with
// no target at all stands for.
const hpaDefaultCPUUtilization = 80

// hpaMetricsShown is how many metrics the Targets cell lists before it
// summarises the rest.
const hpaMetricsShown = 2

// metricValue is a target or current value of one metric, in the shape of
// the v2 API (MetricTarget / MetricValueStatus): each member nil when
// unset.
type metricValue struct {
	value, averageValue, averageUtilization any
}

// metricSpec is one metric of an autoscaler, whatever version it came in.
type metricSpec struct {
	typ    string
	name   string // resource name, for Resource and ContainerResource
	target metricValue
}

// metricStatus is the current value of the metric at the same position,
// keyed by the member that carries it ("resource", "pods"...).
type metricStatus map[string]metricValue

// metricSources maps a metric type to the member that carries it.
var metricSources = map[string]string{
	"Object": "object", "Pods": "pods", "Resource": "resource",
	"ContainerResource": "containerResource", "External": "external",
}

func addAutoscaling(p *Printers, b config.Brand) {
	p.add("autoscaling", "v2", "horizontalpodautoscalers", hpaTable(hpaV2Metrics))
	p.add("autoscaling", "v1", "horizontalpodautoscalers", hpaTable(func(o registry.Object) ([]metricSpec, []metricStatus) {
		return hpaV1Metrics(b, o)
	}))
}

func hpaTable(metrics func(registry.Object) ([]metricSpec, []metricStatus)) *registry.Table {
	return columns(
		nameColumn(),
		col("Reference", "string", "Object the autoscaler scales, as kind/name.", func(o registry.Object, _ time.Time) any {
			return str(o, "spec", "scaleTargetRef", "kind") + "/" + str(o, "spec", "scaleTargetRef", "name")
		}),
		col("Targets", "string", "Current and target values of the first metrics.", func(o registry.Object, _ time.Time) any {
			return formatHPAMetrics(metrics(o))
		}),
		col("MinPods", "string", "Lower bound of the replica count.", func(o registry.Object, _ time.Time) any {
			if n, ok := integer(o, "spec", "minReplicas"); ok {
				return fmt.Sprint(n)
			}
			return unset
		}),
		col("MaxPods", "string", "Upper bound of the replica count.", integerAt("spec", "maxReplicas")),
		col("Replicas", "string", "Current replica count.", integerAt("status", "currentReplicas")),
		ageColumn(),
	)
}

// hpaV2Metrics reads the metrics of an autoscaling/v2 object.
func hpaV2Metrics(o registry.Object) ([]metricSpec, []metricStatus) {
	var specs []metricSpec
	for _, m := range list(o, "spec", "metrics") {
		typ := str(m, "type")
		src := object(m, metricSources[typ])
		specs = append(specs, metricSpec{typ: typ, name: str(src, "name"), target: v2Value(object(src, "target"))})
	}
	var statuses []metricStatus
	for _, m := range list(o, "status", "currentMetrics") {
		statuses = append(statuses, v2Status(m))
	}
	return specs, statuses
}

func v2Value(m map[string]any) metricValue {
	return metricValue{value: at(m, "value"), averageValue: at(m, "averageValue"), averageUtilization: at(m, "averageUtilization")}
}

func v2Status(m any) metricStatus {
	st := metricStatus{}
	for _, source := range metricSources {
		if has(m, source) {
			st[source] = v2Value(object(m, source, "current"))
		}
	}
	return st
}

// hpaV1Metrics reads the metrics of an autoscaling/v1 object as upstream
// converts it: the metrics v1 cannot express travel in annotations, the
// CPU target comes last, and no metric at all means the default CPU
// target.
func hpaV1Metrics(b config.Brand, o registry.Object) ([]metricSpec, []metricStatus) {
	annotations := stringMap(o, "metadata", "annotations")
	prefix := "autoscaling.alpha." + b.LongDomain + "/"

	var specs []metricSpec
	if enc, ok := annotations[prefix+"metrics"]; ok {
		for _, m := range decodeList(enc) {
			specs = append(specs, v1Spec(m))
		}
	}
	if cpu, ok := integer(o, "spec", "targetCPUUtilizationPercentage"); ok {
		specs = append(specs, metricSpec{typ: "Resource", name: "cpu", target: metricValue{averageUtilization: cpu}})
	}
	if len(specs) == 0 {
		specs = []metricSpec{{typ: "Resource", name: "cpu", target: metricValue{averageUtilization: int64(hpaDefaultCPUUtilization)}}}
	}

	var statuses []metricStatus
	if cpu, ok := integer(o, "status", "currentCPUUtilizationPercentage"); ok {
		statuses = []metricStatus{{"resource": metricValue{averageUtilization: cpu}}}
	}
	if enc, ok := annotations[prefix+"current-metrics"]; ok {
		statuses = nil
		for _, m := range decodeList(enc) {
			statuses = append(statuses, v1Status(m))
		}
	}
	return specs, statuses
}

// decodeList decodes an annotation holding a JSON array; anything else
// reads as empty.
func decodeList(enc string) []any {
	var l []any
	d := json.NewDecoder(strings.NewReader(enc))
	d.UseNumber()
	if err := d.Decode(&l); err != nil {
		return nil
	}
	return numbersToValues(l).([]any)
}

// v1Spec converts a metric in the v1 annotation shape.
func v1Spec(m any) metricSpec {
	typ := str(m, "type")
	src := object(m, metricSources[typ])
	s := metricSpec{typ: typ, name: str(src, "name")}
	switch typ {
	case "Object":
		s.target = metricValue{value: valueOrZero(at(src, "targetValue")), averageValue: at(src, "averageValue")}
	case "Pods":
		s.target = metricValue{averageValue: valueOrZero(at(src, "targetAverageValue"))}
	case "Resource", "ContainerResource":
		s.target = metricValue{averageValue: at(src, "targetAverageValue"), averageUtilization: at(src, "targetAverageUtilization")}
	case "External":
		s.target = metricValue{value: at(src, "targetValue"), averageValue: at(src, "targetAverageValue")}
	}
	return s
}

// v1Status converts a current metric in the v1 annotation shape.
func v1Status(m any) metricStatus {
	typ := str(m, "type")
	source := metricSources[typ]
	src := object(m, source)
	if src == nil {
		return metricStatus{}
	}
	var cur metricValue
	switch typ {
	case "Object":
		cur = metricValue{value: valueOrZero(at(src, "currentValue")), averageValue: at(src, "averageValue")}
	case "Pods":
		cur = metricValue{averageValue: valueOrZero(at(src, "currentAverageValue"))}
	case "Resource", "ContainerResource":
		cur = metricValue{averageValue: valueOrZero(at(src, "currentAverageValue")), averageUtilization: at(src, "currentAverageUtilization")}
	case "External":
		cur = metricValue{value: valueOrZero(at(src, "currentValue")), averageValue: at(src, "currentAverageValue")}
	}
	return metricStatus{source: cur}
}

// valueOrZero stands for a quantity the v1 shape always carries: unset is
// the zero quantity, not an absent one.
func valueOrZero(v any) any {
	if v == nil {
		return "0"
	}
	return v
}

// formatHPAMetrics renders "current/target" for each metric (with the
// resource name first for resource metrics, "(avg)" for averaged object
// and external metrics, percentages for utilizations), the first two
// only. A status counts only when it sits at the metric's position and
// carries the metric's type.
func formatHPAMetrics(specs []metricSpec, statuses []metricStatus) string {
	if len(specs) == 0 {
		return none
	}
	var parts []string
	for i, s := range specs {
		var cur *metricValue
		if i < len(statuses) {
			if v, ok := statuses[i][metricSources[s.typ]]; ok {
				cur = &v
			}
		}
		current := unknown
		switch s.typ {
		case "External", "Object":
			if s.target.averageValue != nil {
				if cur != nil && cur.averageValue != nil {
					current = quantityText(cur.averageValue)
				}
				parts = append(parts, fmt.Sprintf("%s/%s (avg)", current, quantityText(s.target.averageValue)))
			} else {
				if cur != nil {
					current = quantityRef(cur.value)
				}
				parts = append(parts, fmt.Sprintf("%s/%s", current, quantityRef(s.target.value)))
			}
		case "Pods":
			if cur != nil {
				current = quantityRef(cur.averageValue)
			}
			parts = append(parts, fmt.Sprintf("%s/%s", current, quantityRef(s.target.averageValue)))
		case "Resource", "ContainerResource":
			if s.target.averageValue != nil {
				if cur != nil {
					current = quantityRef(cur.averageValue)
				}
				parts = append(parts, fmt.Sprintf("%s: %s/%s", s.name, current, quantityText(s.target.averageValue)))
			} else {
				if cur != nil {
					if u, ok := integerOf(cur.averageUtilization); ok {
						current = fmt.Sprintf("%d%%", u)
					}
				}
				target := "<auto>"
				if u, ok := integerOf(s.target.averageUtilization); ok {
					target = fmt.Sprintf("%d%%", u)
				}
				parts = append(parts, fmt.Sprintf("%s: %s/%s", s.name, current, target))
			}
		default:
			parts = append(parts, "<unknown type>")
		}
	}
	if len(parts) > hpaMetricsShown {
		return fmt.Sprintf("%s + %d more...", strings.Join(parts[:hpaMetricsShown], ", "), len(parts)-hpaMetricsShown)
	}
	return strings.Join(parts, ", ")
}
