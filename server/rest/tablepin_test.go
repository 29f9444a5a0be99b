package rest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"platd/bolt"
	"platd/config"
	"platd/server/builtin"
	"platd/server/customresource"
	"platd/server/registry"
	"platd/server/schema"
)

var updateTablePin = flag.Bool("update-tablepin", false, "rewrite testdata/tablepin/*.golden from the current Table renderer")

// tablePinNow is the instant the pinned Tables are rendered at.
var tablePinNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// TestTablePinned pins every byte of Table responses (lists with each
// includeObject, a single object, watch rows, and a list long enough to
// be rendered in parts) for a sample of built-in types, a type without a
// printer, and custom resources with and without printer columns, so that
// a change to how rows are computed cannot change what is served.
func TestTablePinned(t *testing.T) {
	h, reg, br := tablePinHandler(t)
	h.now = func() time.Time { return tablePinNow }
	fixtures := tablePinFixtures(t)
	keys := make([]string, 0, len(fixtures))
	for k := range fixtures {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		d := tablePinDescriptor(t, reg, br, key)
		items := tablePinItems(t, d, fixtures[key])
		checkTablePin(t, h, d, strings.ReplaceAll(key, "/", "-"), items)
	}
	for _, d := range tablePinCustom(t, reg, br) {
		items := tablePinItems(t, d, []json.RawMessage{
			json.RawMessage(`{"metadata":{"name":"w1","namespace":"ns1","uid":"0a0a0a0a-aaaa-aaaa-aaaa-aaaaaaaaaaaa","resourceVersion":"100","creationTimestamp":"2026-01-02T02:04:05Z","labels":{"app":"w"},"managedFields":[{"manager":"m","operation":"Update","apiVersion":"example.com/v1","time":"2026-01-02T02:04:05Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]},"spec":{"size":"large","replicas":3,"enabled":true,"items":[{"name":"a"},{"name":"b"}],"extra":{"deep":[1,2.5,"x",null]}},"status":{"ratio":0.25,"lastSeen":"2026-01-02T03:00:00Z","note":null}}`),
			json.RawMessage(`{"metadata":{"name":"w2","namespace":"ns1","uid":"0b0b0b0b-aaaa-aaaa-aaaa-aaaaaaaaaaaa","resourceVersion":"101","creationTimestamp":"2025-01-02T02:04:05Z"},"spec":{"size":"","replicas":"three","items":[]}}`),
			json.RawMessage(`{"metadata":{"name":"w3","namespace":"ns2","uid":"0c0c0c0c-aaaa-aaaa-aaaa-aaaaaaaaaaaa","resourceVersion":"102"},"spec":{"items":[{"name":"only"}],"enabled":false},"status":{"ratio":2,"lastSeen":"not a date"}}`),
		})
		checkTablePin(t, h, d, "custom-"+d.Version+"-"+d.Resource, items)
	}
}

// tablePinFixtures are the pinned objects (testdata/tablepin/objects.json)
// by fixture key (see tablePinDescriptor).
func tablePinFixtures(t *testing.T) map[string][]json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "tablepin", "objects.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fixtures map[string][]json.RawMessage
	if err := json.Unmarshal(raw, &fixtures); err != nil {
		t.Fatal(err)
	}
	return fixtures
}

// tablePinDescriptor is the resource a fixture key names: group (core
// for the legacy group, unqualified for apps and batch, else under the
// brand's domain), version and resource, slash-separated.
func tablePinDescriptor(t *testing.T, reg *registry.Registry, br config.Brand, key string) *registry.Descriptor {
	t.Helper()
	parts := strings.Split(key, "/")
	group := parts[0]
	switch {
	case group == "core":
		group = ""
	case group != "apps" && group != "batch":
		group = group + "." + br.Domain
	}
	d := reg.Lookup(group, parts[1], parts[2])
	if d == nil {
		t.Fatalf("%s: no such resource", key)
	}
	return d
}

// tablePinHandler is a Handler of the built-in types in the plat brand.
func tablePinHandler(t *testing.T) (*Handler, *registry.Registry, config.Brand) {
	t.Helper()
	br, _ := config.LookupBrand("plat")
	cat, err := schema.Load(br)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	if err := builtin.Register(reg, cat, br); err != nil {
		t.Fatal(err)
	}
	return New(Config{Registry: reg, Brand: br, Kinds: cat.ByGVK}), reg, br
}

