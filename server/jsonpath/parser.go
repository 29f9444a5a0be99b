// Package jsonpath is the JSONPath template language of upstream's
// kubectl and of custom resource printer columns: text with actions in
// braces ("{.status.phase}"), each action a path of fields, recursive
// descent, array indexes, slices, wildcards, unions and filters, plus the
// range/end blocks of templates. It evaluates over the generic decoded JSON
// form (map[string]any, []any, string, int64, float64, bool, nil).
//
// A parsed Template is immutable and may be evaluated concurrently.
//
// Where this differs from upstream: an object's members are visited in key
// order (upstream's order is Go's random map order); filters and unions
// nest at most 64 deep; and an evaluation stops with ErrTooLarge past a
// fixed amount of work, which only crafted templates reach.
package jsonpath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// eof is what next returns past the end of the input.
const eof = -1

// maxNesting bounds how deep filters and unions may nest inside each other,
// so a hostile template cannot exhaust the stack.
const maxNesting = 64

// ErrSyntax is returned for a malformed quoted string.
var ErrSyntax = errors.New("invalid syntax")

var (
	// A bracket holding one quoted key: ['name'].
	bracketKey = lazyRegexp(`^'([^']*)'$`)
	// A bracket holding an index or a slice: [n], [a:b], [a:b:c].
	sliceParams = lazyRegexp(`^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$`)
	// A filter comparison: left operand, operator, right operand.
	comparison = lazyRegexp(`^([^!<>=]+)([!<>=]+)(.+?)$`)
)

// parser turns template text into a tree. It is used once.
type parser struct {
	input string
	pos   int // next byte to read
	start int // first byte of the token being read
	width int // width of the last rune read
	depth int // nesting of filters and unions
	root  *listNode
}

// parse parses a whole template: text with actions.
func parse(text string, depth int) (*listNode, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("expression nested too deeply")
	}
	p := &parser{input: text, depth: depth, root: &listNode{}}
	if err := p.parseText(); err != nil {
		return nil, err
	}
	return p.root, nil
}

// parseAction parses text as the inside of one action and returns the
// action's node list.
func parseAction(text string, depth int) (*listNode, error) {
	root, err := parse("{"+text+"}", depth+1)
	if err != nil {
		return nil, err
	}
	return root.nodes[0].(*listNode), nil
}

func (p *parser) consume() string {
	s := p.input[p.start:p.pos]
	p.start = p.pos
	return s
}

func (p *parser) next() rune {
	if p.pos >= len(p.input) {
		p.width = 0
		return eof
	}
	r, w := utf8.DecodeRuneInString(p.input[p.pos:])
	p.width = w
	p.pos += w
	return r
}

func (p *parser) peek() rune {
	r := p.next()
	p.backup()
	return r
}

func (p *parser) backup() { p.pos -= p.width }

// parseText reads plain text up to the next action, then the action, until
// the input ends.
func (p *parser) parseText() error {
	for {
		i := strings.IndexByte(p.input[p.pos:], '{')
		if i < 0 {
			p.pos = len(p.input)
			if p.pos > p.start {
				p.root.add(&textNode{text: p.consume()})
			}
			return nil
		}
		p.pos += i
		if p.pos > p.start {
			p.root.add(&textNode{text: p.consume()})
		}
		p.pos++ // the left delimiter
		p.consume()
		action := &listNode{}
		p.root.add(action)
		if err := p.parseInside(action); err != nil {
			return err
		}
	}
}

// parseInside reads the tokens of one action up to its right delimiter.
func (p *parser) parseInside(cur *listNode) error {
	for {
		rest := p.input[p.pos:]
		var err error
		switch {
		case strings.HasPrefix(rest, "}"):
			p.pos++
			p.consume()
			return nil
		case strings.HasPrefix(rest, "[?("):
			err = p.parseFilter(cur)
		case strings.HasPrefix(rest, ".."):
			err = p.parseRecursive(cur)
		default:
			err = p.parseToken(cur)
		}
		if err != nil {
			return err
		}
	}
}

