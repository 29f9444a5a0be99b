package server_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"platd/codec"
	"platd/config"
	"platd/server/protobuf"
	"platd/server/schema"
)

func TestProtobufBodiesAndResponses(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"))
	b, _ := config.LookupBrand("kubernetes")
	cat, err := schema.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	s := cat.ByGVK("", "v1", "ConfigMap")
	raw, err := protobuf.Marshal(nil, map[string]any{"metadata": map[string]any{"name": "pb"}, "data": map[string]any{"k": "v"}}, s)
	if err != nil {
		t.Fatal(err)
	}
	body := codec.WrapProtobuf(nil, "v1", "ConfigMap", raw)
	r := e.do("POST", "/api/v1/namespaces/default/configmaps", body, "Content-Type", b.ProtobufMediaType, "Accept", b.ProtobufMediaType).mustCode(t, 201)
	if r.header.Get("Content-Type") != b.ProtobufMediaType {
		t.Fatalf("response type %q", r.header.Get("Content-Type"))
	}
	apiVersion, kind, objRaw, err := codec.UnwrapProtobuf(r.body)
	if err != nil || apiVersion != "v1" || kind != "ConfigMap" {
		t.Fatalf("envelope %q %q %v", apiVersion, kind, err)
	}
	obj, err := protobuf.Unmarshal(objRaw, s)
	if err != nil {
		t.Fatal(err)
	}
	if path(obj, "metadata.name") != "pb" || path(obj, "data.k") != "v" || path(obj, "metadata.uid") == nil {
		t.Errorf("created object: %v", obj)
	}
	// The JSON view of the same object agrees.
	j := e.do("GET", "/api/v1/namespaces/default/configmaps/pb", nil).mustCode(t, 200).obj(t)
	if path(j, "metadata.uid") != path(obj, "metadata.uid") || rvOf(j) != path(obj, "metadata.resourceVersion") {
		t.Errorf("json %v vs protobuf %v", j["metadata"], obj["metadata"])
	}
	// Ownership travels in protobuf as FieldsV1's raw JSON.
	if pj, jj := ownershipJSON(t, obj), ownershipJSON(t, j); pj != jj || !strings.Contains(jj, `"manager":"platd-test"`) {
		t.Errorf("managedFields: protobuf %s, json %s", pj, jj)
	}
	// A list as protobuf.
	l := e.do("GET", "/api/v1/namespaces/default/configmaps", nil, "Accept", b.ProtobufMediaType).mustCode(t, 200)
	if _, kind, _, err := codec.UnwrapProtobuf(l.body); err != nil || kind != "ConfigMapList" {
		t.Errorf("list envelope kind %q: %v", kind, err)
	}
	// A Status as protobuf.
	nf := e.do("GET", "/api/v1/namespaces/default/configmaps/missing", nil, "Accept", b.ProtobufMediaType).mustCode(t, 404)
	if _, kind, _, err := codec.UnwrapProtobuf(nf.body); err != nil || kind != "Status" {
		t.Errorf("status envelope kind %q: %v", kind, err)
	}
	// A bad protobuf body.
	bad := e.do("POST", "/api/v1/namespaces/default/configmaps", []byte("nope"), "Content-Type", b.ProtobufMediaType).mustCode(t, 400).obj(t)
	if bad["message"] != "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]" {
		t.Errorf("bad body: %v", bad["message"])
	}
}

func TestProtobufWatch(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"))
	b, _ := config.LookupBrand("kubernetes")
	r, _ := http.NewRequest("GET", e.srv.URL()+"/api/v1/namespaces/default/configmaps?watch=1", nil)
	r.Header.Set("Authorization", "Bearer "+adminToken)
	r.Header.Set("Accept", b.ProtobufMediaType+";stream=watch")
	res, err := e.client.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Type") != b.ProtobufMediaType+";stream=watch" {
		t.Fatalf("content type %q", res.Header.Get("Content-Type"))
	}
	e.do("POST", "/api/v1/namespaces/default/configmaps", cm("pw", nil, nil)).mustCreated(t)
	br := bufio.NewReader(res.Body)
	var n uint32
	if err := binary.Read(br, binary.BigEndian, &n); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(br, frame); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(frame, []byte("ADDED")) || !bytes.Contains(frame, []byte("k8s\x00")) || !bytes.Contains(frame, []byte("pw")) {
		t.Errorf("frame %q", frame)
	}
}

// ownershipJSON renders an object's managedFields for comparison across
// encodings.
func ownershipJSON(t *testing.T, obj map[string]any) string {
	t.Helper()
	b, err := json.Marshal(path(obj, "metadata.managedFields"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
