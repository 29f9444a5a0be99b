package patch

import (
	"encoding/json"
	"fmt"
	"testing"
)

// configMap1K is a ConfigMap of about 1 KB.
func configMap1K(b *testing.B) []byte {
	b.Helper()
	data := map[string]any{}
	for i := range 16 {
		data[fmt.Sprintf("key-%02d", i)] = fmt.Sprintf("value-%02d-%s", i, "0123456789abcdef0123456789abcdef")
	}
	cm := map[string]any{
		"kind": "ConfigMap", "apiVersion": "v1",
		"metadata": map[string]any{
			"name": "bench", "namespace": "default", "uid": "1a15fa1d-d8df-4f37-b535-33e79dcc2188",
			"resourceVersion": "208", "creationTimestamp": "2026-11-21T23:08:26Z",
			"labels": map[string]any{"app": "bench", "tier": "x"},
		},
		"data": data,
	}
	out, err := json.Marshal(cm)
	if err != nil {
		b.Fatal(err)
	}
	if len(out) < 900 || len(out) > 1200 {
		b.Fatalf("fixture is %d bytes", len(out))
	}
	return out
}

const benchPatch = `{"data":{"key-03":"changed","key-new":"added","key-05":null},"metadata":{"labels":{"tier":"y"}}}`

func BenchmarkMergePatchConfigMap1K(b *testing.B) {
	doc := configMap1K(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MergePatch(doc, []byte(benchPatch)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStrategicMergeConfigMap1K(b *testing.B) {
	doc := configMap1K(b)
	s := testSchema(b, "ConfigMap")
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := StrategicMergeBytes(doc, []byte(benchPatch), s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSONPatchConfigMap1K(b *testing.B) {
	doc := configMap1K(b)
	p := []byte(`[{"op":"replace","path":"/data/key-03","value":"changed"},{"op":"remove","path":"/data/key-05"},{"op":"add","path":"/metadata/labels/tier","value":"y"}]`)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := JSONPatch(doc, p); err != nil {
			b.Fatal(err)
		}
	}
}
