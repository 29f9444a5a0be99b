package openapi

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The protobuf form of the v2 document carries every free-form value
// (vendor extensions, default, enum, example) as YAML text, the way
// gnostic re-emits the parsed JSON: block style, four-space indentation,
// sequences indented under their key, "- " items holding their first
// entry inline, no line folding, and each string in the plainest style
// that still reads back as that string. appendYAML reproduces that text so
// clients see the bytes an upstream server sends. Where upstream's emitter
// would pick a form that is hard to reproduce (a multi-line string starting
// with a space or a line break, a multi-line or very long mapping key, a
// string holding U+2028 or U+2029, the character after a byte-order mark)
// or one that does not read back (a literal block whose first line starts
// with a tab, which a YAML parser takes for indentation), a double-quoted
// string that reads back the same is written instead.

// yamlIndent is the indentation step of the emitter gnostic uses.
const yamlIndent = 4

// maxSimpleKey is the longest key, in bytes, the emitter writes as
// "key: value"; longer ones take another form.
const maxSimpleKey = 128

// yamlValue is a YAML writer over one value of parseTree's shape.
type yamlValue struct{ buf []byte }

// appendYAML appends the YAML text of v, a value of parseTree's shape, to
// dst. The text always ends with a line break.
func appendYAML(dst []byte, v any) []byte {
	y := yamlValue{buf: dst}
	switch t := v.(type) {
	case members:
		if len(t) == 0 {
			y.buf = append(y.buf, "{}"...)
		} else {
			y.mapping(t, 0, false)
		}
	case []any:
		if len(t) == 0 {
			y.buf = append(y.buf, "[]"...)
		} else {
			y.sequence(t, 0, false)
		}
	default:
		y.scalar(v, yamlIndent, false)
	}
	y.endLine()
	return y.buf
}

// endLine ends the current line unless a block scalar already did.
func (y *yamlValue) endLine() {
	if n := len(y.buf); n == 0 || y.buf[n-1] != '\n' {
		y.buf = append(y.buf, '\n')
	}
}

func (y *yamlValue) spaces(n int) {
	for range n {
		y.buf = append(y.buf, ' ')
	}
}

// nextIndent is where the content of a mapping value nested in a mapping
// at column indent starts: the next multiple of the indentation step.
func nextIndent(indent int) int { return yamlIndent * ((indent + yamlIndent) / yamlIndent) }

// mapping writes a non-empty mapping whose keys sit at column indent; when
// inline, the first key follows a "- " already written.
func (y *yamlValue) mapping(m members, indent int, inline bool) {
	for i, e := range m {
		if i > 0 || !inline {
			y.spaces(indent)
		}
		y.key(e.name)
		y.buf = append(y.buf, ':')
		switch t := e.value.(type) {
		case members:
			if len(t) == 0 {
				y.buf = append(y.buf, " {}\n"...)
				continue
			}
			y.buf = append(y.buf, '\n')
			y.mapping(t, nextIndent(indent), false)
		case []any:
			if len(t) == 0 {
				y.buf = append(y.buf, " []\n"...)
				continue
			}
			y.buf = append(y.buf, '\n')
			y.sequence(t, nextIndent(indent), false)
		default:
			y.buf = append(y.buf, ' ')
			y.scalar(e.value, nextIndent(indent), false)
			y.endLine()
		}
	}
}

// sequence writes a non-empty sequence whose dashes sit at column indent;
// when inline, the first item follows a "- " already written.
func (y *yamlValue) sequence(s []any, indent int, inline bool) {
	for i, v := range s {
		if i > 0 || !inline {
			y.spaces(indent)
		}
		y.buf = append(y.buf, "- "...)
		switch t := v.(type) {
		case members:
			if len(t) == 0 {
				y.buf = append(y.buf, "{}\n"...)
				continue
			}
			y.mapping(t, indent+2, true)
		case []any:
			if len(t) == 0 {
				y.buf = append(y.buf, "[]\n"...)
				continue
			}
			y.sequence(t, indent+2, true)
		default:
			y.scalar(v, indent+2, false)
			y.endLine()
		}
	}
}

func (y *yamlValue) key(k string) { y.scalar(k, 0, true) }

