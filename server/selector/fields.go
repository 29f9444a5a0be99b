package selector

import "strings"

// FieldRequirement is one condition of a field selector. Op is Equals or
// NotEquals ("==" is reported as Equals); Value is unescaped.
type FieldRequirement struct {
	Field string
	Op    Operator
	Value string
}

// Fields is a parsed field selector: the AND of its requirements. The zero
// value is the empty selector, which matches every object. A Fields is
// immutable and safe for concurrent use.
type Fields struct {
	reqs []FieldRequirement
}

// Empty reports whether the selector has no requirements.
func (s Fields) Empty() bool { return len(s.reqs) == 0 }

// Requirements returns the requirements in the order they were parsed
// (sorted by their source text). The slice is shared with the selector and
// must not be modified.
func (s Fields) Requirements() []FieldRequirement { return s.reqs }

// Matches reports whether an object satisfies every requirement. get
// returns the value of a field of the object; a field get does not know
// reads as the empty string, so "f=" matches it and "f!=" does not.
// Matches itself does not allocate.
func (s Fields) Matches(get func(field string) (string, bool)) bool {
	for i := range s.reqs {
		r := &s.reqs[i]
		v, _ := get(r.Field)
		if (v == r.Value) != (r.Op == Equals) {
			return false
		}
	}
	return true
}

// Transform returns the selector with each requirement's field replaced
// by what fn answers for it, in order; the first error fn returns stops
// it and is returned. The REST layer turns the labels a client names into
// the fields they select on with it.
func (s Fields) Transform(fn func(field string) (string, error)) (Fields, error) {
	reqs := make([]FieldRequirement, len(s.reqs))
	for i, r := range s.reqs {
		f, err := fn(r.Field)
		if err != nil {
			return Fields{}, err
		}
		r.Field = f
		reqs[i] = r
	}
	return Fields{reqs: reqs}, nil
}

// RequiresExactMatch reports whether some requirement pins field to one
// value (field=v or field==v) and returns the first such value. The REST
// layer uses it to serve "metadata.name=x" as a single-object read.
func (s Fields) RequiresExactMatch(field string) (value string, ok bool) {
	for i := range s.reqs {
		if r := &s.reqs[i]; r.Field == field && r.Op == Equals {
			return r.Value, true
		}
	}
	return "", false
}

// String renders the selector in the syntax ParseFields accepts, with
// values escaped; parsing the result yields the same requirements.
func (s Fields) String() string {
	var b strings.Builder
	for i := range s.reqs {
		r := &s.reqs[i]
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(r.Field)
		b.WriteString(string(r.Op))
		b.WriteString(EscapeFieldValue(r.Value))
	}
	return b.String()
}
