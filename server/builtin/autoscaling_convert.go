package builtin

import (
	"bytes"
	"encoding/json"
	"strings"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

// HorizontalPodAutoscalers are stored in the autoscaling/v2 form and served
// in v1 too. v1 has one metric, the CPU utilization target; everything
// else of v2 rides in annotations as JSON, in v1's metric shapes (and the
// behavior in upstream's internal shape, field names capitalised), so a
// v1 client that keeps the annotations round-trips a v2 object whole.
// The Go types below exist to spell those annotations byte for byte as
// upstream does: their member order, omitted empties and zero quantities.

// hpaAnnotations are the keys of the round-trip annotations.
type hpaAnnotations struct {
	metrics, currentMetrics, conditions, behavior string
}

func newHPAAnnotations(b config.Brand) hpaAnnotations {
	p := "autoscaling.alpha." + b.LongDomain + "/"
	return hpaAnnotations{metrics: p + "metrics", currentMetrics: p + "current-metrics", conditions: p + "conditions", behavior: p + "behavior"}
}

func (a hpaAnnotations) all() []string {
	return []string{a.metrics, a.currentMetrics, a.conditions, a.behavior}
}

// qty is a quantity in JSON: canonical on output, "0" when empty, as
// upstream's Quantity marshals; a string or a number on input.
type qty string

func (q qty) MarshalJSON() ([]byte, error) {
	s := string(q)
	if s == "" {
		s = "0"
	}
	if c, err := schema.CanonicalQuantity(s); err == nil {
		s = c
	}
	return json.Marshal(s)
}

func (q *qty) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*q = qty(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*q = qty(n.String())
	return nil
}

// qtyOr returns *p, or the zero quantity.
func qtyOr(p *qty) qty {
	if p == nil {
		return ""
	}
	return *p
}

func qtyPtr(q qty) *qty { return &q }

type crossVersionRef struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion,omitempty"`
}

type labelSelectorJSON struct {
	MatchLabels      map[string]string  `json:"matchLabels,omitempty"`
	MatchExpressions []labelRequirement `json:"matchExpressions,omitempty"`
}

type labelRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// autoscaling/v2 shapes.

type v2MetricIdentifier struct {
	Name     string             `json:"name"`
	Selector *labelSelectorJSON `json:"selector,omitempty"`
}

type v2MetricTarget struct {
	Type               string `json:"type"`
	Value              *qty   `json:"value,omitempty"`
	AverageValue       *qty   `json:"averageValue,omitempty"`
	AverageUtilization *int32 `json:"averageUtilization,omitempty"`
}

type v2MetricValueStatus struct {
	Value              *qty   `json:"value,omitempty"`
	AverageValue       *qty   `json:"averageValue,omitempty"`
	AverageUtilization *int32 `json:"averageUtilization,omitempty"`
}

type v2MetricSpec struct {
	Type   string `json:"type"`
	Object *struct {
		DescribedObject crossVersionRef    `json:"describedObject"`
		Target          v2MetricTarget     `json:"target"`
		Metric          v2MetricIdentifier `json:"metric"`
	} `json:"object,omitempty"`
	Pods *struct {
		Metric v2MetricIdentifier `json:"metric"`
		Target v2MetricTarget     `json:"target"`
	} `json:"pods,omitempty"`
	Resource *struct {
		Name   string         `json:"name"`
		Target v2MetricTarget `json:"target"`
	} `json:"resource,omitempty"`
	ContainerResource *struct {
		Name      string         `json:"name"`
		Target    v2MetricTarget `json:"target"`
		Container string         `json:"container"`
	} `json:"containerResource,omitempty"`
	External *struct {
		Metric v2MetricIdentifier `json:"metric"`
		Target v2MetricTarget     `json:"target"`
	} `json:"external,omitempty"`
}

