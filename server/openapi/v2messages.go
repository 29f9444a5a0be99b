package openapi

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// v2Messages holds the message layouts of OpenAPIv2.proto that a v2
// document can reach; the field numbers are the .proto file's.
type v2Messages struct {
	document *message
}

var v2Schema = newV2Messages()

// fieldList lists a message's fields as name, number, encoder triples.
type fieldList []struct {
	name string
	num  protowire.Number
	enc  fieldEncoder
}

func (l fieldList) table() map[string]field {
	t := make(map[string]field, len(l))
	for _, f := range l {
		t[f.name] = field{f.num, f.enc}
	}
	return t
}

func newV2Messages() v2Messages {
	var (
		schema   = &message{name: "Schema", extensions: 31}
		anyList  = repeated(anyField)
		schemaF  = msgField(schema)
		extDocsF = msgField(&message{name: "ExternalDocs", extensions: 3, fields: fieldList{
			{"description", 1, stringField}, {"url", 2, stringField},
		}.table()})
		jsonRefF = msgField(&message{name: "JsonReference", fields: fieldList{
			{"$ref", 1, stringField}, {"description", 2, stringField},
		}.table()})
	)

	xml := &message{name: "Xml", extensions: 6, fields: fieldList{
		{"name", 1, stringField}, {"namespace", 2, stringField}, {"prefix", 3, stringField},
		{"attribute", 4, boolField}, {"wrapped", 5, boolField},
	}.table()}
	namedSchemas := func(name string) fieldEncoder {
		return msgField(&message{name: name, rest: &restMembers{num: 1, value: schemaF}})
	}
	itemsF := func(dst []byte, num protowire.Number, v any) ([]byte, error) {
		// ItemsItem {repeated Schema schema = 1}: one schema, or a list.
		if _, ok := v.([]any); !ok {
			v = []any{v}
		}
		body, err := repeated(schemaF)(nil, 1, v)
		if err != nil {
			return nil, err
		}
		return protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), body), nil
	}
	// AdditionalPropertiesItem {oneof {Schema schema = 1; bool boolean = 2}}.
	additionalF := additionalProperties(schemaF)
	schema.fields = fieldList{
		{"$ref", 1, stringField}, {"format", 2, stringField}, {"title", 3, stringField},
		{"description", 4, stringField}, {"default", 5, anyField}, {"multipleOf", 6, doubleField},
		{"maximum", 7, doubleField}, {"exclusiveMaximum", 8, boolField}, {"minimum", 9, doubleField},
		{"exclusiveMinimum", 10, boolField}, {"maxLength", 11, int64Field}, {"minLength", 12, int64Field},
		{"pattern", 13, stringField}, {"maxItems", 14, int64Field}, {"minItems", 15, int64Field},
		{"uniqueItems", 16, boolField}, {"maxProperties", 17, int64Field}, {"minProperties", 18, int64Field},
		{"required", 19, repeatedString}, {"enum", 20, anyList}, {"additionalProperties", 21, additionalF},
		{"type", 22, typeItemField}, {"items", 23, itemsF}, {"allOf", 24, repeated(schemaF)},
		{"properties", 25, namedSchemas("Properties")}, {"discriminator", 26, stringField},
		{"readOnly", 27, boolField}, {"xml", 28, msgField(xml)}, {"externalDocs", 29, extDocsF},
		{"example", 30, anyField},
	}.table()

	fileSchema := &message{name: "FileSchema", extensions: 10, fields: fieldList{
		{"format", 1, stringField}, {"title", 2, stringField}, {"description", 3, stringField},
		{"default", 4, anyField}, {"required", 5, repeatedString}, {"type", 6, stringField},
		{"readOnly", 7, boolField}, {"externalDocs", 8, extDocsF}, {"example", 9, anyField},
	}.table()}
	schemaItem := &message{name: "SchemaItem", choose: func(obj members) (field, error) {
		if obj.stringMember("type") == "file" {
			return field{2, msgField(fileSchema)}, nil
		}
		return field{1, schemaF}, nil
	}}

	// The simple-value layouts (PrimitivesItems, Header and the non-body
	// parameters) share their validation members, numbered from first.
	validation := func(first protowire.Number) fieldList {
		return fieldList{
			{"collectionFormat", first, stringField}, {"default", first + 1, anyField},
			{"maximum", first + 2, doubleField}, {"exclusiveMaximum", first + 3, boolField},
			{"minimum", first + 4, doubleField}, {"exclusiveMinimum", first + 5, boolField},
			{"maxLength", first + 6, int64Field}, {"minLength", first + 7, int64Field},
			{"pattern", first + 8, stringField}, {"maxItems", first + 9, int64Field},
			{"minItems", first + 10, int64Field}, {"uniqueItems", first + 11, boolField},
			{"enum", first + 12, anyList}, {"multipleOf", first + 13, doubleField},
		}
	}
	primitives := &message{name: "PrimitivesItems", extensions: 18}
	primitives.fields = append(fieldList{
		{"type", 1, stringField}, {"format", 2, stringField}, {"items", 3, msgField(primitives)},
	}, validation(4)...).table()
	header := &message{name: "Header", extensions: 19, fields: append(fieldList{
		{"type", 1, stringField}, {"format", 2, stringField}, {"items", 3, msgField(primitives)},
		{"description", 18, stringField},
	}, validation(4)...).table()}

	// Header and path parameters lack allowEmptyValue, so their numbers
	// run one lower than those of query and form parameters.
	simpleParam := func(name string, allowEmpty bool) *message {
		l := fieldList{
			{"required", 1, boolField}, {"in", 2, stringField},
			{"description", 3, stringField}, {"name", 4, stringField},
		}
		next := protowire.Number(5)
		if allowEmpty {
			l = append(l, fieldList{{"allowEmptyValue", 5, boolField}}...)
			next++
		}
		l = append(l, fieldList{
			{"type", next, stringField}, {"format", next + 1, stringField},
			{"items", next + 2, msgField(primitives)},
		}...)
		l = append(l, validation(next+3)...)
		return &message{name: name, extensions: next + 17, fields: l.table()}
	}
	nonBody := map[string]field{
		"header":   {1, msgField(simpleParam("HeaderParameterSubSchema", false))},
		"formData": {2, msgField(simpleParam("FormDataParameterSubSchema", true))},
		"query":    {3, msgField(simpleParam("QueryParameterSubSchema", true))},
		"path":     {4, msgField(simpleParam("PathParameterSubSchema", false))},
	}
	nonBodyParameter := &message{name: "NonBodyParameter", choose: func(obj members) (field, error) {
		in := obj.stringMember("in")
		f, ok := nonBody[in]
		if !ok {
			return field{}, fmt.Errorf("%w: parameter in %q", errProtoForm, in)
		}
		return f, nil
	}}
	bodyParameter := &message{name: "BodyParameter", extensions: 6, fields: fieldList{
		{"description", 1, stringField}, {"name", 2, stringField}, {"in", 3, stringField},
		{"required", 4, boolField}, {"schema", 5, schemaF},
	}.table()}
	parameter := &message{name: "Parameter", choose: func(obj members) (field, error) {
		if obj.stringMember("in") == "body" {
			return field{1, msgField(bodyParameter)}, nil
		}
		return field{2, msgField(nonBodyParameter)}, nil
	}}
	parametersItem := &message{name: "ParametersItem", choose: func(obj members) (field, error) {
		if _, ok := obj.member("$ref"); ok {
			return field{2, jsonRefF}, nil
		}
		return field{1, msgField(parameter)}, nil
	}}
	parametersF := repeated(msgField(parametersItem))

	response := &message{name: "Response", extensions: 5, fields: fieldList{
		{"description", 1, stringField}, {"schema", 2, msgField(schemaItem)},
		{"headers", 3, msgField(&message{name: "Headers", rest: &restMembers{num: 1, value: msgField(header)}})},
		{"examples", 4, msgField(&message{name: "Examples", rest: &restMembers{num: 1, value: anyField}})},
	}.table()}
	responseValue := &message{name: "ResponseValue", choose: func(obj members) (field, error) {
		if _, ok := obj.member("$ref"); ok {
			return field{2, jsonRefF}, nil
		}
		return field{1, msgField(response)}, nil
	}}
	responses := &message{name: "Responses", extensions: 2, rest: &restMembers{
		num: 1, accept: responseCode().MatchString, value: msgField(responseValue),
	}}

	security := repeated(msgField(&message{name: "SecurityRequirement", rest: &restMembers{
		num: 1, value: stringArrayField,
	}}))
	operation := &message{name: "Operation", extensions: 13, fields: fieldList{
		{"tags", 1, repeatedString}, {"summary", 2, stringField}, {"description", 3, stringField},
		{"externalDocs", 4, extDocsF}, {"operationId", 5, stringField}, {"produces", 6, repeatedString},
		{"consumes", 7, repeatedString}, {"parameters", 8, parametersF}, {"responses", 9, msgField(responses)},
		{"schemes", 10, repeatedString}, {"deprecated", 11, boolField}, {"security", 12, security},
	}.table()}
	opF := msgField(operation)
	pathItem := &message{name: "PathItem", extensions: 10, fields: fieldList{
		{"$ref", 1, stringField}, {"get", 2, opF}, {"put", 3, opF}, {"post", 4, opF},
		{"delete", 5, opF}, {"options", 6, opF}, {"head", 7, opF}, {"patch", 8, opF},
		{"parameters", 9, parametersF},
	}.table()}
	paths := &message{name: "Paths", extensions: 1, rest: &restMembers{
		num: 2, accept: isPathName, value: msgField(pathItem),
	}}

	info := &message{name: "Info", extensions: 7, fields: fieldList{
		{"title", 1, stringField}, {"version", 2, stringField}, {"description", 3, stringField},
		{"termsOfService", 4, stringField},
		{"contact", 5, msgField(&message{name: "Contact", extensions: 4, fields: fieldList{
			{"name", 1, stringField}, {"url", 2, stringField}, {"email", 3, stringField},
		}.table()})},
		{"license", 6, msgField(&message{name: "License", extensions: 3, fields: fieldList{
			{"name", 1, stringField}, {"url", 2, stringField},
		}.table()})},
	}.table()}
	tag := &message{name: "Tag", extensions: 4, fields: fieldList{
		{"name", 1, stringField}, {"description", 2, stringField}, {"externalDocs", 3, extDocsF},
	}.table()}

	document := &message{name: "Document", extensions: 16, fields: fieldList{
		{"swagger", 1, stringField}, {"info", 2, msgField(info)}, {"host", 3, stringField},
		{"basePath", 4, stringField}, {"schemes", 5, repeatedString}, {"consumes", 6, repeatedString},
		{"produces", 7, repeatedString}, {"paths", 8, msgField(paths)},
		{"definitions", 9, namedSchemas("Definitions")},
		{"parameters", 10, msgField(&message{name: "ParameterDefinitions", rest: &restMembers{num: 1, value: msgField(parameter)}})},
		{"responses", 11, msgField(&message{name: "ResponseDefinitions", rest: &restMembers{num: 1, value: msgField(response)}})},
		{"security", 12, security},
		{"securityDefinitions", 13, msgField(&message{name: "SecurityDefinitions", rest: &restMembers{num: 1, value: msgField(securityScheme())}})},
		{"tags", 14, repeated(msgField(tag))}, {"externalDocs", 15, extDocsF},
	}.table()}
	return v2Messages{document: document}
}

