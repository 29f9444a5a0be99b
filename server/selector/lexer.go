package selector

// tokenKind classifies one lexeme of a label selector.
type tokenKind uint8

const (
	tokEnd tokenKind = iota
	tokClosePar
	tokComma
	tokNot
	tokDoubleEquals
	tokEquals
	tokGreater
	tokIdent
	tokIn
	tokLess
	tokNotEquals
	tokNotIn
	tokOpenPar
)

// token is one lexeme; lit is the text it was read from ("" at the end).
type token struct {
	kind tokenKind
	lit  string
}

// symbols maps every operator spelling made of special characters to its
// kind. The lexer reads the longest run of special characters that still
// spells one of these.
var symbols = map[string]tokenKind{
	")":  tokClosePar,
	",":  tokComma,
	"!":  tokNot,
	"==": tokDoubleEquals,
	"=":  tokEquals,
	">":  tokGreater,
	"<":  tokLess,
	"!=": tokNotEquals,
	"(":  tokOpenPar,
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isSpecial(c byte) bool {
	switch c {
	case '=', '!', '(', ')', ',', '>', '<':
		return true
	}
	return false
}

// lexer splits a label selector into tokens. A NUL byte reads like the end
// of input, as it does upstream: it ends the current token and, where a
// token would start, the whole selector.
type lexer struct {
	s   string
	pos int
}

// read returns the next byte, or 0 at the end without moving past it.
func (l *lexer) read() byte {
	if l.pos < len(l.s) {
		c := l.s[l.pos]
		l.pos++
		return c
	}
	return 0
}

func (l *lexer) unread() { l.pos-- }

// next returns the next token.
func (l *lexer) next() token {
	c := l.read()
	for isSpace(c) {
		c = l.read()
	}
	switch {
	case c == 0:
		return token{kind: tokEnd}
	case isSpecial(c):
		l.unread()
		return l.symbol()
	default:
		l.unread()
		return l.word()
	}
}

// word reads an identifier or one of the keywords "in" and "notin".
func (l *lexer) word() token {
	start := l.pos
	end := start
	for {
		c := l.read()
		if c == 0 {
			break
		}
		if isSpecial(c) || isSpace(c) {
			l.unread()
			break
		}
		end = l.pos
	}
	lit := l.s[start:end]
	switch lit {
	case "in":
		return token{kind: tokIn, lit: lit}
	case "notin":
		return token{kind: tokNotIn, lit: lit}
	}
	return token{kind: tokIdent, lit: lit}
}

// symbol reads the longest operator spelled by the special characters at
// the current position. The first special character is always an operator
// on its own, so symbol always yields one.
func (l *lexer) symbol() token {
	start := l.pos
	var best token
	for {
		c := l.read()
		if c == 0 {
			break
		}
		if !isSpecial(c) {
			l.unread()
			break
		}
		lit := l.s[start:l.pos]
		if kind, ok := symbols[lit]; ok {
			best = token{kind: kind, lit: lit}
			continue
		}
		if best.lit != "" {
			l.unread()
			break
		}
	}
	return best
}

// tokenize returns every token of s, ending with one tokEnd.
func tokenize(s string) []token {
	l := lexer{s: s}
	var toks []token
	for {
		t := l.next()
		toks = append(toks, t)
		if t.kind == tokEnd {
			return toks
		}
	}
}