// tablePinCustom returns the descriptors of a custom resource in two
// versions: v1 with printer columns of every type, v2 with none.
func tablePinCustom(t *testing.T, reg *registry.Registry, br config.Brand) []*registry.Descriptor {
	t.Helper()
	crd := map[string]any{}
	err := json.Unmarshal([]byte(`{"spec":{"group":"example.com","scope":"Namespaced",
	"names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
	"versions":[
	 {"name":"v1","served":true,"storage":true,
	  "schema":{"openAPIV3Schema":{"type":"object","properties":{
	   "spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
	   "status":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}},
	  "additionalPrinterColumns":[
	   {"name":"Size","type":"string","jsonPath":".spec.size"},
	   {"name":"Replicas","type":"integer","jsonPath":".spec.replicas"},
	   {"name":"Ratio","type":"number","jsonPath":".status.ratio","priority":1},
	   {"name":"Enabled","type":"boolean","jsonPath":".spec.enabled"},
	   {"name":"Seen","type":"date","jsonPath":".status.lastSeen"},
	   {"name":"Items","type":"string","jsonPath":".spec.items[*].name"},
	   {"name":"Extra","type":"string","jsonPath":".spec.extra"},
	   {"name":"Note","type":"string","jsonPath":".status.note"},
	   {"name":"App","type":"string","jsonPath":".metadata.labels.app"},
	   {"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}]},
	 {"name":"v2","served":true,"storage":false,
	  "schema":{"openAPIV3Schema":{"type":"object","properties":{
	   "spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
	   "status":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}}`), &crd)
	if err != nil {
		t.Fatal(err)
	}
	def, err := customresource.Read(crd)
	if err != nil {
		t.Fatal(err)
	}
	meta := reg.Lookup("", "v1", "configmaps").Schema.Field("metadata").Schema
	ds, err := customresource.NewBuilder(meta, br).Descriptors(def)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// tablePinItems encodes fixture objects as the store holds them.
func tablePinItems(t *testing.T, d *registry.Descriptor, objs []json.RawMessage) []bolt.KV {
	t.Helper()
	items := make([]bolt.KV, len(objs))
	for i, o := range objs {
		obj, err := schema.DecodeAny(o)
		if err != nil {
			t.Fatal(err)
		}
		m := obj.(map[string]any)
		items[i] = bolt.KV{Key: d.Key(metaString(m, "namespace"), metaString(m, "name")), Value: schema.Encode(nil, m, storedForm(d).Schema)}
	}
	return items
}

// checkTablePin renders items every way a Table is served and compares
// the bytes with the golden file of name.
func checkTablePin(t *testing.T, h *Handler, d *registry.Descriptor, name string, items []bolt.KV) {
	t.Helper()
	var got bytes.Buffer
	out := output{format: formatJSON, as: asTable, asVersion: metaV1}
	for _, include := range []string{"", includeNone, includeObject} {
		rd := tablePinRenderer(t, h, d, out, include)
		b, err := rd.list(listMeta{rv: "200", cont: "next"}, items)
		if err != nil {
			t.Fatalf("%s: list: %v", name, err)
		}
		fmt.Fprintf(&got, "list includeObject=%q\n%s", include, b)
	}
	rd := tablePinRenderer(t, h, d, out, "")
	b, err := rd.single(items[0].Value)
	if err != nil {
		t.Fatalf("%s: single: %v", name, err)
	}
	fmt.Fprintf(&got, "single\n%s", b)
	wt := rd.newTableWith(listMeta{rv: "201"}, false)
	for _, it := range items {
		if err := wt.addRow(it.Value); err != nil {
			t.Fatalf("%s: watch row: %v", name, err)
		}
	}
	fmt.Fprintf(&got, "watch rows\n%s", wt.finish())
	// A long list is rendered in parts by several goroutines.
	long := make([]bolt.KV, 0, 3*minItemsPerWorker)
	for len(long) < cap(long) {
		long = append(long, items...)
	}
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	rd = tablePinRenderer(t, h, d, out, "")
	b, err = rd.list(listMeta{rv: "202"}, long)
	if err != nil {
		t.Fatalf("%s: long list: %v", name, err)
	}
	fmt.Fprintf(&got, "long list of %d rows: sha256 %x\n", len(long), sha256.Sum256(b))
	for range 2 { // the second reuses the first's buffers
		w := httptest.NewRecorder()
		h.streamTable(w, httptest.NewRequest("GET", "/x", nil), rd, listMeta{rv: "202"}, long)
		if !bytes.Equal(w.Body.Bytes(), b) {
			t.Fatalf("%s: streamed long list differs from the list", name)
		}
	}

	path := filepath.Join("testdata", "tablepin", name+".golden")
	if *updateTablePin {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s: line %d differs:\n got %s\nwant %s", name, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s: %d lines, want %d", name, len(gl), len(wl))
	}
}

func tablePinRenderer(t *testing.T, h *Handler, d *registry.Descriptor, out output, include string) *renderer {
	t.Helper()
	target := "/x"
	if include != "" {
		target += "?includeObject=" + include
	}
	rd, err := h.newRenderer(httptest.NewRequest("GET", target, nil), d, out)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}
