package codec

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// TestJSONToCBOR checks the encoding rules byte for byte.
func TestJSONToCBOR(t *testing.T) {
	for _, tc := range []struct {
		name, json, hex string
	}{
		// Strings are byte strings (major type 2), keys too.
		{"string", `"ab"`, "d9d9f7" + "426162"},
		{"empty object", `{}`, "d9d9f7a0"},
		{"null", `null`, "d9d9f7f6"},
		{"bools", `[true,false]`, "d9d9f7" + "82f5f4"},
		// Integers stay integers, in their shortest head.
		{"small int", `1`, "d9d9f701"},
		{"negative int", `-1`, "d9d9f720"},
		{"uint8", `24`, "d9d9f71818"},
		{"int64 max", `9223372036854775807`, "d9d9f71b7fffffffffffffff"},
		{"int64 min", `-9223372036854775808`, "d9d9f73b7fffffffffffffff"},
		// Other numbers are floats, in the shortest exact width.
		{"float16", `1.5`, "d9d9f7f93e00"},
		{"float written with a point", `1.0`, "d9d9f7f93c00"},
		{"float32", `100000.5`, "d9d9f7fa47c35040"},
		{"float64", `0.1`, "d9d9f7fb3fb999999999999a"},
		{"beyond int64", `9223372036854775808`, "d9d9f7fa5f000000"},
		{"exponent", `1e3`, "d9d9f7f963d0"},
		// Keys sort by their encoded bytes: shorter first, then bytewise.
		{"key order", `{"bb":1,"a":2,"ab":3,"b":4}`, "d9d9f7a4" + "416102" + "416204" + "42616203" + "42626201"},
		{"unicode", `{"k":"ü"}`, "d9d9f7a1416b42c3bc"},
		{"nested", `{"a":[{"b":null}]}`, "d9d9f7a1416181a14162f6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := JSONToCBOR(nil, []byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			if h := hex.EncodeToString(got); h != tc.hex {
				t.Errorf("JSONToCBOR(%s) = %s, want %s", tc.json, h, tc.hex)
			}
		})
	}
	if _, err := JSONToCBOR(nil, []byte(`{"a":`)); !errors.Is(err, ErrCBOR) {
		t.Errorf("bad JSON: %v", err)
	}
	if _, err := JSONToCBOR(nil, []byte(`1e999`)); !errors.Is(err, ErrCBOR) {
		t.Errorf("infinite number: %v", err)
	}
	// dst is appended to.
	if got, _ := JSONToCBOR([]byte("x"), []byte(`1`)); string(got) != "x\xd9\xd9\xf7\x01" {
		t.Errorf("append: %q", got)
	}
}

