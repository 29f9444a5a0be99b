package schema

import "testing"

func TestDecodeAnyDuplicates(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		doc  string
		want bool
	}{
		{`{"a":1,"b":{"a":2}}`, false},
		{`{"a":1,"a":2}`, true},
		{`{"a":1,"\u0061":2}`, true},
		{`{"x":[{"k":1,"k":2}]}`, true},
		{`{"x":[{"k":1},{"k":2}],"y":{}}`, false},
		{`{"a":{"b":1},"c":{"b":1,"b":3}}`, true},
		{`{"a":[1,[2,{"q":1}],{"q":2}],"q":3}`, false},
		{`{}`, false},
	} {
		v, got, err := DecodeAnyDuplicates([]byte(c.doc))
		if err != nil || v == nil || got != c.want {
			t.Errorf("%s: %v %v, want %v", c.doc, got, err, c.want)
		}
	}
	if _, _, err := DecodeAnyDuplicates([]byte(`{"a":1,}`)); err == nil {
		t.Error("a syntax error is not an error")
	}
}

// TestDecodeAnyNumberRange checks a number beyond float64's range is
// refused as encoding/json refuses it rather than read as ±Inf, and that
// the largest finite ones and integers beyond int64 still read.
func TestDecodeAnyNumberRange(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		doc  string
		want any
		err  string
	}{
		{`1e308`, 1e308, ""},
		{`-1.7976931348623157e308`, -1.7976931348623157e308, ""},
		{`12345678901234567890123`, 1.2345678901234568e22, ""},
		{`1e309`, nil, "json: cannot unmarshal number 1e309 into Go value of type float64"},
		{`{"a":[{"b":-1e400}],"c":1}`, nil, "json: cannot unmarshal number -1e400 into Go value of type float64"},
		{`[1e999,1e999`, nil, "unexpected end of JSON input"},
	} {
		v, err := DecodeAny([]byte(c.doc))
		if c.err == "" {
			if err != nil || v != c.want {
				t.Errorf("%s: %#v, %v; want %#v", c.doc, v, err, c.want)
			}
			continue
		}
		if err == nil || err.Error() != c.err {
			t.Errorf("%s: %#v, %v; want error %q", c.doc, v, err, c.err)
		}
		if _, _, derr := DecodeAnyDuplicates([]byte(c.doc)); derr == nil || derr.Error() != c.err {
			t.Errorf("%s: DecodeAnyDuplicates error %v, want %q", c.doc, derr, c.err)
		}
	}
}
