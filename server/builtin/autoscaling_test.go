package builtin

import (
	"encoding/json"
	"reflect"
	"testing"

	"platd/server/registry"
)

func decodeObj(t *testing.T, s string) registry.Object {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return intsOf(m).(map[string]any)
}

// jsonEqual compares two objects as JSON, numbers of any Go type alike.
func jsonEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	var gv, wv any
	_ = json.Unmarshal(g, &gv)
	_ = json.Unmarshal(w, &wv)
	if !reflect.DeepEqual(gv, wv) {
		t.Errorf("%s:\n got  %s\n want %s", what, g, w)
	}
}

// A v2 object whose CPU target comes last survives v1 whole.
const richHPAv2 = `{"metadata":{"name":"h","namespace":"ns","annotations":{"a":"b"}},
"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web","apiVersion":"apps/v1"},"minReplicas":2,"maxReplicas":9,
 "metrics":[
  {"type":"Object","object":{"describedObject":{"kind":"Service","name":"s"},"target":{"type":"Value","value":"5"},"metric":{"name":"rps","selector":{"matchExpressions":[{"key":"k","operator":"In","values":["v"]}]}}}},
  {"type":"Pods","pods":{"metric":{"name":"qps"},"target":{"type":"AverageValue","averageValue":"1k"}}},
  {"type":"External","external":{"metric":{"name":"queue"},"target":{"type":"AverageValue","averageValue":"30"}}},
  {"type":"ContainerResource","containerResource":{"name":"memory","container":"app","target":{"type":"AverageValue","averageValue":"1Gi"}}},
  {"type":"Resource","resource":{"name":"memory","target":{"type":"Utilization","averageUtilization":90}}},
  {"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":70}}}],
 "behavior":{"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Pods","value":4,"periodSeconds":15}]},
  "scaleDown":{"selectPolicy":"Min","policies":[{"type":"Percent","value":10,"periodSeconds":60}]}}},
"status":{"observedGeneration":3,"lastScaleTime":"2024-01-02T03:04:05Z","currentReplicas":3,"desiredReplicas":4,
 "currentMetrics":[
  {"type":"Resource","resource":{"name":"cpu","current":{"averageValue":"250m","averageUtilization":50}}},
  {"type":"Object","object":{"metric":{"name":"rps"},"current":{"value":"4"},"describedObject":{"kind":"Service","name":"s"}}},
  {"type":"External","external":{"metric":{"name":"queue"},"current":{"value":"0","averageValue":"12"}}}],
 "conditions":[{"type":"ScalingActive","status":"True","lastTransitionTime":"2024-01-02T03:04:05Z","reason":"ValidMetricFound","message":"ok"}]}}`

func TestHPAConversionRoundTrip(t *testing.T) {
	a := newHPAAnnotations(brand)
	v2 := decodeObj(t, richHPAv2)
	v1 := a.hpaV2ToV1(decodeObj(t, richHPAv2))

	jsonEqual(t, "v1 spec", v1["spec"], decodeObj(t,
		`{"scaleTargetRef":{"kind":"Deployment","name":"web","apiVersion":"apps/v1"},"minReplicas":2,"maxReplicas":9,"targetCPUUtilizationPercentage":70}`))
	jsonEqual(t, "v1 status", v1["status"], decodeObj(t,
		`{"observedGeneration":3,"lastScaleTime":"2024-01-02T03:04:05Z","currentReplicas":3,"desiredReplicas":4,"currentCPUUtilizationPercentage":50}`))
	ann := mapAt(v1, "metadata", "annotations")
	want := map[string]string{
		"a":              "b",
		a.metrics:        `[{"type":"Object","object":{"target":{"kind":"Service","name":"s"},"metricName":"rps","targetValue":"5","selector":{"matchExpressions":[{"key":"k","operator":"In","values":["v"]}]}}},{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1k"}},{"type":"External","external":{"metricName":"queue","targetAverageValue":"30"}},{"type":"ContainerResource","containerResource":{"name":"memory","targetAverageValue":"1Gi","container":"app"}},{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":90}}]`,
		a.currentMetrics: `[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":50,"currentAverageValue":"250m"}},{"type":"Object","object":{"target":{"kind":"Service","name":"s"},"metricName":"rps","currentValue":"4"}},{"type":"External","external":{"metricName":"queue","currentValue":"0","currentAverageValue":"12"}}]`,
		a.conditions:     `[{"type":"ScalingActive","status":"True","lastTransitionTime":"2024-01-02T03:04:05Z","reason":"ValidMetricFound","message":"ok"}]`,
		a.behavior:       `{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}]},"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Min","Policies":[{"Type":"Percent","Value":10,"PeriodSeconds":60}]}}`,
	}
	for k, w := range want {
		if ann[k] != w {
			t.Errorf("annotation %s:\n got  %v\n want %s", k, ann[k], w)
		}
	}
	if len(ann) != len(want) {
		t.Errorf("annotations %v", ann)
	}

	back := a.hpaV1ToV2(v1)
	jsonEqual(t, "v2 -> v1 -> v2", back, v2)

	// v1 -> v2 -> v1 holds too, once v1 carries its round-trip state.
	again := a.hpaV2ToV1(a.hpaV1ToV2(a.hpaV2ToV1(decodeObj(t, richHPAv2))))
	jsonEqual(t, "v1 -> v2 -> v1", again, a.hpaV2ToV1(decodeObj(t, richHPAv2)))
}

