package rest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"platd/server/registry"
)

// discardWriter is a ResponseWriter that drops the body.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return io.Discard.Write(p) }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkStreamList writes a list of 10,000 apibench ConfigMaps as a
// response, in JSON, in protobuf from a warm cache of messages, and as a
// Table, without the network.
func BenchmarkStreamList(b *testing.B) {
	h, d := configMapHandler(b)
	items := apibenchItems(b, d, 10000)
	r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
	for _, c := range []struct {
		name  string
		out   output
		write func(w http.ResponseWriter, rd *renderer)
	}{
		{"json", output{format: formatJSON}, func(w http.ResponseWriter, rd *renderer) { h.streamList(w, r, rd, listMeta{rv: "1"}, items) }},
		{"protobuf", output{format: formatProtobuf}, func(w http.ResponseWriter, rd *renderer) { h.streamProtoList(w, r, rd, listMeta{rv: "1"}, items) }},
		{"table", output{format: formatJSON, as: asTable, asVersion: metaV1}, func(w http.ResponseWriter, rd *renderer) { h.streamTable(w, r, rd, listMeta{rv: "1"}, items) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			rd, err := h.newRenderer(r, d, c.out)
			if err != nil {
				b.Fatal(err)
			}
			c.write(&discardWriter{h: http.Header{}}, rd) // fills the cache
			b.ReportAllocs()
			c0 := cpuTime(b)
			for range b.N {
				c.write(&discardWriter{h: http.Header{}}, rd)
			}
			b.ReportMetric(float64(cpuTime(b)-c0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkStreamVersionedList writes the JSON list of BenchmarkStreamList
// for a type whose objects name their version in storage (a custom
// resource's), all of them in the version served: the items are served
// without decoding, as the ConfigMaps are.
func BenchmarkStreamVersionedList(b *testing.B) {
	h, cm := configMapHandler(b)
	d := *cm
	d.Storage = &registry.Storage{Descriptor: &d, Converter: noConverter{}}
	items := apibenchItems(b, cm, 10000)
	for i := range items {
		items[i].Value = encodeInVersion(d.Schema, mustDecode(b, cm, items[i].Value), d.GroupVersion(), false)
	}
	r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
	rd, err := h.newRenderer(r, &d, output{format: formatJSON})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuTime(b)
	for range b.N {
		page, err := convertItems(&d, items)
		if err != nil {
			b.Fatal(err)
		}
		h.streamList(&discardWriter{h: http.Header{}}, r, rd, listMeta{rv: "1"}, page)
	}
	b.ReportMetric(float64(cpuTime(b)-c0)/1e6/float64(b.N), "cpu-ms/op")
}

func mustDecode(b *testing.B, d *registry.Descriptor, stored []byte) Object {
	obj, err := decodeStored(d, stored)
	if err != nil {
		b.Fatal(err)
	}
	return obj
}
