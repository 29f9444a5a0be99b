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
	c0 := cpuTime(b)
	for b.Loop() {
		var err error
		if buf, err = Transcode(buf[:0], stored, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-c0)/float64(b.N), "cpu-ns/op")
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

// apibenchConfigMap is a ConfigMap as the apibench load tool's create
// leaves it stored: one 256-byte payload and the server's managedFields.
const apibenchConfigMap = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-1","namespace":"bench","uid":"fb85942f-4ba6-4070-909a-da39e3f7b51e","resourceVersion":"195","creationTimestamp":"2026-11-26T23:26:24Z","labels":{"app":"apibench"},"managedFields":[{"manager":"apibench","operation":"Update","apiVersion":"v1","time":"2026-11-26T23:26:24Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:payload":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}}]},"data":{"payload":"Pc7EiuSaTGe9B4DZJoG0xzfwn0CskskVyDioQA4v3l9KuqqDTRfQO00xMOxygDKshcwbecAPjRD2IlwPv9IMBaxdeybfJhzmMfnfq0bjkfLSTswOQWijMZYU88ZxU3TOthYaCpMD3zE23Yc3en1jNuBt0HwnvjyTwb4xtsjRwR8HO7lJSNyb0P7oJNR9padEhNj4001fvHLqU2XHFRQC26pETg1nGNRaYGCvx6tqvHWf4OhNOJO8lNU5H941ksfT"}}`

// BenchmarkTranscodeAPIBench transcodes the apibench ConfigMap, the item
// of the list targets.
func BenchmarkTranscodeAPIBench(b *testing.B) {
	s := kindSchema(b, "", "v1", "ConfigMap")
	stored := []byte(apibenchConfigMap)
	b.ReportMetric(float64(len(stored)), "json-bytes")
	b.ReportAllocs()
	buf := make([]byte, 0, 2048)
	c0 := cpuTime(b)
	for b.Loop() {
		var err error
		if buf, err = Transcode(buf[:0], stored, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-c0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(len(buf)), "pb-bytes")
}
