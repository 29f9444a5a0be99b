package schema

import (
	"os"
	"testing"
)

func BenchmarkDefaultPod(b *testing.B) {
	body, err := os.ReadFile("../rest/testdata/pod-3k.json")
	if err != nil {
		b.Fatal(err)
	}
	s := testCatalog(b, "kubernetes").ByGVK("", "v1", "Pod")
	d, err := Decode(body, s)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ApplyDefaults(d.Object, s)
	}
}
