package codec

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzCBORToJSON feeds arbitrary bytes to the CBOR request decoder. It
// must never panic; what it accepts must be valid JSON that survives the
// trip back through CBOR unchanged; what it refuses must be an ErrCBOR.
// The seed corpus is under testdata/fuzz/FuzzCBORToJSON.
func FuzzCBORToJSON(f *testing.F) {
	for _, doc := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"a":"b"}},"data":{"k":"v"}}`,
		`{"a":[1,-2,1.5,0.1,true,false,null,"",{},[]]}`,
		`{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}}`,
	} {
		b, err := JSONToCBOR(nil, []byte(doc))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The first look at a body refuses some items the full decode
		// takes (a tagged map key, as upstream's), so only its errors
		// are checked.
		if _, _, err := CBORTypeMeta(data); err != nil && !errors.Is(err, ErrCBOR) {
			t.Fatalf("type meta error %v is not an ErrCBOR", err)
		}
		j, err := CBORToJSON(data)
		if err != nil {
			if !errors.Is(err, ErrCBOR) {
				t.Fatalf("error %v is not an ErrCBOR", err)
			}
			return
		}
		if !json.Valid(j) {
			t.Fatalf("invalid JSON %q from % x", j, data)
		}
		c, err := JSONToCBOR(nil, j)
		if err != nil {
			t.Fatalf("re-encoding %s: %v", j, err)
		}
		// Compared as values: an invalid UTF-8 byte string comes out as an
		// escaped U+FFFD the first time, a literal one the second.
		j2, err := CBORToJSON(c)
		var v1, v2 any
		_ = json.Unmarshal(j, &v1)
		_ = json.Unmarshal(j2, &v2)
		if err != nil || !reflect.DeepEqual(v1, v2) {
			t.Fatalf("round trip of %s gave %s %v", j, j2, err)
		}
	})
}
