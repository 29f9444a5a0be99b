package protobuf

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"platd/codec"
	"platd/config"
	"platd/server/apierr"
	"platd/server/schema"
)

// catalogs loads each brand's catalog once for all tests.
var catalogs sync.Map // brand name → *schema.Catalog

func catalog(t testing.TB, brand string) *schema.Catalog {
	t.Helper()
	if c, ok := catalogs.Load(brand); ok {
		return c.(*schema.Catalog)
	}
	b, err := config.LookupBrand(brand)
	if err != nil {
		t.Fatal(err)
	}
	c, err := schema.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	actual, _ := catalogs.LoadOrStore(brand, c)
	return actual.(*schema.Catalog)
}

func kindSchema(t testing.TB, group, version, kind string) *schema.Schema {
	t.Helper()
	s := catalog(t, "plat").ByGVK(group, version, kind)
	if s == nil {
		t.Fatalf("no schema for %s/%s %s", group, version, kind)
	}
	return s
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func unwrap(t testing.TB, body []byte) (string, string, []byte) {
	t.Helper()
	av, kind, raw, err := codec.UnwrapProtobuf(body)
	if err != nil {
		t.Fatal(err)
	}
	return av, kind, raw
}

// TestGoldenConfigMap: the JSON twin of an upstream capture marshals to the
// capture's bytes, and the capture unmarshals to the JSON twin.
func TestGoldenConfigMap(t *testing.T) {
	t.Parallel()
	s := kindSchema(t, "", "v1", "ConfigMap")
	body := readTestdata(t, "configmap-get.pb")
	av, kind, raw := unwrap(t, body)
	if av != "v1" || kind != "ConfigMap" {
		t.Fatalf("envelope %q %q", av, kind)
	}
	dec, err := schema.Decode(readTestdata(t, "configmap-get.json"), s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Marshal(nil, dec.Object, s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, raw) {
		t.Fatalf("marshal differs from capture\n got %x\nwant %x", got, raw)
	}
	if full := codec.WrapProtobuf(nil, "v1", "ConfigMap", got); !bytes.Equal(full, body) {
		t.Fatalf("wrapped body differs from capture")
	}
	back, err := Unmarshal(raw, s)
	if err != nil {
		t.Fatal(err)
	}
	want := dec.Object
	delete(want, "kind")
	delete(want, "apiVersion")
	if !reflect.DeepEqual(back, want) {
		t.Fatalf("unmarshal\n got %#v\nwant %#v", back, want)
	}
}

// TestGoldenConfigMapList rebuilds a captured list from its decoded items.
func TestGoldenConfigMapList(t *testing.T) {
	t.Parallel()
	s := kindSchema(t, "", "v1", "ConfigMap")
	ls := kindSchema(t, "", "v1", "ConfigMapList")
	_, kind, raw := unwrap(t, readTestdata(t, "configmaplist.pb"))
	if kind != "ConfigMapList" {
		t.Fatalf("kind %q", kind)
	}
	list, err := Unmarshal(raw, ls)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := list["metadata"].(map[string]any)
	if md["resourceVersion"] != "280" {
		t.Fatalf("list metadata %v", md)
	}
	items, _ := list["items"].([]any)
	if len(items) != 2 {
		t.Fatalf("%d items", len(items))
	}
	var enc [][]byte
	for _, it := range items {
		b, err := Marshal(nil, it.(map[string]any), s)
		if err != nil {
			t.Fatal(err)
		}
		enc = append(enc, b)
	}
	if got := MarshalList(nil, md, enc); !bytes.Equal(got, raw) {
		t.Fatalf("list differs\n got %x\nwant %x", got, raw)
	}
	// The whole list through the list schema gives the same bytes.
	if got, err := Marshal(nil, list, ls); err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("list schema marshal: %v\n got %x\nwant %x", err, got, raw)
	}
}

// watchEvents splits a protobuf watch stream into (type, object envelope).
func watchEvents(t *testing.T, stream []byte) (types []string, objects [][]byte) {
	t.Helper()
	for len(stream) > 0 {
		if len(stream) < 4 {
			t.Fatal("short frame")
		}
		n := binary.BigEndian.Uint32(stream)
		ev := stream[4 : 4+n]
		stream = stream[4+n:]
		var typ string
		var obj []byte
		for len(ev) > 0 {
			num, _, k := protowire.ConsumeTag(ev)
			v, m := protowire.ConsumeBytes(ev[k:])
			if k < 0 || m < 0 {
				t.Fatal("bad event")
			}
			ev = ev[k+m:]
			switch num {
			case 1:
				typ = string(v)
			case 2:
				_, _, m := protowire.ConsumeTag(v) // RawExtension.raw
				obj, _ = protowire.ConsumeBytes(v[m:])
			}
		}
		types = append(types, typ)
		objects = append(objects, obj)
	}
	return types, objects
}

// TestGoldenWatch re-encodes every object of a captured protobuf watch.
func TestGoldenWatch(t *testing.T) {
	t.Parallel()
	s := kindSchema(t, "", "v1", "ConfigMap")
	types, objs := watchEvents(t, readTestdata(t, "watch-from-rv.pb"))
	if want := []string{"ADDED", "MODIFIED", "DELETED"}; !reflect.DeepEqual(types, want) {
		t.Fatalf("events %v", types)
	}
	for i, env := range objs {
		_, _, raw := unwrap(t, env)
		obj, err := Unmarshal(raw, s)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := obj["data"].(map[string]any)
		if want := []string{"1", "2", "2"}[i]; data["k"] != want {
			t.Fatalf("event %d data %v", i, data)
		}
		got, err := Marshal(nil, obj, s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, raw) {
			t.Fatalf("event %d differs\n got %x\nwant %x", i, got, raw)
		}
	}
}

// TestGoldenStatus reproduces the Status of a captured 410 watch event,
// both through MarshalStatus and through the catalog's Status schema.
func TestGoldenStatus(t *testing.T) {
	t.Parallel()
	types, objs := watchEvents(t, readTestdata(t, "watch-410.pb"))
	if len(types) != 1 || types[0] != "ERROR" {
		t.Fatalf("events %v", types)
	}
	av, kind, raw := unwrap(t, objs[0])
	if av != "v1" || kind != "Status" {
		t.Fatalf("envelope %q %q", av, kind)
	}
	st := &apierr.Status{Status: apierr.StatusFailure, Message: "too old resource version: 243 (292)",
		Reason: apierr.ReasonExpired, Code: 410}
	if got := MarshalStatus(nil, st); !bytes.Equal(got, raw) {
		t.Fatalf("MarshalStatus\n got %x\nwant %x", got, raw)
	}
	ss := kindSchema(t, "", "v1", "Status")
	obj, err := Unmarshal(raw, ss)
	if err != nil {
		t.Fatal(err)
	}
	if obj["reason"] != "Expired" || obj["code"] != int64(410) {
		t.Fatalf("status %v", obj)
	}
	if got, err := Marshal(nil, obj, ss); err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("schema marshal: %v\n got %x\nwant %x", err, got, raw)
	}
}
