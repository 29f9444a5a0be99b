package schema

// Canonical returns obj, a decoded object of schema s, as it reads back
// once stored: what DecodeStored(Encode(obj, s), s) returns, without the
// round trip. Members the encoding always writes are present with their
// zero values, members it omits when empty are absent, and members the
// schema does not know are dropped (but for the top-level kind and
// apiVersion). obj is not changed; the result shares every part of it
// that needs no change.
func Canonical(obj map[string]any, s *Schema) map[string]any {
	out, _ := canonObject(obj, s, true)
	return out
}

// canonObject is Canonical of any object; changed says whether the
// result differs from m (and so is a new map).
func canonObject(m map[string]any, s *Schema, top bool) (_ map[string]any, changed bool) {
	if s == nil {
		return m, false
	}
	var out map[string]any // a copy of m, made on the first change
	set := func(k string, v any) {
		if out == nil {
			out = make(map[string]any, len(m)+4)
			for mk, mv := range m {
				out[mk] = mv
			}
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	known := 0
	for _, f := range s.Fields {
		if f.Inline {
			continue
		}
		if top && (f.Name == "kind" || f.Name == "apiVersion") {
			continue // below, as the encoding writes them first
		}
		v, ok := m[f.Name]
		if ok {
			known++
		}
		switch {
		case ok && v == nil && s.Loose:
			// Kept null: it reads back as null.
		case !ok || v == nil:
			z := zeroMember(f)
			if z != nil || ok {
				set(f.Name, z)
			}
		case f.OmitEmpty && !f.Pointer && isEmpty(v):
			set(f.Name, nil)
		default:
			if c, changed := canonValue(v, f.Schema); changed {
				set(f.Name, c)
			}
		}
	}
	if known < len(m) && !s.PreserveUnknown {
		for k := range m {
			if s.Field(k) == nil && !(top && (k == "kind" || k == "apiVersion")) {
				set(k, nil)
			}
		}
	}
	if top {
		// The encoding writes a top-level kind and apiVersion only as
		// non-empty strings.
		for _, k := range [2]string{"kind", "apiVersion"} {
			if v, ok := m[k]; ok {
				if x, isStr := v.(string); !isStr || x == "" {
					set(k, nil)
				}
			}
		}
	}
	if out == nil {
		return m, false
	}
	return out, true
}

// zeroMember is what an absent member reads back as: the zero value the
// encoding writes for it, nil where it writes null (which reads back as
// absent).
func zeroMember(f *Field) any {
	if f.OmitEmpty || f.Pointer {
		return nil
	}
	return zeroElem(f.Schema)
}

// canonValue is v, a value of schema s, as it reads back; changed says
// whether that differs from v.
func canonValue(v any, s *Schema) (_ any, changed bool) {
	if s == nil {
		return v, false
	}
	switch x := v.(type) {
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		c, _ := canonValue(out, s)
		return c, true
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		c, _ := canonValue(out, s)
		return c, true
	}
	switch s.Type {
	case Object:
		if m, ok := v.(map[string]any); ok {
			return canonObject(m, s, false)
		}
	case Map:
		if m, ok := v.(map[string]any); ok {
			var out map[string]any
			for k, e := range m {
				c, changed := canonElem(e, s.Elem)
				if changed {
					if out == nil {
						out = make(map[string]any, len(m))
						for mk, mv := range m {
							out[mk] = mv
						}
					}
					out[k] = c
				}
			}
			if out != nil {
				return out, true
			}
		}
	case Array:
		if a, ok := v.([]any); ok {
			var out []any
			for i, e := range a {
				c, changed := canonElem(e, s.Elem)
				if changed {
					if out == nil {
						out = append([]any(nil), a...)
					}
					out[i] = c
				}
			}
			if out != nil {
				return out, true
			}
		}
	case Integer:
		switch x := v.(type) {
		case float64:
			if x == float64(int64(x)) {
				return int64(x), true
			}
		case int:
			return int64(x), true
		case int32:
			return int64(x), true
		}
	}
	return v, false
}

// canonElem is an element of a list or map as it reads back: a null one
// takes its type's zero value.
func canonElem(e any, s *Schema) (any, bool) {
	if e != nil {
		return canonValue(e, s)
	}
	if s != nil && s.Loose {
		return nil, false
	}
	z := zeroElem(s)
	return z, z != nil
}

// zeroElem is the zero value a null or absent value of schema s reads
// back as: an object's with its own always-written members.
func zeroElem(s *Schema) any {
	if s != nil && s.Type == Object {
		z, _ := canonObject(map[string]any{}, s, false)
		return z
	}
	return zeroValue(s)
}
