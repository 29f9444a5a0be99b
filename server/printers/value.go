package printers

import (
	"math"
	"strconv"
	"time"

	"platd/server/schema"
)

// The readers below walk a decoded JSON object. A missing member, a null and
// a member of the wrong type all read as the zero value, as they do when
// upstream decodes the object into its Go type: a printer never fails on a
// stored object, whatever it holds.

// at returns the value at path inside v, or nil.
func at(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// has reports whether path holds a non-null value: the decoded form of a
// set pointer field.
func has(v any, path ...string) bool { return at(v, path...) != nil }

func str(v any, path ...string) string {
	s, _ := at(v, path...).(string)
	return s
}

// strOK reads an optional string and reports whether it was set.
func strOK(v any, path ...string) (string, bool) {
	s, ok := at(v, path...).(string)
	return s, ok
}

func integerOf(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false
		}
		return int64(x), true
	case int:
		return int64(x), true
	}
	return 0, false
}

// integer reads an optional integer and reports whether it was set.
func integer(v any, path ...string) (int64, bool) { return integerOf(at(v, path...)) }

func num(v any, path ...string) int64 {
	n, _ := integer(v, path...)
	return n
}

func boolean(v any, path ...string) bool {
	b, _ := at(v, path...).(bool)
	return b
}

// boolOK reads an optional boolean and reports whether it was set.
func boolOK(v any, path ...string) (bool, bool) {
	b, ok := at(v, path...).(bool)
	return b, ok
}

func list(v any, path ...string) []any {
	l, _ := at(v, path...).([]any)
	return l
}

func object(v any, path ...string) map[string]any {
	m, _ := at(v, path...).(map[string]any)
	return m
}

// size is the number of members of an object or elements of an array.
func size(v any, path ...string) int64 {
	switch x := at(v, path...).(type) {
	case map[string]any:
		return int64(len(x))
	case []any:
		return int64(len(x))
	}
	return 0
}

// strings reads an array of strings, skipping other elements.
func stringList(v any, path ...string) []string {
	var out []string
	for _, x := range list(v, path...) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// stringMap reads an object of strings, skipping other members.
func stringMap(v any, path ...string) map[string]string {
	m := object(v, path...)
	out := make(map[string]string, len(m))
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	return out
}

// timestamp reads an RFC 3339 time (seconds or finer); the zero time when
// missing or unreadable.
func timestamp(v any, path ...string) time.Time {
	return timestampOf(str(v, path...))
}

// timestampOf parses an RFC 3339 time; the zero time when empty or
// unreadable.
func timestampOf(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// quantityText renders a decoded quantity as a quantity prints: canonical,
// and "0" for an unset one, as the zero quantity prints.
func quantityText(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return "0"
	case string:
		s = x
	case int64:
		s = strconv.FormatInt(x, 10)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return "0"
	}
	if c, err := schema.CanonicalQuantity(s); err == nil {
		return c
	}
	return s
}

// quantityRef renders a quantity held by pointer: "<nil>" when unset, as
// upstream's quantity prints through a nil pointer.
func quantityRef(v any) string {
	if v == nil {
		return "<nil>"
	}
	return quantityText(v)
}
