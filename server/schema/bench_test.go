package schema

import (
	"os"
	"strings"
	"testing"
)

// configMap1K is a typical stored ConfigMap of about 1 KB.
var configMap1K = []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"enc1","namespace":"golden-enc","uid":"06d16401-3ef8-4cf2-8b1b-e326b44f0199","resourceVersion":"276","creationTimestamp":"2026-11-21T23:10:38Z","labels":{"app":"enc","tier":"backend"},"annotations":{"note":"multi\nline"},"managedFields":[{"manager":"curl","operation":"Update","apiVersion":"v1","time":"2026-11-21T23:10:38Z","fieldsType":"FieldsV1","fieldsV1":{"f:binaryData":{".":{},"f:bin":{}},"f:data":{".":{},"f:a":{},"f:text":{}},"f:metadata":{"f:annotations":{".":{},"f:note":{}},"f:labels":{".":{},"f:app":{}}}}}]},"data":{"a":"1","config.yaml":"` + strings.Repeat("key: value\\n", 30) + `","text":"hello\nworld\n"},"binaryData":{"bin":"AAEC/w=="}}`)

func BenchmarkDecodeConfigMap(b *testing.B) {
	s := testCatalog(b, "kubernetes").ByGVK("", "v1", "ConfigMap")
	b.SetBytes(int64(len(configMap1K)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(configMap1K, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeConfigMap(b *testing.B) {
	s := testCatalog(b, "kubernetes").ByGVK("", "v1", "ConfigMap")
	d, err := Decode(configMap1K, s)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 2048)
	b.SetBytes(int64(len(configMap1K)))
	b.ReportAllocs()
	for b.Loop() {
		buf = Encode(buf[:0], d.Object, s)
	}
}

func TestBenchmarkFixtureRoundTrips(t *testing.T) {
	t.Parallel()
	s := testCatalog(t, "kubernetes").ByGVK("", "v1", "ConfigMap")
	d, err := Decode(configMap1K, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := Encode(nil, d.Object, s); string(got) != string(configMap1K) {
		t.Errorf("got  %s\nwant %s", got, configMap1K)
	}
}

// BenchmarkDecodePod decodes the realistic 3 KB Pod body that
// BenchmarkPodCreates sends, as a create's body is decoded.
func BenchmarkDecodePod(b *testing.B) {
	body, err := os.ReadFile("../rest/testdata/pod-3k.json")
	if err != nil {
		b.Fatal(err)
	}
	s := testCatalog(b, "kubernetes").ByGVK("", "v1", "Pod")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(body, s); err != nil {
			b.Fatal(err)
		}
	}
}
