package jsonschema

import (
	"slices"
	"testing"

	"platd/server/apierr"
)

const root = "spec.validation.openAPIV3Schema"

func allRules() SchemaOptions {
	return SchemaOptions{RequireValidPropertyType: true, RequireAtomicSetType: true, RequireMapListKeysMapSetValidation: true}
}

func TestValidateCRDSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema string
		status bool
		want   []string
	}{
		{"valid", `{"type":"object","properties":{"spec":{"type":"object","properties":{
			"replicas":{"type":"integer","default":1,"minimum":0},
			"port":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
			"labels":{"type":"object","additionalProperties":{"type":"string"}},
			"any":{"x-kubernetes-preserve-unknown-fields":true},
			"ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
			  "items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}},
			"tags":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},
			"template":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}},
			"oneOf":[{"required":["replicas"]},{"required":["port"]}]},
			"metadata":{"type":"object","properties":{"name":{"type":"string","maxLength":20}}}}}`, false, nil},
		{"untyped", `{"properties":{"spec":{"properties":{"a":{}},"type":"object"},"list":{"type":"array","items":{}},"bare":{"type":"array"}}}`, false, []string{
			root + ".properties[bare].items: Required value: must be specified",
			root + ".properties[list].items.type: Required value: must not be empty for specified array items",
			root + ".properties[spec].properties[a].type: Required value: must not be empty for specified object fields",
			root + ".type: Required value: must not be empty at the root",
		}},
		{"root type", `{"type":"array","items":{"type":"string"}}`, false, []string{
			root + `.type: Invalid value: "array": must be object at the root`,
		}},
		{"additionalProperties with properties", `{"type":"object","properties":{"m":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}}}`, false, []string{
			root + ".properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
		}},
		{"additionalProperties at the root", `{"type":"object","additionalProperties":{"type":"string"}}`, false, []string{
			root + ".additionalProperties: Forbidden: must not be used at the root",
		}},
		{"unsupported keywords", `{"type":"object","properties":{"a":{"type":"string","uniqueItems":true,"$ref":"#/x","id":"x"},"b":{"type":"null"}}}`, false, []string{
			root + ".properties[a].id: Forbidden: id is not supported",
			root + ".properties[a].$ref: Forbidden: $ref is not supported",
			root + ".properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
			root + `.properties[b].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
			root + ".properties[b].type: Forbidden: type cannot be set to null, use nullable as an alternative",
		}},
		{"items array", `{"type":"object","properties":{"a":{"type":"array","items":[{"type":"string"}]}}}`, false, []string{
			root + ".properties[a].items: Forbidden: items must be a schema object and not an array",
		}},
		{"only $schema", `{"type":"object","$schema":"http://json-schema.org/draft-04/schema#"}`, false, []string{
			root + `: Invalid value: "": OpenAPIV3Schema 'schema' is not supported`,
		}},
		{"value validation", `{"type":"object","properties":{"a":{"type":"string"}},"anyOf":[{"type":"object","properties":{"a":{"description":"x","default":"d"},"b":{"pattern":"["}}}],
			"not":{"x-kubernetes-preserve-unknown-fields":true,"properties":{"metadata":{}}}}`, false, []string{
			root + ".anyOf[0].properties[a].default: Forbidden: must be undefined to be structural",
			root + ".anyOf[0].properties[a].description: Forbidden: must be empty to be structural",
			root + ".anyOf[0].properties[b].pattern: Invalid value: \"[\": must be a valid regular expression, but isn't: error parsing regexp: missing closing ]: `[`",
			root + ".anyOf[0].type: Forbidden: must be empty to be structural",
			root + ".not.properties[metadata]: Forbidden: must not be specified in a nested context",
			root + ".not.x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural",
			root + ".properties[b]: Required value: because it is defined in " + root + ".anyOf[0].properties[b]",
			root + ".properties[metadata]: Required value: because it is defined in " + root + ".not.properties[metadata]",
		}},
		{"additionalProperties false in a junctor", `{"type":"object","properties":{"a":{"type":"object","additionalProperties":{"type":"string"}}},
			"allOf":[{"properties":{"a":{"additionalProperties":false}}},{"properties":{"a":{"additionalProperties":true}}}]}`, false, []string{
			root + ".allOf[1].properties[a].additionalProperties: Forbidden: must be undefined to be structural",
		}},
		{"int-or-string", `{"type":"object","properties":{
			"a":{"x-kubernetes-int-or-string":true,"x-kubernetes-preserve-unknown-fields":true},
			"b":{"x-kubernetes-int-or-string":true,"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]},{"maxLength":3}]},
			"c":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"boolean"}]}}}`, false, []string{
			root + ".properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true",
			root + ".properties[c].anyOf[0].type: Forbidden: must be empty to be structural",
			root + ".properties[c].anyOf[1].type: Forbidden: must be empty to be structural",
		}},
		{"embedded resource", `{"type":"object","properties":{"a":{"x-kubernetes-embedded-resource":true},
			"b":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"kind":{"type":"integer"},"metadata":{"type":"string"}}}}}`, false, []string{
			root + ".properties[a].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
			root + ".properties[a].type: Required value: must be object if x-kubernetes-embedded-resource is true",
			root + `.properties[b].properties[kind].type: Invalid value: "integer": must be string`,
			root + `.properties[b].properties[metadata].type: Invalid value: "string": must be object`,
		}},
		{"metadata at the root", `{"type":"object","properties":{"metadata":{"type":"object","properties":{"name":{"type":"string"},"labels":{"type":"object"}}}}}`, false, []string{
			root + ".properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
		}},
		{"defaults in metadata", `{"type":"object","properties":{"metadata":{"type":"object","properties":{"name":{"type":"string","default":"x"}}},
			"kind":{"type":"string","default":"K"}}}`, false, []string{
			root + ".properties[kind].default: Forbidden: must not be set in top-level kind",
			root + ".properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata",
		}},
		{"list types", `{"type":"object","properties":{
			"a":{"type":"string","x-kubernetes-list-type":"set"},
			"b":{"type":"array","x-kubernetes-list-type":"bag","items":{"type":"string"}},
			"c":{"type":"array","x-kubernetes-list-map-keys":["k"],"items":{"type":"object","properties":{"k":{"type":"string"}}}},
			"d":{"type":"array","x-kubernetes-list-type":"map","items":{"type":"string"}},
			"e":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k","z","k"],"items":{"type":"object","properties":{"k":{"type":"object"}}}},
			"f":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"object","nullable":true}},
			"g":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"items":{"type":"object","properties":{"k":{"type":"string","nullable":true}}}}}}`, false, []string{
			root + `.properties[a].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified`,
			root + `.properties[b].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`,
			root + ".properties[c].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty",
			root + ".properties[d].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map",
			root + `.properties[d].items.type: Invalid value: "string": must be object if parent array's x-kubernetes-list-type is map`,
			root + `.properties[e].items.properties[k].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map`,
			root + `.properties[e].x-kubernetes-list-map-keys: Invalid value: []string{"k", "z", "k"}: entries must all be names of item properties`,
			root + `.properties[e].items.properties[k].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map`,
			root + `.properties[e].x-kubernetes-list-map-keys: Invalid value: []string{"k", "z", "k"}: must not contain duplicate entries`,
			root + ".properties[e].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
			// Upstream reports each listed key, repeats too.
			root + ".properties[e].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
			root + `.properties[f].items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set`,
			root + ".properties[f].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is set",
			root + ".properties[g].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
			root + ".properties[g].items.properties[k].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
		}},
		{"map type and preserve false", `{"type":"object","properties":{"a":{"type":"string","x-kubernetes-map-type":"loose","x-kubernetes-preserve-unknown-fields":false}}}`, false, []string{
			root + `.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`,
			root + `.properties[a].type: Invalid value: "string": must be object if x-kubernetes-map-type is specified`,
			root + `.properties[a].x-kubernetes-map-type: Unsupported value: "loose": supported values: "atomic", "granular"`,
		}},
		{"validation rules", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"n":{"type":"string"}}}}},
			"x-kubernetes-validations":[{"rule":" "},{"rule":"a\nb"},{"rule":"x","message":"a\nb","reason":"Bad","fieldPath":" "},
			{"rule":"y","fieldPath":".l[0].n"},{"rule":"z","fieldPath":".l.m"}]}`, false, []string{
			root + ".x-kubernetes-validations[0].rule: Required value: rule is not specified",
			root + ".x-kubernetes-validations[1].message: Required value: message must be specified if rule contains line breaks",
			root + ".x-kubernetes-validations[2].message: Invalid value: \"a\\nb\": message must not contain line breaks",
			root + `.x-kubernetes-validations[2].reason: Unsupported value: "Bad": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
			root + `.x-kubernetes-validations[2].fieldPath: Invalid value: " ": fieldPath must be non-empty if specified`,
			root + `.x-kubernetes-validations[2].fieldPath: Invalid value: " ": fieldPath must be a valid path`,
			root + `.x-kubernetes-validations[3].fieldPath: Invalid value: ".l[0].n": fieldPath must be a valid path`,
			root + `.x-kubernetes-validations[4].fieldPath: Invalid value: ".l.m": fieldPath must be a valid path`,
		}},
		{"status subresource root", `{"type":"object","nullable":true,"properties":{"a":{"type":"string"}}}`, true, []string{
			root + `: Invalid value: "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"nullable\":true}": only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled`,
			root + ".nullable: Forbidden: nullable cannot be true at the root",
		}},
	}
	for _, tt := range tests {
		p, err := ParseJSON([]byte(tt.schema))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		o := allRules()
		o.StatusSubresource = tt.status
		var got []string
		for _, e := range ValidateCRDSchema(p, root, o) {
			got = append(got, e.Error())
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got  %q\n want %q", tt.name, got, tt.want)
		}
	}
}

