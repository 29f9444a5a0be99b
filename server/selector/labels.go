package selector

import "strings"

// Requirement is one condition of a label selector: a key, an operator and,
// for the operators that take them, values. Values are sorted and free of
// duplicates. A Requirement obtained from ParseLabels must not be modified.
type Requirement struct {
	Key    string
	Op     Operator
	Values []string
	// bound is Values[0] as an integer for GreaterThan and LessThan.
	bound int64
}

// Labels is a parsed label selector: the AND of its requirements, sorted by
// key. The zero value is the empty selector, which matches every object.
// A Labels is immutable and safe for concurrent use.
type Labels struct {
	reqs []Requirement
}

// Empty reports whether the selector has no requirements and so matches
// every set of labels.
func (s Labels) Empty() bool { return len(s.reqs) == 0 }

// Requirements returns the requirements in key order. The slice is shared
// with the selector and must not be modified.
func (s Labels) Requirements() []Requirement { return s.reqs }

// Matches reports whether a set of labels satisfies every requirement.
// It does not allocate.
func (s Labels) Matches(labels map[string]string) bool {
	for i := range s.reqs {
		r := &s.reqs[i]
		v, ok := labels[r.Key]
		if !r.matches(v, ok, true) {
			return false
		}
	}
	return true
}

// MatchesAny is Matches for labels as decoded from JSON, where values are
// held as any. A present label whose value is not a string counts as
// present with a value no requirement value equals. It does not allocate.
func (s Labels) MatchesAny(labels map[string]any) bool {
	for i := range s.reqs {
		r := &s.reqs[i]
		raw, ok := labels[r.Key]
		v, isString := raw.(string)
		if !r.matches(v, ok, isString) {
			return false
		}
	}
	return true
}

// RequiresExactMatch reports whether the selector pins label key to a
// single value (key=v, key==v or key in (v)) and returns that value. Only
// the first requirement on key is considered.
func (s Labels) RequiresExactMatch(key string) (value string, ok bool) {
	for i := range s.reqs {
		r := &s.reqs[i]
		if r.Key != key {
			continue
		}
		switch r.Op {
		case Equals, DoubleEquals, In:
			if len(r.Values) == 1 {
				return r.Values[0], true
			}
		}
		return "", false
	}
	return "", false
}

// String renders the selector in the syntax ParseLabels accepts; parsing
// the result yields an equal selector.
func (s Labels) String() string {
	var b strings.Builder
	for i := range s.reqs {
		if i > 0 {
			b.WriteByte(',')
		}
		s.reqs[i].write(&b)
	}
	return b.String()
}

// matches evaluates the requirement against one label: v is its value,
// present whether the key exists and isString whether v is the real
// value (false for a non-string JSON value).
func (r *Requirement) matches(v string, present, isString bool) bool {
	switch r.Op {
	case In, Equals, DoubleEquals:
		return present && isString && r.has(v)
	case NotIn, NotEquals:
		return !present || !isString || !r.has(v)
	case Exists:
		return present
	case DoesNotExist:
		return !present
	case GreaterThan, LessThan:
		if !present || !isString {
			return false
		}
		n, ok := parseInt64(v)
		if !ok {
			return false
		}
		if r.Op == GreaterThan {
			return n > r.bound
		}
		return n < r.bound
	}
	return false
}

func (r *Requirement) has(v string) bool {
	for _, x := range r.Values {
		if x == v {
			return true
		}
	}
	return false
}

// String renders one requirement as it appears in a selector.
func (r Requirement) String() string {
	var b strings.Builder
	r.write(&b)
	return b.String()
}

func (r *Requirement) write(b *strings.Builder) {
	if r.Op == DoesNotExist {
		b.WriteByte('!')
	}
	b.WriteString(r.Key)
	switch r.Op {
	case Exists, DoesNotExist:
		return
	case In, NotIn:
		b.WriteByte(' ')
		b.WriteString(string(r.Op))
		b.WriteString(" (")
		b.WriteString(strings.Join(r.Values, ","))
		b.WriteByte(')')
		return
	case GreaterThan:
		b.WriteByte('>')
	case LessThan:
		b.WriteByte('<')
	default:
		b.WriteString(string(r.Op))
	}
	if len(r.Values) > 0 {
		b.WriteString(r.Values[0])
	}
}
