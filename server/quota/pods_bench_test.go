package quota

import (
	"testing"
	"time"

	"platd/server/registry"
)

// BenchmarkPodUsage is a pod evaluator's work on a pod created: the
// usage it is charged, summed over its containers.
func BenchmarkPodUsage(b *testing.B) {
	container := func(cpu, mem string) map[string]any {
		return map[string]any{"resources": map[string]any{
			"requests": map[string]any{"cpu": cpu, "memory": mem},
			"limits":   map[string]any{"cpu": cpu, "memory": mem},
		}}
	}
	pod := registry.Object{
		"metadata": map[string]any{"name": "p", "namespace": "ns"},
		"spec": map[string]any{
			"containers":     []any{container("250m", "512Mi"), container("500m", "1Gi")},
			"initContainers": []any{container("1", "128Mi")},
		},
	}
	ev, now := Pods(testBrand), time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if u := ev.Usage(pod, now); u["requests.cpu"] != "1" || u["requests.memory"] != "1536Mi" {
			b.Fatal(u)
		}
	}
}
