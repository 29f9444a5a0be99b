package selector

import (
	"slices"
	"strconv"
	"strings"
)

// ParseLabels parses a label selector in the upstream syntax:
//
//	selector    := requirement ( "," requirement )*
//	requirement := [ "!" ] KEY [ set | exact ]
//	set         := ( "in" | "notin" ) "(" [ VALUE ( "," VALUE )* ] ")"
//	exact       := ( "=" | "==" | "!=" | ">" | "<" ) VALUE
//
// A bare KEY requires the label to exist, "!KEY" requires it to be absent;
// ">" and "<" compare integers. Whitespace may separate tokens. Keys must be
// qualified names and values valid label values (possibly empty). The empty
// string yields the empty selector. Errors carry the upstream message and
// wrap ErrInvalidLabelSelector.
func ParseLabels(s string) (Labels, error) {
	p := labelParser{toks: tokenize(s)}
	reqs, msg := p.parse()
	if msg != "" {
		return Labels{}, labelError(msg)
	}
	slices.SortStableFunc(reqs, func(a, b Requirement) int { return strings.Compare(a.Key, b.Key) })
	return Labels{reqs: reqs}, nil
}

// parseContext tells the parser whether "in" and "notin" are operators here or
// plain words (a key or a value may be spelled "in").
type parseContext uint8

const (
	ctxOperator parseContext = iota
	ctxValues
)

// labelParser is a recursive-descent parser over the token list. Its
// methods report failure as the message text; "" means success.
type labelParser struct {
	toks []token
	pos  int
}

func (p *labelParser) peek(ctx parseContext) token {
	if p.pos >= len(p.toks) {
		return token{kind: tokEnd}
	}
	return asContext(p.toks[p.pos], ctx)
}

func (p *labelParser) take(ctx parseContext) token {
	t := p.peek(ctx)
	p.pos++
	return t
}

func asContext(t token, ctx parseContext) token {
	if ctx == ctxValues && (t.kind == tokIn || t.kind == tokNotIn) {
		t.kind = tokIdent
	}
	return t
}

func found(lit, expected string) string {
	return "found '" + lit + "', expected: " + expected
}

func (p *labelParser) parse() ([]Requirement, string) {
	var reqs []Requirement
	for {
		t := p.peek(ctxValues)
		switch t.kind {
		case tokIdent, tokNot:
		case tokEnd:
			return reqs, ""
		default:
			return nil, found(t.lit, "!, identifier, or 'end of string'")
		}
		r, msg := p.requirement()
		if msg != "" {
			return nil, "unable to parse requirement: " + msg
		}
		reqs = append(reqs, r)
		switch t := p.take(ctxValues); t.kind {
		case tokEnd:
			return reqs, ""
		case tokComma:
			if n := p.peek(ctxValues); n.kind != tokIdent && n.kind != tokNot {
				return nil, found(n.lit, "identifier after ','")
			}
		default:
			return nil, found(t.lit, "',' or 'end of string'")
		}
	}
}

func (p *labelParser) requirement() (Requirement, string) {
	key, op, msg := p.keyAndInferredOperator()
	if msg != "" {
		return Requirement{}, msg
	}
	if op == Exists || op == DoesNotExist {
		return Requirement{Key: key, Op: op}, ""
	}
	op, msg = p.operator()
	if msg != "" {
		return Requirement{}, msg
	}
	var values []string
	if op == In || op == NotIn {
		values, msg = p.valueSet()
	} else {
		values, msg = p.exactValue()
	}
	if msg != "" {
		return Requirement{}, msg
	}
	slices.Sort(values)
	values = slices.Compact(values)
	return newRequirement(key, op, values)
}

// keyAndInferredOperator reads "[!] KEY". The operator is DoesNotExist
// after "!", Exists for a bare key at the end of a requirement, and ""
// when an operator follows.
func (p *labelParser) keyAndInferredOperator() (string, Operator, string) {
	var op Operator
	t := p.take(ctxValues)
	if t.kind == tokNot {
		op = DoesNotExist
		t = p.take(ctxValues)
	}
	if t.kind != tokIdent {
		return "", "", found(t.lit, "identifier")
	}
	if errs := qualifiedNameProblems(t.lit); len(errs) > 0 {
		return "", "", invalidValue("<nil>", t.lit, strings.Join(errs, "; "))
	}
	if n := p.peek(ctxValues); (n.kind == tokEnd || n.kind == tokComma) && op != DoesNotExist {
		op = Exists
	}
	return t.lit, op, ""
}

