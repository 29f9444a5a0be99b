package schema

import (
	"os"
	"testing"
)

// benchPod is the realistic 3 KB Pod a create sends
// (rest/testdata/pod-3k.json), decoded, and its schema.
func benchPod(b *testing.B) (map[string]any, *Schema) {
	b.Helper()
	body, err := os.ReadFile("../rest/testdata/pod-3k.json")
	if err != nil {
		b.Fatal(err)
	}
	s := testCatalog(b, "kubernetes").ByGVK("", "v1", "Pod")
	d, err := Decode(body, s)
	if err != nil {
		b.Fatal(err)
	}
	return d.Object, s
}

func BenchmarkDefaultPod(b *testing.B) {
	obj, s := benchPod(b)
	b.ReportAllocs()
	for b.Loop() {
		ApplyDefaults(obj, s)
	}
}