// isPathName tells the members of Paths that are paths.
func isPathName(name string) bool { return len(name) > 0 && name[0] == '/' }

// stringArrayField writes a list of strings as StringArray {repeated
// value = 1}; an empty list is still a present, empty message.
func stringArrayField(dst []byte, num protowire.Number, v any) ([]byte, error) {
	body, err := repeatedString(nil, 1, v)
	if err != nil {
		return nil, err
	}
	return protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), body), nil
}

// securityScheme is SecurityDefinitionsItem: one message per scheme type,
// and for OAuth2 per flow.
func securityScheme() *message {
	scopes := msgField(&message{name: "Oauth2Scopes", rest: &restMembers{num: 1, value: stringField}})
	oauth := func(name string, authURL, tokenURL bool) *message {
		l := fieldList{{"type", 1, stringField}, {"flow", 2, stringField}, {"scopes", 3, scopes}}
		next := protowire.Number(4)
		if authURL {
			l = append(l, fieldList{{"authorizationUrl", next, stringField}}...)
			next++
		}
		if tokenURL {
			l = append(l, fieldList{{"tokenUrl", next, stringField}}...)
			next++
		}
		l = append(l, fieldList{{"description", next, stringField}}...)
		return &message{name: name, extensions: next + 1, fields: l.table()}
	}
	alternatives := map[string]field{
		"basic": {1, msgField(&message{name: "BasicAuthenticationSecurity", extensions: 3, fields: fieldList{
			{"type", 1, stringField}, {"description", 2, stringField},
		}.table()})},
		"apiKey": {2, msgField(&message{name: "ApiKeySecurity", extensions: 5, fields: fieldList{
			{"type", 1, stringField}, {"name", 2, stringField}, {"in", 3, stringField}, {"description", 4, stringField},
		}.table()})},
		"oauth2/implicit":    {3, msgField(oauth("Oauth2ImplicitSecurity", true, false))},
		"oauth2/password":    {4, msgField(oauth("Oauth2PasswordSecurity", false, true))},
		"oauth2/application": {5, msgField(oauth("Oauth2ApplicationSecurity", false, true))},
		"oauth2/accessCode":  {6, msgField(oauth("Oauth2AccessCodeSecurity", true, true))},
	}
	return &message{name: "SecurityDefinitionsItem", choose: func(obj members) (field, error) {
		key := obj.stringMember("type")
		if key == "oauth2" {
			key += "/" + obj.stringMember("flow")
		}
		f, ok := alternatives[key]
		if !ok {
			return field{}, fmt.Errorf("%w: security scheme %q", errProtoForm, key)
		}
		return f, nil
	}}
}

// additionalProperties encodes an AdditionalPropertiesItem, in both
// document versions a oneof of a schema (field 1, written by schemaF) and
// a bool (field 2): a set oneof member is written even when false.
func additionalProperties(schemaF fieldEncoder) fieldEncoder {
	return func(dst []byte, num protowire.Number, v any) ([]byte, error) {
		var body []byte
		switch t := v.(type) {
		case bool:
			body = protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), protowire.EncodeBool(t))
		case members:
			var err error
			if body, err = schemaF(nil, 1, t); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%w: additionalProperties is %s", errProtoForm, jsonKind(v))
		}
		return protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), body), nil
	}
}
