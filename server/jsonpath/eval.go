package jsonpath

import (
	"errors"
	"fmt"
	"io"
	"slices"
)

// maxWork bounds the nodes one evaluation may apply, counted with their
// input values. Nested ranges (and ranges left without an end) multiply
// the work; without a bound a crafted template could keep a request busy
// for ever. Real printer columns stay far below it.
const maxWork = 1 << 20

// ErrTooLarge is returned when an evaluation exceeds maxWork.
var ErrTooLarge = errors.New("jsonpath evaluation exceeds its size limit")

// Template is a parsed JSONPath template. It is immutable: FindResults and
// Execute may be called concurrently.
type Template struct {
	root *listNode
}

// Parse parses a template such as "{.status.phase}" or "name: {.name}".
func Parse(text string) (*Template, error) {
	root, err := parse(text, 0)
	if err != nil {
		return nil, err
	}
	return &Template{root: root}, nil
}

// FindResults evaluates the template over data and returns one result list
// per top-level text or action. Values are shared with data, not copied;
// the caller must not modify them. With allowMissingKeys a field that is
// absent selects nothing instead of failing.
func (t *Template) FindResults(data any, allowMissingKeys bool) ([][]any, error) {
	e := &evaluator{allowMissing: allowMissingKeys}
	return e.findResults(data, t.root.nodes)
}

