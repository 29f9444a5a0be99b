package schema

import (
	"errors"
	"strings"
	"testing"
)

func TestEachMember(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		data    string
		members string // name=raw;...
		n       int
		err     bool
	}{
		{data: `{}`, n: 2},
		{data: ` {"a":1,"b":{"c":[1,"}"]},"d\u0041":"x\"y"}rest`, members: `a=1;b={"c":[1,"}"]};dA="x\"y";`, n: 43},
		{data: `{ "a" : null , "b" : true }`, members: `a=null;b=true;`, n: 27},
		{data: `{"a":1`, err: true},
		{data: `{"a":}`, err: true},
		{data: `[1]`, err: true},
		{data: ``, err: true},
	} {
		var got strings.Builder
		n, err := EachMember([]byte(c.data), func(name, raw []byte) error {
			got.WriteString(string(name) + "=" + string(raw) + ";")
			return nil
		})
		if c.err {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("%s: error %v, want a syntax error", c.data, err)
			}
			continue
		}
		if err != nil || n != c.n || got.String() != c.members {
			t.Errorf("%s: %q, %d, %v; want %q, %d", c.data, got.String(), n, err, c.members, c.n)
		}
	}
	stop := errors.New("stop")
	calls := 0
	if _, err := EachMember([]byte(`{"a":1,"b":2}`), func(name, raw []byte) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("fn's error: %v after %d calls", err, calls)
	}
	if !OnlySpace([]byte(" \t\r\n")) || OnlySpace([]byte(" x")) {
		t.Error("OnlySpace")
	}
}
