package rest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// TestStreamListMatchesList checks that a compact JSON list written in
// chunks straight from stored bytes, of the objects and of their metadata
// in both meta versions, is byte for byte the list the renderer makes
// whole, over enough objects to take several chunks.
func TestStreamListMatchesList(t *testing.T) {
	t.Parallel()
	h, d := configMapHandler(t)
	items := apibenchItems(t, d, 1500)
	lm := listMeta{rv: "42", cont: "next"}
	for _, c := range []struct {
		name string
		out  output
	}{
		{"objects", output{format: formatJSON}},
		{"metadata v1", output{format: formatJSON, as: asMetadataList, asVersion: metaV1}},
		{"metadata v1beta1", output{format: formatJSON, as: asMetadataList, asVersion: metaV1beta1}},
	} {
		r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
		rd, err := h.newRenderer(r, d, c.out)
		if err != nil {
			t.Fatal(err)
		}
		want, err := rd.list(lm, items)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) < 2*listChunkSize {
			t.Fatalf("%s: list of %d bytes is too short to take several chunks", c.name, len(want))
		}
		rec := httptest.NewRecorder()
		h.streamList(rec, r, rd, lm, items)
		if got := rec.Body.Bytes(); !bytes.Equal(got, want) {
			t.Errorf("%s: streamed list (%d bytes) differs from the rendered one (%d bytes)", c.name, len(got), len(want))
		}
		if ct := rec.Header().Get("Content-Type"); ct != mediaJSON {
			t.Errorf("%s: Content-Type %q", c.name, ct)
		}
	}
}

// TestStreamProtoListMatchesList is TestStreamListMatchesList in
// protobuf: the envelope and every item, of the objects and of their
// metadata in both meta versions.
func TestStreamProtoListMatchesList(t *testing.T) {
	t.Parallel()
	h, d := configMapHandler(t)
	items := apibenchItems(t, d, 3000)
	lm := listMeta{rv: "42", cont: "next"}
	for _, c := range []struct {
		name   string
		out    output
		stream func(w http.ResponseWriter, r *http.Request, rd *renderer)
	}{
		{"objects", output{format: formatProtobuf}, func(w http.ResponseWriter, r *http.Request, rd *renderer) {
			h.streamProtoList(w, r, rd, lm, items)
		}},
		{"metadata v1", output{format: formatProtobuf, as: asMetadataList, asVersion: metaV1}, func(w http.ResponseWriter, r *http.Request, rd *renderer) {
			h.streamMetadataProtoList(w, r, rd, lm, items)
		}},
		{"metadata v1beta1", output{format: formatProtobuf, as: asMetadataList, asVersion: metaV1beta1}, func(w http.ResponseWriter, r *http.Request, rd *renderer) {
			h.streamMetadataProtoList(w, r, rd, lm, items)
		}},
	} {
		r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
		rd, err := h.newRenderer(r, d, c.out)
		if err != nil {
			t.Fatal(err)
		}
		want, err := rd.list(lm, items)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) < 2*listChunkSize {
			t.Fatalf("%s: list of %d bytes is too short to take several chunks", c.name, len(want))
		}
		rec := httptest.NewRecorder()
		c.stream(rec, r, rd)
		if got := rec.Body.Bytes(); !bytes.Equal(got, want) {
			t.Errorf("%s: streamed list (%d bytes) differs from the rendered one (%d bytes)", c.name, len(got), len(want))
		}
		if cl := rec.Header().Get("Content-Length"); cl != strconv.Itoa(len(want)) {
			t.Errorf("%s: Content-Length %q, body %d bytes", c.name, cl, len(want))
		}
	}
}
