package protobuf

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"platd/server/schema"
)

// Marshal appends the protobuf message of obj, an object of schema s, to dst
// and returns the extended slice: fields in ascending number order,
// ProtoAlways fields written even when absent or zero, pointer fields
// whenever present, lists and maps only when non-empty, map entries sorted
// by key, repeated scalars unpacked. kind and apiVersion are not written
// (they belong to the envelope). Quantity strings are written as given, so
// they must be canonical, as schema.Decode leaves them. obj is only read.
// Errors wrap ErrNoProtobuf, ErrType or ErrValue and name the member.
func Marshal(dst []byte, obj map[string]any, s *schema.Schema) ([]byte, error) {
	if s == nil || s.Type != schema.Object || s.ProtoMessage == "" {
		return dst, ErrNoProtobuf
	}
	var e encoder
	return e.object(dst, obj, s)
}

// encoder carries the state of one Marshal call.
type encoder struct {
	depth int
	// props is the innermost JSONSchemaProps schema, which the
	// JSONSchemaPropsOr* messages embed but their Any schemas do not name.
	props *schema.Schema
}

func (e *encoder) object(dst []byte, m map[string]any, s *schema.Schema) ([]byte, error) {
	if e.depth++; e.depth > maxDepth {
		return dst, fmt.Errorf("%w: nesting deeper than %d", ErrValue, maxDepth)
	}
	defer func() { e.depth-- }()
	l := layoutOf(s)
	if l.isProps {
		saved := e.props
		e.props = s
		defer func() { e.props = saved }()
	}
	var err error
	for _, f := range l.ordered {
		if dst, err = e.field(dst, m, f); err != nil {
			return dst, at(f.Name, err)
		}
	}
	return dst, nil
}

func (e *encoder) field(dst []byte, m map[string]any, f *schema.Field) ([]byte, error) {
	num := protowire.Number(f.ProtoNumber)
	if f.Inline {
		// The embedded struct's members live in the parent object.
		dst, start := openBytes(dst, num)
		dst, err := e.object(dst, m, f.Schema)
		return closeBytes(dst, start), err
	}
	v := m[f.Name]
	fs := f.Schema
	switch {
	case fs.Type == schema.Map:
		if v == nil {
			return dst, nil
		}
		mm, ok := v.(map[string]any)
		if !ok {
			return dst, fmt.Errorf("%w: map is %T", ErrType, v)
		}
		return e.mapEntries(dst, num, mm, fs.Elem)
	case fs.Type == schema.Array && layoutOf(fs).kind != stringsWrapper:
		if v == nil {
			return dst, nil
		}
		a, ok := v.([]any)
		if !ok {
			return dst, fmt.Errorf("%w: list is %T", ErrType, v)
		}
		var err error
		for i, x := range a {
			if dst, err = e.value(dst, num, x, fs.Elem); err != nil {
				return dst, atIndex(i, err)
			}
		}
		return dst, nil
	case v == nil && !f.ProtoAlways:
		return dst, nil
	}
	return e.value(dst, num, v, fs)
}

// mapEntries writes one {1 key, 2 value} entry per key in sorted key order.
// A bytes value is written only when non-nil; other values always.
func (e *encoder) mapEntries(dst []byte, num protowire.Number, m map[string]any, elem *schema.Schema) ([]byte, error) {
	if len(m) == 0 {
		return dst, nil
	}
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m[k]
		var start int
		dst, start = openBytes(dst, num)
		dst = appendStringField(dst, entryKey, k)
		if v != nil || elem == nil || elem.Type != schema.Bytes {
			var err error
			if dst, err = e.value(dst, entryValue, v, elem); err != nil {
				return dst, atIndex(k, err)
			}
		}
		dst = closeBytes(dst, start)
	}
	return dst, nil
}