type v2MetricStatus struct {
	Type   string `json:"type"`
	Object *struct {
		Metric          v2MetricIdentifier  `json:"metric"`
		Current         v2MetricValueStatus `json:"current"`
		DescribedObject crossVersionRef     `json:"describedObject"`
	} `json:"object,omitempty"`
	Pods *struct {
		Metric  v2MetricIdentifier  `json:"metric"`
		Current v2MetricValueStatus `json:"current"`
	} `json:"pods,omitempty"`
	Resource *struct {
		Name    string              `json:"name"`
		Current v2MetricValueStatus `json:"current"`
	} `json:"resource,omitempty"`
	ContainerResource *struct {
		Name      string              `json:"name"`
		Current   v2MetricValueStatus `json:"current"`
		Container string              `json:"container"`
	} `json:"containerResource,omitempty"`
	External *struct {
		Metric  v2MetricIdentifier  `json:"metric"`
		Current v2MetricValueStatus `json:"current"`
	} `json:"external,omitempty"`
}

type v2Condition struct {
	Type               string  `json:"type"`
	Status             string  `json:"status"`
	LastTransitionTime *string `json:"lastTransitionTime,omitempty"`
	Reason             string  `json:"reason,omitempty"`
	Message            string  `json:"message,omitempty"`
}

type v2Behavior struct {
	ScaleUp   *v2ScalingRules `json:"scaleUp,omitempty"`
	ScaleDown *v2ScalingRules `json:"scaleDown,omitempty"`
}

type v2ScalingRules struct {
	StabilizationWindowSeconds *int32            `json:"stabilizationWindowSeconds,omitempty"`
	SelectPolicy               *string           `json:"selectPolicy,omitempty"`
	Policies                   []v2ScalingPolicy `json:"policies,omitempty"`
}

type v2ScalingPolicy struct {
	Type          string `json:"type"`
	Value         int32  `json:"value"`
	PeriodSeconds int32  `json:"periodSeconds"`
}

// The behavior annotation: upstream marshals its internal type, which has
// no JSON names, so members are spelled as Go fields and nil is null.
type internalBehavior struct {
	ScaleUp   *internalScalingRules
	ScaleDown *internalScalingRules
}

type internalScalingRules struct {
	StabilizationWindowSeconds *int32
	SelectPolicy               *string
	Policies                   []internalScalingPolicy
}

type internalScalingPolicy struct {
	Type          string
	Value         int32
	PeriodSeconds int32
}

// autoscaling/v1 annotation shapes.

type v1MetricSpec struct {
	Type   string `json:"type"`
	Object *struct {
		Target       crossVersionRef    `json:"target"`
		MetricName   string             `json:"metricName"`
		TargetValue  qty                `json:"targetValue"`
		Selector     *labelSelectorJSON `json:"selector,omitempty"`
		AverageValue *qty               `json:"averageValue,omitempty"`
	} `json:"object,omitempty"`
	Pods *struct {
		MetricName         string             `json:"metricName"`
		TargetAverageValue qty                `json:"targetAverageValue"`
		Selector           *labelSelectorJSON `json:"selector,omitempty"`
	} `json:"pods,omitempty"`
	Resource *struct {
		Name                     string `json:"name"`
		TargetAverageUtilization *int32 `json:"targetAverageUtilization,omitempty"`
		TargetAverageValue       *qty   `json:"targetAverageValue,omitempty"`
	} `json:"resource,omitempty"`
	ContainerResource *struct {
		Name                     string `json:"name"`
		TargetAverageUtilization *int32 `json:"targetAverageUtilization,omitempty"`
		TargetAverageValue       *qty   `json:"targetAverageValue,omitempty"`
		Container                string `json:"container"`
	} `json:"containerResource,omitempty"`
	External *struct {
		MetricName         string             `json:"metricName"`
		MetricSelector     *labelSelectorJSON `json:"metricSelector,omitempty"`
		TargetValue        *qty               `json:"targetValue,omitempty"`
		TargetAverageValue *qty               `json:"targetAverageValue,omitempty"`
	} `json:"external,omitempty"`
}

