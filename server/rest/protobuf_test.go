package rest

import (
	"bytes"
	"net/http/httptest"
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

func checkListProto(t *testing.T, h *Handler, d *registry.Descriptor, items []bolt.KV) {
	t.Helper()
	lm := listMeta{rv: "12", cont: "c"}
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
	want = codec.WrapProtobuf(nil, d.GroupVersion(), d.ListKind, want)
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
