package jsonschema

import (
	"errors"
	"fmt"
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

// ValidFieldPath resolves a field path written as upstream's CEL field
// paths are (".a.b", ".a['b.c']", map keys through either form) against s:
// it returns the path as field errors print it relative to s ("a.b",
// "a[key]") and the schema of the field. Lists cannot be entered;
// without allowBrackets the ['key'] form is refused too (selectable
// fields).
func ValidFieldPath(jsonPath string, s *Props, allowBrackets bool) (string, *Props, error) {
	toks := splitFieldPath(jsonPath)
	var b strings.Builder
	step := func(name string) error {
		switch {
		case s.Properties != nil:
			p, ok := s.Properties[name]
			if !ok {
				return errInvalidField
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(name)
			s = &p
		case s.ValueSchema() != nil:
			fmt.Fprintf(&b, "[%s]", name)
			s = s.ValueSchema()
		default:
			return errInvalidField
		}
		return nil
	}
	for i := 0; i < len(toks); i++ {
		switch toks[i] {
		case "[":
			if !allowBrackets {
				return "", nil, errors.New("array notation is not allowed")
			}
			if i+1 >= len(toks) {
				return "", nil, errors.New("unexpected end of JSON path")
			}
			q := toks[i+1]
			if len(q) < 2 || q[0] != '\'' || q[len(q)-1] != '\'' {
				return "", nil, fmt.Errorf("expected single quoted string but got %s", q)
			}
			name, err := unescapeSingleQuote(q[1 : len(q)-1])
			if err != nil {
				return "", nil, fmt.Errorf("invalid string literal: %v", err)
			}
			if err := step(name); err != nil {
				return "", nil, err
			}
			if i+2 >= len(toks) {
				return "", nil, errors.New("unexpected end of JSON path")
			}
			if toks[i+2] != "]" {
				return "", nil, fmt.Errorf("expected ] but got %s", toks[i+2])
			}
			i += 2
		case ".":
			if i+1 >= len(toks) {
				return "", nil, errors.New("unexpected end of JSON path")
			}
			if err := step(toks[i+1]); err != nil {
				return "", nil, err
			}
			i++
		default:
			return "", nil, fmt.Errorf("expected [ or . but got: %s", toks[i])
		}
	}
	return b.String(), s, nil
}

// errInvalidField is the reason a path names no field of the schema.
var errInvalidField = errors.New("does not refer to a valid field")

// splitFieldPath splits at '.', '[' and ']' (each its own token),
// keeping single-quoted strings whole.
func splitFieldPath(p string) []string {
	var toks []string
	for len(p) > 0 {
		if p[0] == '\'' {
			end := -1
			for i := 1; i < len(p); i++ {
				if p[i] == '\'' && p[i-1] != '\\' {
					end = i
					break
				}
			}
			if end < 0 {
				toks = append(toks, p)
				break
			}
			toks = append(toks, p[:end+1])
			p = p[end+1:]
			continue
		}
		i := strings.IndexAny(p, ".[]")
		switch {
		case i == 0:
			toks = append(toks, p[:1])
			p = p[1:]
		case i < 0:
			toks = append(toks, p)
			p = ""
		default:
			toks = append(toks, p[:i])
			p = p[i:]
		}
	}
	return toks
}

// unescapeSingleQuote undoes the escapes of a quoted key: a backslash
// and the character after it, of \a \b \f \n \r \t \v \' and \\.
func unescapeSingleQuote(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\'', '\\':
			b.WriteByte(c)
		default:
			return "", fmt.Errorf("invalid escape char \\%c", c)
		}
	}
	return b.String(), nil
}
