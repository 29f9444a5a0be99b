package builtin

import (
	"bytes"
	"fmt"
	"math"

	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
)

// valueAt returns the value at a path of nested maps, or nil.
func valueAt(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// mapAt returns the map at a path of nested maps, or nil.
func mapAt(obj map[string]any, path ...string) map[string]any {
	m, _ := valueAt(obj, path...).(map[string]any)
	return m
}

// listAt returns the list at a path of nested maps, or nil.
func listAt(obj map[string]any, path ...string) []any {
	l, _ := valueAt(obj, path...).([]any)
	return l
}

// present reports whether m holds key with a non-null value: what a set
// pointer field of the upstream types is.
func present(m map[string]any, key string) bool { return m[key] != nil }

// intOf reads a decoded integer.
func intOf(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

// intAt reads an integer at a path, 0 when absent.
func intAt(obj map[string]any, path ...string) int64 {
	n, _ := intOf(valueAt(obj, path...))
	return n
}

// index and keyed spell field paths as upstream does: "a[0]", "a[k]".
func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

func keyed(path, k string) string { return path + "[" + k + "]" }

// goSyntax is a bad value upstream prints in Go syntax.
type goSyntax = apierr.GoSyntax

// goStrings spells a string list as Go prints a []T of string kind.
func goStrings(typ string, l []any) goSyntax {
	var b bytes.Buffer
	b.WriteString("[]" + typ + "{")
	for i, v := range l {
		if i > 0 {
			b.WriteString(", ")
		}
		s, _ := v.(string)
		fmt.Fprintf(&b, "%q", s)
	}
	b.WriteString("}")
	return goSyntax(b.String())
}

// tooMany is a FieldTooMany error, as upstream words it.
func tooMany(field string, n, limit int) *apierr.FieldError {
	unit := "items"
	if limit == 1 {
		unit = "item"
	}
	return &apierr.FieldError{Type: apierr.FieldTooMany, Field: field, Value: n, Detail: fmt.Sprintf("must have at most %d %s", limit, unit)}
}

// fieldImmutable is the detail of a change to a field that may not change.
const fieldImmutable = "field is immutable"

// sameMember reports whether a and b hold the same member name, compared
// in their canonical encoding under s (nil: as plain JSON), so that
// spellings of one value (an absent list and an empty one where the
// schema omits both, two forms of a quantity) compare equal as upstream's
// semantic equality does.
func sameMember(s *schema.Schema, a, b registry.Object, name string) bool {
	var fs *schema.Schema
	if f := s.Field(name); f != nil {
		fs = &schema.Schema{Type: schema.Object, Fields: []*schema.Field{f}}
	}
	ea := schema.Encode(nil, map[string]any{name: a[name]}, fs)
	eb := schema.Encode(nil, map[string]any{name: b[name]}, fs)
	return bytes.Equal(ea, eb)
}

// startGeneration gives a new object its first generation, for types whose
// controllers track spec changes.
func startGeneration(obj registry.Object) { child(obj, "metadata")["generation"] = int64(1) }

// bumpGeneration sets obj's generation one past old's.
func bumpGeneration(obj, old registry.Object) {
	child(obj, "metadata")["generation"] = intAt(old, "metadata", "generation") + 1
}

// bumpGenerationOnSpec bumps the generation of a main-resource update that
// changes spec.
func bumpGenerationOnSpec(d *registry.Descriptor) func(obj, old registry.Object, sub string) {
	return func(obj, old registry.Object, sub string) {
		if sub == "" && !sameMember(d.Schema, obj, old, "spec") {
			bumpGeneration(obj, old)
		}
	}
}

// keepSpec is what the status subresource of most built-in types keeps
// from the stored object: the spec; the rest of a status write, its
// metadata included, is written as upstream's status strategies do.
var keepSpec = []string{"spec"}

// resetStatus drops the status a create carries: only the status
// subresource writes it.
func resetStatus(obj registry.Object) { obj["status"] = map[string]any{} }

// groupType is a descriptor of an ordinary resource of a named group.
func groupType(group, resource, singular, kind string, namespaced bool, short ...string) *registry.Descriptor {
	d := core(resource, singular, kind, namespaced, short...)
	d.Group = group
	return d
}

// setDefault sets m[key] to v when m has no value there.
func setDefault(m map[string]any, key string, v any) {
	if !present(m, key) {
		m[key] = v
	}
}
