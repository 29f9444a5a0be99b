package schema

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// scanner reads JSON tokens from a byte slice and reports syntax errors in
// the words encoding/json uses. It never retains data beyond a call.
type scanner struct {
	data []byte
	pos  int
	// text, if not empty, is string(data): strings (values and anyValue's
	// keys) that need no unescaping are substrings of it, not copies.
	text string
	// maxDepth, if positive, bounds the nesting of anyValue: a value
	// deeper than maxDepth containers is a syntax error.
	maxDepth int
	// dup is set when anyValue met an object naming a member twice.
	dup bool
	// typeErr is the first value read that has no Go form, as encoding/json
	// reports it: a number beyond float64's range read by anyValue, or a
	// decoder's type mismatch.
	typeErr error
}

// anyMaxDepth is DecodeAny's nesting limit, encoding/json's and
// protobuf-go's.
const anyMaxDepth = 10000

func errDepth() error { return &wrapped{msg: "exceeded max depth", kind: ErrSyntax} }

func errEOF() error { return &wrapped{msg: "unexpected end of JSON input", kind: ErrSyntax} }

func errChar(c byte, context string) error {
	return &wrapped{msg: "invalid character " + quoteChar(c) + " " + context, kind: ErrSyntax}
}

// quoteChar formats c the way encoding/json's syntax errors do.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or an end-of-input error.
func (s *scanner) peek() (byte, error) {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return 0, errEOF()
	}
	return s.data[s.pos], nil
}

// expectValue returns the first byte of the next value or the syntax error
// for a byte that cannot start one.
func (s *scanner) expectValue() (byte, error) {
	c, err := s.peek()
	if err != nil {
		return 0, err
	}
	switch {
	case c == '{', c == '[', c == '"', c == '-', c >= '0' && c <= '9', c == 't', c == 'f', c == 'n':
		return c, nil
	}
	return 0, errChar(c, "looking for beginning of value")
}

// literal consumes true, false or null and returns its first byte.
func (s *scanner) literal() (byte, error) {
	c := s.data[s.pos]
	var word string
	switch c {
	case 't':
		word = "true"
	case 'f':
		word = "false"
	default:
		word = "null"
	}
	for i := 1; i < len(word); i++ {
		p := s.pos + i
		if p >= len(s.data) {
			return 0, errEOF()
		}
		if s.data[p] != word[i] {
			return 0, errChar(s.data[p], "in literal "+word+" (expecting "+quoteChar(word[i])+")")
		}
	}
	s.pos += len(word)
	return c, nil
}

// number consumes a number and returns its text and whether it is written
// as an integer (no fraction, no exponent).
func (s *scanner) number() ([]byte, bool, error) {
	d := s.data
	start := s.pos
	p := s.pos
	if d[p] == '-' {
		p++
		if p >= len(d) {
			return nil, false, errEOF()
		}
		if d[p] < '0' || d[p] > '9' {
			return nil, false, errChar(d[p], "in numeric literal")
		}
	}
	if d[p] == '0' {
		p++
	} else {
		for p < len(d) && d[p] >= '0' && d[p] <= '9' {
			p++
		}
	}
	integer := true
	if p < len(d) && d[p] == '.' {
		integer = false
		p++
		if p >= len(d) {
			return nil, false, errEOF()
		}
		if d[p] < '0' || d[p] > '9' {
			return nil, false, errChar(d[p], "after decimal point in numeric literal")
		}
		for p < len(d) && d[p] >= '0' && d[p] <= '9' {
			p++
		}
	}
	if p < len(d) && (d[p] == 'e' || d[p] == 'E') {
		integer = false
		p++
		if p < len(d) && (d[p] == '+' || d[p] == '-') {
			p++
		}
		if p >= len(d) {
			return nil, false, errEOF()
		}
		if d[p] < '0' || d[p] > '9' {
			return nil, false, errChar(d[p], "in exponent of numeric literal")
		}
		for p < len(d) && d[p] >= '0' && d[p] <= '9' {
			p++
		}
	}
	s.pos = p
	return d[start:p], integer, nil
}

