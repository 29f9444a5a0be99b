package openapi

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// The v3 documents in protobuf are openapi.v3.Document messages of
// gnostic's OpenAPIv3.proto, derived from the JSON document as upstream
// derives them (gnostic's parse, then protobuf marshalling), with the
// encoder of the v2 form: objects become the messages their positions
// call for, maps repeated name/value pairs in the JSON's member order,
// "x-" members specification_extension entries, free-form values (enum,
// example, extension values) an Any holding their YAML text. Where v3
// differs from v2:
//   - an object with "$ref" in a place that takes a reference is a
//     Reference, whose members other than $ref, summary and description
//     are dropped; otherwise it is the place's own message;
//   - a schema's default is a DefaultType holding a number, boolean or
//     string; an object, array or null default leaves it empty;
//   - a schema's type is one string, its items one schema, and "not" a
//     schema (never a reference).
//
// Links and callbacks, which no document of this server holds, are
// refused.

// encodeV3Protobuf returns the protobuf form of a v3 JSON document.
func encodeV3Protobuf(doc []byte) ([]byte, error) {
	tree, err := parseTree(doc)
	if err != nil {
		return nil, err
	}
	return v3Schema.document.encode(nil, tree)
}

// v3Messages holds the message layouts of OpenAPIv3.proto that a v3
// document can reach; the field numbers are the .proto file's.
type v3Messages struct {
	document *message
}

var v3Schema = newV3Messages()

