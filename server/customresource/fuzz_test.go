package customresource

import (
	"bytes"
	"testing"

	"platd/server/jsonschema"
	"platd/server/schema"
)

// testMeta stands for object metadata, which a custom resource's schema
// cannot change.
func testMeta() *schema.Schema {
	str := &schema.Schema{Type: schema.String}
	return (&schema.Schema{Name: "ObjectMeta", Type: schema.Object, Fields: []*schema.Field{
		{Name: "name", Schema: str, OmitEmpty: true},
		{Name: "labels", Schema: &schema.Schema{Type: schema.Map, Elem: str}, OmitEmpty: true},
	}})
}

// FuzzCustomResourceDecode decodes arbitrary objects against arbitrary
// CRD schemas: nothing panics, and what is stored reads back as itself.
func FuzzCustomResourceDecode(f *testing.F) {
	f.Add(`{"type":"object","properties":{"spec":{"type":"object","properties":{"n":{"type":"integer","default":1},"s":{"type":"string","nullable":true}}}}}`,
		`{"apiVersion":"a/v1","kind":"K","metadata":{"name":"x"},"spec":{"s":null,"q":1}}`)
	f.Add(`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}}},"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"]}}}`,
		`{"l":[{"k":"a","z":1},null,"str"]}`)
	f.Add(`{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"m":{"type":"object","additionalProperties":{"type":"integer","nullable":true}}}}`,
		`{"m":{"a":null,"b":2},"free":{"x":[1,{"y":null}]}}`)
	f.Add(`{"type":"object","properties":{"e":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"spec":{"type":"string"}}}}}`,
		`{"e":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","bogus":1},"spec":3}}`)
	meta := testMeta()
	meta.Seal()
	f.Fuzz(func(t *testing.T, schemaJSON, objJSON string) {
		p, err := jsonschema.ParseJSON([]byte(schemaJSON))
		if err != nil {
			return
		}
		s := structure(p, meta)
		s.Published = published(nil)
		s.Seal()
		dec, err := schema.Decode([]byte(objJSON), s)
		if err != nil {
			return
		}
		obj := dec.Object
		schema.ApplyDefaults(obj, s)
		_ = jsonschema.Validate(p, obj)
		enc := schema.Encode(nil, obj, s)
		back, err := schema.DecodeStored(enc, s)
		if err != nil {
			t.Fatalf("stored form %s does not decode: %v", enc, err)
		}
		if again := schema.Encode(nil, back, s); !bytes.Equal(again, enc) {
			t.Fatalf("stored form changes when read back:\n%s\n%s", enc, again)
		}
		if canon := schema.Encode(nil, schema.Canonical(obj, s), s); !bytes.Equal(canon, enc) {
			t.Fatalf("canonical form differs from the stored one:\n%s\n%s", canon, enc)
		}
	})
}
