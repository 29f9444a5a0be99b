package quota

// at returns the map at path in obj, or nil.
func at(obj map[string]any, path ...string) map[string]any {
	m := obj
	for _, p := range path {
		next, _ := m[p].(map[string]any)
		if next == nil {
			return nil
		}
		m = next
	}
	return m
}

// mapsOf returns the maps of a list member, leaving out other items.
func mapsOf(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, item := range l {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// str returns the string at key of m, "" when there is none.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// number returns the integer at key of m, and whether there is one.
func number(m map[string]any, key string) (int64, bool) {
	switch v := m[key].(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case float64:
		return int64(v), true
	}
	return 0, false
}

// stringsOf returns the strings of a list member.
func stringsOf(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, item := range l {
		if s, ok := item.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
