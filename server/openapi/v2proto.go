package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// The v2 document in protobuf is the openapi.v2.Document message of
// gnostic's OpenAPIv2.proto, the form kubectl downloads. It is derived
// from the JSON document exactly as upstream derives it: every object
// becomes the message its position calls for, maps become repeated
// name/value pairs in the JSON's member order, "x-" members become
// vendor_extension entries, and free-form values (default, enum, example,
// extension values) become an Any holding their YAML text (see
// appendYAML). Within a message, fields are written in field-number order
// and proto3 zero values are left out, as protobuf marshalling does.

// errProtoForm reports a document that does not fit its protobuf form
// (OpenAPIv2.proto or OpenAPIv3.proto).
var errProtoForm = errors.New("openapi: document does not fit its protobuf form")

// encodeV2Protobuf returns the protobuf form of a v2 JSON document.
func encodeV2Protobuf(doc []byte) ([]byte, error) {
	tree, err := parseTree(doc)
	if err != nil {
		return nil, err
	}
	return v2Schema.document.encode(nil, tree)
}

// fieldEncoder appends field num holding v to dst, or nothing for a proto3
// zero value.
type fieldEncoder func(dst []byte, num protowire.Number, v any) ([]byte, error)

// message describes how one message is read from a JSON object.
type message struct {
	name string
	// fields maps a member name to the field it fills.
	fields map[string]field
	// extensions is the field of "x-" members; 0 when the message has none.
	extensions protowire.Number
	// rest, when set, takes the members no field names (a map's entries).
	rest *restMembers
	// choose, when set, picks the alternative of a oneof message from the
	// object: the field to write the whole object into.
	choose func(obj members) (field, error)
	// ignoreOthers skips the members nothing above takes, instead of
	// refusing them.
	ignoreOthers bool
}

type field struct {
	num protowire.Number
	enc fieldEncoder
}

// restMembers writes the members a message does not name as repeated
// name/value pair messages (name = 1, value = 2) in field num.
type restMembers struct {
	num protowire.Number
	// accept tells which names belong here; nil accepts every name.
	accept func(name string) bool
	value  fieldEncoder
}

// chunk is one encoded field, kept to sort a message's fields by number.
type chunk struct {
	num  protowire.Number
	data []byte
}

// encode appends the message body read from v (which must be an object)
// to dst.
func (m *message) encode(dst []byte, v any) ([]byte, error) {
	obj, ok := v.(members)
	if !ok {
		return nil, fmt.Errorf("%w: %s is %s, not an object", errProtoForm, m.name, jsonKind(v))
	}
	if m.choose != nil {
		f, err := m.choose(obj)
		if err != nil {
			return nil, err
		}
		return f.enc(dst, f.num, obj)
	}
	var chunks []chunk
	add := func(num protowire.Number, enc fieldEncoder, name string, v any) error {
		data, err := enc(nil, num, v)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(data) > 0 {
			chunks = append(chunks, chunk{num, data})
		}
		return nil
	}
	for _, e := range obj {
		var err error
		switch f, named := m.fields[e.name]; {
		case named:
			err = add(f.num, f.enc, e.name, e.value)
		case m.extensions != 0 && strings.HasPrefix(e.name, "x-"):
			err = add(m.extensions, namedPair(e.name, anyField), e.name, e.value)
		case m.rest != nil && (m.rest.accept == nil || m.rest.accept(e.name)):
			err = add(m.rest.num, namedPair(e.name, m.rest.value), e.name, e.value)
		case m.ignoreOthers:
		default:
			err = fmt.Errorf("%w: %s has no member %q", errProtoForm, m.name, e.name)
		}
		if err != nil {
			return nil, err
		}
	}
	// Stable: repeated entries keep the order of the JSON.
	slices.SortStableFunc(chunks, func(a, b chunk) int { return int(a.num) - int(b.num) })
	for _, c := range chunks {
		dst = append(dst, c.data...)
	}
	return dst, nil
}

