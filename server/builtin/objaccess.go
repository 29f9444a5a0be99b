package builtin

import (
	"strconv"
)

// fieldPath is a field error path as upstream prints it:
// "spec.containers[0].ports[1].name", "spec.nodeSelector[key]". It is a
// value that holds its last few steps unjoined, so that making the path
// of every member a validation looks at allocates nothing; the text is
// built by String, which only an error needs. Paths deeper than it holds
// are joined as they grow. A path is copied, never shared: extending one
// leaves it as it was.
type fieldPath struct {
	// head is the joined beginning of the path; steps follow it.
	head  string
	steps [pathSteps]pathStep
	n     int
}

// pathSteps is how many steps a fieldPath holds unjoined: enough for the
// paths of a pod's containers, volumes and affinity terms below the spec
// ("volumes[0].projected.sources[1].configMap.items[0].path").
const pathSteps = 10

// pathStep is one step of a fieldPath: a member name, a list index or a
// map key.
type pathStep struct {
	name  string
	index int32
	kind  stepKind
}

type stepKind uint8

const (
	stepMember stepKind = iota
	stepIndex
	stepKey
)

// pathOf is the path of the given text ("spec", "metadata.labels").
func pathOf(s string) fieldPath { return fieldPath{head: s} }

// with returns p with one more step.
func (p fieldPath) with(st pathStep) fieldPath {
	if p.n == pathSteps {
		p = fieldPath{head: p.String()}
	}
	p.steps[p.n] = st
	p.n++
	return p
}

// child appends member names; the empty path has no leading dot.
func (p fieldPath) child(names ...string) fieldPath {
	for _, n := range names {
		p = p.with(pathStep{name: n})
	}
	return p
}

// index appends a list index.
func (p fieldPath) index(i int) fieldPath { return p.with(pathStep{index: int32(i), kind: stepIndex}) }

// key appends a map key, unquoted as upstream prints it.
func (p fieldPath) key(k string) fieldPath { return p.with(pathStep{name: k, kind: stepKey}) }

// String is the path's text.
func (p fieldPath) String() string {
	if p.n == 0 {
		return p.head
	}
	size := len(p.head)
	for _, st := range p.steps[:p.n] {
		size += len(st.name) + 2
		if st.kind == stepIndex {
			size += 20
		}
	}
	b := make([]byte, 0, size)
	b = append(b, p.head...)
	for _, st := range p.steps[:p.n] {
		switch st.kind {
		case stepMember:
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, st.name...)
		case stepIndex:
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(st.index), 10)
			b = append(b, ']')
		case stepKey:
			b = append(b, '[')
			b = append(b, st.name...)
			b = append(b, ']')
		}
	}
	return string(b)
}

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
