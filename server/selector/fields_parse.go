package selector

import (
	"slices"
	"strconv"
	"strings"
)

// ParseFields parses a field selector in the upstream syntax: terms
// "field=value", "field==value" or "field!=value" joined by commas. Within
// a value, "\\", "\," and "\=" stand for "\", "," and "="; any other
// backslash sequence and any unescaped "=" are errors. The field name ends
// at the first operator and is taken literally. Empty terms, and terms
// whose field and value are both empty, are ignored, so "" yields the empty
// selector. Errors carry the upstream message and wrap
// ErrInvalidFieldSelector.
func ParseFields(s string) (Fields, error) {
	terms := splitTerms(s)
	slices.Sort(terms) // upstream evaluates terms, and reports errors, in this order
	var reqs []FieldRequirement
	for _, term := range terms {
		if term == "" {
			continue
		}
		field, op, raw, ok := splitTerm(term)
		if !ok {
			return Fields{}, fieldError("invalid selector: '" + s + "'; can't understand '" + term + "'")
		}
		value, err := UnescapeFieldValue(raw)
		if err != nil {
			return Fields{}, err
		}
		if field == "" && value == "" {
			continue
		}
		reqs = append(reqs, FieldRequirement{Field: field, Op: op, Value: value})
	}
	return Fields{reqs: reqs}, nil
}

// splitTerms cuts s at every comma not preceded by an escaping backslash.
// Escapes are kept in the terms.
func splitTerms(s string) []string {
	if s == "" {
		return nil
	}
	var terms []string
	start := 0
	escaped := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == ',':
			terms = append(terms, s[start:i])
			start = i + 1
		}
	}
	return append(terms, s[start:])
}

// splitTerm cuts a term at its first operator; at each position "!=" is
// tried before "==" before "=".
func splitTerm(term string) (field string, op Operator, value string, ok bool) {
	for i := 0; i < len(term); i++ {
		rest := term[i:]
		switch {
		case strings.HasPrefix(rest, "!="):
			return term[:i], NotEquals, rest[2:], true
		case strings.HasPrefix(rest, "=="):
			return term[:i], Equals, rest[2:], true
		case strings.HasPrefix(rest, "="):
			return term[:i], Equals, rest[1:], true
		}
	}
	return "", "", "", false
}

// EscapeFieldValue escapes "\", "," and "=" in a literal value so that it
// can be written into a field selector.
func EscapeFieldValue(s string) string {
	if !strings.ContainsAny(s, `\,=`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', ',', '=':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// UnescapeFieldValue returns the literal value of an escaped field
// selector value. Like upstream it decodes the value as UTF-8 when it has
// anything to unescape, so invalid bytes then become U+FFFD. Errors wrap
// ErrInvalidFieldSelector.
func UnescapeFieldValue(s string) (string, error) {
	if !strings.ContainsAny(s, `\,=`) {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	escaped := false
	for _, r := range s {
		if escaped {
			switch r {
			case '\\', ',', '=':
				b.WriteRune(r)
			default:
				return "", fieldError("invalid field selector: invalid escape sequence: " + string([]rune{'\\', r}))
			}
			escaped = false
			continue
		}
		switch r {
		case '\\':
			escaped = true
		case ',', '=':
			return "", fieldError("invalid field selector: unescaped character in value: " + strconv.Itoa(int(r)))
		default:
			b.WriteRune(r)
		}
	}
	if escaped {
		return "", fieldError(`invalid field selector: invalid escape sequence: \`)
	}
	return b.String(), nil
}
