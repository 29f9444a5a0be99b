package rest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"platd/bolt"
	"platd/server/registry"
	"platd/server/schema"
)

// TestStreamListMatchesList checks that a list written in chunks
// straight from stored bytes, in JSON and in protobuf, of the objects and
// of their metadata in both meta versions, is byte for byte the list the
// renderer makes whole (with no Content-Length: net/http frames it), over
// enough objects to take several chunks.
func TestStreamListMatchesList(t *testing.T) {
	t.Parallel()
	h, d := configMapHandler(t)
	items := apibenchItems(t, d, 3000)
	lm := listMeta{rv: "42", cont: "next"}
	jsonList := func(w http.ResponseWriter, r *http.Request, rd *renderer) { h.streamList(w, r, rd, lm, items) }
	metaProto := func(w http.ResponseWriter, r *http.Request, rd *renderer) {
		h.streamMetadataProtoList(w, r, rd, lm, items)
	}
	for _, c := range []struct {
		name   string
		out    output
		stream func(w http.ResponseWriter, r *http.Request, rd *renderer)
	}{
		{"objects", output{format: formatJSON}, jsonList},
		{"metadata v1", output{format: formatJSON, as: asMetadataList, asVersion: metaV1}, jsonList},
		{"metadata v1beta1", output{format: formatJSON, as: asMetadataList, asVersion: metaV1beta1}, jsonList},
		{"protobuf objects", output{format: formatProtobuf}, func(w http.ResponseWriter, r *http.Request, rd *renderer) {
			h.streamProtoList(w, r, rd, lm, items)
		}},
		{"protobuf metadata v1", output{format: formatProtobuf, as: asMetadataList, asVersion: metaV1}, metaProto},
		{"protobuf metadata v1beta1", output{format: formatProtobuf, as: asMetadataList, asVersion: metaV1beta1}, metaProto},
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
		// The second time, protobuf messages come from the cache.
		for pass := range 2 {
			rec := httptest.NewRecorder()
			c.stream(rec, r, rd)
			if got := rec.Body.Bytes(); !bytes.Equal(got, want) {
				t.Errorf("%s, pass %d: streamed list (%d bytes) differs from the rendered one (%d bytes)", c.name, pass, len(got), len(want))
			}
			if cl, ok := rec.Header()["Content-Length"]; ok {
				t.Errorf("%s, pass %d: Content-Length %q set, body %d bytes: net/http frames it", c.name, pass, cl, len(want))
			}
			if ct := rec.Header().Get("Content-Type"); c.out.format == formatJSON && ct != mediaJSON {
				t.Errorf("%s, pass %d: Content-Type %q", c.name, pass, ct)
			}
		}
	}
}

// TestStreamListEdges covers what a streamed list does besides the common
// case: no items; an object whose metadata cannot be read (left out of a
// list of objects, failing a list of metadata before anything is written,
// as the whole rendering fails); and a first item larger than a chunk,
// which must not keep the list from being compressed.
func TestStreamListEdges(t *testing.T) {
	t.Parallel()
	h, d := configMapHandler(t)
	lm := listMeta{rv: "7"}
	render := func(out output, items []bolt.KV, header ...string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		rd, err := h.newRenderer(r, d, out)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		switch {
		case out.format == formatProtobuf && out.as == asMetadataList:
			h.streamMetadataProtoList(rec, r, rd, lm, items)
		case out.format == formatProtobuf:
			h.streamProtoList(rec, r, rd, lm, items)
		default:
			h.streamList(rec, r, rd, lm, items)
		}
		return rec
	}
	objects := output{format: formatJSON}
	metaJSON := output{format: formatJSON, as: asMetadataList, asVersion: metaV1}
	metaProto := output{format: formatProtobuf, as: asMetadataList, asVersion: metaV1}

	for _, out := range []output{objects, metaJSON} {
		rec := render(out, nil)
		var l struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil || rec.Code != 200 || l.Items == nil || len(l.Items) != 0 {
			t.Errorf("%+v: empty list: %d %q (%v)", out, rec.Code, rec.Body, err)
		}
	}

	items := apibenchItems(t, d, 3)
	items[0].Value = []byte(`{"data":{"a":"b"},"metadata":{"name":"x","namespace":"bench"}}`)
	rec := render(objects, items)
	var l struct {
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil || rec.Code != 200 || len(l.Items) < 2 || l.Items[len(l.Items)-1].Metadata.Name != "cm-2" {
		t.Errorf("objects with an odd first item: %d %v %.300q", rec.Code, err, rec.Body)
	}
	for _, out := range []output{metaJSON, metaProto} {
		rec := render(out, items)
		if rec.Code != http.StatusInternalServerError || !bytes.Contains(rec.Body.Bytes(), []byte(`"reason":"InternalError"`)) {
			t.Errorf("%+v: unreadable metadata: %d %.300q, want a 500 Status", out, rec.Code, rec.Body)
		}
	}

	big := apibenchItems(t, d, 40)
	annotated := Object{"metadata": map[string]any{"name": "big", "namespace": "bench", "annotations": map[string]any{"note": strings.Repeat("n", listChunkSize+1000)}}}
	big[0].Value = schema.Encode(nil, annotated, d.Schema)
	// A small first item followed by a large one: the body is over the
	// threshold, so it is compressed too, as a body written whole.
	smallFirst := apibenchItems(t, d, 2)
	// A key and revision of its own: encodings are cached by them.
	smallFirst[1] = bolt.KV{Key: big[0].Key + "-late", Value: big[0].Value, CreateRevision: 1000, ModRevision: 1000}
	for _, c := range []struct {
		name  string
		items []bolt.KV
	}{{"large first item", big}, {"small first item", smallFirst}} {
		t.Run(c.name, func(t *testing.T) { checkCompressed(t, h, d, lm, c.items, render) })
	}
}

// checkCompressed checks that every streamed form of a list larger than
// the gzip threshold comes compressed and decompresses to its rendering.
func checkCompressed(t *testing.T, h *Handler, d *registry.Descriptor, lm listMeta, big []bolt.KV, render func(output, []bolt.KV, ...string) *httptest.ResponseRecorder) {
	for _, out := range []output{{format: formatJSON}, {format: formatJSON, as: asMetadataList, asVersion: metaV1}, {format: formatProtobuf, as: asMetadataList, asVersion: metaV1}, {format: formatProtobuf}} {
		r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
		rd, err := h.newRenderer(r, d, out)
		if err != nil {
			t.Fatal(err)
		}
		want, err := rd.list(lm, big)
		if err != nil {
			t.Fatal(err)
		}
		rec := render(out, big, "Accept-Encoding", "gzip")
		if rec.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("%+v: a list starting with a %d-byte item is not compressed", out, len(big[0].Value))
			continue
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%+v: decompressed body (%d bytes, %v) differs from the rendering (%d bytes)", out, len(got), err, len(want))
		}
	}
}
