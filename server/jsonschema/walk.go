package jsonschema

import (
	"errors"
	"slices"
	"strings"
)

// Has reports whether pred holds for p or any schema below it, through
// every keyword that holds schemas.
func Has(p *Props, pred func(*Props) bool) bool {
	if p == nil {
		return false
	}
	if pred(p) {
		return true
	}
	if p.Items != nil {
		if Has(p.Items.Schema, pred) {
			return true
		}
		for i := range p.Items.JSONSchemas {
			if Has(&p.Items.JSONSchemas[i], pred) {
				return true
			}
		}
	}
	for _, l := range [][]Props{p.AllOf, p.AnyOf, p.OneOf} {
		for i := range l {
			if Has(&l[i], pred) {
				return true
			}
		}
	}
	if Has(p.Not, pred) {
		return true
	}
	for _, m := range []map[string]Props{p.Properties, p.PatternProperties, p.Definitions} {
		for _, s := range m {
			if Has(&s, pred) {
				return true
			}
		}
	}
	for _, b := range []*PropsOrBool{p.AdditionalProperties, p.AdditionalItems} {
		if b != nil && Has(b.Schema, pred) {
			return true
		}
	}
	for _, d := range p.Dependencies {
		if Has(d.Schema, pred) {
			return true
		}
	}
	return false
}

// HasDefault reports whether any node of p has a default.
func HasDefault(p *Props) bool {
	return Has(p, func(s *Props) bool { return s.Default != nil })
}

// HasInvalidType reports whether any node of p has a type outside
// OpenAPI's six.
func HasInvalidType(p *Props) bool {
	return Has(p, func(s *Props) bool { return s.Type != "" && !slices.Contains(openAPITypes, s.Type) })
}

// HasNonAtomicSetItems reports whether a set list of p has items that are
// not atomic.
func HasNonAtomicSetItems(p *Props) bool {
	return Has(p, func(s *Props) bool {
		items := s.ItemSchema()
		if s.XListType == nil || *s.XListType != "set" || items == nil {
			return false
		}
		switch items.Type {
		case "array":
			return items.XListType != nil && *items.XListType != "atomic"
		case "object":
			return items.MapType() != "atomic"
		}
		return false
	})
}

// HasInvalidMapListKeys reports whether a set or map list of p breaks
// the rules on nullable items and keys.
func HasInvalidMapListKeys(p *Props) bool {
	return Has(p, func(s *Props) bool { return len(mapListKeysErrors(s, "")) > 0 })
}

// errInvalidField is the reason a path names no field of the schema.
var errInvalidField = errors.New("does not refer to a valid field")

// FieldPath resolves a path to a field (".spec.size", "spec['a.b']") in
// the schema: the member names along it, and the schema of the field.
// Maps are entered by key; an array's items by index ("[0]") only when
// allowIndex is set.
func FieldPath(root *Props, path string, allowIndex bool) ([]string, *Props, error) {
	var names []string
	s := root
	index := func(tok string) bool {
		if !allowIndex || s.ItemSchema() == nil || tok == "" || strings.Trim(tok, "0123456789") != "" {
			return false
		}
		s = s.ItemSchema()
		names = append(names, "["+tok+"]")
		return true
	}
	step := func(name string) error {
		switch {
		case len(s.Properties) > 0:
			next, ok := s.Properties[name]
			if !ok {
				return errInvalidField
			}
			s = &next
		case s.ValueSchema() != nil:
			s = s.ValueSchema()
		default:
			return errInvalidField
		}
		names = append(names, name)
		return nil
	}
	rest := path
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
		case '[':
			end := strings.Index(rest, "]")
			if end < 0 {
				return nil, nil, errors.New("unexpected end of JSON path")
			}
			tok := rest[1:end]
			if index(tok) {
				rest = rest[end+1:]
				continue
			}
			if len(tok) < 2 || tok[0] != '\'' || tok[len(tok)-1] != '\'' {
				return nil, nil, errors.New("expected single quoted string but got " + tok)
			}
			if err := step(tok[1 : len(tok)-1]); err != nil {
				return nil, nil, err
			}
			rest = rest[end+1:]
		default:
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if err := step(rest[:end]); err != nil {
				return nil, nil, err
			}
			rest = rest[end:]
		}
	}
	if len(names) == 0 {
		return nil, nil, errInvalidField
	}
	return names, s, nil
}
