package openapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// v3Subset is the part of OpenAPIv3.proto (package openapi.v3) that the
// documents use, written independently of the encoder's tables, in the
// form of v2Subset.
var v3Subset = map[string]string{
	"Document":                       "openapi=1:string info=2:Info servers=3:*Server paths=4:Paths components=5:Components security=6:*SecurityRequirement tags=7:*Tag external_docs=8:ExternalDocs specification_extension=9:*NamedAny",
	"Info":                           "title=1:string description=2:string version=6:string specification_extension=7:*NamedAny",
	"Server":                         "url=1:string description=2:string variables=3:ServerVariables specification_extension=4:*NamedAny",
	"ServerVariables":                "additional_properties=1:*NamedServerVariable",
	"NamedServerVariable":            "name=1:string value=2:ServerVariable",
	"ServerVariable":                 "enum=1:*string default=2:string description=3:string specification_extension=4:*NamedAny",
	"Tag":                            "name=1:string description=2:string external_docs=3:ExternalDocs specification_extension=4:*NamedAny",
	"ExternalDocs":                   "description=1:string url=2:string specification_extension=3:*NamedAny",
	"Paths":                          "path=1:*NamedPathItem specification_extension=2:*NamedAny",
	"NamedPathItem":                  "name=1:string value=2:PathItem",
	"PathItem":                       "_ref=1:string summary=2:string description=3:string get=4:Operation put=5:Operation post=6:Operation delete=7:Operation options=8:Operation head=9:Operation patch=10:Operation parameters=13:*ParameterOrReference specification_extension=14:*NamedAny",
	"Operation":                      "tags=1:*string summary=2:string description=3:string operation_id=5:string parameters=6:*ParameterOrReference request_body=7:RequestBodyOrReference responses=8:Responses deprecated=10:bool security=11:*SecurityRequirement specification_extension=13:*NamedAny",
	"ParameterOrReference":           "| parameter=1:Parameter reference=2:Reference",
	"Parameter":                      "name=1:string in=2:string description=3:string required=4:bool deprecated=5:bool allow_empty_value=6:bool style=7:string explode=8:bool allow_reserved=9:bool schema=10:SchemaOrReference example=11:Any specification_extension=14:*NamedAny",
	"Reference":                      "_ref=1:string summary=2:string description=3:string",
	"RequestBodyOrReference":         "| request_body=1:RequestBody reference=2:Reference",
	"RequestBody":                    "description=1:string content=2:MediaTypes required=3:bool specification_extension=4:*NamedAny",
	"MediaTypes":                     "additional_properties=1:*NamedMediaType",
	"NamedMediaType":                 "name=1:string value=2:MediaType",
	"MediaType":                      "schema=1:SchemaOrReference example=2:Any specification_extension=5:*NamedAny",
	"Responses":                      "default=1:ResponseOrReference response_or_reference=2:*NamedResponseOrReference specification_extension=3:*NamedAny",
	"NamedResponseOrReference":       "name=1:string value=2:ResponseOrReference",
	"ResponseOrReference":            "| response=1:Response reference=2:Reference",
	"Response":                       "description=1:string headers=2:HeadersOrReferences content=3:MediaTypes specification_extension=5:*NamedAny",
	"HeadersOrReferences":            "additional_properties=1:*NamedHeaderOrReference",
	"NamedHeaderOrReference":         "name=1:string value=2:HeaderOrReference",
	"HeaderOrReference":              "| header=1:Header reference=2:Reference",
	"Header":                         "description=1:string required=2:bool schema=8:SchemaOrReference specification_extension=12:*NamedAny",
	"Components":                     "schemas=1:SchemasOrReferences responses=2:ResponsesOrReferences parameters=3:ParametersOrReferences security_schemes=7:SecuritySchemesOrReferences specification_extension=10:*NamedAny",
	"SchemasOrReferences":            "additional_properties=1:*NamedSchemaOrReference",
	"ResponsesOrReferences":          "additional_properties=1:*NamedResponseOrReference",
	"ParametersOrReferences":         "additional_properties=1:*NamedParameterOrReference",
	"NamedParameterOrReference":      "name=1:string value=2:ParameterOrReference",
	"SecuritySchemesOrReferences":    "additional_properties=1:*NamedSecuritySchemeOrReference",
	"NamedSecuritySchemeOrReference": "name=1:string value=2:SecuritySchemeOrReference",
	"SecuritySchemeOrReference":      "| security_scheme=1:SecurityScheme reference=2:Reference",
	"SecurityScheme":                 "type=1:string description=2:string name=3:string in=4:string scheme=5:string bearer_format=6:string specification_extension=9:*NamedAny",
	"SecurityRequirement":            "additional_properties=1:*NamedStringArray",
	"NamedStringArray":               "name=1:string value=2:StringArray",
	"StringArray":                    "value=1:*string",
	"NamedSchemaOrReference":         "name=1:string value=2:SchemaOrReference",
	"SchemaOrReference":              "| schema=1:Schema reference=2:Reference",
	"Schema":                         "nullable=1:bool read_only=3:bool write_only=4:bool example=7:Any deprecated=8:bool title=9:string multiple_of=10:double maximum=11:double exclusive_maximum=12:bool minimum=13:double exclusive_minimum=14:bool max_length=15:int64 min_length=16:int64 pattern=17:string max_items=18:int64 min_items=19:int64 unique_items=20:bool max_properties=21:int64 min_properties=22:int64 required=23:*string enum=24:*Any type=25:string all_of=26:*SchemaOrReference one_of=27:*SchemaOrReference any_of=28:*SchemaOrReference not=29:Schema items=30:ItemsItem properties=31:Properties additional_properties=32:AdditionalPropertiesItem default=33:DefaultType description=34:string format=35:string specification_extension=36:*NamedAny",
	"ItemsItem":                      "schema_or_reference=1:*SchemaOrReference",
	"Properties":                     "additional_properties=1:*NamedSchemaOrReference",
	"AdditionalPropertiesItem":       "| schema_or_reference=1:SchemaOrReference boolean=2:bool",
	"DefaultType":                    "| number=1:double boolean=2:bool string=3:string",
	"NamedAny":                       "name=1:string value=2:Any",
	"Any":                            "yaml=2:string",
}