// parseToken reads one token that does not start with a multi-character
// prefix.
func (p *parser) parseToken(cur *listNode) error {
	switch r := p.next(); {
	case r == eof || isEndOfLine(r):
		return fmt.Errorf("unclosed action")
	case r == ' ':
		p.consume()
	case r == '@' || r == '$': // the current object: nothing to do
		p.consume()
	case r == '[':
		return p.parseArray(cur)
	case r == '"' || r == '\'':
		return p.parseQuote(cur, r)
	case r == '.':
		return p.parseField(cur)
	case r == '+' || r == '-' || unicode.IsDigit(r):
		p.backup()
		return p.parseNumber(cur)
	case isAlphaNumeric(r):
		p.backup()
		return p.parseIdentifier(cur)
	default:
		return fmt.Errorf("unrecognized character in action: %#U", r)
	}
	return nil
}

// parseIdentifier reads a keyword (range, end) or a boolean.
func (p *parser) parseIdentifier(cur *listNode) error {
	for !isTerminator(p.next()) {
	}
	p.backup()
	switch v := p.consume(); v {
	case "true", "false":
		cur.add(&boolNode{value: v == "true"})
	default:
		cur.add(&identifierNode{name: v})
	}
	return nil
}

// parseRecursive reads the recursive descent operator "..".
func (p *parser) parseRecursive(cur *listNode) error {
	if n := len(cur.nodes); n > 0 {
		if _, ok := cur.nodes[n-1].(*recursiveNode); ok {
			return fmt.Errorf("invalid multiple recursive descent")
		}
	}
	p.pos += len("..")
	p.consume()
	cur.add(&recursiveNode{})
	if isAlphaNumeric(p.peek()) {
		return p.parseField(cur)
	}
	return nil
}

// parseNumber reads an integer or a floating point literal.
func (p *parser) parseNumber(cur *listNode) error {
	if r := p.peek(); r == '+' || r == '-' {
		p.next()
	}
	for {
		r := p.next()
		if r != '.' && !unicode.IsDigit(r) {
			p.backup()
			break
		}
	}
	v := p.consume()
	if i, err := strconv.Atoi(v); err == nil {
		cur.add(&intNode{value: i})
		return nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		cur.add(&floatNode{value: f})
		return nil
	}
	return fmt.Errorf("cannot parse number %s", v)
}

// parseArray reads a bracket: an index, a slice, a quoted key or a union.
func (p *parser) parseArray(cur *listNode) error {
	for done := false; !done; {
		switch p.next() {
		case eof, '\n':
			return fmt.Errorf("unterminated array")
		case ']':
			done = true
		}
	}
	text := p.consume()
	text = text[1 : len(text)-1]
	if text == "*" {
		text = ":"
	}

	if parts := strings.Split(text, ","); len(parts) > 1 {
		u := &unionNode{}
		for _, part := range parts {
			l, err := parseAction("["+strings.Trim(part, " ")+"]", p.depth)
			if err != nil {
				return err
			}
			u.lists = append(u.lists, l)
		}
		cur.add(u)
		return nil
	}

	if m := bracketKey().FindStringSubmatch(text); m != nil {
		l, err := parseAction("."+m[1], p.depth)
		if err != nil {
			return err
		}
		cur.nodes = append(cur.nodes, l.nodes...)
		return nil
	}

	m := sliceParams().FindStringSubmatch(text)
	if m == nil {
		return fmt.Errorf("invalid array index %s", text)
	}
	var a arrayNode
	for i, s := range m[1:] {
		if i > 0 && s != "" {
			s = s[1:] // the colon
		}
		switch {
		case s != "":
			n, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("array index %s is not a number", s)
			}
			a.params[i] = param{value: n, known: true}
		case i == 1 && m[2] == "":
			// A plain index [n] selects the slice [n:n+1].
			a.params[1] = param{value: a.params[0].value + 1, known: true, derived: true}
		}
	}
	cur.add(&a)
	return nil
}

