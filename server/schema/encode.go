package schema

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"platd/codec"
)

// Encode appends the compact JSON of obj to dst in the field order of s and
// returns the extended slice. Members follow Go's emission rules as
// recorded in each Field (OmitEmpty, Pointer); top-level kind and
// apiVersion come first; members s does not declare are written after the
// declared ones in sorted order when s preserves unknown fields and dropped
// otherwise. Map keys are sorted, strings escaped as encoding/json escapes
// them, quantities canonicalised and times written in UTC. obj is only read.
func Encode(dst []byte, obj map[string]any, s *Schema) []byte {
	return encObject(dst, obj, s, true)
}

func encObject(dst []byte, m map[string]any, s *Schema, top bool) []byte {
	dst = append(dst, '{')
	n := 0
	member := func(name string) {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = codec.AppendJSONString(dst, name)
		dst = append(dst, ':')
	}
	if top {
		for _, k := range [2]string{"kind", "apiVersion"} {
			if v, ok := m[k].(string); ok && v != "" {
				member(k)
				dst = codec.AppendJSONString(dst, v)
			}
		}
	}
	if s == nil {
		s = &Schema{Type: Object, PreserveUnknown: true}
	}
	// unseen counts the members of m no field has read yet: once none is
	// left, the remaining fields are absent without a lookup (objects hold
	// few of their schema's many fields).
	unseen := len(m)
	if top {
		for _, k := range [2]string{"kind", "apiVersion"} {
			if _, ok := m[k]; ok {
				unseen--
			}
		}
	}
	for _, f := range s.Fields {
		if f.Inline || top && (f.Name == "kind" || f.Name == "apiVersion") {
			continue
		}
		var v any
		var ok bool
		if unseen > 0 {
			if v, ok = m[f.Name]; ok {
				unseen--
			}
		}
		if !ok || v == nil {
			if ok && s.Loose {
				member(f.Name)
				dst = append(dst, "null"...)
				continue
			}
			if f.OmitEmpty {
				continue
			}
			member(f.Name)
			if f.Pointer {
				dst = append(dst, "null"...)
			} else {
				dst = encZero(dst, f.Schema)
			}
			continue
		}
		if f.OmitEmpty && !f.Pointer && isEmpty(v) {
			continue
		}
		member(f.Name)
		dst = encValue(dst, v, f.Schema)
	}
	if s.PreserveUnknown && len(m) > 0 {
		var extra []string
		for k := range m {
			if s.Field(k) == nil && !(top && (k == "kind" || k == "apiVersion")) {
				extra = append(extra, k)
			}
		}
		slices.Sort(extra)
		for _, k := range extra {
			member(k)
			dst = encAny(dst, m[k])
		}
	}
	return append(dst, '}')
}

// isEmpty reports whether encoding/json's omitempty drops v.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case int64:
		return x == 0
	case float64:
		return x == 0
	case int:
		return x == 0
	case bool:
		return !x
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case []string:
		return len(x) == 0
	case map[string]string:
		return len(x) == 0
	}
	return false
}

// encZero writes the encoding of an absent non-omitempty value.
func encZero(dst []byte, s *Schema) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	switch s.Type {
	case String:
		return append(dst, `""`...)
	case Integer, Number, IntOrString:
		return append(dst, '0')
	case Boolean:
		return append(dst, "false"...)
	case Quantity:
		return append(dst, `"0"`...)
	case Object:
		return encObject(dst, nil, s, false)
	}
	return append(dst, "null"...)
}