// scalar writes a scalar; a multi-line string becomes a literal block
// whose lines start at column blockIndent. Keys never take block form.
func (y *yamlValue) scalar(v any, blockIndent int, isKey bool) {
	switch t := v.(type) {
	case nil:
		y.buf = append(y.buf, "null"...)
	case bool:
		y.buf = strconv.AppendBool(y.buf, t)
	case json.Number:
		y.buf = append(y.buf, t...)
	case string:
		y.str(t, blockIndent, isKey)
	}
}

func (y *yamlValue) str(s string, blockIndent int, isKey bool) {
	a := analyzeYAML(s)
	switch {
	case strings.ContainsAny(s, "\u2028\u2029") || isKey && (a.multiline || len(s) > maxSimpleKey):
		y.doubleQuoted(s)
	case strings.Contains(s, "\n"):
		if a.blockAllowed && s[0] != ' ' && s[0] != '\t' && s[0] != '\n' {
			y.literal(s, blockIndent)
		} else {
			y.doubleQuoted(s)
		}
	case yamlResolvesNonString(s):
		y.doubleQuoted(s)
	case a.plainAllowed:
		y.buf = append(y.buf, s...)
	case a.singleAllowed:
		y.buf = append(y.buf, '\'')
		y.buf = append(y.buf, strings.ReplaceAll(s, "'", "''")...)
		y.buf = append(y.buf, '\'')
	default:
		y.doubleQuoted(s)
	}
}

// literal writes s as a "|" block scalar: the chomping indicator says
// whether the final line break is absent (-), single (none) or one of
// several (+); empty lines carry no indentation.
func (y *yamlValue) literal(s string, indent int) {
	y.buf = append(y.buf, '|')
	switch {
	case !strings.HasSuffix(s, "\n"):
		y.buf = append(y.buf, '-')
	case len(s) == 1 || strings.HasSuffix(s, "\n\n"):
		y.buf = append(y.buf, '+')
	}
	y.buf = append(y.buf, '\n')
	lineStart := true
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			y.buf = append(y.buf, '\n')
			lineStart = true
			continue
		}
		if lineStart {
			y.spaces(indent)
			lineStart = false
		}
		y.buf = append(y.buf, s[i])
	}
}

// doubleQuoted writes s with YAML's escapes for everything not printable.
func (y *yamlValue) doubleQuoted(s string) {
	const hex = "0123456789ABCDEF"
	y.buf = append(y.buf, '"')
	for _, r := range s {
		if yamlPrintable(r) && r != '"' && r != '\\' && r != '\n' && r != '\u2028' && r != '\u2029' {
			y.buf = utf8.AppendRune(y.buf, r)
			continue
		}
		y.buf = append(y.buf, '\\')
		switch r {
		case 0:
			y.buf = append(y.buf, '0')
		case '\a':
			y.buf = append(y.buf, 'a')
		case '\b':
			y.buf = append(y.buf, 'b')
		case '\t':
			y.buf = append(y.buf, 't')
		case '\n':
			y.buf = append(y.buf, 'n')
		case '\v':
			y.buf = append(y.buf, 'v')
		case '\f':
			y.buf = append(y.buf, 'f')
		case '\r':
			y.buf = append(y.buf, 'r')
		case 0x1b:
			y.buf = append(y.buf, 'e')
		case '"':
			y.buf = append(y.buf, '"')
		case '\\':
			y.buf = append(y.buf, '\\')
		case 0x85:
			y.buf = append(y.buf, 'N')
		case 0xa0:
			y.buf = append(y.buf, '_')
		case '\u2028':
			y.buf = append(y.buf, 'L')
		case '\u2029':
			y.buf = append(y.buf, 'P')
		default:
			digits := 8
			switch {
			case r <= 0xff:
				y.buf, digits = append(y.buf, 'x'), 2
			case r <= 0xffff:
				y.buf, digits = append(y.buf, 'u'), 4
			default:
				y.buf = append(y.buf, 'U')
			}
			for k := (digits - 1) * 4; k >= 0; k -= 4 {
				y.buf = append(y.buf, hex[(r>>k)&0xf])
			}
		}
	}
	y.buf = append(y.buf, '"')
}

