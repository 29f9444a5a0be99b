package openapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"sigs.k8s.io/yaml"
)

// v2Subset is the part of OpenAPIv2.proto (package openapi.v2) that the
// documents use, written independently of the encoder's tables: each
// field is name=number:type, "*" marks repeated, "|" starts the members
// of a message's oneof.
var v2Subset = map[string]string{
	"Document":                     "swagger=1:string info=2:Info paths=8:Paths definitions=9:Definitions parameters=10:ParameterDefinitions security=12:*SecurityRequirement security_definitions=13:SecurityDefinitions vendor_extension=16:*NamedAny",
	"Info":                         "title=1:string version=2:string description=3:string vendor_extension=7:*NamedAny",
	"Paths":                        "vendor_extension=1:*NamedAny path=2:*NamedPathItem",
	"NamedPathItem":                "name=1:string value=2:PathItem",
	"PathItem":                     "_ref=1:string get=2:Operation put=3:Operation post=4:Operation delete=5:Operation options=6:Operation head=7:Operation patch=8:Operation parameters=9:*ParametersItem vendor_extension=10:*NamedAny",
	"Operation":                    "tags=1:*string summary=2:string description=3:string operation_id=5:string produces=6:*string consumes=7:*string parameters=8:*ParametersItem responses=9:Responses schemes=10:*string deprecated=11:bool vendor_extension=13:*NamedAny",
	"ParametersItem":               "| parameter=1:Parameter json_reference=2:JsonReference",
	"JsonReference":                "_ref=1:string description=2:string",
	"Parameter":                    "| body_parameter=1:BodyParameter non_body_parameter=2:NonBodyParameter",
	"ParameterDefinitions":         "additional_properties=1:*NamedParameter",
	"NamedParameter":               "name=1:string value=2:Parameter",
	"BodyParameter":                "description=1:string name=2:string in=3:string required=4:bool schema=5:Schema vendor_extension=6:*NamedAny",
	"NonBodyParameter":             "| header_parameter_sub_schema=1:PathParameterSubSchema query_parameter_sub_schema=3:QueryParameterSubSchema path_parameter_sub_schema=4:PathParameterSubSchema",
	"QueryParameterSubSchema":      "required=1:bool in=2:string description=3:string name=4:string allow_empty_value=5:bool type=6:string format=7:string default=10:Any unique_items=20:bool enum=21:*Any vendor_extension=23:*NamedAny",
	"PathParameterSubSchema":       "required=1:bool in=2:string description=3:string name=4:string type=5:string format=6:string default=9:Any unique_items=19:bool enum=20:*Any vendor_extension=22:*NamedAny",
	"Responses":                    "response_code=1:*NamedResponseValue vendor_extension=2:*NamedAny",
	"NamedResponseValue":           "name=1:string value=2:ResponseValue",
	"ResponseValue":                "| response=1:Response json_reference=2:JsonReference",
	"Response":                     "description=1:string schema=2:SchemaItem vendor_extension=5:*NamedAny",
	"SchemaItem":                   "| schema=1:Schema",
	"Schema":                       "_ref=1:string format=2:string title=3:string description=4:string default=5:Any maximum=7:double minimum=9:double max_length=11:int64 min_length=12:int64 pattern=13:string unique_items=16:bool required=19:*string enum=20:*Any additional_properties=21:AdditionalPropertiesItem type=22:TypeItem items=23:ItemsItem all_of=24:*Schema properties=25:Properties read_only=27:bool example=30:Any vendor_extension=31:*NamedAny",
	"AdditionalPropertiesItem":     "| schema=1:Schema boolean=2:bool",
	"TypeItem":                     "value=1:*string",
	"ItemsItem":                    "schema=1:*Schema",
	"Properties":                   "additional_properties=1:*NamedSchema",
	"Definitions":                  "additional_properties=1:*NamedSchema",
	"NamedSchema":                  "name=1:string value=2:Schema",
	"SecurityDefinitions":          "additional_properties=1:*NamedSecurityDefinitionsItem",
	"NamedSecurityDefinitionsItem": "name=1:string value=2:SecurityDefinitionsItem",
	"SecurityDefinitionsItem":      "| api_key_security=2:ApiKeySecurity",
	"ApiKeySecurity":               "type=1:string name=2:string in=3:string description=4:string vendor_extension=5:*NamedAny",
	"SecurityRequirement":          "additional_properties=1:*NamedStringArray",
	"NamedStringArray":             "name=1:string value=2:StringArray",
	"StringArray":                  "value=1:*string",
	"NamedAny":                     "name=1:string value=2:Any",
	"Any":                          "yaml=2:string",
}

// v2Document returns the descriptor of openapi.v2.Document built from
// v2Subset.
func v2Document(t testing.TB) protoreflect.MessageDescriptor {
	t.Helper()
	return subsetDocument(t, "openapi.v2", v2Subset)
}

