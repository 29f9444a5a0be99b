package builtin

import (
	"fmt"
	"slices"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
	"platd/server/validation"
)

// hpaDefaultCPUUtilization is the CPU target of an autoscaler that names
// no metric.
const hpaDefaultCPUUtilization = 80

// Limits of scaling rules.
const (
	hpaMaxPeriodSeconds              = 1800
	hpaMaxStabilizationWindowSeconds = 3600
)

// hpaScaleToZero is upstream's HPAScaleToZero gate, off (alpha) in v1.32:
// minReplicas 0 is refused unless the stored object already has it.
const hpaScaleToZero = false

var (
	hpaMetricTypes  = []string{metricContainerResource, metricExternal, metricObject, metricPods, metricResource}
	hpaSelectPolicy = []string{"Disabled", "Max", "Min"}
	hpaPolicyTypes  = []string{"Percent", "Pods"}
)

// autoscalingV2 and autoscalingV1 serve one stored autoscaler, kept in
// the v2 form, in both versions.
func autoscalingV2(b config.Brand) []*registry.Descriptor {
	return []*registry.Descriptor{hpaV2(b)}
}

func autoscalingV1(b config.Brand, v2 *registry.Descriptor) []*registry.Descriptor {
	return []*registry.Descriptor{hpaV1(b, v2)}
}

func hpaType(version string) *registry.Descriptor {
	d := groupType("autoscaling", "horizontalpodautoscalers", "horizontalpodautoscaler", "HorizontalPodAutoscaler", true, "hpa")
	d.Version = version
	d.Categories = []string{"all"}
	d.Subresources = []registry.Subresource{{Name: "status", Verbs: statusVerbs, Keep: keepSpec}}
	return d
}

func hpaV2(b config.Brand) *registry.Descriptor {
	d := hpaType("v2")
	names := newResourceNames(b)
	d.Strategy.Default = defaultHPAV2
	d.Strategy.PrepareForCreate = resetStatus
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return validateHPASpec(obj, nil, names)
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return validateHPASpec(obj, old, names)
	}
	d.Subresources[0].Validate = func(obj, _ registry.Object) apierr.FieldErrors {
		return validateHPAStatus(obj)
	}
	return d
}

func hpaV1(b config.Brand, v2 *registry.Descriptor) *registry.Descriptor {
	d := hpaType("v1")
	a := newHPAAnnotations(b)
	names := newResourceNames(b)
	d.Storage = &registry.Storage{
		Descriptor: v2,
		ToStorage: func(obj registry.Object) registry.Object {
			// Stored objects read back with v2's defaults, as upstream
			// decodes its stored v2 form.
			obj = a.hpaV1ToV2(obj)
			defaultHPAV2(obj)
			return obj
		},
		FromStorage: a.hpaV2ToV1,
	}
	asV2 := func(obj registry.Object) registry.Object { return a.hpaV1ToV2(deepCopyMap(obj)) }
	d.Strategy.Default = func(obj registry.Object) {
		spec := child(obj, "spec")
		if !present(spec, "minReplicas") {
			spec["minReplicas"] = int64(1)
		}
	}
	// The status annotations are status, which a create does not write.
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		resetStatus(obj)
		moveAnnotations(obj, nil, a.currentMetrics, a.conditions)
	}
	// The status annotations are status: a write of the main resource
	// keeps the stored ones, as it keeps the stored status.
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, sub string) {
		if sub == "" {
			moveAnnotations(obj, old, a.currentMetrics, a.conditions)
		}
	}
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return append(a.annotationErrors(obj), validateHPASpec(asV2(obj), nil, names)...)
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return append(a.annotationErrors(obj), validateHPASpec(asV2(obj), asV2(old), names)...)
	}
	d.Subresources[0].Copy = func(next, written registry.Object) {
		copyMemberOf(next, written, "status")
		moveAnnotations(next, written, a.currentMetrics, a.conditions)
	}
	d.Subresources[0].Validate = func(obj, _ registry.Object) apierr.FieldErrors {
		return validateHPAStatus(asV2(obj))
	}
	return d
}

// annotationErrors refuses round-trip annotations that do not parse.
func (a hpaAnnotations) annotationErrors(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, k := range a.badRoundTripAnnotations(obj) {
		errs = append(errs, apierr.Invalid("metadata.annotations["+k+"]", str(obj, "metadata", "annotations", k), "must be a JSON list of autoscaling/v1 values"))
	}
	return errs
}

