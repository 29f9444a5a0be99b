package builtin

import "testing"

// benchPodSpec is a pod as most are written: a few containers, each with
// cpu and memory requests and limits, one sidecar.
func benchPodSpec() map[string]any {
	container := func(cpu, mem string) map[string]any {
		return map[string]any{"resources": map[string]any{
			"requests": map[string]any{"cpu": cpu, "memory": mem},
			"limits":   map[string]any{"cpu": cpu, "memory": mem},
		}}
	}
	sidecar := container("100m", "64Mi")
	sidecar["restartPolicy"] = restartAlways
	return map[string]any{
		"containers":     []any{container("250m", "512Mi"), container("500m", "1Gi")},
		"initContainers": []any{sidecar, container("1", "128Mi")},
	}
}

// BenchmarkLimitRangerPodBounds is the LimitRanger's work on a pod
// created: each container and the pod's totals checked against an item.
func BenchmarkLimitRangerPodBounds(b *testing.B) {
	spec := benchPodSpec()
	container := map[string]any{"type": limitTypeContainer,
		"min": map[string]any{"cpu": "10m", "memory": "4Mi"}, "max": map[string]any{"cpu": "2", "memory": "2Gi"},
		"maxLimitRequestRatio": map[string]any{"cpu": "4"}}
	pod := map[string]any{"type": limitTypePod, "max": map[string]any{"cpu": "4", "memory": "4Gi"}}
	b.ReportAllocs()
	for b.Loop() {
		for _, list := range []string{"containers", "initContainers"} {
			for _, c := range mapsOf(spec[list]) {
				if msgs := checkBounds(limitTypeContainer, container, amountsAt(c, "resources", "requests"), amountsAt(c, "resources", "limits")); len(msgs) > 0 {
					b.Fatal(msgs)
				}
			}
		}
		if msgs := checkBounds(limitTypePod, pod, podAmounts(spec, "requests"), podAmounts(spec, "limits")); len(msgs) > 0 {
			b.Fatal(msgs)
		}
	}
}
