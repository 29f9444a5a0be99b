package protobuf

import (
	"errors"
	"math"
	"strings"
	"testing"

	"platd/server/schema"
)

func TestAppendJSON(t *testing.T) {
	t.Parallel()
	v := map[string]any{"b": []any{int64(1), 2.5, 1e-7, true, nil}, "a": "<\u2028\xff", "c": map[string]any{}, "d": int(-3)}
	got, err := appendJSON(nil, v)
	if want := `{"a":"\u003c\u2028\ufffd","b":[1,2.5,1e-7,true,null],"c":{},"d":-3}`; err != nil || string(got) != want {
		t.Errorf("got %s, %v want %s", got, err, want)
	}
	for _, tt := range []struct {
		v    any
		want error
	}{
		{math.NaN(), ErrValue},
		{[]any{math.Inf(-1)}, ErrValue},
		{map[string]any{"x": int32(1)}, ErrType},
		{[]string{"x"}, ErrType},
	} {
		if _, err := appendJSON(nil, tt.v); err != tt.want {
			t.Errorf("%#v: got %v want %v", tt.v, err, tt.want)
		}
	}
}

// TestRawJSONDepth pins the nesting limit of raw JSON: a value inside more
// than 10000 containers is not JSON.
func TestRawJSONDepth(t *testing.T) {
	t.Parallel()
	doc := func(n int) []byte { return []byte(strings.Repeat("[", n) + "1" + strings.Repeat("]", n)) }
	if _, err := schema.DecodeAnyShared(doc(10000), string(doc(10000))); err != nil {
		t.Errorf("depth 10000: %v", err)
	}
	if _, err := schema.DecodeAny(doc(10001)); !errors.Is(err, schema.ErrSyntax) {
		t.Errorf("depth 10001: %v", err)
	}
}
