package rest

import (
	"bytes"
	"encoding/base64"
	"path"
	"strconv"
	"strings"
	"testing"

	"platd/config"
	"platd/server/apierr"
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

func TestEqualApartFromRV(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a, b string
		want bool
	}{
		{`{"metadata":{"name":"a","resourceVersion":"7"},"data":{"v":"x"}}`, `{"metadata":{"name":"a","resourceVersion":"0"},"data":{"v":"x"}}`, true},
		{`{"metadata":{"name":"a","resourceVersion":"7"},"data":{"v":"x"}}`, `{"metadata":{"name":"a","resourceVersion":"7"},"data":{"v":"y"}}`, false},
		{`{"metadata":{"name":"a","resourceVersion":"7"}}`, `{"metadata":{"name":"b","resourceVersion":"7"}}`, false},
		{`{"metadata":{"name":"a","resourceVersion":""}}`, `{"metadata":{"name":"a","resourceVersion":"123456"}}`, true},
		// Only metadata's member is the resourceVersion; a later one is data.
		{`{"metadata":{"resourceVersion":"1"},"data":{"resourceVersion":"2"}}`, `{"metadata":{"resourceVersion":"1"},"data":{"resourceVersion":"3"}}`, false},
		{`{"metadata":{"name":"a"}}`, `{"metadata":{"name":"a"}}`, true},
		{`{"metadata":{"name":"a"}}`, `{"metadata":{"name":"a","resourceVersion":"1"}}`, false},
		{`{"metadata":{"name":"a","resourceVersion":"1"}}`, `{"metadata":{"name":"a"}}`, false},
	}
	for _, c := range cases {
		if got := equalApartFromRV([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("equalApartFromRV(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
		// The answer is the one of comparing both stamped alike.
		sa, ea := Stamp([]byte(c.a), 0)
		sb, eb := Stamp([]byte(c.b), 0)
		if ea == nil && eb == nil && bytes.Equal(sa, sb) != c.want {
			t.Errorf("equalApartFromRV(%s, %s) disagrees with comparing stamped copies", c.a, c.b)
		}
	}
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
	// A name may hold "..": the server's own token for it continues.
	for _, start := range []string{"/a..b\x00", "a..b", "/..a", "/a../b"} {
		if _, got, _, err := h.decodeContinue(h.marshalContinue(5, start), "/p/"); err != nil || got != "/p/"+strings.TrimPrefix(start, "/") {
			t.Errorf("start %q: %q %v", start, got, err)
		}
	}
	// A key that cleaning changes is refused with upstream's texts, as is
	// a token of another version.
	const prefix = "invalid continue token: continue key is not valid: "
	for start, msg := range map[string]string{"/../x": "/../x", "../x": "../x", "//x": "//x", "/./x": "/./x", "/a/..": "/a/.."} {
		if _, _, _, err := h.decodeContinue(h.marshalContinue(5, start), "/p/"); err == nil || err.Error() != prefix+msg {
			t.Errorf("start %q: %v, want %q", start, err, prefix+msg)
		}
	}
	other := base64.RawURLEncoding.EncodeToString([]byte(`{"v":"bogus/v9","rv":5,"start":"/a"}`))
	if _, _, _, err := h.decodeContinue(other, "/p/"); err == nil || err.Error() != prefix+"server does not recognize this encoded version bogus/v9" {
		t.Errorf("other version: %v", err)
	}
}

func FuzzDecodeContinue(f *testing.F) {
	b, _ := config.LookupBrand("plat")
	h := &Handler{brand: b}
	f.Add(h.encodeContinue(7, "/p/", "/p/a"))
	f.Add("eyJ2IjoiIn0")
	// Revisions across and past the int64 a token holds, signed, with
	// leading zeros, a plus sign and spaces (not JSON numbers).
	v := h.continueVersion()
	for _, rv := range []string{"9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
		"-1", "-9223372036854775808", "-9223372036854775809", "007", "+1", " 1 ", "1e3", "1.0", `"5"`, "0"} {
		f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"v":"` + v + `","rv":` + rv + `,"start":"a\u0000"}`)))
	}
	f.Fuzz(func(t *testing.T, tok string) {
		rev, start, rel, err := h.decodeContinue(tok, "/p/")
		if err != nil {
			if apierr.Code(err) != 400 || !strings.HasPrefix(err.Error(), "invalid continue token: continue key is not valid: ") {
				t.Errorf("token %q refused with %v", tok, err)
			}
			return
		}
		if rev == 0 || len(start) < len("/p/") || start[:3] != "/p/" || start != "/p/"+rel || path.Clean("/"+rel) != "/"+rel {
			t.Errorf("accepted token %q gave rev %d start %q rel %q", tok, rev, start, rel)
		}
		// What the server hands out for it decodes to the same place.
		rev2, start2, _, err := h.decodeContinue(h.marshalContinue(rev, "/"+rel), "/p/")
		if err != nil || rev2 != rev || start2 != start {
			t.Errorf("token %q re-encoded: %d %q %v; want %d %q", tok, rev2, start2, err, rev, start)
		}
	})
}

// TestEncodeStoredCapacity: a stored encoding starts with the capacity
// its type's last one needed, so an object like the last is encoded
// without growing its buffer, and a huge one does not make the next ones
// allocate as much.
func TestEncodeStoredCapacity(t *testing.T) {
	_, d := configMapHandler(t)
	obj := func(data string) Object {
		return Object{"metadata": map[string]any{"name": "a", "namespace": "ns"}, "data": map[string]any{"k": data}}
	}
	small := obj(strings.Repeat("x", 3000))
	first, _ := encodeStored(d, small)
	again, _ := encodeStored(d, small)
	if !bytes.Equal(first, again) {
		t.Fatalf("encodings differ:\n%s\n%s", first, again)
	}
	if want := len(again) + len(again)/8; cap(again) != want {
		t.Errorf("second encoding has capacity %d, want %d (its length %d and an eighth)", cap(again), want, len(again))
	}
	_, _ = encodeStored(d, obj(strings.Repeat("x", 1<<20)))
	if got, _ := encodeStored(d, small); cap(got) != maxEncodeHint {
		t.Errorf("after a huge object the capacity is %d, want %d", cap(got), maxEncodeHint)
	}
	if got, _ := encodeStored(d, obj("")); cap(got) < minEncodeHint {
		t.Errorf("capacity %d below %d", cap(got), minEncodeHint)
	}
}
