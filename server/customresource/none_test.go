package customresource

import (
	"context"
	"reflect"
	"testing"

	"platd/config"
	"platd/server/jsonschema"
	"platd/server/registry"
)

// testDefinition is a definition of kind K in group g with versions v1
// and v2 (v2's spec.n defaults to 1), storage storage, served as given.
func testDefinition(t *testing.T, storage string, webhook bool) *Definition {
	t.Helper()
	v1, err := jsonschema.ParseJSON([]byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{"s":{"type":"string"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	v2, err := jsonschema.ParseJSON([]byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{"n":{"type":"integer","default":1}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	return &Definition{Group: "g", Plural: "ks", Singular: "k", Kind: "K", ListKind: "KList", Namespaced: true,
		Webhook: webhook, WebhookClientConfig: map[string]any{"url": "https://127.0.0.1:1"}, ReviewVersions: []string{"v1"},
		Versions: []Version{
			{Name: "v1", Served: true, Storage: storage == "v1", Schema: v1},
			{Name: "v2", Served: true, Storage: storage == "v2", Schema: v2},
		}}
}

// TestDescriptorsNameStoredVersions checks that under either conversion
// strategy every served version converts with one converter, and the
// stored form with its own, so that objects are stored naming their
// version.
func TestDescriptorsNameStoredVersions(t *testing.T) {
	t.Parallel()
	meta := testMeta()
	meta.Seal()
	b := NewBuilder(meta, config.Brand{})
	for _, webhook := range []bool{false, true} {
		def := testDefinition(t, "v2", webhook)
		ds, err := b.Descriptors(def)
		if err != nil || len(ds) != 2 || ds[0].Version != "v2" {
			t.Fatalf("descriptors: %v %v", ds, err)
		}
		st, err := b.StorageDescriptor(def)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range append(ds, st) {
			s := d.Storage
			if s == nil || s.Converter == nil || d != st && s.Converter != ds[0].Storage.Converter || s.Descriptor.Version != "v2" {
				t.Errorf("webhook %v: %s/%s stored as %+v", webhook, d.Group, d.Version, s)
			}
		}
		_, isNone := ds[0].Storage.Converter.(*noneConverter)
		if isNone == webhook {
			t.Errorf("webhook %v: converter %T", webhook, ds[0].Storage.Converter)
		}
	}
}

// TestNoneConverter checks conversion strategy None: only apiVersion
// changes, but for the storage version's defaults an object converted
// into it gets, and versions the definition does not have are refused.
func TestNoneConverter(t *testing.T) {
	t.Parallel()
	meta := testMeta()
	meta.Seal()
	ds, err := NewBuilder(meta, config.Brand{}).Descriptors(testDefinition(t, "v2", false))
	if err != nil {
		t.Fatal(err)
	}
	cv := ds[0].Storage.Converter
	if cv.Schema("v1") != ds[1].Schema || cv.Schema("v2") != ds[0].Schema || cv.Schema("v3") != nil {
		t.Errorf("schemas: each version's objects decode with that version's schema")
	}
	obj := func(gv string, spec map[string]any) registry.Object {
		return registry.Object{"apiVersion": gv, "kind": "K", "metadata": map[string]any{"name": "a"}, "spec": spec}
	}
	for _, tt := range []struct {
		in   registry.Object
		to   string
		want registry.Object
		err  string
	}{
		{obj("g/v1", map[string]any{"s": "x"}), "g/v2", obj("g/v2", map[string]any{"s": "x", "n": int64(1)}), ""},
		{obj("g/v2", map[string]any{"s": "x"}), "g/v1", obj("g/v1", map[string]any{"s": "x"}), ""},
		{obj("g/v2", map[string]any{}), "g/v2", obj("g/v2", map[string]any{}), ""},
		{obj("g/v3", map[string]any{}), "g/v2", nil, "request to convert CR from an invalid group/version: g/v3"},
		{obj("g/v1", map[string]any{}), "g/v3", nil, "request to convert CR to an invalid group/version: g/v3"},
		{obj("h/v1", map[string]any{}), "g/v2", nil, "request to convert CR from an invalid group/version: h/v1"},
	} {
		got, err := cv.Convert(context.Background(), tt.in, tt.to)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%v to %s: %v, want %q", tt.in["apiVersion"], tt.to, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v to %s: %v %v, want %v", tt.in["apiVersion"], tt.to, got, err, tt.want)
		}
	}
	list, err := cv.ConvertList(context.Background(), []registry.Object{obj("g/v1", map[string]any{}), obj("g/v2", map[string]any{})}, "g/v1")
	if err != nil || len(list) != 2 || list[0]["apiVersion"] != "g/v1" || list[1]["apiVersion"] != "g/v1" {
		t.Errorf("list: %v %v", list, err)
	}
}
