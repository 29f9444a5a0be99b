package rest

import (
	"bytes"
	"strconv"
	"testing"

	"platd/config"
)

func TestStamp(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`{"metadata":{"name":"a","resourceVersion":"0"},"data":{"resourceVersion":"x"}}`, `{"metadata":{"name":"a","resourceVersion":"42"},"data":{"resourceVersion":"x"}}`},
		{`{"metadata":{"resourceVersion":""}}`, `{"metadata":{"resourceVersion":"42"}}`},
		{`{"metadata":{"resourceVersion":"17","uid":"u"}}`, `{"metadata":{"resourceVersion":"42","uid":"u"}}`},
	}
	for _, c := range cases {
		got, err := Stamp([]byte(c.in), 42)
		if err != nil || string(got) != c.want {
			t.Errorf("Stamp(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if _, err := Stamp([]byte(`{"metadata":{}}`), 1); err == nil {
		t.Error("Stamp without a resourceVersion member succeeded")
	}
}

func FuzzStamp(f *testing.F) {
	f.Add([]byte(`{"metadata":{"resourceVersion":"0"}}`), int64(5))
	f.Add([]byte(`"resourceVersion":"`), int64(0))
	f.Fuzz(func(t *testing.T, b []byte, rev int64) {
		out, err := Stamp(b, rev)
		if err != nil {
			return
		}
		if !bytes.Contains(out, []byte(`"resourceVersion":"`+strconv.FormatInt(rev, 10)+`"`)) {
			t.Errorf("stamped %q lacks revision %d", out, rev)
		}
	})
}

func TestContinueToken(t *testing.T) {
	t.Parallel()
	b, _ := config.LookupBrand("plat")
	h := &Handler{brand: b}
	tok := h.encodeContinue(12345, "/configmaps/default/", "/configmaps/default/cm-2")
	if tok != "eyJ2IjoibWV0YS5wbGF0LmlvL3YxIiwicnYiOjEyMzQ1LCJzdGFydCI6Ii9jbS0yXHUwMDAwIn0" {
		t.Errorf("token %s", tok)
	}
	rev, start, rel, err := h.decodeContinue(tok, "/configmaps/default/")
	if err != nil || rev != 12345 || start != "/configmaps/default/cm-2\x00" || rel != "cm-2\x00" {
		t.Errorf("decode: %d %q %q %v", rev, start, rel, err)
	}
	for _, bad := range []string{"!!", "e30", h.marshalContinue(0, "/x\x00"), h.marshalContinue(5, "")} {
		if _, _, _, err := h.decodeContinue(bad, "/p/"); err == nil {
			t.Errorf("token %q accepted", bad)
		}
	}
}

func FuzzDecodeContinue(f *testing.F) {
	b, _ := config.LookupBrand("plat")
	h := &Handler{brand: b}
	f.Add(h.encodeContinue(7, "/p/", "/p/a"))
	f.Add("eyJ2IjoiIn0")
	f.Fuzz(func(t *testing.T, tok string) {
		rev, start, _, err := h.decodeContinue(tok, "/p/")
		if err != nil {
			return
		}
		if rev == 0 || len(start) < len("/p/") || start[:3] != "/p/" {
			t.Errorf("accepted token %q gave rev %d start %q", tok, rev, start)
		}
	})
}