// Execute writes the template's text with each action replaced by what it
// selects, values separated by a space, as kubectl prints a JSONPath
// template.
func (t *Template) Execute(w io.Writer, data any, allowMissingKeys bool) error {
	results, err := t.FindResults(data, allowMissingKeys)
	if err != nil {
		return err
	}
	for _, r := range results {
		for i, v := range r {
			s, err := Text(v)
			if err != nil {
				return err
			}
			if i != len(r)-1 {
				s += " "
			}
			if _, err := io.WriteString(w, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// evaluator holds the state of one evaluation: the range/end bookkeeping
// and the work spent.
type evaluator struct {
	allowMissing bool
	beginRange   int
	inRange      int
	endRange     int
	lastEnd      *node // the end node that closed the latest range block
	work         int
}

// findResults runs nodes over data. A range node runs the nodes after it
// once per value it selects, up to its end node; evaluation then resumes
// after that end node.
func (e *evaluator) findResults(data any, nodes []node) ([][]any, error) {
	cur := []any{data}
	full := [][]any{}
	for i := 0; i < len(nodes); i++ {
		results, err := e.walk(cur, nodes[i])
		if err != nil {
			return nil, err
		}
		if e.endRange > 0 && e.endRange <= e.inRange {
			e.endRange--
			e.lastEnd = &nodes[i]
			break
		}
		if e.beginRange > 0 {
			e.beginRange--
			e.inRange++
			if len(results) > 0 {
				for _, v := range results {
					next, err := e.findResults(v, nodes[i+1:])
					if err != nil {
						return nil, err
					}
					full = append(full, next...)
				}
			} else if _, err := e.findResults(nil, nodes[i+1:]); err != nil {
				// An empty range still walks its block to find its end.
				return nil, err
			}
			e.inRange--
			for k := i + 1; k < len(nodes); k++ {
				if &nodes[k] == e.lastEnd {
					i = k
					break
				}
			}
			continue
		}
		full = append(full, results)
	}
	return full, nil
}

// walk applies one node to every input value. On error the values returned
// are those upstream returns, since an "exists" filter still counts them.
func (e *evaluator) walk(in []any, n node) ([]any, error) {
	e.work += len(in) + 1
	if e.work > maxWork {
		return nil, ErrTooLarge
	}
	switch n := n.(type) {
	case *listNode:
		return e.evalList(in, n)
	case *textNode:
		return []any{n.text}, nil
	case *fieldNode:
		return e.evalField(in, n)
	case *arrayNode:
		return e.evalArray(in, n)
	case *filterNode:
		return e.evalFilter(in, n)
	case *intNode:
		return repeat(in, n.value), nil
	case *floatNode:
		return repeat(in, n.value), nil
	case *boolNode:
		return repeat(in, n.value), nil
	case *wildcardNode:
		return e.evalWildcard(in), nil
	case *recursiveNode:
		return e.evalRecursive(in)
	case *unionNode:
		return e.evalUnion(in, n)
	case *identifierNode:
		return e.evalIdentifier(in, n)
	}
	return in, fmt.Errorf("unexpected node %T", n)
}

// repeat is a literal's value once per input value.
func repeat(in []any, v any) []any {
	out := make([]any, len(in))
	for i := range out {
		out[i] = v
	}
	return out
}

func (e *evaluator) evalList(in []any, l *listNode) ([]any, error) {
	cur := in
	for _, n := range l.nodes {
		var err error
		if cur, err = e.walk(cur, n); err != nil {
			return cur, err
		}
	}
	return cur, nil
}

func (e *evaluator) evalIdentifier(in []any, n *identifierNode) ([]any, error) {
	switch n.name {
	case "range":
		e.beginRange++
		return in, nil
	case "end":
		if e.inRange > 0 {
			e.endRange++
			return []any{}, nil
		}
		return []any{}, fmt.Errorf("not in range, nothing to end")
	}
	return in, fmt.Errorf("unrecognized identifier %v", n.name)
}

// evalArray selects by index or slice. An index outside the array is an
// error, not an empty selection.
func (e *evaluator) evalArray(in []any, n *arrayNode) ([]any, error) {
	out := []any{}
	for _, v := range in {
		if v == nil {
			continue
		}
		arr, ok := v.([]any)
		if !ok {
			return in, fmt.Errorf("%s is not array or slice", typeName(v))
		}
		p := n.params
		length := len(arr)
		if !p[0].known {
			p[0].value = 0
		}
		if p[0].value < 0 {
			p[0].value += length
		}
		if !p[1].known {
			p[1].value = length
		}
		if p[1].value < 0 || (p[1].value == 0 && p[1].derived) {
			p[1].value += length
		}
		if p[1].value == p[0].value {
			// An empty selection ends the whole evaluation of this node.
			return out, nil
		}
		if p[0].value >= length || p[0].value < 0 {
			return in, fmt.Errorf("array index out of bounds: index %d, length %d", p[0].value, length)
		}
		if p[1].value > length || p[1].value < 0 {
			return in, fmt.Errorf("array index out of bounds: index %d, length %d", p[1].value-1, length)
		}
		if p[0].value > p[1].value {
			return in, fmt.Errorf("starting index %d is greater than ending index %d", p[0].value, p[1].value)
		}
		step := 1
		if p[2].known {
			if p[2].value <= 0 {
				return in, fmt.Errorf("step must be > 0")
			}
			step = p[2].value
		}
		sub := arr[p[0].value:p[1].value]
		for i := 0; i < len(sub); i += step {
			out = append(out, sub[i])
		}
	}
	return out, nil
}

func (e *evaluator) evalUnion(in []any, n *unionNode) ([]any, error) {
	out := []any{}
	for _, l := range n.lists {
		vs, err := e.evalList(in, l)
		if err != nil {
			return in, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// evalField selects a member of each object; a member holding null is
// selected (and skipped by the next node).
func (e *evaluator) evalField(in []any, n *fieldNode) ([]any, error) {
	out := []any{}
	if len(in) == 0 {
		return out, nil
	}
	for _, v := range in {
		if m, ok := v.(map[string]any); ok {
			if x, ok := m[n.name]; ok {
				out = append(out, x)
			}
		}
	}
	if len(out) == 0 && !e.allowMissing {
		return out, fmt.Errorf("%s is not found", n.name)
	}
	return out, nil
}

// children lists what a value contains: an object's members in key order,
// an array's elements, a string's bytes. ok is false for scalars.
func children(v any) (out []any, ok bool) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out = make([]any, len(keys))
		for i, k := range keys {
			out[i] = x[k]
		}
		return out, true
	case []any:
		return x, true
	case string:
		// Upstream walks a string as its bytes.
		out = make([]any, len(x))
		for i := range len(x) {
			out[i] = x[i]
		}
		return out, true
	}
	return nil, false
}

func (e *evaluator) evalWildcard(in []any) []any {
	out := []any{}
	for _, v := range in {
		c, _ := children(v)
		out = append(out, c...)
	}
	return out
}

// evalRecursive selects, depth first, every value with children: the input
// values themselves and every container below them.
func (e *evaluator) evalRecursive(in []any) ([]any, error) {
	out := []any{}
	var visit func(v any) error
	visit = func(v any) error {
		c, _ := children(v)
		if len(c) == 0 {
			return nil
		}
		if e.work++; e.work > maxWork {
			return ErrTooLarge
		}
		out = append(out, v)
		for _, x := range c {
			if err := visit(x); err != nil {
				return err
			}
		}
		return nil
	}
	for _, v := range in {
		if err := visit(v); err != nil {
			return out, err
		}
	}
	return out, nil
}

// evalFilter keeps the array elements for which the filter holds.
func (e *evaluator) evalFilter(in []any, n *filterNode) ([]any, error) {
	out := []any{}
	for _, v := range in {
		arr, ok := v.([]any)
		if !ok {
			return in, fmt.Errorf("%v is not array or slice and cannot be filtered", v)
		}
		for _, el := range arr {
			lefts, err := e.evalList([]any{el}, n.left)
			if n.op == "exists" {
				if len(lefts) > 0 {
					out = append(out, el)
				}
				continue
			}
			if err != nil {
				return in, err
			}
			switch {
			case len(lefts) == 0:
				continue
			case len(lefts) > 1:
				return in, fmt.Errorf("can only compare one element at a time")
			}
			rights, err := e.evalList([]any{el}, n.right)
			if err != nil {
				return in, err
			}
			switch {
			case len(rights) == 0:
				continue
			case len(rights) > 1:
				return in, fmt.Errorf("can only compare one element at a time")
			}
			pass, err := compare(n.op, lefts[0], rights[0])
			if err != nil {
				return out, err
			}
			if pass {
				out = append(out, el)
			}
		}
	}
	return out, nil
}

// typeName is the Go type name upstream's messages print for a value.
func typeName(v any) string { return fmt.Sprintf("%T", v) }
