package schema

import (
	"testing"
	"unsafe"
)

// The decoders that take over their input make no copy of it: a string
// without escapes is a slice of the input, one with escapes a string of its
// own.
func TestDecodeAliasesInput(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	cm := c.Schema(kn("@R@.api.core.v1.ConfigMap"))
	const in = `{"metadata":{"name":"plain"},"data":{"a":"long plain value","b":"esc\"aped"}}`
	inside := func(s string, data []byte) bool {
		p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(&data[0]))
		return p >= lo && p < lo+uintptr(len(data))
	}
	check := func(name string, data []byte, obj map[string]any) {
		t.Helper()
		d := obj["data"].(map[string]any)
		if a := d["a"].(string); a != "long plain value" || !inside(a, data) {
			t.Errorf("%s: %q is not a slice of the input", name, a)
		}
		if b := d["b"].(string); b != `esc"aped` || inside(b, data) {
			t.Errorf("%s: unescaped %q aliases the input", name, b)
		}
	}
	data := []byte(in)
	dec, err := DecodeOwned(data, cm)
	if err != nil {
		t.Fatal(err)
	}
	check("DecodeOwned", data, dec.Object)
	data = []byte(in)
	obj, err := DecodeStoredAliased(data, cm)
	if err != nil {
		t.Fatal(err)
	}
	check("DecodeStoredAliased", data, obj)
	// Decode copies: its strings never point into the caller's buffer.
	data = []byte(in)
	if dec, err = Decode(data, cm); err != nil || inside(dec.Object["data"].(map[string]any)["a"].(string), data) {
		t.Errorf("Decode aliases its input (err %v)", err)
	}
}