// moveAnnotations sets dst's annotations keys to src's, removing those src
// lacks.
func moveAnnotations(dst, src registry.Object, keys ...string) {
	from := mapAt(src, "metadata", "annotations")
	to := mapAt(dst, "metadata", "annotations")
	for _, k := range keys {
		v, ok := from[k]
		switch {
		case ok:
			if to == nil {
				to = map[string]any{}
				child(dst, "metadata")["annotations"] = to
			}
			to[k] = v
		case to != nil:
			delete(to, k)
		}
	}
	if to != nil && len(to) == 0 {
		delete(mapAt(dst, "metadata"), "annotations")
	}
}

// copyMemberOf sets dst[name] to src[name], or removes it.
func copyMemberOf(dst, src registry.Object, name string) {
	if v, ok := src[name]; ok {
		dst[name] = v
	} else {
		delete(dst, name)
	}
}

// defaultHPAV2 sets v2's defaults: one replica at least, 80% CPU when no
// metric is named, and every unset scaling rule of a behavior that is set.
func defaultHPAV2(obj registry.Object) {
	spec := child(obj, "spec")
	if !present(spec, "minReplicas") {
		spec["minReplicas"] = int64(1)
	}
	if len(listAt(spec, "metrics")) == 0 {
		spec["metrics"] = toObjectValue([]v2MetricSpec{cpuUtilizationMetric(hpaDefaultCPUUtilization)})
	}
	if behavior := mapAt(spec, "behavior"); behavior != nil {
		max := "Max"
		up := v2ScalingRules{StabilizationWindowSeconds: int32Ptr(0), SelectPolicy: &max, Policies: []v2ScalingPolicy{
			{Type: "Pods", Value: 4, PeriodSeconds: 15}, {Type: "Percent", Value: 100, PeriodSeconds: 15}}}
		down := v2ScalingRules{SelectPolicy: &max, Policies: []v2ScalingPolicy{{Type: "Percent", Value: 100, PeriodSeconds: 15}}}
		behavior["scaleUp"] = fillScalingRules(mapAt(behavior, "scaleUp"), up)
		behavior["scaleDown"] = fillScalingRules(mapAt(behavior, "scaleDown"), down)
	}
}

// fillScalingRules returns rules with each unset member taken from def.
func fillScalingRules(rules map[string]any, def v2ScalingRules) map[string]any {
	out, _ := toObjectValue(def).(map[string]any)
	for _, k := range []string{"stabilizationWindowSeconds", "selectPolicy", "policies"} {
		if rules[k] != nil {
			out[k] = rules[k]
		}
	}
	return out
}

