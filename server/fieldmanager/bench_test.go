package fieldmanager

import (
	"fmt"
	"maps"
	"os"
	"testing"

	"platd/config"
	"platd/server/schema"
)

// benchConfigMap is a ConfigMap of about 256 bytes of data, as the load
// tool writes.
func benchConfigMap(i int, value string) map[string]any {
	data := map[string]any{}
	for k := 0; k < 4; k++ {
		data[fmt.Sprintf("key-%d", k)] = fmt.Sprintf("%s-%d-%056d", value, i, k)
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i), "namespace": "bench", "labels": map[string]any{"app": "bench"}},
		"data":     data}
}

func benchResource(b *testing.B) *Resource {
	cat, err := schema.Load(config.Brands["plat"])
	if err != nil {
		b.Fatal(err)
	}
	return New(Options{Version: "v1", Kind: "ConfigMap", Schema: cat.ByGVK("", "v1", "ConfigMap")})
}

// BenchmarkUpdate is the bookkeeping every non-apply write of a
// ConfigMap pays: an Update entry from the stored object to the new one.
func BenchmarkUpdate(b *testing.B) {
	r := benchResource(b)
	live := benchConfigMap(1, "a")
	r.Update(nil, live, "creator")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		next := benchConfigMap(1, "b")
		metadata(next)["managedFields"] = metadata(live)["managedFields"]
		r.Update(live, next, "updater")
	}
}

// BenchmarkApply is one server-side apply of a ConfigMap over an applied
// one, as the load tool's second pass.
func BenchmarkApply(b *testing.B) {
	r := benchResource(b)
	live, err := r.Apply(nil, benchConfigMap(1, "a"), "bench", true)
	if err != nil {
		b.Fatal(err)
	}
	config := benchConfigMap(1, "b")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := r.Apply(live, config, "bench", true); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPod is the realistic 3 KB pod BenchmarkPodCreates sends, decoded,
// defaulted and made canonical as a create's body is.
func benchPod(b *testing.B) (*Resource, map[string]any) {
	body, err := os.ReadFile("../rest/testdata/pod-3k.json")
	if err != nil {
		b.Fatal(err)
	}
	s := kindSchema(b, "", "v1", "Pod")
	dec, err := schema.Decode(body, s)
	if err != nil {
		b.Fatal(err)
	}
	schema.ApplyDefaults(dec.Object, s)
	return New(Options{Version: "v1", Kind: "Pod", Schema: s, Reset: []string{"status"}}), schema.Canonical(dec.Object, s)
}

// BenchmarkCreatePod is the bookkeeping of a pod's create: the Update
// entry of everything the pod sets.
func BenchmarkCreatePod(b *testing.B) {
	r, pod := benchPod(b)
	b.ReportAllocs()
	for b.Loop() {
		next := maps.Clone(pod)
		next["metadata"] = maps.Clone(metadata(pod))
		r.Update(nil, next, "bench")
	}
}

// BenchmarkCreatePodCompare is what BenchmarkCreatePod costs through the
// general comparison with the zero object, which the create walk
// replaces.
func BenchmarkCreatePodCompare(b *testing.B) {
	r, pod := benchPod(b)
	b.ReportAllocs()
	for b.Loop() {
		managed, err := r.update(nil, pod, emptyManaged(), "bench", false)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Encode(managed); err != nil {
			b.Fatal(err)
		}
	}
}
