package schema

import (
	"maps"
	"slices"
	"strconv"

	"platd/server/apierr"
)

// Validate checks obj against s: required members ("Required value"),
// closed enums ("Unsupported value"), unique keys of map lists and unique
// elements of set lists ("Duplicate value"). Paths use upstream syntax:
// "spec.limits[0].type", "data[key]". Errors come in field order; obj is
// only read.
func Validate(obj map[string]any, s *Schema) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if s != nil {
		validateObject(obj, s, "", &errs)
	}
	return errs
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func validateObject(m map[string]any, s *Schema, path string, errs *apierr.FieldErrors) {
	for _, f := range s.Fields {
		if f.Inline {
			continue
		}
		p := join(path, f.Name)
		v, ok := m[f.Name]
		if !ok || v == nil {
			if f.Required {
				*errs = append(*errs, apierr.Required(p, ""))
			}
			continue
		}
		validateValue(v, f.Schema, p, errs)
	}
}

func validateValue(v any, s *Schema, path string, errs *apierr.FieldErrors) {
	if s == nil {
		return
	}
	if len(s.Enum) > 0 {
		if str, ok := v.(string); ok && !slices.Contains(s.Enum, str) {
			*errs = append(*errs, apierr.NotSupported(path, str, s.Enum))
		}
	}
	switch s.Type {
	case Object:
		if m, ok := v.(map[string]any); ok {
			validateObject(m, s, path, errs)
		}
	case Map:
		m, ok := v.(map[string]any)
		if !ok || s.Elem == nil {
			return
		}
		keys := slices.Sorted(maps.Keys(m))
		for _, k := range keys {
			validateValue(m[k], s.Elem, path+"["+k+"]", errs)
		}
	case Array:
		a, ok := v.([]any)
		if !ok {
			return
		}
		validateList(a, s, path, errs)
		for i, e := range a {
			validateValue(e, s.Elem, path+"["+strconv.Itoa(i)+"]", errs)
		}
	}
}

// validateList reports repeated keys of a map list and repeated elements of
// a set list.
func validateList(a []any, s *Schema, path string, errs *apierr.FieldErrors) {
	switch s.ListType {
	case "map":
		if len(s.ListMapKeys) == 0 {
			return
		}
		seen := map[string]bool{}
		for i, e := range a {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			key := map[string]any{}
			for _, k := range s.ListMapKeys {
				if v, ok := m[k]; ok {
					key[k] = v
				}
			}
			id := string(encAny(nil, key))
			if seen[id] {
				*errs = append(*errs, apierr.Duplicate(path+"["+strconv.Itoa(i)+"]", key))
			}
			seen[id] = true
		}
	case "set":
		seen := map[string]bool{}
		for i, e := range a {
			id := string(encAny(nil, e))
			if seen[id] {
				*errs = append(*errs, apierr.Duplicate(path+"["+strconv.Itoa(i)+"]", e))
			}
			seen[id] = true
		}
	}
}