type v1MetricStatus struct {
	Type   string `json:"type"`
	Object *struct {
		Target       crossVersionRef    `json:"target"`
		MetricName   string             `json:"metricName"`
		CurrentValue qty                `json:"currentValue"`
		Selector     *labelSelectorJSON `json:"selector,omitempty"`
		AverageValue *qty               `json:"averageValue,omitempty"`
	} `json:"object,omitempty"`
	Pods *struct {
		MetricName          string             `json:"metricName"`
		CurrentAverageValue qty                `json:"currentAverageValue"`
		Selector            *labelSelectorJSON `json:"selector,omitempty"`
	} `json:"pods,omitempty"`
	Resource *struct {
		Name                      string `json:"name"`
		CurrentAverageUtilization *int32 `json:"currentAverageUtilization,omitempty"`
		CurrentAverageValue       qty    `json:"currentAverageValue"`
	} `json:"resource,omitempty"`
	ContainerResource *struct {
		Name                      string `json:"name"`
		CurrentAverageUtilization *int32 `json:"currentAverageUtilization,omitempty"`
		CurrentAverageValue       qty    `json:"currentAverageValue"`
		Container                 string `json:"container"`
	} `json:"containerResource,omitempty"`
	External *struct {
		MetricName          string             `json:"metricName"`
		MetricSelector      *labelSelectorJSON `json:"metricSelector,omitempty"`
		CurrentValue        qty                `json:"currentValue"`
		CurrentAverageValue *qty               `json:"currentAverageValue,omitempty"`
	} `json:"external,omitempty"`
}

// v1Condition prints a missing transition time as null, as upstream's
// zero time does.
type v1Condition struct {
	Type               string  `json:"type"`
	Status             string  `json:"status"`
	LastTransitionTime *string `json:"lastTransitionTime"`
	Reason             string  `json:"reason,omitempty"`
	Message            string  `json:"message,omitempty"`
}

// Metric source types and the CPU resource.
const (
	metricObject            = "Object"
	metricPods              = "Pods"
	metricResource          = "Resource"
	metricContainerResource = "ContainerResource"
	metricExternal          = "External"
	resourceCPU             = "cpu"
	targetUtilization       = "Utilization"
	targetValue             = "Value"
	targetAverageValue      = "AverageValue"
)

// remarshal moves a decoded value into a Go shape (or back) through JSON.
func remarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// toObjectValue turns a Go shape into decoded JSON values with integers as
// int64, as decoded objects hold them.
func toObjectValue(in any) any {
	b, err := json.Marshal(in)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return intsOf(v)
}