func (p *labelParser) operator() (Operator, string) {
	t := p.take(ctxOperator)
	switch t.kind {
	case tokIn:
		return In, ""
	case tokEquals:
		return Equals, ""
	case tokDoubleEquals:
		return DoubleEquals, ""
	case tokGreater:
		return GreaterThan, ""
	case tokLess:
		return LessThan, ""
	case tokNotIn:
		return NotIn, ""
	case tokNotEquals:
		return NotEquals, ""
	}
	return "", found(t.lit, binaryOperatorList)
}

// valueSet reads "( [VALUE] (, [VALUE])* )". Empty entries stand for the
// empty value, so "()" and "(a,)" both contain "".
func (p *labelParser) valueSet() ([]string, string) {
	if t := p.take(ctxValues); t.kind != tokOpenPar {
		return nil, "found '" + t.lit + "' expected: '('"
	}
	switch t := p.peek(ctxValues); t.kind {
	case tokIdent, tokComma:
		return p.valueList()
	case tokClosePar:
		p.take(ctxValues)
		return []string{""}, ""
	default:
		return nil, found(t.lit, "',', ')' or identifier")
	}
}

// valueList reads the entries of a value set up to and including ")".
func (p *labelParser) valueList() ([]string, string) {
	var values []string
	for {
		switch t := p.take(ctxValues); t.kind {
		case tokIdent:
			values = append(values, t.lit)
			switch n := p.peek(ctxValues); n.kind {
			case tokComma:
				continue
			case tokClosePar:
				p.take(ctxValues)
				return values, ""
			default:
				return nil, found(n.lit, "',' or ')'")
			}
		case tokComma:
			if len(values) == 0 {
				values = append(values, "")
			}
			switch n := p.peek(ctxValues); n.kind {
			case tokClosePar:
				p.take(ctxValues)
				return append(values, ""), ""
			case tokComma:
				p.take(ctxValues)
				values = append(values, "")
			}
		default:
			return nil, found(t.lit, "',', or identifier")
		}
	}
}

// exactValue reads the single value after =, ==, !=, > or <; an absent
// value is the empty value.
func (p *labelParser) exactValue() ([]string, string) {
	if t := p.peek(ctxValues); t.kind == tokEnd || t.kind == tokComma {
		return []string{""}, ""
	}
	t := p.take(ctxValues)
	if t.kind != tokIdent {
		return nil, found(t.lit, "identifier")
	}
	return []string{t.lit}, ""
}

// newRequirement checks the values of a parsed requirement the way the API
// server does, collecting every problem: integers for > and <, label value
// syntax for all. values are sorted and unique.
func newRequirement(key string, op Operator, values []string) (Requirement, string) {
	r := Requirement{Key: key, Op: op, Values: values}
	var errs []string
	if op == GreaterThan || op == LessThan {
		for i, v := range values {
			n, ok := parseInt64(v)
			if !ok {
				errs = append(errs, invalidValue("values["+strconv.Itoa(i)+"]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
			}
			r.bound = n
		}
	}
	for i, v := range values {
		if problems := labelValueProblems(v); len(problems) > 0 {
			errs = append(errs, invalidValue("values["+strconv.Itoa(i)+"]["+key+"]", v, strings.Join(problems, "; ")))
		}
	}
	return r, aggregate(errs)
}

// aggregate joins distinct messages the way the API server's error
// aggregate prints them: one message alone, several in brackets.
func aggregate(msgs []string) string {
	distinct := msgs[:0:0]
	for _, m := range msgs {
		if !slices.Contains(distinct, m) {
			distinct = append(distinct, m)
		}
	}
	msgs = distinct
	switch len(msgs) {
	case 0:
		return ""
	case 1:
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}