// v3Document returns the descriptor of openapi.v3.Document built from
// v3Subset.
func v3Document(t testing.TB) protoreflect.MessageDescriptor {
	t.Helper()
	return subsetDocument(t, "openapi.v3", v3Subset)
}

// asProtobufCarries rewrites a v3 document decoded with json.Number into
// what its protobuf form can say: in every schema, a default that is not a
// number, boolean or string becomes noDefault, and a reference keeps only
// $ref, summary and description.
func asProtobufCarries(doc map[string]any) {
	var schema func(v any)
	each := func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, e := range t {
				schema(e)
			}
		case []any:
			for _, e := range t {
				schema(e)
			}
		}
	}
	schema = func(v any) {
		s, ok := v.(map[string]any)
		if !ok {
			return
		}
		if _, ok := s["$ref"]; ok {
			for k := range s {
				if k != "$ref" && k != "summary" && k != "description" {
					delete(s, k)
				}
			}
			return
		}
		if d, ok := s["default"]; ok {
			switch n := d.(type) {
			case map[string]any, []any, nil:
				s["default"] = noDefault
			case json.Number:
				// YAML reads an integer beyond int64 but within uint64
				// as an integer, which gnostic then fails to read: 0.
				if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
					if _, err := strconv.ParseUint(string(n), 10, 64); err == nil {
						s["default"] = json.Number("0")
					}
				}
			}
		}
		for _, k := range []string{"items", "not", "additionalProperties"} {
			schema(s[k])
		}
		for _, k := range []string{"properties", "allOf", "oneOf", "anyOf"} {
			each(s[k])
		}
	}
	// Schemas also sit in parameters, headers and media types, which
	// hold them under "schema"; parameters, request bodies and responses
	// may be references too (path items with $ref do not occur).
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if _, ok := t["$ref"]; ok {
				schema(t)
				return
			}
			for k, e := range t {
				if k == "schema" {
					schema(e)
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(doc["paths"])
	if c, ok := doc["components"].(map[string]any); ok {
		for k, e := range c {
			if k == "schemas" {
				each(e)
				continue
			}
			walk(e)
		}
	}
}

// floatNumbers turns the numbers of a decoded JSON value into float64, or
// into their text when they are beyond float64 (YAML, and so gnostic,
// reads those as strings).
func floatNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = floatNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = floatNumbers(e)
		}
	case json.Number:
		if f, err := t.Float64(); err == nil {
			return f
		}
		return string(t)
	}
	return v
}