// subsetDocument returns the descriptor of the Document message of package
// pkg, built from subset: each field is name=number:type, "*" marks
// repeated, "|" starts the members of a message's oneof.
func subsetDocument(t testing.TB, pkg string, subset map[string]string) protoreflect.MessageDescriptor {
	t.Helper()
	scalars := map[string]descriptorpb.FieldDescriptorProto_Type{
		"string": descriptorpb.FieldDescriptorProto_TYPE_STRING,
		"bool":   descriptorpb.FieldDescriptorProto_TYPE_BOOL,
		"double": descriptorpb.FieldDescriptorProto_TYPE_DOUBLE,
		"int64":  descriptorpb.FieldDescriptorProto_TYPE_INT64,
	}
	file := &descriptorpb.FileDescriptorProto{
		Name: proto.String(pkg + ".proto"), Package: proto.String(pkg), Syntax: proto.String("proto3"),
	}
	for _, name := range slices.Sorted(maps.Keys(subset)) {
		msg := &descriptorpb.DescriptorProto{Name: proto.String(name)}
		spec, oneof := strings.CutPrefix(subset[name], "| ")
		if oneof {
			msg.OneofDecl = []*descriptorpb.OneofDescriptorProto{{Name: proto.String("oneof")}}
		}
		for _, f := range strings.Fields(spec) {
			fname, rest, _ := strings.Cut(f, "=")
			num, typ, _ := strings.Cut(rest, ":")
			n, err := strconv.Atoi(num)
			if err != nil {
				t.Fatalf("%s.%s: %v", name, fname, err)
			}
			fd := &descriptorpb.FieldDescriptorProto{
				Name: proto.String(fname), Number: proto.Int32(int32(n)),
				JsonName: proto.String(fname),
				Label:    descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			}
			if elem, ok := strings.CutPrefix(typ, "*"); ok {
				fd.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
				typ = elem
			}
			if st, ok := scalars[typ]; ok {
				fd.Type = st.Enum()
			} else {
				fd.Type = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
				fd.TypeName = proto.String("." + pkg + "." + typ)
			}
			if oneof {
				fd.OneofIndex = proto.Int32(0)
			}
			msg.Field = append(msg.Field, fd)
		}
		file.MessageType = append(file.MessageType, msg)
	}
	fd, err := protodesc.NewFile(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().ByName("Document")
}

// noDefault stands for a v3 DefaultType with no member set: the protobuf
// form of a default that is an object, an array or null.
const noDefault = "<no number, boolean or string default>"

// decodeProtobuf parses a protobuf document and turns it back into the
// JSON value it stands for, failing on any field the subset lacks.
func decodeProtobuf(t testing.TB, desc protoreflect.MessageDescriptor, data []byte) any {
	t.Helper()
	m := dynamicpb.NewMessage(desc)
	if err := proto.Unmarshal(data, m); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return messageJSON(t, m)
}

func messageJSON(t testing.TB, m protoreflect.Message) any {
	t.Helper()
	d := m.Descriptor()
	if len(m.GetUnknown()) > 0 {
		t.Fatalf("%s has fields outside the subset", d.Name())
	}
	if d.Oneofs().Len() == 1 {
		f := m.WhichOneof(d.Oneofs().Get(0))
		if f == nil && d.Name() == "DefaultType" {
			return noDefault
		}
		if f == nil {
			t.Fatalf("%s has no member set", d.Name())
		}
		return fieldJSON(t, f, m.Get(f))
	}
	switch d.Name() {
	case "Any":
		var v any
		if err := yaml.Unmarshal([]byte(m.Get(d.Fields().ByName("yaml")).String()), &v); err != nil {
			t.Fatalf("Any: %v", err)
		}
		return v
	case "TypeItem":
		l := m.Get(d.Fields().ByNumber(1)).List()
		if l.Len() == 1 {
			return l.Get(0).String()
		}
		return fieldJSON(t, d.Fields().ByNumber(1), m.Get(d.Fields().ByNumber(1)))
	case "ItemsItem":
		return fieldJSON(t, d.Fields().ByNumber(1), m.Get(d.Fields().ByNumber(1))).([]any)[0]
	case "StringArray":
		return fieldJSON(t, d.Fields().ByNumber(1), m.Get(d.Fields().ByNumber(1)))
	}
	out := map[string]any{}
	m.Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		// Repeated name/value pairs are the members of the object itself.
		if f.IsList() && f.Message() != nil && strings.HasPrefix(string(f.Message().Name()), "Named") {
			l := v.List()
			for i := range l.Len() {
				pair := l.Get(i).Message()
				name := pair.Get(pair.Descriptor().Fields().ByName("name")).String()
				vf := pair.Descriptor().Fields().ByName("value")
				out[name] = fieldJSON(t, vf, pair.Get(vf))
			}
			return true
		}
		out[jsonMemberName(string(f.Name()))] = fieldJSON(t, f, v)
		return true
	})
	return out
}

