package rest

import (
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"platd/codec"
	"platd/config"
	"platd/server/builtin"
	"platd/server/registry"
	"platd/server/schema"
)

// TestCBORStructOf builds the strict-check shape of every built-in type
// and checks what it finds.
func TestCBORStructOf(t *testing.T) {
	br, _ := config.LookupBrand("plat")
	cat, err := schema.Load(br)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	if err := builtin.Register(reg, cat, br); err != nil {
		t.Fatal(err)
	}
	empty, _ := codec.JSONToCBOR(nil, []byte(`{"kind":"X","apiVersion":"v","metadata":{"name":"n","labels":{"a":"b"}}}`))
	for _, d := range reg.All() {
		if d.Schema == nil {
			continue
		}
		if err := codec.CBORUnknownField(empty, cborStructOf(d.Schema)); err != nil {
			t.Errorf("%s: %v", d.Kind, err)
		}
	}
	cm := reg.Lookup("", "v1", "configmaps").Schema
	for _, tc := range []struct{ json, want string }{
		{`{"data":{"a":"b"},"binaryData":{"c":"ZA=="},"immutable":true}`, ""},
		// Keys sort shorter first: kind, extra, metadata.
		{`{"kind":"ConfigMap","extra":1,"metadata":{}}`, "cbor: found unknown field at map element index 1"},
		{`{"metadata":{"name":"x","ownerReferences":[{"kind":"k","bogus":1}]}}`, "cbor: found unknown field at map element index 1"},
		// Values of the wrong type are not this check's business.
		{`{"data":7}`, ""},
	} {
		b, _ := codec.JSONToCBOR(nil, []byte(tc.json))
		got := ""
		if err := codec.CBORUnknownField(b, cborStructOf(cm)); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.json, got, tc.want)
		}
	}
}

// TestCBORResponses checks the shapes a CBOR response takes through the
// handler's writers.
func TestCBORResponses(t *testing.T) {
	h, d := configMapHandler(t)
	items := benchItems(t, d, 2)
	r := httptest.NewRequest("GET", "/api/v1/namespaces/bench/configmaps/x", nil)
	w := httptest.NewRecorder()
	h.writeObject(w, r, output{format: formatCBOR}, http.StatusOK, d, items[0].Value)
	if w.Header().Get("Content-Type") != codec.CBORMediaType || !codec.HasCBORPrefix(w.Body.Bytes()) {
		t.Fatalf("object: %s % x", w.Header().Get("Content-Type"), w.Body.Bytes()[:8])
	}
	j, err := codec.CBORToJSON(w.Body.Bytes())
	if err != nil || !strings.Contains(string(j), `"kind":"ConfigMap"`) {
		t.Errorf("object: %s %v", j, err)
	}
	// ConfigMap binaryData is bytes: tag 22 (0xd6) before the byte string.
	obj := Object{"metadata": map[string]any{"name": "b"}, "binaryData": map[string]any{"k": "AAE="}}
	w = httptest.NewRecorder()
	h.writeObject(w, r, output{format: formatCBOR}, http.StatusOK, d, schema.Encode(nil, obj, d.Schema))
	if !strings.Contains(hex.EncodeToString(w.Body.Bytes()), "416bd6420001") {
		t.Errorf("binaryData not tagged bytes: %x", w.Body.Bytes())
	}
}
