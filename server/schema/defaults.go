package schema

// ApplyDefaults sets every absent member that has a schema default, then
// descends into present objects, maps and lists. Defaults are deep copies;
// obj is modified in place. Safe for concurrent use on distinct objects.
func ApplyDefaults(obj map[string]any, s *Schema) {
	if obj == nil || s == nil {
		return
	}
	defaultObject(obj, s)
}

func defaultObject(m map[string]any, s *Schema) {
	fields := s.Fields
	if s.sealed {
		fields = s.defaulted
	}
	for _, f := range fields {
		if f.Inline {
			continue
		}
		v, ok := m[f.Name]
		// A null is defaulted unless the schema allows it, as upstream's
		// defaulting (a kept null is the client's choice).
		if (!ok || v == nil && (f.Schema == nil || !f.Schema.Nullable)) && f.hasD {
			v = DeepCopy(f.def) // callers never share defaults
			m[f.Name] = v
		}
		if v != nil {
			defaultValue(v, f.Schema)
		}
	}
}

func defaultValue(v any, s *Schema) {
	if s == nil {
		return
	}
	switch s.Type {
	case Object:
		if m, ok := v.(map[string]any); ok {
			defaultObject(m, s)
		}
	case Map:
		if m, ok := v.(map[string]any); ok && s.Elem != nil && (s.Elem.Type == Object || s.Elem.Type == Map || s.Elem.Type == Array) {
			for _, e := range m {
				defaultValue(e, s.Elem)
			}
		}
	case Array:
		if a, ok := v.([]any); ok && s.Elem != nil && (s.Elem.Type == Object || s.Elem.Type == Map || s.Elem.Type == Array) {
			for _, e := range a {
				defaultValue(e, s.Elem)
			}
		}
	}
}

// parseDefault decodes a field default against its schema.
func parseDefault(raw []byte, s *Schema) (any, bool) {
	d := &decoder{scanner: scanner{data: raw}}
	v, err := d.value(s, 1, "")
	if err != nil || d.typeErr != nil || d.end() != nil || v == nil {
		return nil, false
	}
	return v, true
}

// DeepCopy copies a generic JSON value: maps (map[string]any) and lists
// ([]any) are copied recursively, other values are shared as they are.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = DeepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = DeepCopy(e)
		}
		return a
	}
	return v
}