// rawString consumes a string and returns its raw contents (without the
// quotes) and whether it needs unescaping (escapes or non-ASCII bytes).
func (s *scanner) rawString() ([]byte, bool, error) {
	d := s.data
	p := s.pos + 1
	start := p
	complex := false
	for {
		// Eight bytes at a time, up to the first that is a quote, a
		// backslash, a control or a non-ASCII byte.
		for p+8 <= len(d) {
			if m := specialBytes(binary.LittleEndian.Uint64(d[p:])); m != 0 {
				p += bits.TrailingZeros64(m) >> 3
				break
			}
			p += 8
		}
		if p >= len(d) {
			return nil, false, errEOF()
		}
		c := d[p]
		switch {
		case c == '"':
			s.pos = p + 1
			return d[start:p], complex, nil
		case c == '\\':
			complex = true
			p++
			if p >= len(d) {
				return nil, false, errEOF()
			}
			switch d[p] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p++
			case 'u':
				p++
				for i := 0; i < 4; i++ {
					if p >= len(d) {
						return nil, false, errEOF()
					}
					if !isHex(d[p]) {
						return nil, false, errChar(d[p], `in \u hexadecimal character escape`)
					}
					p++
				}
			default:
				return nil, false, errChar(d[p], "in string escape code")
			}
		case c < 0x20:
			return nil, false, errChar(c, "in string literal")
		default:
			if c >= 0x80 {
				complex = true
			}
			p++
		}
	}
}

const (
	bytesOf01 = ^uint64(0) / 255 // 0x0101010101010101
	bytesOf80 = bytesOf01 * 0x80
)