func TestRulesHook(t *testing.T) {
	t.Parallel()
	p, _ := ParseJSON([]byte(`{"type":"object","x-kubernetes-validations":[{"rule":"r0"}],"properties":{
		"c":{"type":"string","uniqueItems":true}}}`))
	calls := 0
	o := allRules()
	o.Rules = func(n *Props, path string) apierr.FieldErrors {
		calls++
		return apierr.FieldErrors{apierr.Invalid(path, n.XValidations[0].Rule, "compiled")}
	}
	if errs := ValidateCRDSchema(p, "s", o); len(errs) != 1 || calls != 0 {
		t.Errorf("rules compiled beside other errors: %v", errs)
	}
	p.Properties["c"] = Props{Type: "string"}
	if errs := ValidateCRDSchema(p, "s", o); len(errs) != 1 || errs[0].Error() != `s: Invalid value: "r0": compiled` {
		t.Errorf("rules: %v", errs)
	}
}

func TestStructuralReportsWhyNot(t *testing.T) {
	t.Parallel()
	p, _ := ParseJSON([]byte(`{"type":"object","properties":{"a":{"type":"object","definitions":{"x":{}}}}}`))
	got := Structural(p, "spec.versions[0].schema.openAPIV3Schema")
	if len(got) != 1 || got[0].Error() != `spec.versions[0].schema.openAPIV3Schema: Invalid value: "": OpenAPIV3Schema 'definitions' is not supported` {
		t.Errorf("got %v", got)
	}
	p, _ = ParseJSON([]byte(`{"type":"object","properties":{"a":{}}}`))
	if got := Structural(p, "s"); len(got) != 1 || got[0].Error() != "s.properties[a].type: Required value: must not be empty for specified object fields" {
		t.Errorf("got %v", got)
	}
}