func newV3Messages() v3Messages {
	reference := msgField(&message{name: "Reference", ignoreOthers: true, fields: fieldList{
		{"$ref", 1, stringField}, {"summary", 2, stringField}, {"description", 3, stringField},
	}.table()})
	// orReference is a XOrReference message: Reference (2) for an object
	// naming $ref, else x (1).
	orReference := func(name string, x fieldEncoder) fieldEncoder {
		return msgField(&message{name: name, choose: func(obj members) (field, error) {
			if _, ok := obj.member("$ref"); ok {
				return field{2, reference}, nil
			}
			return field{1, x}, nil
		}})
	}
	// namedMap is a message listing every member as a name/value pair in
	// field 1.
	namedMap := func(name string, value fieldEncoder) fieldEncoder {
		return msgField(&message{name: name, rest: &restMembers{num: 1, value: value}})
	}
	refused := func(what string) fieldEncoder {
		return func([]byte, protowire.Number, any) ([]byte, error) {
			return nil, fmt.Errorf("%w: %s are not supported", errProtoForm, what)
		}
	}

	extDocs := msgField(&message{name: "ExternalDocs", extensions: 3, fields: fieldList{
		{"description", 1, stringField}, {"url", 2, stringField},
	}.table()})
	strs := namedMap("Strings", stringField)

	schema := &message{name: "Schema", extensions: 36}
	schemaF := msgField(schema)
	schemaOrRef := orReference("SchemaOrReference", schemaF)
	itemsF := func(dst []byte, num protowire.Number, v any) ([]byte, error) {
		// ItemsItem {repeated SchemaOrReference schema_or_reference = 1}
		// holds the one schema.
		if _, ok := v.(members); !ok {
			return nil, fmt.Errorf("%w: items is %s, not an object", errProtoForm, jsonKind(v))
		}
		body, err := schemaOrRef(nil, 1, v)
		if err != nil {
			return nil, err
		}
		return protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), body), nil
	}
	// AdditionalPropertiesItem {oneof {SchemaOrReference
	// schema_or_reference = 1; bool boolean = 2}}.
	additionalF := additionalProperties(schemaOrRef)
	schema.fields = fieldList{
		{"nullable", 1, boolField},
		{"discriminator", 2, msgField(&message{name: "Discriminator", extensions: 3, fields: fieldList{
			{"propertyName", 1, stringField}, {"mapping", 2, strs},
		}.table()})},
		{"readOnly", 3, boolField}, {"writeOnly", 4, boolField},
		{"xml", 5, msgField(&message{name: "Xml", extensions: 6, fields: fieldList{
			{"name", 1, stringField}, {"namespace", 2, stringField}, {"prefix", 3, stringField},
			{"attribute", 4, boolField}, {"wrapped", 5, boolField},
		}.table()})},
		{"externalDocs", 6, extDocs}, {"example", 7, anyField}, {"deprecated", 8, boolField},
		{"title", 9, stringField}, {"multipleOf", 10, doubleField}, {"maximum", 11, doubleField},
		{"exclusiveMaximum", 12, boolField}, {"minimum", 13, doubleField}, {"exclusiveMinimum", 14, boolField},
		{"maxLength", 15, int64Field}, {"minLength", 16, int64Field}, {"pattern", 17, stringField},
		{"maxItems", 18, int64Field}, {"minItems", 19, int64Field}, {"uniqueItems", 20, boolField},
		{"maxProperties", 21, int64Field}, {"minProperties", 22, int64Field},
		{"required", 23, repeatedString}, {"enum", 24, repeated(anyField)}, {"type", 25, stringField},
		{"allOf", 26, repeated(schemaOrRef)}, {"oneOf", 27, repeated(schemaOrRef)}, {"anyOf", 28, repeated(schemaOrRef)},
		{"not", 29, schemaF}, {"items", 30, itemsF}, {"properties", 31, namedMap("Properties", schemaOrRef)},
		{"additionalProperties", 32, additionalF}, {"default", 33, defaultTypeField},
		{"description", 34, stringField}, {"format", 35, stringField},
	}.table()

	example := orReference("ExampleOrReference", msgField(&message{name: "Example", extensions: 5, fields: fieldList{
		{"summary", 1, stringField}, {"description", 2, stringField}, {"value", 3, anyField},
		{"externalValue", 4, stringField},
	}.table()}))
	examples := namedMap("ExamplesOrReferences", example)

	// Header, MediaType and Encoding refer to each other.
	header := &message{name: "Header", extensions: 12}
	headers := namedMap("HeadersOrReferences", orReference("HeaderOrReference", msgField(header)))
	encoding := &message{name: "Encoding", extensions: 6, fields: fieldList{
		{"contentType", 1, stringField}, {"headers", 2, headers}, {"style", 3, stringField},
		{"explode", 4, boolField}, {"allowReserved", 5, boolField},
	}.table()}
	mediaTypes := namedMap("MediaTypes", msgField(&message{name: "MediaType", extensions: 5, fields: fieldList{
		{"schema", 1, schemaOrRef}, {"example", 2, anyField}, {"examples", 3, examples},
		{"encoding", 4, namedMap("Encodings", msgField(encoding))},
	}.table()}))
	header.fields = fieldList{
		{"description", 1, stringField}, {"required", 2, boolField}, {"deprecated", 3, boolField},
		{"allowEmptyValue", 4, boolField}, {"style", 5, stringField}, {"explode", 6, boolField},
		{"allowReserved", 7, boolField}, {"schema", 8, schemaOrRef}, {"example", 9, anyField},
		{"examples", 10, examples}, {"content", 11, mediaTypes},
	}.table()

	parameter := orReference("ParameterOrReference", msgField(&message{name: "Parameter", extensions: 14, fields: fieldList{
		{"name", 1, stringField}, {"in", 2, stringField}, {"description", 3, stringField},
		{"required", 4, boolField}, {"deprecated", 5, boolField}, {"allowEmptyValue", 6, boolField},
		{"style", 7, stringField}, {"explode", 8, boolField}, {"allowReserved", 9, boolField},
		{"schema", 10, schemaOrRef}, {"example", 11, anyField}, {"examples", 12, examples},
		{"content", 13, mediaTypes},
	}.table()}))
	requestBody := orReference("RequestBodyOrReference", msgField(&message{name: "RequestBody", extensions: 4, fields: fieldList{
		{"description", 1, stringField}, {"content", 2, mediaTypes}, {"required", 3, boolField},
	}.table()}))
	response := orReference("ResponseOrReference", msgField(&message{name: "Response", extensions: 5, fields: fieldList{
		{"description", 1, stringField}, {"headers", 2, headers}, {"content", 3, mediaTypes},
		{"links", 4, refused("links")},
	}.table()}))
	responses := msgField(&message{name: "Responses", extensions: 3,
		fields: fieldList{{"default", 1, response}}.table(),
		rest:   &restMembers{num: 2, accept: v3ResponseCode().MatchString, value: response},
	})

	serverVariable := msgField(&message{name: "ServerVariable", extensions: 4, fields: fieldList{
		{"enum", 1, repeatedString}, {"default", 2, stringField}, {"description", 3, stringField},
	}.table()})
	servers := repeated(msgField(&message{name: "Server", extensions: 4, fields: fieldList{
		{"url", 1, stringField}, {"description", 2, stringField},
		{"variables", 3, namedMap("ServerVariables", serverVariable)},
	}.table()}))
	security := repeated(namedMap("SecurityRequirement", stringArrayField))

	operation := msgField(&message{name: "Operation", extensions: 13, fields: fieldList{
		{"tags", 1, repeatedString}, {"summary", 2, stringField}, {"description", 3, stringField},
		{"externalDocs", 4, extDocs}, {"operationId", 5, stringField}, {"parameters", 6, repeated(parameter)},
		{"requestBody", 7, requestBody}, {"responses", 8, responses}, {"callbacks", 9, refused("callbacks")},
		{"deprecated", 10, boolField}, {"security", 11, security}, {"servers", 12, servers},
	}.table()})
	pathItem := msgField(&message{name: "PathItem", extensions: 14, fields: fieldList{
		{"$ref", 1, stringField}, {"summary", 2, stringField}, {"description", 3, stringField},
		{"get", 4, operation}, {"put", 5, operation}, {"post", 6, operation}, {"delete", 7, operation},
		{"options", 8, operation}, {"head", 9, operation}, {"patch", 10, operation}, {"trace", 11, operation},
		{"servers", 12, servers}, {"parameters", 13, repeated(parameter)},
	}.table()})
	paths := msgField(&message{name: "Paths", extensions: 2, rest: &restMembers{
		num: 1, accept: isPathName, value: pathItem,
	}})

	oauthFlow := msgField(&message{name: "OauthFlow", extensions: 5, fields: fieldList{
		{"authorizationUrl", 1, stringField}, {"tokenUrl", 2, stringField},
		{"refreshUrl", 3, stringField}, {"scopes", 4, strs},
	}.table()})
	securityScheme := orReference("SecuritySchemeOrReference", msgField(&message{name: "SecurityScheme", extensions: 9, fields: fieldList{
		{"type", 1, stringField}, {"description", 2, stringField}, {"name", 3, stringField},
		{"in", 4, stringField}, {"scheme", 5, stringField}, {"bearerFormat", 6, stringField},
		{"flows", 7, msgField(&message{name: "OauthFlows", extensions: 5, fields: fieldList{
			{"implicit", 1, oauthFlow}, {"password", 2, oauthFlow},
			{"clientCredentials", 3, oauthFlow}, {"authorizationCode", 4, oauthFlow},
		}.table()})},
		{"openIdConnectUrl", 8, stringField},
	}.table()}))
	components := msgField(&message{name: "Components", extensions: 10, fields: fieldList{
		{"schemas", 1, namedMap("SchemasOrReferences", schemaOrRef)},
		{"responses", 2, namedMap("ResponsesOrReferences", response)},
		{"parameters", 3, namedMap("ParametersOrReferences", parameter)},
		{"examples", 4, examples},
		{"requestBodies", 5, namedMap("RequestBodiesOrReferences", requestBody)},
		{"headers", 6, headers},
		{"securitySchemes", 7, namedMap("SecuritySchemesOrReferences", securityScheme)},
		{"links", 8, refused("links")}, {"callbacks", 9, refused("callbacks")},
	}.table()})

	info := msgField(&message{name: "Info", extensions: 7, fields: fieldList{
		{"title", 1, stringField}, {"description", 2, stringField}, {"termsOfService", 3, stringField},
		{"contact", 4, msgField(&message{name: "Contact", extensions: 4, fields: fieldList{
			{"name", 1, stringField}, {"url", 2, stringField}, {"email", 3, stringField},
		}.table()})},
		{"license", 5, msgField(&message{name: "License", extensions: 3, fields: fieldList{
			{"name", 1, stringField}, {"url", 2, stringField},
		}.table()})},
		{"version", 6, stringField}, {"summary", 8, stringField},
	}.table()})
	tag := msgField(&message{name: "Tag", extensions: 4, fields: fieldList{
		{"name", 1, stringField}, {"description", 2, stringField}, {"externalDocs", 3, extDocs},
	}.table()})

	document := &message{name: "Document", extensions: 9, fields: fieldList{
		{"openapi", 1, stringField}, {"info", 2, info}, {"servers", 3, servers}, {"paths", 4, paths},
		{"components", 5, components}, {"security", 6, security}, {"tags", 7, repeated(tag)},
		{"externalDocs", 8, extDocs},
	}.table()}
	return v3Messages{document: document}
}