// yamlPrintable is the emitter's set of characters written as they are:
// line feed, printable ASCII, and the rest of the Basic Multilingual Plane
// short of the C1 controls, surrogates, the byte-order mark and the two
// non-characters at its end.
func yamlPrintable(r rune) bool {
	switch {
	case r == '\n', r >= 0x20 && r <= 0x7e:
		return true
	case r < 0xa0, r >= 0xd800 && r <= 0xdfff, r == 0xfeff, r >= 0xfffe:
		return false
	}
	return true
}

// yamlScalarInfo is what the emitter learns from a string before it picks
// a style, restricted to block context.
type yamlScalarInfo struct {
	multiline     bool
	plainAllowed  bool
	singleAllowed bool
	blockAllowed  bool
}

func analyzeYAML(s string) yamlScalarInfo {
	if s == "" {
		return yamlScalarInfo{plainAllowed: true, singleAllowed: true}
	}
	var indicators, special, tabs, lineBreaks bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak bool
	var breakSpace, spaceBreak, prevSpace, prevBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		indicators = true
	}
	precededByBlank := true
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		followedByBlank := i+w >= len(s) || s[i+w] == ' ' || s[i+w] == '\t'
		if i == 0 {
			switch r {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				indicators = true
			case '?', ':', '-':
				if followedByBlank {
					indicators = true
				}
			}
		} else if r == ':' && followedByBlank || r == '#' && precededByBlank {
			indicators = true
		}
		if r == '\t' {
			tabs = true
		} else if !yamlPrintable(r) {
			special = true
		}
		isBreak := r == '\n' || r == '\r' || r == 0x85 || r == '\u2028' || r == '\u2029'
		switch {
		case r == ' ':
			leadingSpace = leadingSpace || i == 0
			trailingSpace = trailingSpace || i+w == len(s)
			breakSpace = breakSpace || prevBreak
			prevSpace, prevBreak = true, false
		case isBreak:
			lineBreaks = true
			leadingBreak = leadingBreak || i == 0
			trailingBreak = trailingBreak || i+w == len(s)
			spaceBreak = spaceBreak || prevSpace
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		precededByBlank = r == ' ' || r == '\t' || isBreak
		i += w
	}
	info := yamlScalarInfo{multiline: lineBreaks, plainAllowed: true, singleAllowed: true, blockAllowed: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak || lineBreaks || indicators {
		info.plainAllowed = false
	}
	if trailingSpace {
		info.blockAllowed = false
	}
	if breakSpace || spaceBreak || tabs || special {
		info.plainAllowed, info.singleAllowed = false, false
	}
	if spaceBreak || special {
		info.blockAllowed = false
	}
	return info
}

// yamlSpecialWords are the plain scalars that read back as null, booleans,
// infinities or not-a-number.
var yamlSpecialWords = map[string]bool{
	"~": true, "null": true, "Null": true, "NULL": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
	".nan": true, ".NaN": true, ".NAN": true,
	".inf": true, ".Inf": true, ".INF": true, "+.inf": true, "+.Inf": true, "+.INF": true,
	"-.inf": true, "-.Inf": true, "-.INF": true,
}

// yamlFloat is the YAML 1.2 float syntax the resolver accepts.
var yamlFloat = lazyRegexp(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// yamlTimestampLayouts are the timestamp forms a plain scalar may take.
var yamlTimestampLayouts = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// yamlResolvesNonString reports whether s written plain would read back as
// something other than the string s (null, bool, number, timestamp), so it
// must be quoted.
func yamlResolvesNonString(s string) bool {
	if s == "" || yamlSpecialWords[s] {
		return true
	}
	switch c := s[0]; {
	case c == '.':
		_, err := strconv.ParseFloat(s, 64)
		return err == nil
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		return yamlTimestamp(s) || yamlNumber(strings.ReplaceAll(s, "_", ""))
	}
	return false
}

func yamlNumber(plain string) bool {
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return true
	}
	if yamlFloat().MatchString(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return true
		}
	}
	for _, p := range []struct {
		prefix string
		base   int
	}{{"0b", 2}, {"0o", 8}} {
		if digits, ok := strings.CutPrefix(plain, p.prefix); ok {
			_, err := strconv.ParseInt(digits, p.base, 64)
			return err == nil
		}
		if digits, ok := strings.CutPrefix(plain, "-"+p.prefix); ok {
			_, err := strconv.ParseInt("-"+digits, p.base, 64)
			return err == nil
		}
	}
	return false
}

func yamlTimestamp(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, layout := range yamlTimestampLayouts {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}
