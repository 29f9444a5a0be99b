package schema

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzDecode checks that Decode never panics and that Decode → Encode →
// Decode → Encode is stable.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"metadata":{"name":"a","labels":{"x":"\ud800"}},"data":{"k":1},"binaryData":{"b":"AA=="}}`))
	f.Add([]byte(`{"spec":{"limits":[{"max":{"cpu":"0.1"},"type":"Pod","x":[1,2.5e3,true,null]}]}}`))
	c := testCatalog(f, "kubernetes")
	schemas := []*Schema{
		c.ByGVK("", "v1", "ConfigMap"), c.ByGVK("", "v1", "LimitRange"), c.ByGVK("", "v1", "Pod"),
		c.ByGVK(kn("apiextensions.@D@"), "v1", "CustomResourceDefinition"),
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range schemas {
			d, err := Decode(data, s)
			if err != nil {
				continue
			}
			enc := Encode(nil, d.Object, s)
			d2, err := Decode(enc, s)
			if err != nil {
				t.Fatalf("re-decode of %s: %v", enc, err)
			}
			if len(d2.Unknown) > 0 || len(d2.Duplicates) > 0 {
				t.Fatalf("re-decode of %s reports %v %v", enc, d2.Unknown, d2.Duplicates)
			}
			enc2 := Encode(nil, d2.Object, s)
			if !bytes.Equal(enc, enc2) {
				t.Fatalf("unstable encoding\n 1: %s\n 2: %s", enc, enc2)
			}
			if !reflect.DeepEqual(Encode(nil, d2.Object, s), enc2) {
				t.Fatal("encode not deterministic")
			}
		}
	})
}

// FuzzDecodeStored: DecodeStored, DecodeStoredShared and
// DecodeStoredAliased yield Decode's object, or Decode's error, and so
// does DecodeOwned with Decode's whole result.
func FuzzDecodeStored(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"metadata":{"name":"a","name":"b","labels":{"x":"\ud800","x":"y"}},"data":{"k":1},"binaryData":{"b":"AA=="}}`))
	f.Add([]byte(`{"spec":{"limits":[{"max":{"cpu":"0.1"},"type":"Pod","x":[1,2.5e3,true,null]}]}}`))
	f.Add([]byte(`{"kind":"ConfigMap","metadata":{"managedFields":[{"fieldsV1":{"f:a":{"k:{\"x\":1}":{}}}}]},"data":{"\u00e9":"\"q\""}}`))
	c := testCatalog(f, "kubernetes")
	schemas := []*Schema{
		c.ByGVK("", "v1", "ConfigMap"), c.ByGVK("", "v1", "LimitRange"), c.ByGVK("", "v1", "Pod"),
		c.ByGVK(kn("apiextensions.@D@"), "v1", "CustomResourceDefinition"),
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range schemas {
			want, werr := Decode(data, s)
			own, oerr := DecodeOwned(bytes.Clone(data), s)
			switch {
			case werr != nil || oerr != nil:
				if werr == nil || oerr == nil || werr.Error() != oerr.Error() {
					t.Fatalf("%s: errors differ: Decode %v, DecodeOwned %v", data, werr, oerr)
				}
			case !reflect.DeepEqual(own, want):
				t.Fatalf("%s:\nDecodeOwned %#v\nDecode      %#v", data, own, want)
			}
			for _, decode := range []func([]byte, *Schema) (map[string]any, error){DecodeStored, DecodeStoredShared, DecodeStoredAliased} {
				got, gerr := decode(data, s)
				switch {
				case werr != nil || gerr != nil:
					if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
						t.Fatalf("%s: errors differ: Decode %v, DecodeStored %v", data, werr, gerr)
					}
				case !reflect.DeepEqual(got, want.Object):
					t.Fatalf("%s:\nDecodeStored %#v\nDecode       %#v", data, got, want.Object)
				}
			}
		}
	})
}
