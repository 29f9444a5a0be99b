package cel

import (
	"errors"
	"fmt"
	"strings"

	"platd/server/jsonschema"
)

// validFieldPath checks a rule's fieldPath (".a.b", ".a['b.c']", map keys
// through either form) against s and returns it as an error field path
// relative to s ("a.b", "a[key]").
func validFieldPath(jsonPath string, s *jsonschema.Props) (string, error) {
	toks, err := splitFieldPath(jsonPath)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	step := func(name string) error {
		switch {
		case s.Properties != nil:
			p, ok := s.Properties[name]
			if !ok {
				return errors.New("does not refer to a valid field")
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
			return errors.New("does not refer to a valid field")
		}
		return nil
	}
	for i := 0; i < len(toks); i++ {
		switch toks[i] {
		case "[":
			if i+2 >= len(toks) {
				return "", errors.New("unexpected end of JSON path")
			}
			q := toks[i+1]
			if len(q) < 2 || q[0] != '\'' || q[len(q)-1] != '\'' {
				return "", fmt.Errorf("expected single quoted string but got %s", q)
			}
			name, err := unescapeSingleQuote(q[1 : len(q)-1])
			if err != nil {
				return "", fmt.Errorf("invalid string literal: %v", err)
			}
			if err := step(name); err != nil {
				return "", err
			}
			if toks[i+2] != "]" {
				return "", fmt.Errorf("expected ] but got %s", toks[i+2])
			}
			i += 2
		case ".":
			if i+1 >= len(toks) {
				return "", errors.New("unexpected end of JSON path")
			}
			if err := step(toks[i+1]); err != nil {
				return "", err
			}
			i++
		default:
			return "", fmt.Errorf("expected [ or . but got: %s", toks[i])
		}
	}
	return b.String(), nil
}

// splitFieldPath splits at '.', '[' and ']' (each its own token),
// keeping single-quoted strings whole.
func splitFieldPath(p string) ([]string, error) {
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
	return toks, nil
}

// unescapeSingleQuote undoes \' \\ and the usual escapes inside a quoted
// key.
func unescapeSingleQuote(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", errors.New("unterminated escape sequence")
		}
		switch s[i] {
		case '\'', '\\', '"':
			b.WriteByte(s[i])
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		default:
			return "", fmt.Errorf("invalid escape sequence '\\%c'", s[i])
		}
	}
	return b.String(), nil
}
