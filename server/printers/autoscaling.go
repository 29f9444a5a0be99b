package printers

import (
	"fmt"
	"strings"
	"time"

	"platd/config"
	"platd/server/registry"
)

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

// addAutoscaling prints both versions of an autoscaler from its stored v2
// form, as upstream prints its one internal form: the metrics autoscaling/v1
// keeps in annotations print in their place and with their own current
// values.
func addAutoscaling(p *Printers, _ config.Brand) {
	p.add("autoscaling", "v2", "horizontalpodautoscalers", hpaTable(hpaV2Metrics))
	v1 := hpaTable(hpaV2Metrics)
	v1.StoredForm = true
	p.add("autoscaling", "v1", "horizontalpodautoscalers", v1)
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
