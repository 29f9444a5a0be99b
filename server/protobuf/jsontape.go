package protobuf

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// The transcoder reads JSON through a token tape: one validating pass over
// the bytes records every value as a token, and a container's token points
// past its last descendant, so later passes visit members in any order and
// skip values in O(1) without scanning bytes again.

// Token kinds are the first byte of the value; numbers are '0'.
const (
	tokObject = '{'
	tokArray  = '['
	tokString = '"'
	tokNumber = '0'
	tokTrue   = 't'
	tokFalse  = 'f'
	tokNull   = 'n'
)

// Token flags.
const (
	// flagEscaped: a string holds a backslash or a byte >= 0x80, so its
	// value differs from its raw bytes or may need U+FFFD replacement.
	flagEscaped = 1 << iota
	// flagSpace: white space occurs inside a container.
	flagSpace
)

// token is one JSON value (or object key) of a tape.
type token struct {
	// start and end delimit the value: a string's contents without the
	// quotes, a container from its opening bracket to past its closing
	// one, a number or literal's text.
	start, end int32
	// next is the index of the token after this value and all its
	// descendants. An object's children alternate key and value tokens.
	next  int32
	kind  byte
	flags uint8
}

// maxTapeDepth bounds container nesting on the tape. Deeper documents are
// ErrUnsupported: Marshal's path, with its own limits, decides them.
const maxTapeDepth = 1000

// maxTapeLen keeps offsets within int32.
const maxTapeLen = 1<<31 - 1

// errSyntax reports JSON the decoder would reject as malformed.
var errSyntax = fmt.Errorf("%w: malformed JSON", ErrValue)

// tape is the tokenised form of one JSON document; it is reused between
// documents and holds no reference to data after the next parse.
type tape struct {
	data   []byte
	toks   []token
	spaces int // white-space bytes skipped so far, for flagSpace
}

// strClass classifies string bytes: 0 plain, 1 quote, 2 backslash, 3
// control, 4 non-ASCII.
var strClass = func() (c [256]uint8) {
	for i := range 0x20 {
		c[i] = 3
	}
	c['"'], c['\\'] = 1, 2
	for i := 0x80; i < 0x100; i++ {
		c[i] = 4
	}
	return c
}()

// SWAR constants: a byte of ones and a byte of high bits in every lane.
const (
	lanesLow  = 0x0101010101010101
	lanesHigh = 0x8080808080808080
)

// specialLanes has the high bit set in the first lane of x that holds a
// quote, a backslash, a control character or a non-ASCII byte (lanes
// after it may be set spuriously); 0 means all eight bytes are plain.
func specialLanes(x uint64) uint64 {
	q := x ^ (lanesLow * '"')
	b := x ^ (lanesLow * '\\')
	return ((q-lanesLow)&^q | (b-lanesLow)&^b | (x - lanesLow*0x20) | x) & lanesHigh
}

// parse tokenises data, which must be exactly one JSON value with optional
// surrounding white space, validated as encoding/json validates it.
func (t *tape) parse(data []byte) error {
	if len(data) > maxTapeLen {
		return ErrUnsupported
	}
	t.data, t.toks, t.spaces = data, t.toks[:0], 0
	p, err := t.value(t.skipSpace(0), 0)
	if err != nil {
		return err
	}
	if t.skipSpace(p) != len(data) {
		return errSyntax
	}
	return nil
}

func (t *tape) skipSpace(p int) int {
	d := t.data
	q := p
	for q < len(d) && (d[q] == ' ' || d[q] == '\n' || d[q] == '\r' || d[q] == '\t') {
		q++
	}
	t.spaces += q - p
	return q
}

// value tokenises the value starting at p and returns the offset after it.
func (t *tape) value(p, depth int) (int, error) {
	d := t.data
	if p >= len(d) {
		return 0, errSyntax
	}
	i := len(t.toks)
	t.toks = append(t.toks, token{start: int32(p), kind: d[p]})
	var err error
	switch c := d[p]; c {
	case '{', '[':
		if depth >= maxTapeDepth {
			return 0, ErrUnsupported
		}
		spaces := t.spaces
		if c == '{' {
			p, err = t.members(p+1, depth)
		} else {
			p, err = t.elems(p+1, depth)
		}
		if err != nil {
			return 0, err
		}
		if t.spaces != spaces {
			t.toks[i].flags |= flagSpace
		}
	case '"':
		var flags uint8
		if p, flags, err = t.str(p + 1); err != nil {
			return 0, err
		}
		t.toks[i].start++
		t.toks[i].flags = flags
		t.toks[i].end = int32(p - 1)
		t.toks[i].next = int32(len(t.toks))
		return p, nil
	case 't':
		p, err = t.literal(p, "true")
	case 'f':
		p, err = t.literal(p, "false")
	case 'n':
		p, err = t.literal(p, "null")
	default:
		if c != '-' && (c < '0' || c > '9') {
			return 0, errSyntax
		}
		t.toks[i].kind = tokNumber
		p, err = t.number(p)
	}
	if err != nil {
		return 0, err
	}
	t.toks[i].end = int32(p)
	t.toks[i].next = int32(len(t.toks))
	return p, nil
}

