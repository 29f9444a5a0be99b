package protobuf

import (
	"testing"

	"platd/server/schema"
)

// benchObject returns the captured ConfigMap grown to about 1 KB of JSON.
func benchObject(b *testing.B) (map[string]any, *schema.Schema, int) {
	s := kindSchema(b, "", "v1", "ConfigMap")
	dec, err := schema.Decode(readTestdata(b, "configmap-get.json"), s)
	if err != nil {
		b.Fatal(err)
	}
	data := dec.Object["data"].(map[string]any)
	for _, k := range []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"} {
		data[k] = "some configuration value of moderate length"
	}
	return dec.Object, s, len(schema.Encode(nil, dec.Object, s))
}

func BenchmarkMarshalConfigMap(b *testing.B) {
	obj, s, n := benchObject(b)
	b.ReportMetric(float64(n), "json-bytes")
	b.ReportAllocs()
	buf := make([]byte, 0, 2048)
	for b.Loop() {
		var err error
		if buf, err = Marshal(buf[:0], obj, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalConfigMap(b *testing.B) {
	obj, s, _ := benchObject(b)
	raw, err := Marshal(nil, obj, s)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(raw)), "pb-bytes")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Unmarshal(raw, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRoundTripPod(b *testing.B) {
	s := kindSchema(b, "", "v1", "Pod")
	dec, err := schema.Decode([]byte(podJSON), s)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	buf := make([]byte, 0, 4096)
	for b.Loop() {
		if buf, err = Marshal(buf[:0], dec.Object, s); err != nil {
			b.Fatal(err)
		}
		if _, err := Unmarshal(buf, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTranscodeConfigMap is BenchmarkMarshalConfigMap from the stored
// JSON, decoding included.
func BenchmarkTranscodeConfigMap(b *testing.B) {
	obj, s, _ := benchObject(b)
	stored := schema.Encode(nil, obj, s)
	b.ReportMetric(float64(len(stored)), "json-bytes")
	b.ReportAllocs()
	buf := make([]byte, 0, 2048)
	for b.Loop() {
		var err error
		if buf, err = Transcode(buf[:0], stored, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeMarshalConfigMap is what Transcode replaces.
func BenchmarkDecodeMarshalConfigMap(b *testing.B) {
	obj, s, _ := benchObject(b)
	stored := schema.Encode(nil, obj, s)
	b.ReportAllocs()
	buf := make([]byte, 0, 2048)
	for b.Loop() {
		dec, err := schema.Decode(stored, s)
		if err != nil {
			b.Fatal(err)
		}
		if buf, err = Marshal(buf[:0], dec.Object, s); err != nil {
			b.Fatal(err)
		}
	}
}