// v3ResponseCode is the form of a Responses member that is a response
// other than the default one.
var v3ResponseCode = lazyRegexp(`^([0-9X]{3})$`)

// defaultTypeField writes a schema's default as DefaultType {oneof {double
// number = 1; bool boolean = 2; string string = 3}}: the member its JSON
// type calls for, written even when zero, or none for an object, an array
// or null, as gnostic reads them. Numbers are read as YAML resolves them
// (see yamlNumberKind): an integer beyond int64 as 0, a number beyond
// float64 as its text.
func defaultTypeField(dst []byte, num protowire.Number, v any) ([]byte, error) {
	var body []byte
	switch t := v.(type) {
	case bool:
		body = protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), protowire.EncodeBool(t))
	case string:
		body = protowire.AppendString(protowire.AppendTag(nil, 3, protowire.BytesType), t)
	case json.Number:
		s := string(t)
		switch yamlNumberKind(s) {
		case nodeInt:
			// An integer beyond int64 is read as 0.
			i, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				i = 0
			}
			body = appendDouble(nil, 1, float64(i))
		case nodeFloat:
			f, _ := strconv.ParseFloat(s, 64)
			body = appendDouble(nil, 1, f)
		default:
			body = protowire.AppendString(protowire.AppendTag(nil, 3, protowire.BytesType), s)
		}
	}
	return protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), body), nil
}

// appendDouble appends a double field, zero included.
func appendDouble(dst []byte, num protowire.Number, f float64) []byte {
	return protowire.AppendFixed64(protowire.AppendTag(dst, num, protowire.Fixed64Type), math.Float64bits(f))
}

// Kinds of scalar node a JSON number becomes in YAML.
const (
	nodeInt = iota
	nodeFloat
	nodeString
)

// yamlNumberKind is the node a JSON number becomes when YAML reads it: an
// integer when it fits int64 or uint64 (gnostic then reads only the
// int64 ones), else a float when it is a finite one, else a string.
func yamlNumberKind(s string) int {
	if _, err := strconv.ParseInt(s, 0, 64); err == nil {
		return nodeInt
	}
	if _, err := strconv.ParseUint(s, 0, 64); err == nil {
		return nodeInt
	}
	if yamlFloat().MatchString(s) {
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return nodeFloat
		}
	}
	return nodeString
}