// specialBytes marks, in the high bit of each byte, the bytes of x
// (little-endian) that are a quote, a backslash, below 0x20 or above 0x7f.
// A byte above a marked one may be marked falsely (a borrow carries into
// it); the lowest mark is always right, so it finds the first such byte.
func specialBytes(x uint64) uint64 {
	quote := x ^ (bytesOf01 * '"')
	backslash := x ^ (bytesOf01 * '\\')
	// A byte v is zero, or below 0x20, where v-1 (v-0x20) borrows.
	return ((quote-bytesOf01)&^quote | (backslash-bytesOf01)&^backslash | (x-bytesOf01*0x20)&^x | x) & bytesOf80
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// str consumes a string and returns its value, with invalid UTF-8 and
// unpaired surrogates replaced by U+FFFD as encoding/json does.
func (s *scanner) str() (string, error) {
	raw, complex, err := s.rawString()
	if err != nil {
		return "", err
	}
	return s.stringOf(raw, complex), nil
}

// stringOf returns the string of raw contents; esc reports that they need
// unescaping (see rawString).
func (s *scanner) stringOf(raw []byte, esc bool) string {
	switch {
	case esc:
		return unquote(raw)
	case s.text != "":
		off := cap(s.data) - cap(raw) // raw is a subslice of data
		return s.text[off : off+len(raw)]
	}
	return string(raw)
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// unquote decodes the already validated contents of a string literal.
func unquote(raw []byte) string {
	b := AppendUnquote(make([]byte, 0, len(raw)), raw)
	if len(b) == 0 {
		return ""
	}
	// b is never written again: the string may share it.
	return unsafe.String(&b[0], len(b))
}

// AppendUnquote appends the value of the contents (without the quotes) of
// a valid JSON string literal to out, exactly as Decode reads it: escapes
// resolved, invalid UTF-8 and unpaired surrogates replaced by U+FFFD. raw
// must have passed a JSON syntax check; it is only read.
func AppendUnquote(out, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == '\\' {
			switch raw[i+1] {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(raw[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
						if r2 := utf16.DecodeRune(r, hex4(raw[i+2:i+6])); r2 != utf8.RuneError {
							out = utf8.AppendRune(out, r2)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
				continue
			default: // " \ /
				out = append(out, raw[i+1])
			}
			i += 2
			continue
		}
		if c < utf8.RuneSelf {
			// Copy the run of plain ASCII at once.
			j := i + 1
			for j < len(raw) && raw[j] != '\\' && raw[j] < utf8.RuneSelf {
				j++
			}
			out = append(out, raw[i:j]...)
			i = j
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		out = utf8.AppendRune(out, r) // RuneError for invalid bytes
		i += size
	}
	return out
}

// skip consumes one value of any kind without building it.
func (s *scanner) skip() error { return s.skipAt(0) }

// skipAt is skip for a value nested in depth containers; nesting beyond
// anyMaxDepth is a syntax error, so hostile input cannot exhaust the stack.
// Values are skipped by skipFlat, without a call per member or element;
// what it does not take (a syntax error, deep nesting) is scanned again by
// skipNested, whose errors are the ones reported.
func (s *scanner) skipAt(depth int) error {
	start := s.pos
	if s.skipFlat(depth) {
		return nil
	}
	s.pos = start
	return s.skipNested(depth)
}

// maxFlatNesting is how many containers skipFlat keeps open at once: one
// bit each records whether it is an object.
const maxFlatNesting = 64

// skipFlat consumes one value, as skipNested would, in one loop over the
// bytes. It accepts exactly what skipNested accepts with at most
// maxFlatNesting containers open and ends at the same byte; it reports
// false on anything else, leaving pos anywhere.
func (s *scanner) skipFlat(depth int) bool {
	d := s.data
	var objects uint64 // bit i: the container open at nesting i is an object
	open := 0
	for {
		// A value starts here (after white space), open containers deep.
		if depth+open > anyMaxDepth {
			return false
		}
		s.skipSpace()
		if s.pos >= len(d) {
			return false
		}
		switch c := d[s.pos]; {
		case c == '{' || c == '[':
			if open == maxFlatNesting {
				return false
			}
			s.pos++
			s.skipSpace()
			if s.pos < len(d) && (c == '{' && d[s.pos] == '}' || c == '[' && d[s.pos] == ']') {
				s.pos++
				break // empty: a complete value
			}
			if c == '{' {
				objects |= 1 << open
				open++
				if !s.skipKey() {
					return false
				}
			} else {
				objects &^= 1 << open
				open++
			}
			continue
		case c == '"':
			if _, _, err := s.rawString(); err != nil {
				return false
			}
		case c == 't' || c == 'f' || c == 'n':
			if _, err := s.literal(); err != nil {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if _, _, err := s.number(); err != nil {
				return false
			}
		default:
			return false
		}
		// A value ended: close the containers it completes, then go on
		// to the next member or element.
		for {
			if open == 0 {
				return true
			}
			s.skipSpace()
			if s.pos >= len(d) {
				return false
			}
			object := objects&(1<<(open-1)) != 0
			c := d[s.pos]
			s.pos++
			if c == ',' {
				if object && !s.skipKey() {
					return false
				}
				break
			}
			if object && c != '}' || !object && c != ']' {
				return false
			}
			open--
		}
	}
}

// skipKey consumes a member's key and its colon, with the white space
// around them, for skipFlat.
func (s *scanner) skipKey() bool {
	s.skipSpace()
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		return false
	}
	if _, _, err := s.rawString(); err != nil {
		return false
	}
	s.skipSpace()
	if s.pos >= len(s.data) || s.data[s.pos] != ':' {
		return false
	}
	s.pos++
	return true
}

// skipNested is skipAt one container at a time, with the errors reported.
func (s *scanner) skipNested(depth int) error {
	if depth > anyMaxDepth {
		return errDepth()
	}
	c, err := s.expectValue()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		s.pos++
		return s.eachMember(func([]byte, bool) error { return s.skipNested(depth + 1) })
	case '[':
		s.pos++
		return s.eachElem(func(int) error { return s.skipNested(depth + 1) })
	case '"':
		_, _, err := s.rawString()
		return err
	case 't', 'f', 'n':
		_, err := s.literal()
		return err
	}
	_, _, err = s.number()
	return err
}

// eachMember iterates the members of an object whose '{' was consumed,
// calling fn with each raw key positioned at the value; fn must consume it.
func (s *scanner) eachMember(fn func(key []byte, escaped bool) error) error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == '}' {
		s.pos++
		return nil
	}
	for {
		c, err := s.peek()
		if err != nil {
			return err
		}
		if c != '"' {
			return errChar(c, "looking for beginning of object key string")
		}
		key, esc, err := s.rawString()
		if err != nil {
			return err
		}
		c, err = s.peek()
		if err != nil {
			return err
		}
		if c != ':' {
			return errChar(c, "after object key")
		}
		s.pos++
		if err := fn(key, esc); err != nil {
			return err
		}
		c, err = s.peek()
		if err != nil {
			return err
		}
		s.pos++
		switch c {
		case ',':
			continue
		case '}':
			return nil
		}
		return errChar(c, "after object key:value pair")
	}
}

// eachElem iterates the elements of an array whose '[' was consumed.
func (s *scanner) eachElem(fn func(i int) error) error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		if err := fn(i); err != nil {
			return err
		}
		c, err := s.peek()
		if err != nil {
			return err
		}
		s.pos++
		switch c {
		case ',':
			continue
		case ']':
			return nil
		}
		return errChar(c, "after array element")
	}
}

// end checks that only white space follows the top-level value.
func (s *scanner) end() error {
	s.skipSpace()
	if s.pos < len(s.data) {
		return errChar(s.data[s.pos], "after top-level value")
	}
	return nil
}

// anyValue decodes one value into generic form: map[string]any, []any,
// string, int64 (integers that fit), float64, bool or nil.
func (s *scanner) anyValue() (any, error) {
	return s.anyAt(0)
}

// anyAt is anyValue for a value nested in depth containers.
func (s *scanner) anyAt(depth int) (any, error) {
	if s.maxDepth > 0 && depth > s.maxDepth {
		return nil, errDepth()
	}
	c, err := s.expectValue()
	if err != nil {
		return nil, err
	}
	switch c {
	case '{':
		s.pos++
		m := map[string]any{}
		err := s.eachMember(func(key []byte, esc bool) error {
			v, err := s.anyAt(depth + 1)
			if err != nil {
				return err
			}
			k := s.stringOf(key, esc)
			if _, ok := m[k]; ok {
				s.dup = true
			}
			m[k] = v
			return nil
		})
		return m, err
	case '[':
		s.pos++
		a := []any{}
		err := s.eachElem(func(int) error {
			v, err := s.anyAt(depth + 1)
			if err != nil {
				return err
			}
			a = append(a, v)
			return nil
		})
		return a, err
	case '"':
		return s.str()
	case 't', 'f', 'n':
		c, err := s.literal()
		if err != nil {
			return nil, err
		}
		switch c {
		case 't':
			return true, nil
		case 'f':
			return false, nil
		}
		return nil, nil
	}
	text, integer, err := s.number()
	if err != nil {
		return nil, err
	}
	v, ok := numberValue(text, integer)
	if !ok && s.typeErr == nil {
		// Read on, so the document's syntax is still checked; the value
		// is refused as encoding/json refuses it, not turned into ±Inf.
		s.typeErr = &wrapped{msg: "json: cannot unmarshal number " + string(text) + " into Go value of type float64", kind: ErrType}
	}
	return v, nil
}

// numberValue converts a valid number literal: int64 when it is written as
// an integer and fits, float64 otherwise; ok is false for a number beyond
// float64's range.
func numberValue(text []byte, integer bool) (v any, ok bool) {
	if integer {
		if n, err := strconv.ParseInt(string(text), 10, 64); err == nil {
			return n, true
		}
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return nil, false
	}
	return f, true
}

// DecodeAny parses a complete JSON document into the generic form Decode
// gives values without a schema: map[string]any, []any, string, bool, nil,
// int64 for numbers written as integers that fit and float64 for the
// others. Strings are read as encoding/json reads them: invalid UTF-8 and
// unpaired surrogates become U+FFFD; the last of duplicate members wins.
// Syntax errors, and nesting deeper than 10000 containers, wrap ErrSyntax;
// a number beyond float64's range wraps ErrType. data is not retained.
func DecodeAny(data []byte) (any, error) {
	return DecodeAnyShared(data, "")
}

// DecodeAnyShared is DecodeAny for a document the caller also holds as a
// string, text == string(data): the strings that need no unescaping,
// member names included, are substrings of text rather than copies, which
// saves an allocation per string. An empty text, or one of another length
// than data, is ignored.
func DecodeAnyShared(data []byte, text string) (any, error) {
	if len(text) != len(data) {
		text = ""
	}
	s := &scanner{data: data, text: text, maxDepth: anyMaxDepth}
	v, err := s.anyValue()
	if err != nil {
		return nil, err
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	if s.typeErr != nil {
		return nil, s.typeErr
	}
	return v, nil
}

// DecodeAnyDuplicates is DecodeAny that also says whether an object of
// the document names a member twice.
func DecodeAnyDuplicates(data []byte) (v any, dup bool, err error) {
	s := &scanner{data: data, maxDepth: anyMaxDepth}
	if v, err = s.anyValue(); err != nil {
		return nil, false, err
	}
	if err := s.end(); err != nil {
		return nil, false, err
	}
	if s.typeErr != nil {
		return nil, false, s.typeErr
	}
	return v, s.dup, nil
}

// decodeAny is DecodeAny.
func decodeAny(data []byte) (any, error) { return DecodeAny(data) }

// Unquote returns the value of the contents (without the quotes) of a
// valid JSON string literal exactly as Decode reads it: escapes resolved,
// invalid UTF-8 and unpaired surrogates replaced by U+FFFD. raw must have
// passed a JSON syntax check; it is not retained.
func Unquote(raw []byte) string { return unquote(raw) }
