package registry

// Strings reads a decoded JSON array of strings (such as finalizers),
// skipping any element that is not a string.
func Strings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Child returns the map at obj[key], creating it (and replacing a value
// of another type) when absent.
func Child(obj Object, key string) Object {
	m, ok := obj[key].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj[key] = m
	}
	return m
}

// AnyList turns strings into a decoded JSON array.
func AnyList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// DeleteOptions are the options of an in-process deletion, as DELETE
// takes them from its body and query.
type DeleteOptions struct {
	// GracePeriodSeconds overrides the type's grace period when set.
	GracePeriodSeconds *int64
	// PropagationPolicy is Foreground, Background, Orphan or "" (the
	// type's default).
	PropagationPolicy string
	// PreconditionUID, when set, must be the object's uid.
	PreconditionUID string
}

// CopyPath returns a subresource Copy that moves the member at a path
// (such as "spec", "finalizers") from the written object into the new
// state, creating the objects on the way; a member the written object
// lacks is removed.
func CopyPath(path ...string) func(next, written Object) {
	return func(next, written Object) {
		dst, src := next, written
		for _, p := range path[:len(path)-1] {
			sm, _ := src[p].(map[string]any)
			dm, ok := dst[p].(map[string]any)
			if !ok {
				dm = map[string]any{}
				dst[p] = dm
			}
			dst, src = dm, sm
		}
		last := path[len(path)-1]
		if v, ok := src[last]; ok {
			dst[last] = v
		} else {
			delete(dst, last)
		}
	}
}

// Int64 reads a decoded JSON integer, whichever Go type its decoder gave
// it (int64 from the schema decoder, float64 from encoding/json); 0 for
// anything else.
func Int64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}