// value writes one tagged value of schema s; nil stands for the zero value
// of the Go field (an always-written field, a list element, a map value).
func (e *encoder) value(dst []byte, num protowire.Number, v any, s *schema.Schema) ([]byte, error) {
	if s == nil {
		return dst, ErrNoProtobuf
	}
	switch s.Type {
	case schema.String:
		if layoutOf(s).kind == duration {
			dst, start := openBytes(dst, num)
			dst, err := appendDurationBody(dst, v)
			return closeBytes(dst, start), err
		}
		str, ok := v.(string)
		if !ok && v != nil {
			return dst, fmt.Errorf("%w: string is %T", ErrType, v)
		}
		return appendStringField(dst, num, str), nil
	case schema.Integer:
		n, err := toInt(v)
		if err != nil {
			return dst, err
		}
		return appendVarintField(dst, num, uint64(n)), nil
	case schema.Boolean:
		b, ok := v.(bool)
		if !ok && v != nil {
			return dst, fmt.Errorf("%w: boolean is %T", ErrType, v)
		}
		return appendVarintField(dst, num, protowire.EncodeBool(b)), nil
	case schema.Number:
		var f float64
		switch x := v.(type) {
		case nil:
		case float64:
			f = x
		default:
			n, err := toInt(v)
			if err != nil {
				return dst, err
			}
			f = float64(n)
		}
		dst = protowire.AppendTag(dst, num, protowire.Fixed64Type)
		return protowire.AppendFixed64(dst, math.Float64bits(f)), nil
	case schema.Bytes:
		var raw []byte
		switch x := v.(type) {
		case nil:
		case string:
			var err error
			if raw, err = base64.StdEncoding.DecodeString(x); err != nil {
				return dst, fmt.Errorf("%w: %w", ErrValue, err)
			}
		default:
			return dst, fmt.Errorf("%w: bytes are %T", ErrType, v)
		}
		dst = protowire.AppendTag(dst, num, protowire.BytesType)
		return protowire.AppendBytes(dst, raw), nil
	case schema.Object:
		mm, ok := v.(map[string]any)
		if !ok && v != nil {
			return dst, fmt.Errorf("%w: object is %T", ErrType, v)
		}
		if s.ProtoMessage == "" {
			return dst, ErrNoProtobuf
		}
		dst, start := openBytes(dst, num)
		dst, err := e.object(dst, mm, s)
		return closeBytes(dst, start), err
	}
	dst, start := openBytes(dst, num)
	dst, err := e.body(dst, v, s)
	return closeBytes(dst, start), err
}

// body writes the body of a hand-encoded message.
func (e *encoder) body(dst []byte, v any, s *schema.Schema) ([]byte, error) {
	switch s.Type {
	case schema.Time, schema.MicroTime:
		return appendTimeBody(dst, v, s.Type)
	case schema.Quantity:
		q, err := quantityString(v)
		if err != nil {
			return dst, err
		}
		return appendStringField(dst, quantityText, q), nil
	case schema.IntOrString:
		return appendIntOrStringBody(dst, v)
	case schema.Array, schema.Map:
		// A strings wrapper, or an array-valued map entry (ExtraValue).
		if s.Type == schema.Map || s.Elem == nil || s.Elem.Type != schema.String {
			return dst, ErrNoProtobuf
		}
		return appendStrings(dst, wrapperItems, v)
	case schema.Any:
		return e.anyBody(dst, v, s)
	}
	return dst, ErrNoProtobuf
}

// appendStrings writes each string of a generic list as field num.
func appendStrings(dst []byte, num protowire.Number, v any) ([]byte, error) {
	if v == nil {
		return dst, nil
	}
	a, ok := v.([]any)
	if !ok {
		return dst, fmt.Errorf("%w: list is %T", ErrType, v)
	}
	for i, x := range a {
		str, ok := x.(string)
		if !ok && x != nil {
			return dst, atIndex(i, fmt.Errorf("%w: string is %T", ErrType, x))
		}
		dst = appendStringField(dst, num, str)
	}
	return dst, nil
}

func (e *encoder) anyBody(dst []byte, v any, s *schema.Schema) ([]byte, error) {
	switch layoutOf(s).kind {
	case rawJSON, rawExtension:
		if v == nil {
			return dst, nil
		}
		dst, start := openBytes(dst, rawBytes)
		dst, err := appendJSON(dst, v)
		return closeBytes(dst, start), err
	case propsOrArray:
		switch x := v.(type) {
		case nil:
			return dst, nil
		case []any:
			var err error
			for i, item := range x {
				if dst, err = e.props1(dst, propsArray, item); err != nil {
					return dst, atIndex(i, err)
				}
			}
			return dst, nil
		}
		return e.props1(dst, propsSchema, v)
	case propsOrBool:
		if b, ok := v.(bool); ok || v == nil {
			return appendVarintField(dst, propsAllows, protowire.EncodeBool(b)), nil
		}
		dst = appendVarintField(dst, propsAllows, 1)
		return e.props1(dst, propsBoolSch, v)
	case propsOrStrings:
		switch v.(type) {
		case nil:
			return dst, nil
		case []any:
			return appendStrings(dst, propsStrings, v)
		}
		return e.props1(dst, propsSchema, v)
	}
	return dst, ErrNoProtobuf
}

// props1 writes one JSONSchemaProps message as field num.
func (e *encoder) props1(dst []byte, num protowire.Number, v any) ([]byte, error) {
	if e.props == nil {
		return dst, ErrNoProtobuf
	}
	return e.value(dst, num, v, e.props)
}
