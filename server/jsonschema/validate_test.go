package jsonschema

import (
	"strings"
	"testing"

	"platd/server/apierr"
	"platd/server/schema"
)

// render lists the errors as upstream prints each one.
func render(errs apierr.FieldErrors) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

func mustParse(t testing.TB, raw string) *Props {
	t.Helper()
	p, err := ParseJSON([]byte(raw))
	if err != nil {
		t.Fatalf("schema %s: %v", raw, err)
	}
	return p
}

func mustDecode(t testing.TB, raw string) map[string]any {
	t.Helper()
	v, err := schema.DecodeAny([]byte(raw))
	if err != nil {
		t.Fatalf("object %s: %v", raw, err)
	}
	return v.(map[string]any)
}

// spec wraps a schema for spec.x into a root schema.
func spec(x string) string {
	return `{"type":"object","properties":{"spec":{"type":"object","properties":{"x":` + x + `}}}}`
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		obj    string
		want   []string
	}{
		// types
		{"integer ok", spec(`{"type":"integer"}`), `{"spec":{"x":3}}`, nil},
		{"integer from string", spec(`{"type":"integer"}`), `{"spec":{"x":"3"}}`,
			[]string{`spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"`}},
		{"integer from whole float", spec(`{"type":"integer"}`), `{"spec":{"x":3.0}}`, nil},
		{"integer from fraction", spec(`{"type":"integer"}`), `{"spec":{"x":3.5}}`,
			[]string{`spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"`}},
		{"number takes integer", spec(`{"type":"number"}`), `{"spec":{"x":3}}`, nil},
		{"number from bool", spec(`{"type":"number"}`), `{"spec":{"x":true}}`,
			[]string{`spec.x: Invalid value: "boolean": spec.x in body must be of type number: "boolean"`}},
		{"string from object", spec(`{"type":"string"}`), `{"spec":{"x":{}}}`,
			[]string{`spec.x: Invalid value: "object": spec.x in body must be of type string: "object"`}},
		{"object from array", spec(`{"type":"object"}`), `{"spec":{"x":[]}}`,
			[]string{`spec.x: Invalid value: "array": spec.x in body must be of type object: "array"`}},
		{"boolean from number", spec(`{"type":"boolean"}`), `{"spec":{"x":1}}`,
			[]string{`spec.x: Invalid value: "integer": spec.x in body must be of type boolean: "integer"`}},
		{"null refused", spec(`{"type":"string"}`), `{"spec":{"x":null}}`,
			[]string{`spec.x: Invalid value: "null": spec.x in body must be of type string: "null"`}},
		{"null nullable", spec(`{"type":"string","nullable":true}`), `{"spec":{"x":null}}`, nil},
		{"int-or-string int", spec(`{"x-kubernetes-int-or-string":true}`), `{"spec":{"x":1}}`, nil},
		{"int-or-string string", spec(`{"x-kubernetes-int-or-string":true}`), `{"spec":{"x":"50%"}}`, nil},
		{"int-or-string bool", spec(`{"x-kubernetes-int-or-string":true}`), `{"spec":{"x":true}}`,
			[]string{`spec.x: Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean"`}},
		{"untyped preserves", spec(`{"x-kubernetes-preserve-unknown-fields":true}`), `{"spec":{"x":[1,"a"]}}`, nil},
		{"string format passes array", spec(`{"type":"string","format":"date"}`), `{"spec":{"x":[1]}}`, nil},
		{"integer format int32 ignores range", spec(`{"type":"integer","format":"int32"}`), `{"spec":{"x":9999999999}}`, nil},

		// formats
		{"date ok", spec(`{"type":"string","format":"date"}`), `{"spec":{"x":"2024-02-29"}}`, nil},
		{"date bad", spec(`{"type":"string","format":"date"}`), `{"spec":{"x":"2023-02-29"}}`,
			[]string{`spec.x: Invalid value: "2023-02-29": spec.x in body must be of type date: "2023-02-29"`}},
		{"date-time ok", spec(`{"type":"string","format":"date-time"}`), `{"spec":{"x":"2024-01-02T03:04:05.5Z"}}`, nil},
		{"date-time bad", spec(`{"type":"string","format":"date-time"}`), `{"spec":{"x":"2024-01-02 03:04:05"}}`,
			[]string{`spec.x: Invalid value: "2024-01-02 03:04:05": spec.x in body must be of type date-time: "2024-01-02 03:04:05"`}},
		{"duration go", spec(`{"type":"string","format":"duration"}`), `{"spec":{"x":"1h30m"}}`, nil},
		{"duration words", spec(`{"type":"string","format":"duration"}`), `{"spec":{"x":"3 days"}}`, nil},
		{"duration inside text", spec(`{"type":"string","format":"duration"}`), `{"spec":{"x":"in 3 days or so"}}`, nil},
		{"duration bad", spec(`{"type":"string","format":"duration"}`), `{"spec":{"x":"soon"}}`,
			[]string{`spec.x: Invalid value: "soon": spec.x in body must be of type duration: "soon"`}},
		{"ipv4 bad", spec(`{"type":"string","format":"ipv4"}`), `{"spec":{"x":"1.2.3"}}`,
			[]string{`spec.x: Invalid value: "1.2.3": spec.x in body must be of type ipv4: "1.2.3"`}},
		{"ipv4 leading zero", spec(`{"type":"string","format":"ipv4"}`), `{"spec":{"x":"010.1.2.3"}}`, nil},
		{"ipv6 ok", spec(`{"type":"string","format":"ipv6"}`), `{"spec":{"x":"fe80::1"}}`, nil},
		{"ipv6 given v4", spec(`{"type":"string","format":"ipv6"}`), `{"spec":{"x":"1.2.3.4"}}`,
			[]string{`spec.x: Invalid value: "1.2.3.4": spec.x in body must be of type ipv6: "1.2.3.4"`}},
		{"cidr ok", spec(`{"type":"string","format":"cidr"}`), `{"spec":{"x":"10.0.0.0/8"}}`, nil},
		{"cidr bad", spec(`{"type":"string","format":"cidr"}`), `{"spec":{"x":"10.0.0.0"}}`,
			[]string{`spec.x: Invalid value: "10.0.0.0": spec.x in body must be of type cidr: "10.0.0.0"`}},
		{"mac ok", spec(`{"type":"string","format":"mac"}`), `{"spec":{"x":"00:1a:2b:3c:4d:5e"}}`, nil},
		{"uuid ok", spec(`{"type":"string","format":"uuid"}`), `{"spec":{"x":"123E4567-e89b-12d3-a456-426614174000"}}`, nil},
		{"uuid4 given v1", spec(`{"type":"string","format":"uuid4"}`), `{"spec":{"x":"123e4567-e89b-12d3-a456-426614174000"}}`,
			[]string{`spec.x: Invalid value: "123e4567-e89b-12d3-a456-426614174000": spec.x in body must be of type uuid4: "123e4567-e89b-12d3-a456-426614174000"`}},
		{"hostname ok", spec(`{"type":"string","format":"hostname"}`), `{"spec":{"x":"a-b.example.com"}}`, nil},
		{"hostname numeric top-level domain", spec(`{"type":"string","format":"hostname"}`), `{"spec":{"x":"a.b1"}}`,
			[]string{`spec.x: Invalid value: "a.b1": spec.x in body must be of type hostname: "a.b1"`}},
		{"hostname bad", spec(`{"type":"string","format":"hostname"}`), `{"spec":{"x":"-a"}}`,
			[]string{`spec.x: Invalid value: "-a": spec.x in body must be of type hostname: "-a"`}},
		{"email", spec(`{"type":"string","format":"email"}`), `{"spec":{"x":"nope"}}`,
			[]string{`spec.x: Invalid value: "nope": spec.x in body must be of type email: "nope"`}},
		{"uri", spec(`{"type":"string","format":"uri"}`), `{"spec":{"x":"relative/path"}}`,
			[]string{`spec.x: Invalid value: "relative/path": spec.x in body must be of type uri: "relative/path"`}},
		{"byte", spec(`{"type":"string","format":"byte"}`), `{"spec":{"x":"aGk="}}`, nil},
		{"byte bad", spec(`{"type":"string","format":"byte"}`), `{"spec":{"x":"a"}}`,
			[]string{`spec.x: Invalid value: "a": spec.x in body must be of type byte: "a"`}},
		{"byte empty", spec(`{"type":"string","format":"byte"}`), `{"spec":{"x":""}}`,
			[]string{`spec.x: Invalid value: "": spec.x in body must be of type byte: ""`}},
		{"format on boolean kept", spec(`{"type":"boolean","format":"date"}`), `{"spec":{"x":"2024-01-01"}}`, nil},
		{"bsonobjectid", spec(`{"type":"string","format":"bsonobjectid"}`), `{"spec":{"x":"507f1f77bcf86cd799439011"}}`, nil},
		{"isbn13", spec(`{"type":"string","format":"isbn13"}`), `{"spec":{"x":"978-0321751041"}}`, nil},
		{"isbn10 bad", spec(`{"type":"string","format":"isbn10"}`), `{"spec":{"x":"0321751044"}}`,
			[]string{`spec.x: Invalid value: "0321751044": spec.x in body must be of type isbn10: "0321751044"`}},
		{"creditcard", spec(`{"type":"string","format":"creditcard"}`), `{"spec":{"x":"4111 1111 1111 1111"}}`, nil},
		{"ssn", spec(`{"type":"string","format":"ssn"}`), `{"spec":{"x":"123456789"}}`,
			[]string{`spec.x: Invalid value: "123456789": spec.x in body must be of type ssn: "123456789"`}},
		{"hexcolor", spec(`{"type":"string","format":"hexcolor"}`), `{"spec":{"x":"#ABC"}}`, nil},
		{"rgbcolor", spec(`{"type":"string","format":"rgbcolor"}`), `{"spec":{"x":"rgb(0,0,256)"}}`,
			[]string{`spec.x: Invalid value: "rgb(0,0,256)": spec.x in body must be of type rgbcolor: "rgb(0,0,256)"`}},
		{"password", spec(`{"type":"string","format":"password"}`), `{"spec":{"x":""}}`, nil},
		{"unknown format ignored", spec(`{"type":"string","format":"k8s-short-name"}`), `{"spec":{"x":"NOT valid"}}`, nil},
		{"string format on integer dropped", spec(`{"type":"integer","format":"date"}`), `{"spec":{"x":1}}`, nil},
		{"untyped format", spec(`{"format":"date"}`), `{"spec":{"x":1}}`,
			[]string{`spec.x: Invalid value: "int64": spec.x in body must be of type date: "int64"`}},

		// enum
		{"enum ok", spec(`{"type":"string","enum":["a","b"]}`), `{"spec":{"x":"b"}}`, nil},
		{"enum bad", spec(`{"type":"string","enum":["a","b"]}`), `{"spec":{"x":"c"}}`,
			[]string{`spec.x: Unsupported value: "c": supported values: "a", "b"`}},
		{"enum numbers", spec(`{"type":"integer","enum":[1,2]}`), `{"spec":{"x":3}}`,
			[]string{`spec.x: Unsupported value: 3: supported values: "1", "2"`}},
		{"enum converts to member type", spec(`{"type":"number","enum":[1]}`), `{"spec":{"x":1.0}}`, nil},
		{"enum null", spec(`{"type":"string","nullable":true,"enum":["a"]}`), `{"spec":{"x":null}}`,
			[]string{`spec.x: Unsupported value: "null": supported values: "a"`}},

		// numbers
		{"maximum", spec(`{"type":"integer","maximum":10}`), `{"spec":{"x":11}}`,
			[]string{`spec.x: Invalid value: 11: spec.x in body should be less than or equal to 10`}},
		{"maximum exclusive", spec(`{"type":"integer","maximum":10,"exclusiveMaximum":true}`), `{"spec":{"x":10}}`,
			[]string{`spec.x: Invalid value: 10: spec.x in body should be less than 10`}},
		{"minimum float", spec(`{"type":"number","minimum":1.5}`), `{"spec":{"x":1.25}}`,
			[]string{`spec.x: Invalid value: 1.25: spec.x in body should be greater than or equal to 1.5`}},
		{"minimum exclusive", spec(`{"type":"number","minimum":0,"exclusiveMinimum":true}`), `{"spec":{"x":0}}`,
			[]string{`spec.x: Invalid value: 0: spec.x in body should be greater than 0`}},
		{"integer limit truncated", spec(`{"type":"integer","maximum":1.5}`), `{"spec":{"x":2}}`,
			[]string{`spec.x: Invalid value: 2: spec.x in body should be less than or equal to 1`}},
		{"multipleOf int", spec(`{"type":"integer","multipleOf":3}`), `{"spec":{"x":7}}`,
			[]string{`spec.x: Invalid value: 7: spec.x in body should be a multiple of 3`}},
		{"multipleOf fraction", spec(`{"type":"number","multipleOf":0.1}`), `{"spec":{"x":0.3}}`, nil},
		{"multipleOf float", spec(`{"type":"number","multipleOf":0.5}`), `{"spec":{"x":0.7}}`,
			[]string{`spec.x: Invalid value: 0.7: spec.x in body should be a multiple of 0.5`}},
		{"multipleOf below one on integer", spec(`{"type":"integer","multipleOf":0.4}`), `{"spec":{"x":3}}`,
			[]string{`spec.x: Invalid value: 3: spec.x in body should be a multiple of 0.4`}},
		{"number order", spec(`{"type":"integer","multipleOf":2,"minimum":5,"maximum":1}`), `{"spec":{"x":3}}`,
			[]string{
				`spec.x: Invalid value: 3: spec.x in body should be a multiple of 2`,
				`spec.x: Invalid value: 3: spec.x in body should be greater than or equal to 5`,
				`spec.x: Invalid value: 3: spec.x in body should be less than or equal to 1`,
			}},

		// strings
		{"maxLength", spec(`{"type":"string","maxLength":5}`), `{"spec":{"x":"abcdef"}}`,
			[]string{`spec.x: Too long: may not be more than 5 bytes`}},
		{"maxLength runes", spec(`{"type":"string","maxLength":2}`), `{"spec":{"x":"éé"}}`, nil},
		{"maxLength one", spec(`{"type":"string","maxLength":1}`), `{"spec":{"x":"ab"}}`,
			[]string{`spec.x: Too long: may not be more than 1 bytes`}},
		{"minLength", spec(`{"type":"string","minLength":3}`), `{"spec":{"x":"ab"}}`,
			[]string{`spec.x: Invalid value: "ab": spec.x in body should be at least 3 chars long`}},
		{"pattern", spec(`{"type":"string","pattern":"^[a-z]+$"}`), `{"spec":{"x":"A1"}}`,
			[]string{`spec.x: Invalid value: "A1": spec.x in body should match '^[a-z]+$'`}},
		{"pattern invalid", spec(`{"type":"string","pattern":"("}`), `{"spec":{"x":"a"}}`,
			[]string{"spec.x: Invalid value: \"a\": spec.x in body should match '(, but pattern is invalid: error parsing regexp: missing closing ): `(`'"}},
		{"string stops at first", spec(`{"type":"string","maxLength":1,"pattern":"^z$"}`), `{"spec":{"x":"ab"}}`,
			[]string{`spec.x: Too long: may not be more than 1 bytes`}},

		// arrays
		{"items", spec(`{"type":"array","items":{"type":"string"}}`), `{"spec":{"x":["a",1]}}`,
			[]string{`spec.x[1]: Invalid value: "integer": spec.x[1] in body must be of type string: "integer"`}},
		{"nested item member", spec(`{"type":"array","items":{"type":"object","properties":{"name":{"type":"string","minLength":2}}}}`),
			`{"spec":{"x":[{"name":"ab"},{"name":"a"}]}}`,
			[]string{`spec.x[1].name: Invalid value: "a": spec.x[1].name in body should be at least 2 chars long`}},
		{"minItems", spec(`{"type":"array","minItems":2,"items":{"type":"integer"}}`), `{"spec":{"x":[1]}}`,
			[]string{`spec.x: Invalid value: 1: spec.x in body should have at least 2 items`}},
		{"maxItems", spec(`{"type":"array","maxItems":2,"items":{"type":"integer"}}`), `{"spec":{"x":[1,2,3]}}`,
			[]string{`spec.x: Too many: 3: must have at most 2 items`}},
		{"maxItems one", spec(`{"type":"array","maxItems":1,"items":{"type":"integer"}}`), `{"spec":{"x":[1,2]}}`,
			[]string{`spec.x: Too many: 2: must have at most 1 items`}},
		{"uniqueItems", spec(`{"type":"array","uniqueItems":true,"items":{"type":"integer"}}`), `{"spec":{"x":[1,2,1]}}`,
			[]string{`spec.x: Invalid value: "": spec.x in body shouldn't contain duplicates`}},
		{"items before count", spec(`{"type":"array","maxItems":1,"items":{"type":"string"}}`), `{"spec":{"x":[1,"a"]}}`,
			[]string{
				`spec.x[0]: Invalid value: "integer": spec.x[0] in body must be of type string: "integer"`,
				`spec.x: Too many: 2: must have at most 1 items`,
			}},

		// objects
		{"required", `{"type":"object","required":["spec"],"properties":{"spec":{"type":"object","required":["a","b"]}}}`,
			`{"spec":{"b":1}}`, []string{`spec.a: Required value`}},
		{"required at root", `{"type":"object","required":["spec"]}`, `{}`, []string{`spec: Required value`}},
		{"minProperties", spec(`{"type":"object","minProperties":2,"additionalProperties":{"type":"string"}}`), `{"spec":{"x":{"a":"1"}}}`,
			[]string{`spec.x: Invalid value: 1: spec.x in body should have at least 2 properties`}},
		{"maxProperties", spec(`{"type":"object","maxProperties":1,"additionalProperties":{"type":"string"}}`), `{"spec":{"x":{"a":"1","b":"2"}}}`,
			[]string{`spec.x: Too many: 2: must have at most 1 items`}},
		{"additionalProperties schema", spec(`{"type":"object","additionalProperties":{"type":"integer","maximum":3}}`),
			`{"spec":{"x":{"a":1,"b":4,"c":"s"}}}`,
			[]string{
				`spec.x.b: Invalid value: 4: spec.x.b in body should be less than or equal to 3`,
				`spec.x.c: Invalid value: "string": spec.x.c in body must be of type integer: "string"`,
			}},
		{"additionalProperties false", spec(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`),
			`{"spec":{"x":{"a":"1","z":1}}}`,
			[]string{`spec.x: Invalid value: "z": spec.x.z in body is a forbidden property`}},
		{"patternProperties", spec(`{"type":"object","patternProperties":{"^n":{"type":"integer"}}}`),
			`{"spec":{"x":{"n1":"a","o":"b"}}}`,
			[]string{`spec.x.n1: Invalid value: "string": spec.x.n1 in body must be of type integer: "string"`}},
		{"properties sorted", spec(`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}}}`),
			`{"spec":{"x":{"a":1,"b":2}}}`,
			[]string{
				`spec.x.a: Invalid value: "integer": spec.x.a in body must be of type string: "integer"`,
				`spec.x.b: Invalid value: "integer": spec.x.b in body must be of type string: "integer"`,
			}},
		{"type then members", `{"type":"object","properties":{"spec":{"type":"object","required":["a"],"properties":{"b":{"type":"string"}}}}}`,
			`{"spec":{"b":1}}`,
			[]string{
				`spec.b: Invalid value: "integer": spec.b in body must be of type string: "integer"`,
				`spec.a: Required value`,
			}},
		{"metadata schema applies", `{"type":"object","properties":{"metadata":{"type":"object","properties":{"name":{"type":"string","maxLength":3}}}}}`,
			`{"metadata":{"name":"abcd"}}`, []string{`metadata.name: Too long: may not be more than 3 bytes`}},

		// composition
		{"anyOf ok", spec(`{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]}`), `{"spec":{"x":"a"}}`, nil},
		{"anyOf none", spec(`{"type":"integer","anyOf":[{"minimum":5},{"maximum":1}]}`), `{"spec":{"x":3}}`,
			[]string{
				`<nil>: Invalid value: "": "spec.x" must validate at least one schema (anyOf)`,
				`spec.x: Invalid value: 3: spec.x in body should be greater than or equal to 5`,
			}},
		{"oneOf none", spec(`{"type":"object","oneOf":[{"required":["a"]},{"required":["b"]}]}`), `{"spec":{"x":{}}}`,
			[]string{
				`<nil>: Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found none valid`,
				`spec.x.a: Required value`,
			}},
		{"oneOf two", spec(`{"type":"object","oneOf":[{"required":["a"]},{"required":["b"]}]}`), `{"spec":{"x":{"a":1,"b":2}}}`,
			[]string{`<nil>: Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found 2 valid alternatives`}},
		{"allOf", spec(`{"type":"string","allOf":[{"minLength":2},{"maxLength":3}]}`), `{"spec":{"x":"a"}}`,
			[]string{
				`spec.x: Invalid value: "a": spec.x in body should be at least 2 chars long`,
				`<nil>: Invalid value: "": "spec.x" must validate all the schemas (allOf)`,
			}},
		{"allOf none", spec(`{"type":"string","allOf":[{"minLength":2},{"pattern":"z"}]}`), `{"spec":{"x":"a"}}`,
			[]string{
				`spec.x: Invalid value: "a": spec.x in body should be at least 2 chars long`,
				`spec.x: Invalid value: "a": spec.x in body should match 'z'`,
				`<nil>: Invalid value: "": "spec.x" must validate all the schemas (allOf). None validated`,
			}},
		{"not", spec(`{"type":"string","not":{"enum":["no"]}}`), `{"spec":{"x":"no"}}`,
			[]string{`<nil>: Invalid value: "": "spec.x" must not validate the schema (not)`}},
		{"dependencies", spec(`{"type":"object","dependencies":{"a":["b"]}}`), `{"spec":{"x":{"a":1}}}`,
			[]string{`<nil>: Invalid value: "": "spec.x" has a dependency on b`}},

		// list types
		{"set duplicate", spec(`{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}}`), `{"spec":{"x":["a","b","a","a"]}}`,
			[]string{`spec.x[2]: Duplicate value: "a"`}},
		{"set of objects", spec(`{"type":"array","x-kubernetes-list-type":"set","items":{"type":"object","x-kubernetes-map-type":"atomic","additionalProperties":{"type":"integer"}}}`),
			`{"spec":{"x":[{"a":1},{"a":1}]}}`,
			[]string{`spec.x[1]: Duplicate value: map[string]interface {}{"a":1}`}},
		{"map duplicate key", spec(`{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"type":"object","properties":{"name":{"type":"string"},"v":{"type":"integer"}}}}`),
			`{"spec":{"x":[{"name":"a","v":1},{"name":"a","v":2},{"v":3},{"v":4}]}}`,
			[]string{
				`spec.x[1]: Duplicate value: map[string]interface {}{"name":"a"}`,
				`spec.x[3]: Duplicate value: map[string]interface {}{}`,
			}},
		{"map two keys", spec(`{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name","port"],"items":{"type":"object","properties":{"name":{"type":"string"},"port":{"type":"integer"}}}}`),
			`{"spec":{"x":[{"name":"a","port":1},{"name":"a","port":2},{"name":"a","port":1}]}}`,
			[]string{`spec.x[2]: Duplicate value: map[string]interface {}{"name":"a", "port":1}`}},
		{"map under map value", `{"type":"object","properties":{"spec":{"type":"object","additionalProperties":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"integer"}}}}}`,
			`{"spec":{"k":[1,1]}}`, []string{`spec[k][1]: Duplicate value: 1`}},

		// embedded resources
		{"embedded requires type meta", spec(`{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}`),
			`{"spec":{"x":{}}}`,
			[]string{`spec.x.apiVersion: Required value: must not be empty`, `spec.x.kind: Required value: must not be empty`}},
		{"embedded ok", spec(`{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}`),
			`{"spec":{"x":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"a":"b"}}}}}`, nil},
		{"embedded bad", spec(`{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}`),
			`{"spec":{"x":{"apiVersion":"a/b/c","kind":"Bad_Kind","metadata":{"name":"a/b","namespace":"NS","labels":{"a":"b c"}}}}}`,
			[]string{
				`spec.x.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`,
				`spec.x.kind: Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
				`spec.x.metadata.name: Invalid value: "a/b": may not contain '/'`,
				`spec.x.metadata.namespace: Invalid value: "NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				`spec.x.metadata.labels: Invalid value: "b c": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
			}},
		{"embedded metadata type", spec(`{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}`),
			`{"spec":{"x":{"apiVersion":"v1","kind":"A","metadata":{"name":5}}}}`,
			[]string{`spec.x.metadata: Invalid value: map[string]interface {}{"name":5}: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string`}},
		{"embedded in items", spec(`{"type":"array","items":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}`),
			`{"spec":{"x":[{"apiVersion":"v1","kind":"A"},{"kind":"B"}]}}`,
			[]string{`spec.x[1].apiVersion: Required value: must not be empty`}},

		{"embedded metadata members", spec(`{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}`),
			`{"spec":{"x":{"apiVersion":"v1","kind":"A","metadata":{"generateName":"a%","generation":-1,"finalizers":["orphan","foregroundDeletion","a/b/c"],
			  "ownerReferences":[{"apiVersion":"v1","kind":"Event","name":"e","uid":"u"},{"kind":"B","controller":true},{"apiVersion":"x/v1","kind":"C","name":"c","uid":"u","controller":true}],
			  "managedFields":[{"manager":"m","operation":"Patch","fieldsType":"FieldsV2"}]}}}}`,
			[]string{
				`spec.x.metadata.generateName: Invalid value: "a%": may not contain '%'`,
				`spec.x.metadata.generation: Invalid value: -1: must be greater than or equal to 0`,
				`spec.x.metadata.ownerReferences: Invalid value: v1.OwnerReference{APIVersion:"v1", Kind:"Event", Name:"e", UID:"u", Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(nil)}: /v1, Kind=Event is disallowed from being an owner`,
				`spec.x.metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty`,
				`spec.x.metadata.ownerReferences.name: Invalid value: "": name must not be empty`,
				`spec.x.metadata.ownerReferences.uid: Invalid value: "": uid must not be empty`,
				`spec.x.metadata.ownerReferences: Invalid value: []v1.OwnerReference{v1.OwnerReference{APIVersion:"v1", Kind:"Event", Name:"e", UID:"u", Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(nil)}, v1.OwnerReference{APIVersion:"", Kind:"B", Name:"", UID:"", Controller:(*bool)(true), BlockOwnerDeletion:(*bool)(nil)}, v1.OwnerReference{APIVersion:"x/v1", Kind:"C", Name:"c", UID:"u", Controller:(*bool)(true), BlockOwnerDeletion:(*bool)(nil)}}: Only one reference can have Controller set to true. Found "true" in references for B/ and C/c`,
				`spec.x.metadata.finalizers: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
				`spec.x.metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion", "a/b/c"}: finalizer orphan and foregroundDeletion cannot be both set`,
				"spec.x.metadata.managedFields[0].operation: Invalid value: \"Patch\": must be `Apply` or `Update`",
				"spec.x.metadata.managedFields[0].fieldsType: Invalid value: \"FieldsV2\": must be `FieldsV1`",
			}},
		{"embedded metadata nested type", spec(`{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}`),
			`{"spec":{"x":{"apiVersion":"v1","kind":"A","metadata":{"ownerReferences":[{"controller":"yes"}]}}}}`,
			[]string{`spec.x.metadata: Invalid value: map[string]interface {}{"ownerReferences":[]interface {}{map[string]interface {}{"controller":"yes"}}}: json: cannot unmarshal string into Go struct field OwnerReference.ownerReferences.controller of type bool`}},
		{"embedded metadata time type", spec(`{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}`),
			`{"spec":{"x":{"apiVersion":"v1","kind":"A","metadata":{"creationTimestamp":5}}}}`,
			[]string{`spec.x.metadata: Invalid value: map[string]interface {}{"creationTimestamp":5}: json: cannot unmarshal number into Go value of type string`}},
		{"embedded metadata time", spec(`{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}`),
			`{"spec":{"x":{"apiVersion":"v1","kind":"A","metadata":{"creationTimestamp":"yesterday"}}}}`,
			[]string{`spec.x.metadata: Invalid value: map[string]interface {}{"creationTimestamp":"yesterday"}: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`}},

		// order of the three passes
		{"passes in order", spec(`{"type":"array","maxItems":1,"x-kubernetes-list-type":"set","items":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}`),
			`{"spec":{"x":[{"apiVersion":"v1"},{"apiVersion":"v1"}]}}`,
			[]string{
				`spec.x: Too many: 2: must have at most 1 items`,
				`spec.x[0].kind: Required value: must not be empty`,
				`spec.x[1].kind: Required value: must not be empty`,
				`spec.x[1]: Duplicate value: map[string]interface {}{"apiVersion":"v1"}`,
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := render(Validate(mustParse(t, c.schema), mustDecode(t, c.obj)))
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestValidateCauseTypes(t *testing.T) {
	p := mustParse(t, spec(`{"type":"object","required":["r"],"properties":{
		"t":{"type":"integer"},"e":{"type":"string","enum":["a"]},"l":{"type":"string","maxLength":1},
		"m":{"type":"array","maxItems":0},"p":{"type":"string","pattern":"^a$"}}}`))
	errs := Validate(p, mustDecode(t, `{"spec":{"x":{"t":"1","e":"b","l":"ab","m":[1],"p":"b"}}}`))
	want := map[string]apierr.FieldErrorType{
		"spec.x.e": apierr.FieldNotSupported,
		"spec.x.l": apierr.FieldTooLong,
		"spec.x.m": apierr.FieldTooMany,
		"spec.x.p": apierr.FieldInvalid,
		"spec.x.t": apierr.FieldTypeInvalid,
		"spec.x.r": apierr.FieldRequired,
	}
	if len(errs) != len(want) {
		t.Fatalf("errors: %v", render(errs))
	}
	for _, e := range errs {
		if want[e.Field] != e.Type {
			t.Errorf("%s: type %s, want %s", e.Field, e.Type, want[e.Field])
		}
	}
}

func TestValidateDefaults(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		want   []string
	}{
		{"valid", `{"type":"object","properties":{"spec":{"type":"object","properties":{"r":{"type":"integer","default":1}}}}}`, nil},
		{"wrong type", `{"type":"object","properties":{"spec":{"type":"object","properties":{"r":{"type":"integer","default":"x"}}}}}`,
			[]string{`root.properties[spec].properties[r].default: Invalid value: "string":  in body must be of type integer: "string"`}},
		{"enum", `{"type":"object","properties":{"s":{"type":"string","enum":["a"],"default":"b"}}}`,
			[]string{`root.properties[s].default: Unsupported value: "b": supported values: "a"`}},
		{"nested member", `{"type":"object","properties":{"s":{"type":"object","default":{"a":"x"},"properties":{"a":{"type":"integer"}}}}}`,
			[]string{`root.properties[s].default.a: Invalid value: "string": a in body must be of type integer: "string"`}},
		{"nested required", `{"type":"object","properties":{"s":{"type":"object","default":{},"required":["a"],"properties":{"a":{"type":"integer"}}}}}`,
			[]string{`root.properties[s].default.a: Required value`}},
		{"unknown fields", `{"type":"object","properties":{"s":{"type":"object","default":{"a":1,"z":2},"properties":{"a":{"type":"integer"}}}}}`,
			[]string{`root.properties[s].default: Invalid value: map[string]interface {}{"a":1, "z":2}: must not have unknown fields`}},
		{"preserved unknown fields", `{"type":"object","properties":{"s":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"default":{"z":2}}}}`, nil},
		{"items default", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","maxLength":1,"default":"ab"}}}}`,
			[]string{`root.properties[l].items.default: Too long: may not be more than 1 bytes`}},
		{"composite at default", `{"type":"object","properties":{"s":{"type":"string","default":"no","not":{"enum":["no"]}}}}`,
			[]string{`root.properties[s].default: Invalid value: "": "" must not validate the schema (not)`}},
		{"embedded default", `{"type":"object","properties":{"e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,"default":{"kind":"A"}}}}`,
			[]string{`root.properties[e].default.apiVersion: Required value: must not be empty`}},
		{"format as written", `{"type":"object","properties":{"i":{"type":"integer","format":"int32","default":true}}}`,
			[]string{`root.properties[i].default: Invalid value: "":  in body must be of type int32: ""`}},
		{"int-or-string untyped", `{"type":"object","properties":{"i":{"x-kubernetes-int-or-string":true,"default":true}}}`, nil},
		{"embedded default coerced first", `{"type":"object","properties":{"e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,"default":{"apiVersion":1,"kind":2}}}}`,
			[]string{`root.properties[e].default.apiVersion: Invalid value: 1: must be a string`}},
		{"embedded default empty kind", `{"type":"object","properties":{"e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,"default":{"apiVersion":"v1","kind":""}}}}`,
			[]string{`root.properties[e].default.kind: Invalid value: "": must not be empty`}},
		{"metadata unknown outside embedded", `{"type":"object","properties":{"s":{"type":"object","default":{"metadata":{}},"properties":{"a":{"type":"integer"}}}}}`,
			[]string{`root.properties[s].default: Invalid value: map[string]interface {}{"metadata":map[string]interface {}{}}: must not have unknown fields`}},
		{"embedded metadata default", `{"type":"object","properties":{"t":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{
			"metadata":{"type":"object","properties":{"name":{"type":"string","default":"a/b"},"labels":{"type":"object","additionalProperties":{"type":"string"},"default":{"a":"b c","d":"e f"}}}},
			"kind":{"type":"string","default":"Bad_Kind"},"apiVersion":{"type":"string","maxLength":2,"default":"v1.2"}}}}}`,
			[]string{
				`root.properties[t].properties[apiVersion].default: Too long: may not be more than 2 bytes`,
				`root.properties[t].properties[kind].default: Invalid value: "Bad_Kind": must result in valid metadata: kind: Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
				`root.properties[t].properties[metadata].properties[labels].default: Invalid value: map[string]interface {}{"a":"b c", "d":"e f"}: must result in valid metadata: [metadata.labels: Invalid value: "b c": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), metadata.labels: Invalid value: "e f": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]`,
				`root.properties[t].properties[metadata].properties[name].default: Invalid value: "a/b": must result in valid metadata: metadata.name: Invalid value: "a/b": may not contain '/'`,
			}},
		{"null default ignored", `{"type":"object","properties":{"s":{"type":"string","nullable":true,"default":null}}}`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := render(ValidateDefaults(mustParse(t, c.schema), "root"))
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestUnprunedDefaults(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		want   bool
	}{
		{"none", `{"type":"object","properties":{"s":{"type":"object","default":{"a":1},"properties":{"a":{"type":"integer"}}}}}`, false},
		{"unknown member", `{"type":"object","properties":{"s":{"type":"object","default":{"a":1,"z":2},"properties":{"a":{"type":"integer"}}}}}`, true},
		{"in items", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","default":{"z":1}}}}}`, true},
		{"preserved", `{"type":"object","properties":{"s":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"default":{"z":2}}}}`, false},
		{"embedded metadata member", `{"type":"object","properties":{"e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,
			"default":{"apiVersion":"v1","kind":"A","metadata":{"name":"a","bogus":1}}}}}`, true},
		{"embedded metadata fine", `{"type":"object","properties":{"e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,
			"default":{"apiVersion":"v1","kind":"A","metadata":{"name":"a","labels":{"a":"b"}}}}}}`, false},
		{"inside metadata", `{"type":"object","properties":{"e":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{
			"metadata":{"type":"object","properties":{"labels":{"type":"object","additionalProperties":{"type":"integer"},"default":{"a":1}}}}}}}}`, true},
	}
	for _, c := range cases {
		p := mustParse(t, c.schema)
		if got := HasUnprunedDefaults(p); got != c.want {
			t.Errorf("%s: HasUnprunedDefaults = %v", c.name, got)
		}
		pruneErr := false
		for _, e := range ValidateDefaults(p, "root") {
			pruneErr = pruneErr || strings.HasSuffix(e.Error(), "must not have unknown fields")
		}
		for _, e := range ValidateDefaultsUnpruned(p, "root") {
			if strings.HasSuffix(e.Error(), "must not have unknown fields") {
				t.Errorf("%s: unpruned check reports %s", c.name, e)
			}
		}
		if c.name == "unknown member" && !pruneErr {
			t.Errorf("%s: no pruning failure", c.name)
		}
	}
}

func FuzzValidate(f *testing.F) {
	f.Add([]byte(spec(`{"type":"integer","maximum":3,"multipleOf":0.5}`)), []byte(`{"spec":{"x":7}}`), []byte(`{"spec":{"x":7}}`))
	f.Add([]byte(spec(`{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["a","b"],"items":{"type":"object"}}`)), []byte(`{"spec":{"x":[{"a":1},{"a":1},null,2]}}`), []byte(`{"spec":{"x":[{"a":1},{"a":1},null,2]}}`))
	f.Add([]byte(spec(`{"anyOf":[{"pattern":"("},{"format":"date"}],"oneOf":[{}],"not":{},"allOf":[{"enum":[1,"A",{"a":[]}]}]}`)), []byte(`{"spec":{"x":65}}`), []byte(`{"spec":{"x":65}}`))
	f.Add([]byte(spec(`{"type":"array","items":[{"type":"string"}],"additionalItems":{"type":"integer"},"uniqueItems":true}`)), []byte(`{"spec":{"x":["a",1,1]}}`), []byte(`{"spec":{"x":["a",1,1]}}`))
	f.Add([]byte(spec(`{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"metadata":{"type":"object"}},"dependencies":{"a":{"required":["b"]}},"patternProperties":{"[":{}}}`)), []byte(`{"spec":{"x":{"metadata":{"finalizers":["orphan","foregroundDeletion",1],"generation":-1}}}}`), []byte(`{"spec":{"x":{"metadata":{"finalizers":["orphan","foregroundDeletion",1],"generation":-1}}}}`))
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"integer","multipleOf":0,"minimum":1e300,"maximum":-1e300,"default":"x"}}}`), []byte(`{"a":-9223372036854775808}`), []byte(`{"a":-9223372036854775808}`))
	f.Fuzz(func(t *testing.T, schemaJSON, valueJSON, oldJSON []byte) {
		p, err := ParseJSON(schemaJSON)
		if err != nil {
			return
		}
		v, err := schema.DecodeAny(valueJSON)
		if err != nil {
			return
		}
		obj, ok := v.(map[string]any)
		if !ok {
			obj = map[string]any{"spec": v}
		}
		for _, e := range Validate(p, obj) {
			_ = e.Error()
		}
		if o, err := schema.DecodeAny(oldJSON); err == nil {
			old, _ := o.(map[string]any)
			for _, e := range ValidateUpdate(p, obj, old) {
				_ = e.Error()
			}
		}
		for _, e := range ValidateStatusUpdate(p, obj, obj) {
			_ = e.Error()
		}
		for _, e := range ValidateScaleReplicas(obj, ".spec.x") {
			_ = e.Error()
		}
		for _, e := range ValidateDefaults(p, "s") {
			_ = e.Error()
		}
		_ = HasUnprunedDefaults(p)
	})
}

func TestValidateUpdateRatchets(t *testing.T) {
	root := `{"type":"object","properties":{"metadata":{"type":"object"},"spec":{"type":"object","required":["r"],"properties":{
		"s":{"type":"string","maxLength":3},
		"t":{"type":"string","maxLength":3},
		"atomic":{"type":"array","items":{"type":"string","maxLength":1}},
		"set":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},
		"m":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
		     "items":{"type":"object","properties":{"name":{"type":"string"},"v":{"type":"string","maxLength":1}}}},
		"labels":{"type":"object","additionalProperties":{"type":"string","maxLength":1}}}}}}`
	cases := []struct {
		name     string
		old, cur string
		want     []string
	}{
		{"unchanged member kept", `{"metadata":{"g":1},"spec":{"r":1,"s":"abcd","t":"a"}}`, `{"metadata":{"g":2},"spec":{"r":1,"s":"abcd","t":"b"}}`, nil},
		{"changed member refused", `{"spec":{"r":1,"s":"abcd"}}`, `{"spec":{"r":1,"s":"abcde"}}`,
			[]string{`spec.s: Too long: may not be more than 3 bytes`}},
		{"new member refused", `{"spec":{"r":1}}`, `{"spec":{"r":1,"s":"abcd"}}`,
			[]string{`spec.s: Too long: may not be more than 3 bytes`}},
		{"unchanged object keeps required", `{"metadata":{"g":1},"spec":{"s":"a"}}`, `{"metadata":{"g":2},"spec":{"s":"a"}}`, nil},
		{"changed object needs required", `{"spec":{"s":"a"}}`, `{"spec":{"s":"b"}}`, []string{`spec.r: Required value`}},
		{"map value by key", `{"spec":{"r":1,"labels":{"a":"long"}}}`, `{"spec":{"r":1,"labels":{"a":"long","b":"long"}}}`,
			[]string{`spec.labels.b: Too long: may not be more than 1 bytes`}},
		{"map list item by key", `{"spec":{"r":1,"m":[{"name":"a","v":"long"}]}}`, `{"spec":{"r":1,"m":[{"name":"b","v":"long"},{"name":"a","v":"long"}]}}`,
			[]string{`spec.m[0].v: Too long: may not be more than 1 bytes`}},
		{"atomic list item not paired", `{"spec":{"r":1,"atomic":["long"]}}`, `{"spec":{"r":1,"atomic":["long","a"]}}`,
			[]string{`spec.atomic[0]: Too long: may not be more than 1 bytes`}},
		{"atomic list unchanged", `{"metadata":{"g":1},"spec":{"r":1,"atomic":["long"]}}`, `{"metadata":{"g":2},"spec":{"r":1,"atomic":["long"]}}`, nil},
		{"set duplicates kept when old had them", `{"spec":{"r":1,"set":["a","a"]}}`, `{"spec":{"r":1,"set":["a","a","b"]}}`, nil},
		{"composition below a changed value is not paired",
			`{"metadata":{"g":1},"spec":{"r":1,"labels":{"a":"long"}}}`, `{"metadata":{"g":2},"spec":{"r":1,"labels":{"a":"long"}}}`, nil},
		{"set duplicates refused", `{"spec":{"r":1,"set":["a"]}}`, `{"spec":{"r":1,"set":["a","a"]}}`,
			[]string{`spec.set[1]: Duplicate value: "a"`}},
	}
	p := mustParse(t, root)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := render(ValidateUpdate(p, mustDecode(t, c.cur), mustDecode(t, c.old)))
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// BenchmarkValidate is the schema validation of a typical custom resource
// write.
func BenchmarkValidate(b *testing.B) {
	p := mustParse(b, `{"type":"object","properties":{
		"metadata":{"type":"object"},
		"spec":{"type":"object","required":["image"],"properties":{
			"image":{"type":"string","minLength":1,"pattern":"^[a-z0-9./:-]+$"},
			"replicas":{"type":"integer","minimum":0,"maximum":100},
			"mode":{"type":"string","enum":["a","b","c"]},
			"labels":{"type":"object","additionalProperties":{"type":"string","maxLength":63}},
			"ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
				"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"port":{"type":"integer","format":"int32"}}}}}},
		"status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}`)
	obj := mustDecode(b, `{"apiVersion":"x/v1","kind":"K","metadata":{"name":"a","namespace":"d","uid":"u"},
		"spec":{"image":"registry.example/app:1.2","replicas":3,"mode":"b","labels":{"a":"b","c":"d"},
		"ports":[{"name":"http","port":80},{"name":"https","port":443}]},"status":{"ready":true}}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if errs := Validate(p, obj); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
