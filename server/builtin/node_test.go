package builtin

import (
	"testing"

	"platd/server/registry"
)

func TestRuntimeClass(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "RuntimeClass")
	rc := func(members map[string]any) registry.Object {
		obj := named("r", map[string]any{"handler": "runc"})
		for k, v := range members {
			obj[k] = v
		}
		return obj
	}
	overhead := func(fixed map[string]any) map[string]any {
		return map[string]any{"overhead": map[string]any{"podFixed": fixed}}
	}
	tol := func(key, op, value, effect string, secs ...int64) map[string]any {
		t := map[string]any{"key": key, "operator": op, "value": value, "effect": effect}
		if len(secs) > 0 {
			t["tolerationSeconds"] = secs[0]
		}
		return t
	}
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"plain", rc(nil), nil},
		{"overhead", rc(overhead(map[string]any{"cpu": "100m", "memory": "10Mi", "hugepages-2Mi": "4Mi", "example.com/gpu": "1"})), nil},
		{"no handler", rc(map[string]any{"handler": ""}), []string{`handler: Invalid value: "": ` + labelMsg}},
		{"bad overhead", rc(overhead(map[string]any{"disk": "1", "memory": "-1", "example.com/gpu": "500m", "hugepages-2Mi": "3Mi"})), []string{
			`overhead.limits[disk]: Invalid value: "disk": must be a standard resource type or fully qualified`,
			`overhead.limits[disk]: Invalid value: "disk": must be a standard resource for containers`,
			"overhead.limits[example.com/gpu]: Invalid value: 500m: must be an integer",
			`overhead.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi`,
			`overhead.limits[memory]: Invalid value: "-1": must be greater than or equal to 0`,
		}},
		{"huge pages alone", rc(overhead(map[string]any{"hugepages-1Gi": "1Gi"})), []string{
			"overhead: Forbidden: HugePages require cpu or memory",
		}},
		{"scheduling", rc(map[string]any{"scheduling": map[string]any{
			"nodeSelector": map[string]any{"kind": "-"},
			"tolerations": []any{
				tol("", "Equal", "", ""),
				tol("k", "Exists", "v", "NoSchedule"),
				tol("k", "Equal", "v", "NoSchedule", 60),
				tol("k", "Less", "", "Sometimes"),
				tol("k", "Equal", "-", ""),
				tol("k", "Exists", "v", "NoSchedule"),
			},
		}}), []string{
			`scheduling.nodeSelector: Invalid value: "-": ` + labelValueMsg,
			"scheduling.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
			"scheduling.tolerations[1].operator: Invalid value: core.Toleration{Key:\"k\", Operator:\"Exists\", Value:\"v\", Effect:\"NoSchedule\", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is 'Exists'",
			"scheduling.tolerations[2].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
			`scheduling.tolerations[3].operator: Unsupported value: "Less": supported values: "Equal", "Exists"`,
			`scheduling.tolerations[3].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
			`scheduling.tolerations[4].operator: Invalid value: "-": ` + labelValueMsg,
			"scheduling.tolerations[5].operator: Invalid value: core.Toleration{Key:\"k\", Operator:\"Exists\", Value:\"v\", Effect:\"NoSchedule\", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is 'Exists'",
			`scheduling.tolerations[5]: Duplicate value: core.Toleration{Key:"k", Operator:"Exists", Value:"v", Effect:"NoSchedule", TolerationSeconds:(*int64)(nil)}`,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, tt.obj)
		checkErrs(t, tt.name, errs, tt.want)
	}
	stored := mustCreate(t, d, rc(nil))
	_, errs := update(d, rc(overhead(map[string]any{"cpu": "1"})), stored, "")
	checkErrs(t, "overhead change", errs, nil)
	_, errs = update(d, rc(map[string]any{"handler": "crun"}), stored, "")
	checkErrs(t, "handler change", errs, []string{`handler: Invalid value: "crun": field is immutable`})
}