// msgField writes v as a nested message. Present objects are written even
// when empty.
func msgField(m *message) fieldEncoder {
	return func(dst []byte, num protowire.Number, v any) ([]byte, error) {
		body, err := m.encode(nil, v)
		if err != nil {
			return nil, err
		}
		return protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), body), nil
	}
}

// repeated writes each element of a JSON array with enc.
func repeated(enc fieldEncoder) fieldEncoder {
	return func(dst []byte, num protowire.Number, v any) ([]byte, error) {
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: %s, not an array", errProtoForm, jsonKind(v))
		}
		for i, e := range arr {
			var err error
			if dst, err = enc(dst, num, e); err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return dst, nil
	}
}

// namedPair writes one map entry as a message {name = 1, value = 2}.
func namedPair(name string, value fieldEncoder) fieldEncoder {
	return func(dst []byte, num protowire.Number, v any) ([]byte, error) {
		body := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), name)
		body, err := value(body, 2, v)
		if err != nil {
			return nil, err
		}
		return protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), body), nil
	}
}

func stringField(dst []byte, num protowire.Number, v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("%w: %s, not a string", errProtoForm, jsonKind(v))
	}
	if s == "" {
		return dst, nil
	}
	return protowire.AppendString(protowire.AppendTag(dst, num, protowire.BytesType), s), nil
}

// repeatedString writes every string, empty ones included.
func repeatedString(dst []byte, num protowire.Number, v any) ([]byte, error) {
	return repeated(func(dst []byte, num protowire.Number, v any) ([]byte, error) {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%w: %s, not a string", errProtoForm, jsonKind(v))
		}
		return protowire.AppendString(protowire.AppendTag(dst, num, protowire.BytesType), s), nil
	})(dst, num, v)
}

func boolField(dst []byte, num protowire.Number, v any) ([]byte, error) {
	b, ok := v.(bool)
	if !ok {
		return nil, fmt.Errorf("%w: %s, not a boolean", errProtoForm, jsonKind(v))
	}
	if !b {
		return dst, nil
	}
	return protowire.AppendVarint(protowire.AppendTag(dst, num, protowire.VarintType), 1), nil
}

func doubleField(dst []byte, num protowire.Number, v any) ([]byte, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("%w: %s, not a number", errProtoForm, jsonKind(v))
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errProtoForm, err)
	}
	if f == 0 {
		return dst, nil
	}
	return protowire.AppendFixed64(protowire.AppendTag(dst, num, protowire.Fixed64Type), math.Float64bits(f)), nil
}

func int64Field(dst []byte, num protowire.Number, v any) ([]byte, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("%w: %s, not a number", errProtoForm, jsonKind(v))
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errProtoForm, err)
	}
	if i == 0 {
		return dst, nil
	}
	return protowire.AppendVarint(protowire.AppendTag(dst, num, protowire.VarintType), uint64(i)), nil
}

// anyField writes a free-form value as openapi.v2.Any {yaml = 2}.
func anyField(dst []byte, num protowire.Number, v any) ([]byte, error) {
	body := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), appendYAML(nil, v))
	return protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), body), nil
}

// typeItemField writes a schema's type, one name or a list of names, as
// TypeItem {repeated value = 1}.
func typeItemField(dst []byte, num protowire.Number, v any) ([]byte, error) {
	var body []byte
	var err error
	if s, ok := v.(string); ok {
		body = protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), s)
	} else if body, err = repeatedString(nil, 1, v); err != nil {
		return nil, err
	}
	return protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), body), nil
}

// jsonKind names the JSON type of v for errors.
func jsonKind(v any) string {
	switch v.(type) {
	case members:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// member returns the value of the member called name, or nil.
func (obj members) member(name string) (any, bool) {
	for _, e := range obj {
		if e.name == name {
			return e.value, true
		}
	}
	return nil, false
}

// stringMember returns the string member called name, or "".
func (obj members) stringMember(name string) string {
	v, _ := obj.member(name)
	s, _ := v.(string)
	return s
}

// responseCode is the form of a Responses member that is a response.
var responseCode = lazyRegexp(`^([0-9]{3})$|^(default)$`)