func TestHPAConversionV1Shapes(t *testing.T) {
	a := newHPAAnnotations(brand)
	tests := []struct {
		name, v1, wantSpec, wantStatus string
	}{
		{
			"no target is 80% CPU",
			`{"spec":{"scaleTargetRef":{"kind":"D","name":"n"},"maxReplicas":3}}`,
			`{"scaleTargetRef":{"kind":"D","name":"n"},"maxReplicas":3,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}]}`,
			`{}`,
		},
		{
			"current CPU without annotation",
			`{"spec":{"maxReplicas":1,"targetCPUUtilizationPercentage":10},"status":{"currentReplicas":1,"desiredReplicas":1,"currentCPUUtilizationPercentage":7}}`,
			`{"maxReplicas":1,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":10}}}]}`,
			`{"currentReplicas":1,"desiredReplicas":1,"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":7}}}]}`,
		},
		{
			"object metric with an average value",
			`{"metadata":{"annotations":{"autoscaling.alpha.` + brand.LongDomain + `/metrics":"[{\"type\":\"Object\",\"object\":{\"target\":{\"kind\":\"S\",\"name\":\"s\"},\"metricName\":\"m\",\"targetValue\":\"0\",\"averageValue\":\"2\"}},{\"type\":\"External\",\"external\":{\"metricName\":\"e\",\"targetValue\":3}}]"}},"spec":{"maxReplicas":1}}`,
			`{"maxReplicas":1,"metrics":[{"type":"Object","object":{"describedObject":{"kind":"S","name":"s"},"target":{"type":"AverageValue","value":"0","averageValue":"2"},"metric":{"name":"m"}}},{"type":"External","external":{"metric":{"name":"e"},"target":{"type":"Value","value":"3"}}}]}`,
			`{}`,
		},
		{
			"malformed behavior is dropped",
			`{"metadata":{"annotations":{"autoscaling.alpha.` + brand.LongDomain + `/behavior":"{not json"}},"spec":{"maxReplicas":1,"targetCPUUtilizationPercentage":5}}`,
			`{"maxReplicas":1,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":5}}}]}`,
			`{}`,
		},
	}
	for _, tc := range tests {
		got := a.hpaV1ToV2(decodeObj(t, tc.v1))
		jsonEqual(t, tc.name+" spec", got["spec"], decodeObj(t, tc.wantSpec))
		jsonEqual(t, tc.name+" status", got["status"], decodeObj(t, tc.wantStatus))
		if mapAt(got, "metadata", "annotations") != nil {
			t.Errorf("%s: annotations left %v", tc.name, mapAt(got, "metadata", "annotations"))
		}
	}
}

