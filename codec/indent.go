package codec

import "bytes"

// indentUnit is one nesting level of pretty output: two spaces, as
// json.MarshalIndent(v, "", "  ") writes.
const indentUnit = "  "

// newlineIndent is a ready-made newline followed by indentation, sliced to
// length for nesting up to 64 levels without a loop.
var newlineIndent = "\n" + string(bytes.Repeat([]byte(indentUnit), 64))

// Indent appends to dst the pretty form of the JSON document in compact,
// exactly as json.MarshalIndent(v, "", "  ") would print the value that
// encoding/json marshalled to compact, and returns the extended slice.
// Whitespace outside strings in compact is dropped, so a trailing newline
// from json.Encoder does no harm. compact must be valid JSON; for invalid
// input the output is unspecified (but Indent never panics). compact is
// only read; the result never aliases it unless dst does.
func Indent(dst []byte, compact []byte) []byte {
	dst = growFor(dst, len(compact)+len(compact)/2)
	depth := 0
	n := len(compact)
	for i := 0; i < n; {
		c := compact[i]
		switch c {
		case '"':
			end := stringEnd(compact, i)
			dst = append(dst, compact[i:end]...)
			i = end
		case '{', '[':
			j := skipSpace(compact, i+1)
			if j < n && compact[j] == c+2 { // '{'+2 == '}', '['+2 == ']'
				dst = append(dst, c, c+2)
				i = j + 1
				continue
			}
			depth++
			dst = append(dst, c)
			dst = appendNewline(dst, depth)
			i++
		case '}', ']':
			if depth > 0 {
				depth--
			}
			dst = appendNewline(dst, depth)
			dst = append(dst, c)
			i++
		case ',':
			dst = append(dst, ',')
			dst = appendNewline(dst, depth)
			i++
		case ':':
			dst = append(dst, ':', ' ')
			i++
		case ' ', '\t', '\n', '\r':
			i++
		default:
			j := i + 1
			for j < n && !isDelim(compact[j]) {
				j++
			}
			dst = append(dst, compact[i:j]...)
			i = j
		}
	}
	return dst
}

// growFor makes room for at least extra more bytes in one allocation.
func growFor(dst []byte, extra int) []byte {
	if cap(dst)-len(dst) >= extra {
		return dst
	}
	grown := make([]byte, len(dst), len(dst)+extra)
	copy(grown, dst)
	return grown
}

// appendNewline appends a newline and depth levels of indentation.
func appendNewline(dst []byte, depth int) []byte {
	width := 1 + depth*len(indentUnit)
	if width <= len(newlineIndent) {
		return append(dst, newlineIndent[:width]...)
	}
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, indentUnit...)
	}
	return dst
}

// stringEnd returns the index just past the closing quote of the string
// that starts at b[start] (a '"'), or len(b) if it is unterminated.
func stringEnd(b []byte, start int) int {
	i := start + 1
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b)
		}
		i += q
		// The quote is escaped when an odd number of backslashes precede it.
		k := i - 1
		for k > start && b[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 {
			return i + 1
		}
		i++
	}
}

// skipSpace returns the index of the first non-whitespace byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// isDelim reports whether c ends a number or literal.
func isDelim(c byte) bool {
	switch c {
	case '{', '}', '[', ']', ',', ':', '"', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
