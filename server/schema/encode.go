package schema

import (
	"slices"
	"strconv"
	"time"
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
		dst = appendString(dst, name)
		dst = append(dst, ':')
	}
	if top {
		for _, k := range [2]string{"kind", "apiVersion"} {
			if v, ok := m[k].(string); ok && v != "" {
				member(k)
				dst = appendString(dst, v)
			}
		}
	}
	if s == nil {
		s = &Schema{Type: Object, PreserveUnknown: true}
	}
	for _, f := range s.Fields {
		if f.Inline || top && (f.Name == "kind" || f.Name == "apiVersion") {
			continue
		}
		v, ok := m[f.Name]
		if !ok || v == nil {
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
				return appendString(dst, q)
			}
		case int64:
			return appendString(dst, strconv.FormatInt(x, 10))
		}
	case Time, MicroTime:
		if x, ok := v.(string); ok {
			return appendString(dst, canonicalTime(x, s.Type))
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
			dst = appendString(dst, k)
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
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = encValue(dst, m[k], elem)
	}
	return append(dst, '}')
}

// encAny writes a generic value: maps with sorted keys, numbers as
// encoding/json writes them.
func encAny(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case string:
		return appendString(dst, x)
	case bool:
		if x {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case int32:
		return strconv.AppendInt(dst, int64(x), 10)
	case float64:
		return appendFloat(dst, x)
	case map[string]any:
		return encMap(dst, x, nil)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = encAny(dst, e)
		}
		return append(dst, ']')
	case []string:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, e)
		}
		return append(dst, ']')
	case map[string]string:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendString(dst, x[k])
		}
		return append(dst, '}')
	}
	return append(dst, "null"...)
}
