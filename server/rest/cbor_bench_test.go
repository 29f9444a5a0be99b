package rest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkCBOR compares the server-side cost of answering in CBOR and in
// JSON: a GET of one ConfigMap and a LIST of 1,000, written to a recorder
// as the handlers write them (JSON lists stream the stored bytes; CBOR is
// derived from them per request).
func BenchmarkCBOR(b *testing.B) {
	h, d := configMapHandler(b)
	items := benchItems(b, d, 1000)
	for _, c := range []struct {
		name string
		out  output
	}{
		{"json", output{format: formatJSON}},
		{"cbor", output{format: formatCBOR}},
	} {
		b.Run("get/"+c.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/api/v1/namespaces/bench/configmaps/x", nil)
			r.RemoteAddr = "127.0.0.1:1"
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.writeObject(w, r, c.out, http.StatusOK, d, items[0].Value)
				if w.Code != http.StatusOK {
					b.Fatal(w.Code, w.Body.String())
				}
			}
		})
		b.Run("list1000/"+c.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
			r.RemoteAddr = "127.0.0.1:1"
			b.ReportAllocs()
			var size int
			for b.Loop() {
				w := httptest.NewRecorder()
				rd, err := h.newRenderer(r, d, c.out)
				if err != nil {
					b.Fatal(err)
				}
				if c.out.format == formatJSON {
					h.streamList(w, r, rd, listMeta{rv: "1"}, items)
				} else {
					body, err := rd.list(listMeta{rv: "1"}, items)
					if err != nil {
						b.Fatal(err)
					}
					h.writeCBOR(w, r, http.StatusOK, body, d.Schema, true)
				}
				if w.Code != http.StatusOK {
					b.Fatal(w.Code)
				}
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/resp")
		})
	}
}