// TestAppendCBORBytes checks that []byte values (base64 fields) are raw
// bytes in tag 22, as upstream writes them, and read back as base64.
func TestAppendCBORBytes(t *testing.T) {
	got, err := AppendCBOR(nil, map[string]any{"d": []byte("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if h := hex.EncodeToString(got); h != "d9d9f7a14164d6426869" {
		t.Errorf("got %s", h)
	}
	j, err := CBORToJSON(got)
	if err != nil || string(j) != `{"d":"aGk="}` {
		t.Errorf("back: %s %v", j, err)
	}
}

// TestCBORRoundTrip checks that JSON survives CBOR and back.
func TestCBORRoundTrip(t *testing.T) {
	for _, doc := range []string{
		`{"apiVersion":"v1","data":{"a":"b","é":"ü\u0000"},"kind":"ConfigMap","metadata":{"creationTimestamp":null,"name":"x"}}`,
		`{"a":[1,-2,1.5,0.1,true,false,null,"",{},[]]}`,
		`{"big":9223372036854775807,"f":1e+300,"s":"<&>"}`,
	} {
		c, err := JSONToCBOR(nil, []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		j, err := CBORToJSON(c)
		if err != nil {
			t.Fatal(err)
		}
		if string(j) != doc {
			t.Errorf("round trip:\n got  %s\n want %s", j, doc)
		}
	}
}

// TestCBORToJSON checks what request bodies may hold.
func TestCBORToJSON(t *testing.T) {
	for _, tc := range []struct {
		name, hex, json, err string
	}{
		{"tagged", "d9d9f7a0", `{}`, ""},
		{"untagged", "a0", `{}`, ""},
		{"text and byte strings", "a2616142627841626178", `{"a":"bx","b":"x"}`, ""},
		{"tag 22 bytes read as base64", "a16164d6426869", `{"d":"aGk="}`, ""},
		{"tag 21 bytes read as base64url", "a16164d542fbff", `{"d":"-_8"}`, ""},
		{"tag 23 bytes read as hex", "a16164d742abcd", `{"d":"abcd"}`, ""},
		{"unknown tag read as its content", "a16161d9fffe01", `{"a":1}`, ""},
		{"time tag read as text", "c11a00000000", `"1970-01-01T00:00:00Z"`, ""},
		{"indefinite length", "bf6161ff01ff", ``, "cbor: "},
		{"indefinite map", "bf616101ff", `{"a":1}`, ""},
		{"float16", "f93e00", `1.5`, ""},
		{"negative", "3903e7", `-1000`, ""},
		{"empty", "", ``, "EOF"},
		{"trailing data", "a0a0", ``, "cbor: 1 bytes of extraneous data starting at index 1"},
		{"duplicate key", "a2616101616102", ``, `cbor: found duplicate map key "a" at map element index 1`},
		{"integer key", "a10101", ``, "cbor: cannot unmarshal positive integer into Go value of type string"},
		{"invalid UTF-8 text", "61ff", ``, "cbor: invalid UTF-8 string"},
		{"undefined", "f7", ``, "simple value 23 is not recognized"},
		{"simple value 16", "f0", ``, "simple value 16 is not recognized"},
		{"NaN", "f97e00", ``, "floating-point NaN"},
		{"infinity", "f97c00", ``, "floating-point infinity"},
		{"bignum", "c249010000000000000000", ``, "bignum"},
		{"uint64 beyond int64", "1bffffffffffffffff", ``, "overflows Go's int64"},
		{"truncated", "a161", ``, "unexpected EOF"},
		{"too deep", strings.Repeat("81", 70) + "00", ``, "exceeded max nested level 64"},
		{"too long array", "9a00100000", ``, "exceeded max number of elements 1024"},
		{"too many pairs", "ba00100000", ``, "exceeded max number of key-value pairs 1024"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := hex.DecodeString(tc.hex)
			if err != nil {
				t.Fatal(err)
			}
			j, err := CBORToJSON(in)
			if tc.err != "" {
				if err == nil || !errors.Is(err, ErrCBOR) || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || string(j) != tc.json {
				t.Errorf("got %s %v, want %s", j, err, tc.json)
			}
		})
	}
}

// TestCBORTypeMeta checks the first look at a body: kind and apiVersion,
// other keys skipped, top-level keys distinct.
func TestCBORTypeMeta(t *testing.T) {
	b, _ := JSONToCBOR(nil, []byte(`{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"b"}}`))
	if gv, k, err := CBORTypeMeta(b); gv != "v1" || k != "ConfigMap" || err != nil {
		t.Errorf("got %q %q %v", gv, k, err)
	}
	if _, _, err := CBORTypeMeta([]byte{0xa2, 0x64, 'k', 'i', 'n', 'd', 0x61, 'x', 0x64, 'k', 'i', 'n', 'd', 0x61, 'y'}); err == nil {
		t.Error("duplicate kind accepted")
	}
	if _, _, err := CBORTypeMeta([]byte{0x01}); err == nil {
		t.Error("a number read as an object")
	}
	// A nested duplicate is left for the full decode.
	if _, _, err := CBORTypeMeta([]byte{0xa1, 0x61, 'd', 0xa2, 0x61, 'a', 1, 0x61, 'a', 2}); err != nil {
		t.Errorf("nested duplicate: %v", err)
	}
}

// TestCBORWatchFrames checks the CBOR sequence framing of watch events.
func TestCBORWatchFrames(t *testing.T) {
	var out bytes.Buffer
	enc := NewCBORFrameWriter(&out)
	obj, _ := JSONToCBOR(nil, []byte(`{"a":1}`))
	for _, typ := range []string{EventAdded, EventDeleted} {
		if err := enc.Encode(typ, obj); err != nil {
			t.Fatal(err)
		}
	}
	// type sorts before object (shorter key); the object keeps its tag.
	one := "d9d9f7a2" + "4474797065" + "%s" + "466f626a656374" + "d9d9f7a1416101"
	want := strings.Replace(one, "%s", "454144444544", 1) + strings.Replace(one, "%s", "4744454c45544544", 1)
	if got := hex.EncodeToString(out.Bytes()); got != want {
		t.Errorf("frames\n got  %s\n want %s", got, want)
	}
}

func BenchmarkJSONToCBOR(b *testing.B) {
	doc := []byte(`{"apiVersion":"v1","data":{"key1":"value1","key2":"value2"},"kind":"ConfigMap","metadata":{"creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"x"},"name":"cm-1","namespace":"default","resourceVersion":"12","uid":"0b7c4a43-1e4c-4b6b-9a57-0d8f3c2b1a00"}}`)
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		var err error
		if buf, err = JSONToCBOR(buf[:0], doc); err != nil {
			b.Fatal(err)
		}
	}
}