// checkV3RoundTrip encodes a v3 JSON document, decodes the protobuf and
// compares the content with what the JSON says in protobuf terms.
func checkV3RoundTrip(t *testing.T, desc protoreflect.MessageDescriptor, doc []byte) []byte {
	t.Helper()
	pb, err := encodeV3Protobuf(doc)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var want map[string]any
	if err := d.Decode(&want); err != nil {
		t.Fatal(err)
	}
	asProtobufCarries(want)
	want = floatNumbers(want).(map[string]any)
	got := decodeProtobuf(t, desc, pb)
	if d := firstDifference("", protoZeroless(want), protoZeroless(got)); d != "" {
		t.Fatalf("protobuf content differs from the JSON at %s", d)
	}
	return pb
}

// TestV3ProtobufRoundTrip encodes every v3 document of the test registry
// in both brands: each reads back as the JSON it was made from.
func TestV3ProtobufRoundTrip(t *testing.T) {
	t.Parallel()
	desc := v3Document(t)
	for _, brand := range []string{"kubernetes", "plat"} {
		t.Run(brand, func(t *testing.T) {
			h, _ := newTestHandler(t, brand)
			set := h.currentV3()
			for _, key := range slices.Sorted(mapKeys(set.docs)) {
				t.Run(key, func(t *testing.T) { checkV3RoundTrip(t, desc, set.docs[key].body) })
			}
		})
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// goldenV3 holds upstream's v3 documents; goldenV3Protobuf is the sha256
// of the protobuf forms an upstream server derives from them (gnostic's
// parse and protobuf marshalling of each), joined in the order of their
// file names.
const (
	goldenV3         = "../../../shared/golden/openapi/v3"
	goldenV3Protobuf = "5d48b9242cf0eff98cc2e28c516c97af751398db518b7eae756da8eefe75b7ff"
)

// TestV3ProtobufUpstreamDocuments encodes upstream's documents: every
// schema, parameter and extension form they use survives, and the bytes
// are the ones an upstream server sends.
func TestV3ProtobufUpstreamDocuments(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(filepath.FromSlash(goldenV3))
	if os.IsNotExist(err) {
		t.Skip("no golden v3 documents beside the repository")
	}
	if err != nil {
		t.Fatal(err)
	}
	desc := v3Document(t)
	sum := sha256.New()
	n := 0
	for _, e := range entries {
		if e.Name() == "index.json" {
			continue
		}
		doc, err := os.ReadFile(filepath.Join(filepath.FromSlash(goldenV3), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(e.Name(), func(t *testing.T) { sum.Write(checkV3RoundTrip(t, desc, doc)) })
		n++
	}
	if n == 0 {
		t.Fatal("no golden v3 documents")
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != goldenV3Protobuf {
		t.Errorf("protobuf of the %d upstream documents: sha256 %s, want %s", n, got, goldenV3Protobuf)
	}
}

// edgesProtobuf is the sha256 of the protobuf gnostic derives from
// testdata/v3proto-edges.json.
const edgesProtobuf = "24728ea53e3ac396aad49798595e0b15ce750241a23f3f8c5ed7632dd5a313f7"

// TestV3ProtobufEdges encodes a document of the forms upstream's documents
// do not use (defaults of every JSON type and beyond the number ranges,
// references with siblings, schema combinators, headers, servers, tags)
// into the bytes gnostic derives from it, and checks the defaults one by
// one.
func TestV3ProtobufEdges(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("testdata/v3proto-edges.json")
	if err != nil {
		t.Fatal(err)
	}
	pb := checkV3RoundTrip(t, v3Document(t), doc)
	sum := sha256.Sum256(pb)
	if got := hex.EncodeToString(sum[:]); got != edgesProtobuf {
		t.Errorf("sha256 %s, want %s", got, edgesProtobuf)
	}

	m := dynamicpb.NewMessage(v3Document(t))
	if err := proto.Unmarshal(pb, m); err != nil {
		t.Fatal(err)
	}
	props := dig(decodeProtobuf(t, m.Descriptor(), pb), "components", "schemas", "Gadget", "properties", "spec", "properties").(map[string]any)
	tests := []struct {
		property string
		want     any
	}{
		{"n", 7.0},
		{"big", 0.0}, // beyond int64: read as 0
		{"huge", "1e400"},
		{"zero", 0.0},
		{"f", false},
		{"s", ""},
		{"nil", noDefault},
		{"arr", noDefault},
	}
	for _, tc := range tests {
		if got := dig(props[tc.property], "default"); got != tc.want {
			t.Errorf("%s: default %#v, want %#v", tc.property, got, tc.want)
		}
	}
	if got := props["ref"]; len(got.(map[string]any)) != 2 || dig(got, "description") != "Siblings of a ref." {
		t.Errorf("reference with siblings read as %v", got)
	}
}