// intsOf turns the json.Numbers of a value decoded with UseNumber into
// int64 (float64 for a fraction), as decoded objects hold numbers; maps and
// lists are changed in place.
func intsOf(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = intsOf(e)
		}
	case []any:
		for i, e := range x {
			x[i] = intsOf(e)
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

func marshalString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func int32Ptr(n int32) *int32 { return &n }

// isCPUUtilization reports whether a v2 metric is the one v1 carries in
// targetCPUUtilizationPercentage.
func isCPUUtilization(m v2MetricSpec) bool {
	return m.Type == metricResource && m.Resource != nil && m.Resource.Name == resourceCPU && m.Resource.Target.AverageUtilization != nil
}

// hpaV2ToV1 converts a stored autoscaling/v2 object to v1 in place.
func (a hpaAnnotations) hpaV2ToV1(obj registry.Object) registry.Object {
	spec, status := mapAt(obj, "spec"), mapAt(obj, "status")
	var metrics []v2MetricSpec
	var current []v2MetricStatus
	var conds []v2Condition
	var behavior *v2Behavior
	_ = remarshal(spec["metrics"], &metrics)
	_ = remarshal(status["currentMetrics"], &current)
	_ = remarshal(status["conditions"], &conds)
	_ = remarshal(spec["behavior"], &behavior)

	v1spec := map[string]any{}
	copyMembers(v1spec, spec, "scaleTargetRef", "minReplicas", "maxReplicas")
	for _, m := range metrics {
		if m.Type == metricResource && m.Resource != nil && m.Resource.Name == resourceCPU {
			if u := m.Resource.Target.AverageUtilization; u != nil {
				v1spec["targetCPUUtilizationPercentage"] = int64(*u)
			}
			break
		}
	}
	v1status := map[string]any{}
	copyMembers(v1status, status, "observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas")
	for _, m := range current {
		if m.Type == metricResource && m.Resource != nil && m.Resource.Name == resourceCPU && m.Resource.Current.AverageUtilization != nil {
			v1status["currentCPUUtilizationPercentage"] = int64(*m.Resource.Current.AverageUtilization)
		}
	}

	ann := a.dropRoundTrip(obj)
	var other []v1MetricSpec
	for _, m := range metrics {
		if !isCPUUtilization(m) {
			other = append(other, metricSpecToV1(m))
		}
	}
	if len(other) > 0 {
		ann[a.metrics] = marshalString(other)
	}
	if len(current) > 0 {
		out := make([]v1MetricStatus, len(current))
		for i, m := range current {
			out[i] = metricStatusToV1(m)
		}
		ann[a.currentMetrics] = marshalString(out)
	}
	if behavior != nil {
		ann[a.behavior] = marshalString(behaviorToInternal(behavior))
	}
	if len(conds) > 0 {
		out := make([]v1Condition, len(conds))
		for i, c := range conds {
			out[i] = v1Condition(c)
		}
		ann[a.conditions] = marshalString(out)
	}
	a.setAnnotations(obj, ann)
	obj["spec"] = v1spec
	obj["status"] = v1status
	return obj
}

// hpaV1ToV2 converts an autoscaling/v1 object to v2 in place, without
// v2's defaults. A round-trip annotation that does not parse is left out.
func (a hpaAnnotations) hpaV1ToV2(obj registry.Object) registry.Object {
	spec, status := mapAt(obj, "spec"), mapAt(obj, "status")
	ann := stringMapOf(mapAt(obj, "metadata", "annotations"))

	v2spec := map[string]any{}
	copyMembers(v2spec, spec, "scaleTargetRef", "minReplicas", "maxReplicas")
	var metrics []v2MetricSpec
	if u, ok := intOf(spec["targetCPUUtilizationPercentage"]); ok {
		metrics = append(metrics, cpuUtilizationMetric(int32(u)))
	}
	if enc, ok := ann[a.metrics]; ok {
		var other []v1MetricSpec
		if json.Unmarshal([]byte(enc), &other) == nil {
			out := make([]v2MetricSpec, 0, len(other)+len(metrics))
			for _, m := range other {
				out = append(out, metricSpecToV2(m))
			}
			metrics = append(out, metrics...)
		}
	}
	if len(metrics) == 0 {
		// v1 targets 80% CPU when it names no target.
		metrics = []v2MetricSpec{cpuUtilizationMetric(hpaDefaultCPUUtilization)}
	}
	v2spec["metrics"] = toObjectValue(metrics)
	if enc, ok := ann[a.behavior]; ok {
		var b internalBehavior
		if json.Unmarshal([]byte(enc), &b) == nil && (b.ScaleUp != nil || b.ScaleDown != nil) {
			v2spec["behavior"] = toObjectValue(behaviorFromInternal(b))
		}
	}

	v2status := map[string]any{}
	copyMembers(v2status, status, "observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas")
	if u, ok := intOf(status["currentCPUUtilizationPercentage"]); ok {
		m := v2MetricStatus{Type: metricResource}
		m.Resource = &struct {
			Name    string              `json:"name"`
			Current v2MetricValueStatus `json:"current"`
		}{Name: resourceCPU, Current: v2MetricValueStatus{AverageUtilization: int32Ptr(int32(u))}}
		v2status["currentMetrics"] = toObjectValue([]v2MetricStatus{m})
	}
	if enc, ok := ann[a.currentMetrics]; ok {
		var cur []v1MetricStatus
		if json.Unmarshal([]byte(enc), &cur) == nil {
			out := make([]v2MetricStatus, len(cur))
			for i, m := range cur {
				out[i] = metricStatusToV2(m)
			}
			v2status["currentMetrics"] = toObjectValue(out)
		}
	}
	if enc, ok := ann[a.conditions]; ok {
		var conds []v1Condition
		if json.Unmarshal([]byte(enc), &conds) == nil {
			out := make([]v2Condition, len(conds))
			for i, c := range conds {
				out[i] = v2Condition(c)
			}
			v2status["conditions"] = toObjectValue(out)
		}
	}
	a.setAnnotations(obj, a.dropRoundTrip(obj))
	obj["spec"] = v2spec
	obj["status"] = v2status
	return obj
}

// badRoundTripAnnotations lists the round-trip annotations of a v1 object
// that do not parse; upstream refuses such a body.
func (a hpaAnnotations) badRoundTripAnnotations(obj registry.Object) []string {
	ann := stringMapOf(mapAt(obj, "metadata", "annotations"))
	var bad []string
	for _, c := range []struct {
		key string
		to  any
	}{{a.metrics, &[]v1MetricSpec{}}, {a.currentMetrics, &[]v1MetricStatus{}}, {a.conditions, &[]v1Condition{}}} {
		if enc, ok := ann[c.key]; ok && json.Unmarshal([]byte(enc), c.to) != nil {
			bad = append(bad, c.key)
		}
	}
	return bad
}

func cpuUtilizationMetric(u int32) v2MetricSpec {
	m := v2MetricSpec{Type: metricResource}
	m.Resource = &struct {
		Name   string         `json:"name"`
		Target v2MetricTarget `json:"target"`
	}{Name: resourceCPU, Target: v2MetricTarget{Type: targetUtilization, AverageUtilization: int32Ptr(u)}}
	return m
}

// dropRoundTrip returns obj's annotations without the round-trip ones.
func (a hpaAnnotations) dropRoundTrip(obj registry.Object) map[string]any {
	ann := map[string]any{}
	for k, v := range mapAt(obj, "metadata", "annotations") {
		ann[k] = v
	}
	for _, k := range a.all() {
		delete(ann, k)
	}
	return ann
}

// setAnnotations sets obj's annotations, dropping an empty map.
func (a hpaAnnotations) setAnnotations(obj registry.Object, ann map[string]any) {
	md := child(obj, "metadata")
	if len(ann) == 0 {
		delete(md, "annotations")
		return
	}
	md["annotations"] = ann
}

// copyMembers copies the named members of src that are present into dst.
func copyMembers(dst, src map[string]any, names ...string) {
	for _, n := range names {
		if v, ok := src[n]; ok && v != nil {
			dst[n] = v
		}
	}
}

// stringMapOf reads a map of strings.
func stringMapOf(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func metricSpecToV1(m v2MetricSpec) v1MetricSpec {
	out := v1MetricSpec{Type: m.Type}
	if s := m.Object; s != nil {
		out.Object = &struct {
			Target       crossVersionRef    `json:"target"`
			MetricName   string             `json:"metricName"`
			TargetValue  qty                `json:"targetValue"`
			Selector     *labelSelectorJSON `json:"selector,omitempty"`
			AverageValue *qty               `json:"averageValue,omitempty"`
		}{s.DescribedObject, s.Metric.Name, qtyOr(s.Target.Value), s.Metric.Selector, s.Target.AverageValue}
	}
	if s := m.Pods; s != nil {
		out.Pods = &struct {
			MetricName         string             `json:"metricName"`
			TargetAverageValue qty                `json:"targetAverageValue"`
			Selector           *labelSelectorJSON `json:"selector,omitempty"`
		}{s.Metric.Name, qtyOr(s.Target.AverageValue), s.Metric.Selector}
	}
	if s := m.Resource; s != nil {
		out.Resource = &struct {
			Name                     string `json:"name"`
			TargetAverageUtilization *int32 `json:"targetAverageUtilization,omitempty"`
			TargetAverageValue       *qty   `json:"targetAverageValue,omitempty"`
		}{s.Name, s.Target.AverageUtilization, s.Target.AverageValue}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &struct {
			Name                     string `json:"name"`
			TargetAverageUtilization *int32 `json:"targetAverageUtilization,omitempty"`
			TargetAverageValue       *qty   `json:"targetAverageValue,omitempty"`
			Container                string `json:"container"`
		}{s.Name, s.Target.AverageUtilization, s.Target.AverageValue, s.Container}
	}
	if s := m.External; s != nil {
		out.External = &struct {
			MetricName         string             `json:"metricName"`
			MetricSelector     *labelSelectorJSON `json:"metricSelector,omitempty"`
			TargetValue        *qty               `json:"targetValue,omitempty"`
			TargetAverageValue *qty               `json:"targetAverageValue,omitempty"`
		}{s.Metric.Name, s.Metric.Selector, s.Target.Value, s.Target.AverageValue}
	}
	return out
}

// valueOrAverage is the target type of a v1 metric that has a value
// target unless it only names an average.
func valueOrAverage(value *qty) string {
	if value == nil {
		return targetAverageValue
	}
	return targetValue
}

func metricSpecToV2(m v1MetricSpec) v2MetricSpec {
	out := v2MetricSpec{Type: m.Type}
	if s := m.Object; s != nil {
		t := targetValue
		if s.AverageValue != nil {
			t = targetAverageValue
		}
		out.Object = &struct {
			DescribedObject crossVersionRef    `json:"describedObject"`
			Target          v2MetricTarget     `json:"target"`
			Metric          v2MetricIdentifier `json:"metric"`
		}{s.Target, v2MetricTarget{Type: t, Value: qtyPtr(s.TargetValue), AverageValue: s.AverageValue}, v2MetricIdentifier{s.MetricName, s.Selector}}
	}
	if s := m.Pods; s != nil {
		out.Pods = &struct {
			Metric v2MetricIdentifier `json:"metric"`
			Target v2MetricTarget     `json:"target"`
		}{v2MetricIdentifier{s.MetricName, s.Selector}, v2MetricTarget{Type: targetAverageValue, AverageValue: qtyPtr(s.TargetAverageValue)}}
	}
	if s := m.Resource; s != nil {
		t := targetUtilization
		if s.TargetAverageUtilization == nil {
			t = targetAverageValue
		}
		out.Resource = &struct {
			Name   string         `json:"name"`
			Target v2MetricTarget `json:"target"`
		}{s.Name, v2MetricTarget{Type: t, AverageValue: s.TargetAverageValue, AverageUtilization: s.TargetAverageUtilization}}
	}
	if s := m.ContainerResource; s != nil {
		t := targetUtilization
		if s.TargetAverageUtilization == nil {
			t = targetAverageValue
		}
		out.ContainerResource = &struct {
			Name      string         `json:"name"`
			Target    v2MetricTarget `json:"target"`
			Container string         `json:"container"`
		}{s.Name, v2MetricTarget{Type: t, AverageValue: s.TargetAverageValue, AverageUtilization: s.TargetAverageUtilization}, s.Container}
	}
	if s := m.External; s != nil {
		out.External = &struct {
			Metric v2MetricIdentifier `json:"metric"`
			Target v2MetricTarget     `json:"target"`
		}{v2MetricIdentifier{s.MetricName, s.MetricSelector}, v2MetricTarget{Type: valueOrAverage(s.TargetValue), Value: s.TargetValue, AverageValue: s.TargetAverageValue}}
	}
	return out
}

func metricStatusToV1(m v2MetricStatus) v1MetricStatus {
	out := v1MetricStatus{Type: m.Type}
	if s := m.Object; s != nil {
		out.Object = &struct {
			Target       crossVersionRef    `json:"target"`
			MetricName   string             `json:"metricName"`
			CurrentValue qty                `json:"currentValue"`
			Selector     *labelSelectorJSON `json:"selector,omitempty"`
			AverageValue *qty               `json:"averageValue,omitempty"`
		}{s.DescribedObject, s.Metric.Name, qtyOr(s.Current.Value), s.Metric.Selector, s.Current.AverageValue}
	}
	if s := m.Pods; s != nil {
		out.Pods = &struct {
			MetricName          string             `json:"metricName"`
			CurrentAverageValue qty                `json:"currentAverageValue"`
			Selector            *labelSelectorJSON `json:"selector,omitempty"`
		}{s.Metric.Name, qtyOr(s.Current.AverageValue), s.Metric.Selector}
	}
	if s := m.Resource; s != nil {
		out.Resource = &struct {
			Name                      string `json:"name"`
			CurrentAverageUtilization *int32 `json:"currentAverageUtilization,omitempty"`
			CurrentAverageValue       qty    `json:"currentAverageValue"`
		}{s.Name, s.Current.AverageUtilization, qtyOr(s.Current.AverageValue)}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &struct {
			Name                      string `json:"name"`
			CurrentAverageUtilization *int32 `json:"currentAverageUtilization,omitempty"`
			CurrentAverageValue       qty    `json:"currentAverageValue"`
			Container                 string `json:"container"`
		}{s.Name, s.Current.AverageUtilization, qtyOr(s.Current.AverageValue), s.Container}
	}
	if s := m.External; s != nil {
		out.External = &struct {
			MetricName          string             `json:"metricName"`
			MetricSelector      *labelSelectorJSON `json:"metricSelector,omitempty"`
			CurrentValue        qty                `json:"currentValue"`
			CurrentAverageValue *qty               `json:"currentAverageValue,omitempty"`
		}{s.Metric.Name, s.Metric.Selector, qtyOr(s.Current.Value), s.Current.AverageValue}
	}
	return out
}

func metricStatusToV2(m v1MetricStatus) v2MetricStatus {
	out := v2MetricStatus{Type: m.Type}
	if s := m.Object; s != nil {
		out.Object = &struct {
			Metric          v2MetricIdentifier  `json:"metric"`
			Current         v2MetricValueStatus `json:"current"`
			DescribedObject crossVersionRef     `json:"describedObject"`
		}{v2MetricIdentifier{s.MetricName, s.Selector}, v2MetricValueStatus{Value: qtyPtr(s.CurrentValue), AverageValue: s.AverageValue}, s.Target}
	}
	if s := m.Pods; s != nil {
		out.Pods = &struct {
			Metric  v2MetricIdentifier  `json:"metric"`
			Current v2MetricValueStatus `json:"current"`
		}{v2MetricIdentifier{s.MetricName, s.Selector}, v2MetricValueStatus{AverageValue: qtyPtr(s.CurrentAverageValue)}}
	}
	if s := m.Resource; s != nil {
		out.Resource = &struct {
			Name    string              `json:"name"`
			Current v2MetricValueStatus `json:"current"`
		}{s.Name, v2MetricValueStatus{AverageValue: qtyPtr(s.CurrentAverageValue), AverageUtilization: s.CurrentAverageUtilization}}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &struct {
			Name      string              `json:"name"`
			Current   v2MetricValueStatus `json:"current"`
			Container string              `json:"container"`
		}{s.Name, v2MetricValueStatus{AverageValue: qtyPtr(s.CurrentAverageValue), AverageUtilization: s.CurrentAverageUtilization}, s.Container}
	}
	if s := m.External; s != nil {
		out.External = &struct {
			Metric  v2MetricIdentifier  `json:"metric"`
			Current v2MetricValueStatus `json:"current"`
		}{v2MetricIdentifier{s.MetricName, s.MetricSelector}, v2MetricValueStatus{Value: qtyPtr(s.CurrentValue), AverageValue: s.CurrentAverageValue}}
	}
	return out
}

func behaviorToInternal(b *v2Behavior) internalBehavior {
	conv := func(r *v2ScalingRules) *internalScalingRules {
		if r == nil {
			return nil
		}
		out := &internalScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy}
		for _, p := range r.Policies {
			out.Policies = append(out.Policies, internalScalingPolicy(p))
		}
		return out
	}
	return internalBehavior{ScaleUp: conv(b.ScaleUp), ScaleDown: conv(b.ScaleDown)}
}

func behaviorFromInternal(b internalBehavior) v2Behavior {
	conv := func(r *internalScalingRules) *v2ScalingRules {
		if r == nil {
			return nil
		}
		out := &v2ScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy}
		for _, p := range r.Policies {
			out.Policies = append(out.Policies, v2ScalingPolicy(p))
		}
		return out
	}
	return v2Behavior{ScaleUp: conv(b.ScaleUp), ScaleDown: conv(b.ScaleDown)}
}

// metricTypeField is the member of a metric that a metric type fills.
func metricTypeField(t string) string {
	if t == "" {
		return ""
	}
	return strings.ToLower(t[:1]) + t[1:]
}