func TestOptionsRelaxRules(t *testing.T) {
	t.Parallel()
	p, _ := ParseJSON([]byte(`{"type":"object","properties":{"s":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"object","nullable":true}},"w":{"type":"whatever"}}}`))
	if errs := ValidateCRDSchema(p, root, SchemaOptions{}); len(errs) != 0 {
		t.Errorf("relaxed: %v", errs)
	}
	if !HasInvalidType(p) || !HasNonAtomicSetItems(p) || !HasInvalidMapListKeys(p) || HasDefault(p) {
		t.Error("predicates disagree with the schema")
	}
}

func TestValidFieldPath(t *testing.T) {
	t.Parallel()
	p, _ := ParseJSON([]byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{"a.b":{"type":"string"},
		"m":{"type":"object","additionalProperties":{"type":"integer"}}}}}}`))
	for _, c := range []struct {
		path, want, typ, err string
		brackets             bool
	}{
		{".spec['a.b']", "spec.a.b", "string", "", true},
		{".spec.m.any", "spec.m[any]", "integer", "", false},
		{".spec.m['k\\'s']", "spec.m[k's]", "integer", "", true},
		{".spec.m['a\\']", "", "", `expected single quoted string but got 'a\']`, true},
		{".spec['a.b']", "", "", "array notation is not allowed", false},
		{".spec.x", "", "", "does not refer to a valid field", true},
		{"spec", "", "", "expected [ or . but got: spec", true},
		{".spec[0]", "", "", "expected single quoted string but got 0", true},
		{".spec['a.b'", "", "", "unexpected end of JSON path", true},
		{".", "", "", "unexpected end of JSON path", true},
		{".spec['\\q']", "", "", `invalid string literal: invalid escape char \q`, true},
	} {
		got, s, err := ValidFieldPath(c.path, p, c.brackets)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %q", c.path, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want || s.Type != c.typ {
			t.Errorf("%q: %q %v %v", c.path, got, s, err)
		}
	}
}

func FuzzValidateCRDSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}}},"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"]}}}`,
		`{"anyOf":[{"properties":{"metadata":{"not":{}}}}],"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]}],"x-kubernetes-int-or-string":true}`,
		`{"type":"object","properties":{"metadata":{"type":"object","additionalProperties":{"default":1}}},"items":[{}],"dependencies":{"a":["b"],"c":{}}}`,
		`{"type":"object","x-kubernetes-validations":[{"rule":"self.a","fieldPath":"\n"}],"additionalProperties":false,"properties":{"x":{"x-kubernetes-embedded-resource":true}}}`,
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, raw []byte, status bool) {
		p, err := ParseJSON(raw)
		if err != nil {
			return
		}
		o := allRules()
		o.StatusSubresource = status
		ValidateCRDSchema(p, root, o)
		Structural(p, root)
		ValidFieldPath(string(raw), p, status)
	})
}