func fieldJSON(t testing.TB, f protoreflect.FieldDescriptor, v protoreflect.Value) any {
	t.Helper()
	if f.IsList() {
		l := v.List()
		out := make([]any, 0, l.Len())
		for i := range l.Len() {
			out = append(out, singleJSON(t, f, l.Get(i)))
		}
		return out
	}
	return singleJSON(t, f, v)
}

func singleJSON(t testing.TB, f protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch f.Kind() {
	case protoreflect.MessageKind:
		return messageJSON(t, v.Message())
	case protoreflect.StringKind:
		return v.String()
	case protoreflect.BoolKind:
		return v.Bool()
	case protoreflect.DoubleKind:
		return v.Float()
	case protoreflect.Int64Kind:
		return float64(v.Int())
	}
	t.Fatalf("field %s of kind %v", f.FullName(), f.Kind())
	return nil
}

// jsonMemberName maps a .proto field name to its JSON member name.
func jsonMemberName(field string) string {
	if field == "_ref" {
		return "$ref"
	}
	parts := strings.Split(field, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// protoZeroless drops what proto3 cannot carry: false, "", 0 and empty
// lists.
func protoZeroless(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			if e = protoZeroless(e); e != nil {
				out[k] = e
			}
		}
		return out
	case []any:
		if len(t) == 0 {
			return nil
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = protoZeroless(e)
		}
		return out
	case bool:
		if !t {
			return nil
		}
	case string:
		if t == "" {
			return nil
		}
	case float64:
		if t == 0 {
			return nil
		}
	}
	return v
}

// firstDifference names the first path where a and b differ.
func firstDifference(path string, a, b any) string {
	switch ta := a.(type) {
	case map[string]any:
		tb, ok := b.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: object vs %T", path, b)
		}
		for _, k := range slices.Sorted(keysOf(ta, tb)) {
			if d := firstDifference(path+"/"+k, ta[k], tb[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		tb, ok := b.([]any)
		if !ok || len(ta) != len(tb) {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		for i := range ta {
			if d := firstDifference(path+"/"+strconv.Itoa(i), ta[i], tb[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Sprintf("%s: %#v vs %#v", path, a, b)
	}
	return ""
}

func keysOf(ms ...map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] && !yield(k) {
					return
				}
				seen[k] = true
			}
		}
	}
}

// checkRoundTrip encodes a JSON document, decodes the protobuf and
// compares the content with the JSON.
func checkRoundTrip(t *testing.T, desc protoreflect.MessageDescriptor, doc []byte) []byte {
	t.Helper()
	pb, err := encodeV2Protobuf(doc)
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal(doc, &want); err != nil {
		t.Fatal(err)
	}
	got := decodeProtobuf(t, desc, pb)
	if d := firstDifference("", protoZeroless(want), protoZeroless(got)); d != "" {
		t.Fatalf("protobuf content differs from the JSON at %s", d)
	}
	return pb
}

func TestV2ProtobufRoundTrip(t *testing.T) {
	t.Parallel()
	desc := v2Document(t)
	for _, brand := range []string{"kubernetes", "plat"} {
		t.Run(brand, func(t *testing.T) {
			h, _ := newTestHandler(t, brand)
			doc := h.currentV2()
			pb := checkRoundTrip(t, desc, doc.body)
			// Zero values vanish in proto3; the security requirement's empty
			// scope list must still be there, by name.
			m := dynamicpb.NewMessage(desc)
			if err := proto.Unmarshal(pb, m); err != nil {
				t.Fatal(err)
			}
			sec := m.Get(desc.Fields().ByName("security")).List()
			if sec.Len() != 1 {
				t.Fatalf("security has %d requirements", sec.Len())
			}
			pairs := sec.Get(0).Message()
			pl := pairs.Get(pairs.Descriptor().Fields().ByNumber(1)).List()
			if pl.Len() != 1 || pl.Get(0).Message().Get(pl.Get(0).Message().Descriptor().Fields().ByName("name")).String() != bearerScheme {
				t.Errorf("security requirement %v", pairs)
			}
		})
	}
}

// goldenV2 is upstream's complete v2 document; sha256 of the protobuf an
// upstream server derives from it (gnostic's parse and protobuf
// marshalling of that JSON).
const (
	goldenV2         = "../../../shared/golden/openapi/v2/swagger.json"
	goldenV2Protobuf = "653f212d8482afb4c147606338f5596b570e6b3000da537fc20a1ef3b3150a0d"
)

// TestV2ProtobufUpstreamDocument encodes upstream's document: every
// schema, parameter and extension form it uses survives, and the bytes
// are the ones an upstream server sends.
func TestV2ProtobufUpstreamDocument(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.FromSlash(goldenV2))
	if os.IsNotExist(err) {
		t.Skip("no golden v2 document beside the repository")
	}
	if err != nil {
		t.Fatal(err)
	}
	pb := checkRoundTrip(t, v2Document(t), doc)
	sum := sha256.Sum256(pb)
	if got := hex.EncodeToString(sum[:]); got != goldenV2Protobuf {
		t.Errorf("protobuf of the upstream document: sha256 %s, want %s", got, goldenV2Protobuf)
	}
}