func TestHPAV2Defaults(t *testing.T) {
	obj := decodeObj(t, `{"spec":{"maxReplicas":3,"behavior":{"scaleDown":{"stabilizationWindowSeconds":30}}}}`)
	defaultHPAV2(obj)
	jsonEqual(t, "defaults", obj["spec"], decodeObj(t, `{"maxReplicas":3,"minReplicas":1,
		"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}],
		"behavior":{"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]},
		 "scaleDown":{"stabilizationWindowSeconds":30,"selectPolicy":"Max","policies":[{"type":"Percent","value":100,"periodSeconds":15}]}}}`))
	// Without a behavior none is added.
	obj = decodeObj(t, `{"spec":{"maxReplicas":3,"minReplicas":0}}`)
	defaultHPAV2(obj)
	if obj["spec"].(map[string]any)["behavior"] != nil || intAt(obj, "spec", "minReplicas") != 0 {
		t.Errorf("defaults: %v", obj["spec"])
	}
}

func TestValidateHPASpec(t *testing.T) {
	names := newResourceNames(brand)
	ref := `"scaleTargetRef":{"kind":"D","name":"n"},"maxReplicas":3`
	tests := []struct {
		name, spec, old string
		want            []string
	}{
		{"valid", `{` + ref + `,"metrics":[{"type":"Pods","pods":{"metric":{"name":"q"},"target":{"type":"AverageValue","averageValue":"1"}}}]}`, "", nil},
		{"zero min kept from old", `{` + ref + `,"minReplicas":0,"metrics":[{"type":"External","external":{"metric":{"name":"q"},"target":{"type":"Value","value":"1"}}}]}`, `{"spec":{"minReplicas":0}}`, nil},
		{"zero min needs object metrics", `{` + ref + `,"minReplicas":0,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":5}}}]}`, `{"spec":{"minReplicas":0}}`, []string{
			"spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
		}},
		{"unknown metric type", `{` + ref + `,"metrics":[{"type":"Bogus"}]}`, "", []string{
			`spec.metrics[0].type: Unsupported value: "Bogus": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"`,
			`spec.metrics[0].type: Unsupported value: "Bogus": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"`,
		}},
		{"two sources", `{` + ref + `,"metrics":[{"type":"Pods","pods":{"metric":{"name":"q"},"target":{"type":"AverageValue","averageValue":"-1"}},"resource":{"name":"cpu"}}]}`, "", []string{
			"spec.metrics[0].pods.target.averageValue: Invalid value: -1: must be positive",
			"spec.metrics[0].resource: Forbidden: must populate the given metric source only",
		}},
		{"missing source", `{` + ref + `,"metrics":[{"type":"External"}]}`, "", []string{
			"spec.metrics[0].external: Required value: must populate information for the given metric source",
		}},
		{"container resource", `{` + ref + `,"metrics":[{"type":"ContainerResource","containerResource":{"name":"pods","container":"A_b","target":{"type":"Bad"}}}]}`, "", []string{
			`spec.metrics[0].containerResource.name: Invalid value: "pods": must be a standard resource for containers`,
			`spec.metrics[0].containerResource.container: Invalid value: "A_b": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
			`spec.metrics[0].containerResource.target.type: Invalid value: "Bad": must be either Utilization, Value, or AverageValue`,
			"spec.metrics[0].containerResource.target.averageUtilization: Required value: must set either a target raw value or a target utilization",
		}},
		{"behavior", `{` + ref + `,"behavior":{"scaleDown":{"selectPolicy":"Any","policies":[{"type":"Step","value":1,"periodSeconds":2000}]},"scaleUp":{"policies":[]}}}`, "", []string{
			"spec.behavior.scaleUp.policies: Required value: must specify at least one Policy",
			`spec.behavior.scaleDown.selectPolicy: Unsupported value: "Any": supported values: "Disabled", "Max", "Min"`,
			`spec.behavior.scaleDown.policies[0].type: Unsupported value: "Step": supported values: "Percent", "Pods"`,
			"spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 2000: must be less than or equal to 1800",
		}},
	}
	for _, tc := range tests {
		var old registry.Object
		if tc.old != "" {
			old = decodeObj(t, tc.old)
		}
		obj := decodeObj(t, `{"spec":`+tc.spec+`}`)
		checkErrs(t, tc.name, validateHPASpec(obj, old, names), tc.want)
	}
	checkErrs(t, "status", validateHPAStatus(decodeObj(t, `{"status":{"currentReplicas":-1,"desiredReplicas":-2}}`)), []string{
		"status.currentReplicas: Invalid value: -1: must be greater than or equal to 0",
		"status.desiredReplicas: Invalid value: -2: must be greater than or equal to 0",
	})
}