// members tokenises an object's members after its '{'.
func (t *tape) members(p, depth int) (int, error) {
	d := t.data
	p = t.skipSpace(p)
	if p < len(d) && d[p] == '}' {
		return p + 1, nil
	}
	for {
		if p >= len(d) || d[p] != '"' {
			return 0, errSyntax
		}
		k := len(t.toks)
		t.toks = append(t.toks, token{start: int32(p + 1), kind: tokString})
		q, flags, err := t.str(p + 1)
		if err != nil {
			return 0, err
		}
		t.toks[k].end, t.toks[k].flags, t.toks[k].next = int32(q-1), flags, int32(k+1)
		p = t.skipSpace(q)
		if p >= len(d) || d[p] != ':' {
			return 0, errSyntax
		}
		if p, err = t.value(t.skipSpace(p+1), depth+1); err != nil {
			return 0, err
		}
		p = t.skipSpace(p)
		if p >= len(d) {
			return 0, errSyntax
		}
		switch d[p] {
		case ',':
			p = t.skipSpace(p + 1)
		case '}':
			return p + 1, nil
		default:
			return 0, errSyntax
		}
	}
}

// elems tokenises an array's elements after its '['.
func (t *tape) elems(p, depth int) (int, error) {
	d := t.data
	p = t.skipSpace(p)
	if p < len(d) && d[p] == ']' {
		return p + 1, nil
	}
	for {
		var err error
		if p, err = t.value(p, depth+1); err != nil {
			return 0, err
		}
		p = t.skipSpace(p)
		if p >= len(d) {
			return 0, errSyntax
		}
		switch d[p] {
		case ',':
			p = t.skipSpace(p + 1)
		case ']':
			return p + 1, nil
		default:
			return 0, errSyntax
		}
	}
}

// str scans a string's contents from p (after the opening quote) and
// returns the offset after the closing quote and the string's flags.
func (t *tape) str(p int) (int, uint8, error) {
	d := t.data
	var flags uint8
	for p < len(d) {
		// Eight plain bytes at a time; the first special one decides.
		for p+8 <= len(d) {
			m := specialLanes(binary.LittleEndian.Uint64(d[p:]))
			if m != 0 {
				p += bits.TrailingZeros64(m) / 8
				break
			}
			p += 8
		}
		if p >= len(d) {
			break
		}
		switch strClass[d[p]] {
		case 0:
			p++
		case 1:
			return p + 1, flags, nil
		case 2:
			flags |= flagEscaped
			if p+1 >= len(d) {
				return 0, 0, errSyntax
			}
			switch d[p+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p += 2
			case 'u':
				if p+6 > len(d) {
					return 0, 0, errSyntax
				}
				for _, h := range d[p+2 : p+6] {
					if !isHexDigit(h) {
						return 0, 0, errSyntax
					}
				}
				p += 6
			default:
				return 0, 0, errSyntax
			}
		case 3:
			return 0, 0, errSyntax
		default:
			flags |= flagEscaped
			p++
		}
	}
	return 0, 0, errSyntax
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (t *tape) literal(p int, word string) (int, error) {
	if len(t.data)-p < len(word) || string(t.data[p:p+len(word)]) != word {
		return 0, errSyntax
	}
	return p + len(word), nil
}

// number scans a JSON number from p.
func (t *tape) number(p int) (int, error) {
	d := t.data
	if d[p] == '-' {
		p++
	}
	switch {
	case p >= len(d) || d[p] < '0' || d[p] > '9':
		return 0, errSyntax
	case d[p] == '0':
		p++
	default:
		for p < len(d) && d[p] >= '0' && d[p] <= '9' {
			p++
		}
	}
	if p < len(d) && d[p] == '.' {
		p++
		if p >= len(d) || d[p] < '0' || d[p] > '9' {
			return 0, errSyntax
		}
		for p < len(d) && d[p] >= '0' && d[p] <= '9' {
			p++
		}
	}
	if p < len(d) && (d[p] == 'e' || d[p] == 'E') {
		p++
		if p < len(d) && (d[p] == '+' || d[p] == '-') {
			p++
		}
		if p >= len(d) || d[p] < '0' || d[p] > '9' {
			return 0, errSyntax
		}
		for p < len(d) && d[p] >= '0' && d[p] <= '9' {
			p++
		}
	}
	return p, nil
}

// raw returns a token's bytes: a string's contents, other values' text.
func (t *tape) raw(i int32) []byte {
	tk := &t.toks[i]
	return t.data[tk.start:tk.end]
}

// span returns a value's complete JSON text, quotes included.
func (t *tape) span(i int32) []byte {
	tk := &t.toks[i]
	if tk.kind == tokString {
		return t.data[tk.start-1 : tk.end+1]
	}
	return t.data[tk.start:tk.end]
}
