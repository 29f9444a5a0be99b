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
