package protobuf

import (
	"math"
	"reflect"
	"testing"

	"platd/config"
	"platd/server/schema"
)

// fuzzKinds are the schemas FuzzUnmarshal decodes against: flat, deeply
// nested with inline members, hand-encoded types, and the cyclic
// JSONSchemaProps graph.
var fuzzKinds = []struct{ group, version, kind string }{
	{"", "v1", "ConfigMap"},
	{"", "v1", "Pod"},
	{"", "v1", "Event"},
	{"", "v1", "LimitRange"},
	{"apiextensions", "v1", "CustomResourceDefinition"},
	{"authentication", "v1", "TokenReview"},
	{"apps", "v1", "ControllerRevision"},
}

// FuzzUnmarshal: no input panics, and whatever decodes re-encodes and
// decodes to the same object.
func FuzzUnmarshal(f *testing.F) {
	b, _ := config.LookupBrand("plat")
	schemas := make([]*schema.Schema, len(fuzzKinds))
	for i, k := range fuzzKinds {
		g := k.group
		if g != "" && g != "apps" {
			g = b.Group(g)
		}
		schemas[i] = kindSchema(f, g, k.version, k.kind)
	}
	_, _, raw := unwrap(f, readTestdata(f, "configmap-get.pb"))
	f.Add(uint8(0), raw)
	for _, tc := range roundTrips {
		for i, k := range fuzzKinds {
			if k.kind != tc.kind {
				continue
			}
			dec, err := schema.Decode([]byte(tc.json), schemas[i])
			if err != nil {
				f.Fatal(err)
			}
			pb, err := Marshal(nil, dec.Object, schemas[i])
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), pb)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		s := schemas[int(which)%len(schemas)]
		obj, err := Unmarshal(raw, s)
		if err != nil {
			return
		}
		pb, err := Marshal(nil, obj, s)
		if err != nil {
			t.Fatalf("decoded object does not encode: %v\n%#v", err, obj)
		}
		back, err := Unmarshal(pb, s)
		if err != nil {
			t.Fatalf("re-encoded object does not decode: %v", err)
		}
		if !reflect.DeepEqual(wholeNumbers(back), wholeNumbers(obj)) {
			t.Fatalf("unstable round trip\nfirst  %#v\nsecond %#v", obj, back)
		}
	})
}

// wholeNumbers turns every float64 that holds a whole number within int64
// into that int64. JSON writes such a float as an integer (1e6 as 1000000,
// as encoding/json does), which reads back as int64: the same number, in
// the form a decode of that JSON gives.
func wholeNumbers(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && x >= math.MinInt64 && x < math.MaxInt64 {
			return int64(x)
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = wholeNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = wholeNumbers(e)
		}
		return out
	}
	return v
}
