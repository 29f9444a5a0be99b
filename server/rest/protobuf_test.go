package rest

import (
	"bytes"
	"net/http/httptest"
	"os"
	"testing"

	"platd/bolt"
	"platd/codec"
	"platd/server/protobuf"
	"platd/server/registry"
)

// TestListProto: a protobuf list, transcoded in parts, is the list of each
// item decoded and marshalled, including items the transcoder declines.
func TestListProto(t *testing.T) {
	t.Parallel()
	h, d := configMapHandler(t)
	items := benchItems(t, d, 2*minItemsPerWorker+7)
	dup := bolt.KV{Key: d.Key("bench", "dup"), Value: []byte(`{"metadata":{"name":"dup","namespace":"bench","resourceVersion":"1"},"data":{"a":"1","a":"2"}}`)}
	items = append(items[:minItemsPerWorker+3], append([]bolt.KV{dup}, items[minItemsPerWorker+3:]...)...)
	// Objects whose protobuf outgrows their JSON overflow their part's
	// room in the list.
	tiny := make([]bolt.KV, 3*minItemsPerWorker)
	// (each empty owner reference takes 3 bytes of JSON, 10 of protobuf)
	for i := range tiny {
		tiny[i] = bolt.KV{Value: []byte(`{"metadata":{"resourceVersion":"1","ownerReferences":[{},{},{},{},{},{},{},{}]}}`)}
	}
	checkListProto(t, h, d, items)
	checkListProto(t, h, d, tiny)
	checkListProto(t, h, d, append(tiny[:minItemsPerWorker:minItemsPerWorker], items...))
}

// TestStreamProtoList: a protobuf list written from the cache of
// messages, cold and then warm, is the list of each item decoded and
// marshalled: the captured upstream ConfigMap, both benchmark shapes, an
// item the transcoder declines, and items with no revision to cache by.
func TestStreamProtoList(t *testing.T) {
	t.Parallel()
	h, d := configMapHandler(t)
	golden, err := os.ReadFile("../protobuf/testdata/configmap-get.json")
	if err != nil {
		t.Fatal(err)
	}
	items := []bolt.KV{
		{Key: d.Key("golden-enc", "enc1"), Value: golden, ModRevision: 276},
		{Key: d.Key("bench", "dup"), Value: []byte(`{"metadata":{"name":"dup","namespace":"bench","resourceVersion":"1"},"data":{"a":"1","a":"2"}}`), ModRevision: 1},
		{Value: []byte(`{"metadata":{"resourceVersion":"1","ownerReferences":[{},{}]}}`)},
	}
	for i, kv := range benchItems(t, d, minItemsPerWorker+5) {
		kv.ModRevision = int64(1000 + i)
		items = append(items, kv)
	}
	items = append(items, apibenchItems(t, d, 2*minItemsPerWorker+3)...)
	lm := listMeta{rv: "12", cont: "c"}
	want := listProtoWant(t, d, lm, items)
	for _, pass := range []string{"cold", "warm"} {
		rd, err := h.newRenderer(httptest.NewRequest("GET", "/api/v1/configmaps", nil), d, output{format: formatProtobuf})
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		h.streamProtoList(w, httptest.NewRequest("GET", "/api/v1/configmaps", nil), rd, lm, items)
		if got := w.Body.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("%s: the streamed list differs from the decoded and marshalled list", pass)
		}
		// net/http frames the response, as upstream's.
		if cl, ok := w.Result().Header["Content-Length"]; ok {
			t.Fatalf("%s: Content-Length %s set for %d bytes", pass, cl, len(want))
		}
	}
	if _, n := h.protos.size(); n != len(items)-1 {
		t.Fatalf("the cache holds %d entries, want one per item with a revision (%d)", n, len(items)-1)
	}
}

// listProtoWant is the protobuf list of items, each decoded and marshalled.
func listProtoWant(t *testing.T, d *registry.Descriptor, lm listMeta, items []bolt.KV) []byte {
	t.Helper()
	want := protobuf.AppendListHead(nil, lm.asMap())
	for _, it := range items {
		obj, err := decodeStored(d, it.Value)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := protobuf.Marshal(nil, obj, d.Schema)
		if err != nil {
			t.Fatal(err)
		}
		want = protobuf.AppendListItem(want, pb)
	}
	return codec.WrapProtobuf(nil, d.GroupVersion(), d.ListKind, want)
}

func checkListProto(t *testing.T, h *Handler, d *registry.Descriptor, items []bolt.KV) {
	t.Helper()
	lm := listMeta{rv: "12", cont: "c"}
	want := listProtoWant(t, d, lm, items)
	rd, err := h.newRenderer(httptest.NewRequest("GET", "/api/v1/configmaps", nil), d, output{format: formatProtobuf})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, minItemsPerWorker, len(items)} {
		got, err := rd.list(lm, items[:n])
		if err != nil {
			t.Fatal(err)
		}
		if n == len(items) && !bytes.Equal(got, want) {
			t.Fatalf("list of %d differs from the decoded and marshalled list", n)
		}
		if _, kind, _, err := codec.UnwrapProtobuf(got); err != nil || kind != d.ListKind {
			t.Fatalf("list of %d: %q %v", n, kind, err)
		}
	}
}

// TestMetadataProto: PartialObjectMetadata transcoded from the stored
// metadata is the one decoded and marshalled.
func TestMetadataProto(t *testing.T) {
	t.Parallel()
	h, d := configMapHandler(t)
	rd, err := h.newRenderer(httptest.NewRequest("GET", "/api/v1/configmaps", nil), d, output{format: formatProtobuf, as: asMetadata, asVersion: metaV1})
	if err != nil {
		t.Fatal(err)
	}
	items := append(benchItems(t, d, 20), bolt.KV{Value: []byte(`{"metadata":{"name":"a","labels":{"b":"1","a":"2"},"creationTimestamp":"2024-01-01T01:00:00+01:00",` +
		`"managedFields":[{"manager":"m","time":"2024-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"k:{\"x\":1}":{},".":{}}}}],"resourceVersion":"7"}}`)})
	for _, it := range items {
		got, err := rd.metadataProto([]byte("x"), it.Value)
		if err != nil {
			t.Fatal(err)
		}
		m, err := storedMetadata(it.Value)
		if err != nil {
			t.Fatal(err)
		}
		want, err := rd.decodeMetadataProto([]byte("x"), m)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %v\n got %x\nwant %x", it.Value, err, got, want)
		}
	}
}