// validateHPASpec checks a v2-shaped autoscaler; old is the stored one on
// update.
func validateHPASpec(obj, old registry.Object, names resourceNames) apierr.FieldErrors {
	var errs apierr.FieldErrors
	spec := mapAt(obj, "spec")
	lower := int64(1)
	if hpaScaleToZero || (old != nil && present(mapAt(old, "spec"), "minReplicas") && intAt(old, "spec", "minReplicas") == 0) {
		lower = 0
	}
	minSet := present(spec, "minReplicas")
	minReplicas := intAt(spec, "minReplicas")
	maxReplicas := intAt(spec, "maxReplicas")
	if minSet && minReplicas < lower {
		errs = append(errs, apierr.Invalid("spec.minReplicas", minReplicas, fmt.Sprintf("must be greater than or equal to %d", lower)))
	}
	if maxReplicas < 1 {
		errs = append(errs, apierr.Invalid("spec.maxReplicas", maxReplicas, "must be greater than 0"))
	}
	if minSet && maxReplicas < minReplicas {
		errs = append(errs, apierr.Invalid("spec.maxReplicas", maxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	errs = append(errs, validateCrossVersionRef(mapAt(spec, "scaleTargetRef"), "spec.scaleTargetRef")...)
	errs = append(errs, validateHPAMetrics(listAt(spec, "metrics"), minSet && minReplicas == 0, names)...)
	if b := mapAt(spec, "behavior"); b != nil {
		errs = append(errs, validateScalingRules(mapAt(b, "scaleUp"), "spec.behavior.scaleUp")...)
		errs = append(errs, validateScalingRules(mapAt(b, "scaleDown"), "spec.behavior.scaleDown")...)
	}
	return errs
}

func validateCrossVersionRef(ref map[string]any, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, f := range []string{"kind", "name"} {
		v := str(ref, f)
		if v == "" {
			errs = append(errs, apierr.Required(path+"."+f, ""))
			continue
		}
		for _, msg := range validation.IsPathSegment(v) {
			errs = append(errs, apierr.Invalid(path+"."+f, v, msg))
		}
	}
	return errs
}

func validateHPAMetrics(metrics []any, scalesToZero bool, names resourceNames) apierr.FieldErrors {
	var errs apierr.FieldErrors
	hasObjectOrExternal := false
	for i, m := range metrics {
		spec := mapOf(m)
		errs = append(errs, validateMetricSpec(spec, index("spec.metrics", i), names)...)
		if t := str(spec, "type"); t == metricObject || t == metricExternal {
			hasObjectOrExternal = true
		}
	}
	if scalesToZero && !hasObjectOrExternal {
		errs = append(errs, apierr.Forbidden("spec.metrics", "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return errs
}

func validateMetricSpec(spec map[string]any, path string, names resourceNames) apierr.FieldErrors {
	var errs apierr.FieldErrors
	t := str(spec, "type")
	if t == "" {
		errs = append(errs, apierr.Required(path+".type", "must specify a metric source type"))
	}
	if !slices.Contains(hpaMetricTypes, t) {
		errs = append(errs, apierr.NotSupported(path+".type", t, hpaMetricTypes))
	}
	// Only the first source present is checked; the others are refused.
	var present []string
	for _, src := range []struct {
		field    string
		validate func(map[string]any, string) apierr.FieldErrors
	}{
		{"object", validateObjectSource},
		{"external", validateExternalSource},
		{"pods", validatePodsSource},
		{"resource", validateResourceSource},
		{"containerResource", func(m map[string]any, p string) apierr.FieldErrors {
			return validateContainerResourceSource(m, p, names)
		}},
	} {
		m := mapAt(spec, src.field)
		if m == nil {
			continue
		}
		present = append(present, src.field)
		if len(present) == 1 {
			errs = append(errs, src.validate(m, path+"."+src.field)...)
		}
	}
	expected := metricTypeField(t)
	if slices.Contains(hpaMetricTypes, t) {
		if mapAt(spec, expected) == nil {
			errs = append(errs, apierr.Required(path+"."+expected, "must populate information for the given metric source"))
		}
	} else {
		errs = append(errs, apierr.NotSupported(path+".type", t, hpaMetricTypes))
	}
	if len(present) != 1 {
		for _, f := range present {
			if f != expected {
				errs = append(errs, apierr.Forbidden(path+"."+f, "must populate the given metric source only"))
			}
		}
	}
	return errs
}

func validateObjectSource(src map[string]any, path string) apierr.FieldErrors {
	errs := validateCrossVersionRef(mapAt(src, "describedObject"), path+".describedObject")
	errs = append(errs, validateMetricIdentifier(mapAt(src, "metric"), path+".metric")...)
	target := mapAt(src, "target")
	errs = append(errs, validateMetricTarget(target, path+".target")...)
	if !present(target, "value") && !present(target, "averageValue") {
		errs = append(errs, apierr.Required(path+".target.averageValue", "must set either a target value or averageValue"))
	}
	return errs
}

func validateExternalSource(src map[string]any, path string) apierr.FieldErrors {
	errs := validateMetricIdentifier(mapAt(src, "metric"), path+".metric")
	target := mapAt(src, "target")
	errs = append(errs, validateMetricTarget(target, path+".target")...)
	hasValue, hasAverage := present(target, "value"), present(target, "averageValue")
	if !hasValue && !hasAverage {
		errs = append(errs, apierr.Required(path+".target.averageValue", "must set either a target value for metric or a per-pod target"))
	}
	if hasValue && hasAverage {
		errs = append(errs, apierr.Forbidden(path+".target.value", "may not set both a target value for metric and a per-pod target"))
	}
	return errs
}

func validatePodsSource(src map[string]any, path string) apierr.FieldErrors {
	errs := validateMetricIdentifier(mapAt(src, "metric"), path+".metric")
	target := mapAt(src, "target")
	errs = append(errs, validateMetricTarget(target, path+".target")...)
	if !present(target, "averageValue") {
		errs = append(errs, apierr.Required(path+".target.averageValue", "must specify a positive target averageValue"))
	}
	return errs
}

func validateResourceSource(src map[string]any, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if str(src, "name") == "" {
		errs = append(errs, apierr.Required(path+".name", "must specify a resource name"))
	}
	return append(errs, validateUtilizationTarget(mapAt(src, "target"), path+".target")...)
}

func validateContainerResourceSource(src map[string]any, path string, names resourceNames) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if name := str(src, "name"); name == "" {
		errs = append(errs, apierr.Required(path+".name", "must specify a resource name"))
	} else {
		errs = append(errs, names.validateContainerResourceName(name, pathOf(path+".name"))...)
	}
	if c := str(src, "container"); c == "" {
		errs = append(errs, apierr.Required(path+".container", "must specify a container"))
	} else {
		errs = append(errs, dnsLabel(c, pathOf(path+".container"))...)
	}
	return append(errs, validateUtilizationTarget(mapAt(src, "target"), path+".target")...)
}

// validateUtilizationTarget checks the target of a resource metric: a
// utilization or an average value, not both.
func validateUtilizationTarget(target map[string]any, path string) apierr.FieldErrors {
	errs := validateMetricTarget(target, path)
	hasUtil, hasAverage := present(target, "averageUtilization"), present(target, "averageValue")
	if !hasUtil && !hasAverage {
		errs = append(errs, apierr.Required(path+".averageUtilization", "must set either a target raw value or a target utilization"))
	}
	if hasUtil && hasAverage {
		errs = append(errs, apierr.Forbidden(path+".averageValue", "may not set both a target raw value and a target utilization"))
	}
	return errs
}

func validateMetricTarget(mt map[string]any, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	t := str(mt, "type")
	if t == "" {
		errs = append(errs, apierr.Required(path+".type", "must specify a metric target type"))
	}
	if t != targetUtilization && t != targetValue && t != targetAverageValue {
		errs = append(errs, apierr.Invalid(path+".type", t, "must be either Utilization, Value, or AverageValue"))
	}
	for _, f := range []string{"value", "averageValue"} {
		if !present(mt, f) {
			continue
		}
		if q, ok := schema.AmountOf(mt[f]); ok && q.Sign() != 1 {
			errs = append(errs, apierr.Invalid(path+"."+f, badQuantity(q), "must be positive"))
		}
	}
	if present(mt, "averageUtilization") {
		if u := intAt(mt, "averageUtilization"); u < 1 {
			errs = append(errs, apierr.Invalid(path+".averageUtilization", u, "must be greater than 0"))
		}
	}
	return errs
}

func validateMetricIdentifier(id map[string]any, path string) apierr.FieldErrors {
	name := str(id, "name")
	if name == "" {
		return apierr.FieldErrors{apierr.Required(path+".name", "must specify a metric name")}
	}
	var errs apierr.FieldErrors
	for _, msg := range validation.IsPathSegment(name) {
		errs = append(errs, apierr.Invalid(path+".name", name, msg))
	}
	return errs
}

func validateScalingRules(rules map[string]any, path string) apierr.FieldErrors {
	if rules == nil {
		return nil
	}
	var errs apierr.FieldErrors
	if present(rules, "stabilizationWindowSeconds") {
		w := intAt(rules, "stabilizationWindowSeconds")
		if w < 0 {
			errs = append(errs, apierr.Invalid(path+".stabilizationWindowSeconds", w, "must be greater than or equal to zero"))
		}
		if w > hpaMaxStabilizationWindowSeconds {
			errs = append(errs, apierr.Invalid(path+".stabilizationWindowSeconds", w, fmt.Sprintf("must be less than or equal to %d", hpaMaxStabilizationWindowSeconds)))
		}
	}
	if present(rules, "selectPolicy") {
		if p := str(rules, "selectPolicy"); !slices.Contains(hpaSelectPolicy, p) {
			errs = append(errs, apierr.NotSupported(path+".selectPolicy", p, hpaSelectPolicy))
		}
	}
	policies := listAt(rules, "policies")
	if len(policies) == 0 {
		errs = append(errs, apierr.Required(path+".policies", "must specify at least one Policy"))
	}
	for i, p := range policies {
		errs = append(errs, validateScalingPolicy(mapOf(p), index(path+".policies", i))...)
	}
	return errs
}

func validateScalingPolicy(p map[string]any, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if t := str(p, "type"); !slices.Contains(hpaPolicyTypes, t) {
		errs = append(errs, apierr.NotSupported(path+".type", t, hpaPolicyTypes))
	}
	if v := intAt(p, "value"); v <= 0 {
		errs = append(errs, apierr.Invalid(path+".value", v, "must be greater than zero"))
	}
	period := intAt(p, "periodSeconds")
	if period <= 0 {
		errs = append(errs, apierr.Invalid(path+".periodSeconds", period, "must be greater than zero"))
	}
	if period > hpaMaxPeriodSeconds {
		errs = append(errs, apierr.Invalid(path+".periodSeconds", period, fmt.Sprintf("must be less than or equal to %d", hpaMaxPeriodSeconds)))
	}
	return errs
}

// validateHPAStatus checks a status write: replica counts are not
// negative.
func validateHPAStatus(obj registry.Object) apierr.FieldErrors {
	status := mapAt(obj, "status")
	errs := validateNonNegative(status, "currentReplicas", pathOf("status"))
	return append(errs, validateNonNegative(status, "desiredReplicas", pathOf("status"))...)
}