func encValue(dst []byte, v any, s *Schema) []byte {
	if v == nil {
		if s != nil && s.Loose {
			return append(dst, "null"...)
		}
		return encZero(dst, s)
	}
	if s == nil {
		return encAny(dst, v)
	}
	switch s.Type {
	case Object:
		if m, ok := v.(map[string]any); ok {
			return encObject(dst, m, s, false)
		}
	case Map:
		if m, ok := v.(map[string]any); ok {
			return encMap(dst, m, s.Elem)
		}
	case Array:
		if a, ok := v.([]any); ok {
			dst = append(dst, '[')
			for i, e := range a {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = encValue(dst, e, s.Elem)
			}
			return append(dst, ']')
		}
	case Integer:
		if f, ok := v.(float64); ok && f == float64(int64(f)) {
			return strconv.AppendInt(dst, int64(f), 10)
		}
	case Quantity:
		switch x := v.(type) {
		case string:
			if q, err := CanonicalQuantity(x); err == nil {
				return codec.AppendJSONString(dst, q)
			}
		case int64:
			return codec.AppendJSONString(dst, strconv.FormatInt(x, 10))
		}
	case Time, MicroTime:
		if x, ok := v.(string); ok {
			return codec.AppendJSONString(dst, canonicalTime(x, s.Type))
		}
	}
	return encAny(dst, v)
}

// canonicalTime rewrites an RFC 3339 time in UTC at the type's precision,
// leaving already canonical and unparsable strings as they are.
func canonicalTime(x string, t Type) string {
	if t == Time && len(x) == 20 && x[10] == 'T' && x[19] == 'Z' {
		return x
	}
	if t == MicroTime && len(x) == 27 && x[10] == 'T' && x[19] == '.' && x[26] == 'Z' {
		return x
	}
	p, err := time.Parse(time.RFC3339, x)
	if err != nil {
		return x
	}
	return formatTime(p, t)
}

func encMap(dst []byte, m map[string]any, elem *Schema) []byte {
	dst = append(dst, '{')
	if len(m) == 1 {
		for k, v := range m {
			dst = codec.AppendJSONString(dst, k)
			dst = append(dst, ':')
			dst = encValue(dst, v, elem)
		}
		return append(dst, '}')
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = codec.AppendJSONString(dst, k)
		dst = append(dst, ':')
		dst = encValue(dst, m[k], elem)
	}
	return append(dst, '}')
}

// RawJSON is a generic value held as its compact JSON, written as it is:
// for a value whose member order is not the sorted order generic objects
// are written in (a FieldsV1 trie lists keyed items by key value).
type RawJSON []byte

// MarshalJSON writes r as it is, so encoding/json agrees with AppendAny.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// AppendAny appends the compact JSON of a generic value as Decode and
// DecodeAny produce it: nil, string, bool, int64, int, float64, []any and
// map[string]any, objects with sorted keys, strings escaped and numbers
// written as encoding/json writes them. Any other Go type is an error
// wrapping ErrType; NaN and infinities, which JSON cannot carry, are an
// error that does not. On error dst holds a partial encoding.
func AppendAny(dst []byte, v any) ([]byte, error) {
	return appendAny(dst, v, true)
}

// encAny writes a generic value like AppendAny but never fails: it also
// takes int32, []string and map[string]string, and writes null for NaN,
// infinities and values of other types.
func encAny(dst []byte, v any) []byte {
	dst, _ = appendAny(dst, v, false)
	return dst
}

// appendAny is AppendAny when strict and encAny otherwise.
func appendAny(dst []byte, v any, strict bool) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return codec.AppendJSONString(dst, x), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case float64:
		if strict && (math.IsNaN(x) || math.IsInf(x, 0)) {
			return dst, &wrapped{msg: "json: unsupported value: " + strconv.FormatFloat(x, 'g', -1, 64)}
		}
		return codec.AppendJSONFloat(dst, x), nil
	case map[string]any:
		return appendAnyMap(dst, x, strict)
	case RawJSON:
		return append(dst, x...), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendAny(dst, e, strict); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	if strict {
		return dst, &wrapped{msg: "json: unsupported type: " + fmt.Sprintf("%T", v), kind: ErrType}
	}
	switch x := v.(type) {
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case []string:
		return codec.AppendJSONStrings(dst, x), nil
	case map[string]string:
		return codec.AppendJSONStringMap(dst, x), nil
	}
	return append(dst, "null"...), nil
}

// appendAnyMap writes a generic object with sorted keys.
func appendAnyMap(dst []byte, m map[string]any, strict bool) ([]byte, error) {
	dst = append(dst, '{')
	if len(m) == 1 {
		for k, v := range m {
			dst = codec.AppendJSONString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendAny(dst, v, strict); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = codec.AppendJSONString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendAny(dst, m[k], strict); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}
