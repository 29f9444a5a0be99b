package builtin

import (
	"context"
	"testing"

	"platd/server/registry"
)

func TestLimitPodHardAntiAffinityTopology(t *testing.T) {
	t.Parallel()
	a := newHardAntiAffinityLimit(brand)
	host := brand.Label("hostname")
	zone := "topology." + brand.Label("zone")
	term := func(key string) string {
		return `{"labelSelector":{"matchLabels":{"app":"db"}},"topologyKey":"` + key + `"}`
	}
	tests := []struct {
		name, affinity string
		// err is the step's answer, as admissionError renders it.
		err string
	}{
		{"no affinity", ``, ""},
		{"required on nodes", `{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[` + term(host) + `,` + term(host) + `]}}`, ""},
		{"required on zones", `{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[` + term(host) + `,` + term(zone) + `,` + term("rack") + `]}}`,
			"denied: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey " + zone + " but only key " + host + " is allowed"},
		{"preferred on zones", `{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"podAffinityTerm":` + term(zone) + `}]}}`, ""},
		{"pod affinity on zones", `{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[` + term(zone) + `]}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := decodeJSON(t, `{"containers":[{"name":"c","image":"x"}]}`)
			if tt.affinity != "" {
				spec["affinity"] = decodeJSON(t, tt.affinity)
			}
			pod := registry.Object{"metadata": map[string]any{"name": "p"}, "spec": spec}
			before := canonicalJSON(t, pod)
			for _, old := range []registry.Object{nil, pod} {
				if got := admissionError(a.validatePod(context.Background(), nil, pod, old)); got != tt.err {
					t.Errorf("old %v: error %q, want %q", old != nil, got, tt.err)
				}
			}
			if after := canonicalJSON(t, pod); after != before {
				t.Errorf("pod changed: %s", after)
			}
		})
	}
}
