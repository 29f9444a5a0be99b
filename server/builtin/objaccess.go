package builtin

import (
	"strconv"
	"strings"
)

// fieldPath is a field error path as upstream prints it:
// "spec.containers[0].ports[1].name", "spec.nodeSelector[key]".
type fieldPath string

// child appends a member name; the empty path has no leading dot.
func (p fieldPath) child(names ...string) fieldPath {
	if len(names) == 1 {
		// The usual case, in one allocation.
		if p == "" {
			return fieldPath(names[0])
		}
		return p + "." + fieldPath(names[0])
	}
	var b strings.Builder
	size := len(p) + len(names)
	for _, n := range names {
		size += len(n)
	}
	b.Grow(size)
	b.WriteString(string(p))
	for _, n := range names {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(n)
	}
	return fieldPath(b.String())
}

// index appends a list index.
func (p fieldPath) index(i int) fieldPath { return p + "[" + fieldPath(strconv.Itoa(i)) + "]" }

// key appends a map key, unquoted as upstream prints it.
func (p fieldPath) key(k string) fieldPath { return p + "[" + fieldPath(k) + "]" }

func (p fieldPath) String() string { return string(p) }

// mapOf returns v as a decoded object, or nil.
func mapOf(v any) map[string]any { m, _ := v.(map[string]any); return m }

// listOf returns v as a decoded list, or nil.
func listOf(v any) []any { l, _ := v.([]any); return l }

// strOf returns v as a string, or "".
func strOf(v any) string { s, _ := v.(string); return s }

// boolOf returns v as a bool, or false.
func boolOf(v any) bool { b, _ := v.(bool); return b }

// has reports whether m holds a non-null member key: a pointer field that
// is set, however empty.
func has(m map[string]any, key string) bool {
	v, ok := m[key]
	return ok && v != nil
}

// isEmptyValue reports whether v is the zero value of its JSON type, as a
// Go field holding it would compare to its zero value.
func isEmptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case map[string]any:
		for _, e := range x {
			if !isEmptyValue(e) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	}
	n, ok := intOf(v)
	return ok && n == 0
}

// mapsOf returns the objects of a decoded list, skipping anything else so
// that a malformed element never stops a rule.
func mapsOf(v any) []map[string]any {
	l := listOf(v)
	out := make([]map[string]any, 0, len(l))
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		} else {
			out = append(out, map[string]any{})
		}
	}
	return out
}
