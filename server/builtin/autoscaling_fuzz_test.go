package builtin

import (
	"encoding/json"
	"testing"

	"platd/server/registry"
)

// FuzzHPAConversion feeds arbitrary round-trip annotations and specs to
// the v1 conversion: it never panics, and what it yields converts back
// and validates.
func FuzzHPAConversion(f *testing.F) {
	a := newHPAAnnotations(brand)
	f.Add(`[{"type":"Pods","pods":{"metricName":"q","targetAverageValue":"1"}}]`, `{"ScaleUp":{"Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":1}]}}`, `[{"type":"Resource","resource":{"name":"cpu","currentAverageValue":"1"}}]`, `{"maxReplicas":3,"targetCPUUtilizationPercentage":5}`)
	f.Add(`[{"type":"Object","object":{"targetValue":7}}]`, `null`, `[]`, `{}`)
	f.Add(`{`, `[`, `"x"`, `{"minReplicas":"a","targetCPUUtilizationPercentage":1.5}`)
	names := newResourceNames(brand)
	f.Fuzz(func(t *testing.T, metrics, behavior, current, spec string) {
		var s any
		if json.Unmarshal([]byte(spec), &s) != nil {
			s = map[string]any{}
		}
		obj := registry.Object{
			"metadata": map[string]any{"annotations": map[string]any{
				a.metrics: metrics, a.behavior: behavior, a.currentMetrics: current, a.conditions: current,
			}},
			"spec": intsOf(s),
		}
		_ = a.annotationErrors(obj)
		v2 := a.hpaV1ToV2(deepCopyMap(obj))
		defaultHPAV2(v2)
		_ = validateHPASpec(v2, nil, names)
		_ = a.hpaV2ToV1(v2)
	})
}
