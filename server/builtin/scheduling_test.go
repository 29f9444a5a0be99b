package builtin

import (
	"testing"

	"platd/server/registry"
)

func TestPriorityClass(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "PriorityClass")
	pc := func(name string, members map[string]any) registry.Object {
		obj := registry.Object{"metadata": map[string]any{"name": name}}
		for k, v := range members {
			obj[k] = v
		}
		return obj
	}
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"user class", pc("high", map[string]any{"value": int64(1_000_000_000)}), nil},
		{"too high", pc("higher", map[string]any{"value": int64(1_000_000_001)}), []string{
			"value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
		}},
		{"system class", pc("system-node-critical", map[string]any{"value": int64(2000001000)}), nil},
		{"system value", pc("system-cluster-critical", map[string]any{"value": int64(5)}), []string{
			"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-cluster-critical PriorityClass must be 2000000000",
		}},
		{"system default", pc("system-cluster-critical", map[string]any{"value": int64(2000000000), "globalDefault": true}), []string{
			"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: globalDefault of system-cluster-critical PriorityClass must be false",
		}},
		{"unknown system", pc("system-mine", map[string]any{"value": int64(5)}), []string{
			"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class",
		}},
		{"policy", pc("p", map[string]any{"value": int64(1), "preemptionPolicy": "Sometimes"}), []string{
			`preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"`,
		}},
		{"empty policy", pc("p", map[string]any{"value": int64(1), "preemptionPolicy": ""}), []string{"preemptionPolicy: Required value"}},
	}
	for _, tt := range tests {
		_, errs := create(d, tt.obj)
		checkErrs(t, tt.name, errs, tt.want)
	}

	stored := mustCreate(t, d, pc("p", map[string]any{"value": int64(10), "description": "d"}))
	if stored["preemptionPolicy"] != "PreemptLowerPriority" {
		t.Errorf("preemptionPolicy = %v", stored["preemptionPolicy"])
	}
	_, errs := update(d, pc("p", map[string]any{"value": int64(10), "description": "e", "globalDefault": true}), stored, "")
	checkErrs(t, "description change", errs, nil)
	_, errs = update(d, pc("p", map[string]any{"value": int64(11), "preemptionPolicy": "Never"}), stored, "")
	checkErrs(t, "value change", errs, []string{
		"value: Forbidden: may not be changed in an update.",
		`preemptionPolicy: Invalid value: "Never": field is immutable`,
	})

	if got := d.Strategy.ForbidDelete("system-node-critical"); got != "this is a system priority class and cannot be deleted" {
		t.Errorf("deleting a system class: %q", got)
	}
	if got := d.Strategy.ForbidDelete("high"); got != "" {
		t.Errorf("deleting a user class: %q", got)
	}
	for _, obj := range SystemPriorityClasses(brand) {
		if _, errs := create(d, obj); len(errs) > 0 {
			t.Errorf("system class %v: %v", obj["metadata"], errs)
		}
	}
}