// parseFilter reads a filter "[?(left op right)]" or "[?(path)]".
func (p *parser) parseFilter(cur *listNode) error {
	p.pos += len("[?(")
	p.consume()
	opened, closed := false, false
	var quote rune
	for done := false; !done; {
		r := p.next()
		switch r {
		case eof, '\n':
			return fmt.Errorf("unterminated filter")
		case '"', '\'':
			if !opened {
				opened, quote = true, r
				continue
			}
			if r == quote && p.input[p.pos-2] != '\\' {
				closed = true
			}
		case ')':
			// A parenthesis inside the quoted operand does not close.
			done = opened == closed
		}
	}
	if p.next() != ']' {
		return fmt.Errorf("unclosed array expect ]")
	}
	text := p.consume()
	text = text[:len(text)-2]
	m := comparison().FindStringSubmatch(text)
	if m == nil {
		left, err := parseAction(text, p.depth)
		if err != nil {
			return err
		}
		cur.add(&filterNode{left: left, right: &listNode{}, op: "exists"})
		return nil
	}
	left, err := parseAction(m[1], p.depth)
	if err != nil {
		return err
	}
	right, err := parseAction(m[3], p.depth)
	if err != nil {
		return err
	}
	cur.add(&filterNode{left: left, right: right, op: m[2]})
	return nil
}

// parseQuote reads a quoted string literal.
func (p *parser) parseQuote(cur *listNode, end rune) error {
	for {
		r := p.next()
		if r == eof || r == '\n' {
			return fmt.Errorf("unterminated quoted string")
		}
		if r == end && p.input[p.pos-2] != '\\' {
			break
		}
	}
	v := p.consume()
	s, err := Unquote(v)
	if err != nil {
		return fmt.Errorf("unquote string %s error %v", v, err)
	}
	cur.add(&textNode{text: s})
	return nil
}

// parseField reads a field name after "." up to a terminator; a backslash
// escapes the next character (for keys holding dots).
func (p *parser) parseField(cur *listNode) error {
	p.consume()
	for {
		r := p.next()
		if r == '\\' {
			p.next()
			continue
		}
		if isTerminator(r) {
			p.backup()
			break
		}
	}
	v := p.consume()
	if v == "*" {
		cur.add(&wildcardNode{})
	} else {
		cur.add(&fieldNode{name: strings.ReplaceAll(v, `\`, "")})
	}
	return nil
}

// isTerminator reports whether r ends a field name or identifier.
func isTerminator(r rune) bool {
	if isSpace(r) || isEndOfLine(r) {
		return true
	}
	switch r {
	case eof, '.', ',', '[', ']', '$', '@', '{', '}':
		return true
	}
	return false
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' }

func isEndOfLine(r rune) bool { return r == '\r' || r == '\n' }

func isAlphaNumeric(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Unquote is strconv.Unquote that also accepts single-quoted strings of
// any length.
func Unquote(s string) (string, error) {
	n := len(s)
	if n < 2 {
		return "", ErrSyntax
	}
	q := s[0]
	if q != s[n-1] || (q != '"' && q != '\'') {
		return "", ErrSyntax
	}
	s = s[1 : n-1]
	if !strings.ContainsRune(s, '\\') && !strings.ContainsRune(s, rune(q)) {
		return s, nil
	}
	buf := make([]byte, 0, 3*len(s)/2)
	for len(s) > 0 {
		c, multibyte, rest, err := strconv.UnquoteChar(s, q)
		if err != nil {
			return "", err
		}
		s = rest
		if c < utf8.RuneSelf || !multibyte {
			buf = append(buf, byte(c))
		} else {
			buf = utf8.AppendRune(buf, c)
		}
	}
	return string(buf), nil
}
