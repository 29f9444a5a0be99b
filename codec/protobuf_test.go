package codec

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestProtobufGolden(t *testing.T) {
	t.Parallel()
	body := readTestdata(t, "configmap.pb")
	apiVersion, kind, raw, err := UnwrapProtobuf(body)
	if err != nil {
		t.Fatal(err)
	}
	if apiVersion != "v1" || kind != "ConfigMap" || len(raw) != 363 {
		t.Fatalf("got %q %q raw %d bytes", apiVersion, kind, len(raw))
	}
	if !bytes.Contains(raw, []byte("golden-enc")) {
		t.Fatal("raw does not hold the object")
	}
	if got := WrapProtobuf(nil, apiVersion, kind, raw); !bytes.Equal(got, body) {
		t.Fatalf("rewrap differs\n got %x\nwant %x", got, body)
	}
}

func TestWrapProtobufHandExample(t *testing.T) {
	t.Parallel()
	// ConfigMap x/default, uid u, rv 1, created 1700000000, data k=v.
	raw := mustHex(t, "0a220a01781200 1a0764656661756c74 2200 2a0175 320131 3800 420808 80e2cfaa06 1000 1206 0a016b 120176")
	want := mustHex(t, "6b387300 0a0f 0a027631 1209436f6e6669674d6170 122c"+hex.EncodeToString(raw)+"1a002200")
	got := WrapProtobuf([]byte("x"), "v1", "ConfigMap", raw)
	if !bytes.Equal(got, append([]byte("x"), want...)) {
		t.Fatalf("got  %x\nwant %x", got, want)
	}
	// Empty type and empty raw still write every field.
	if got := WrapProtobuf(nil, "", "", nil); !bytes.Equal(got, mustHex(t, "6b387300 0a04 0a00 1200 1200 1a00 2200")) {
		t.Fatalf("empty envelope %x", got)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUnwrapProtobufErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"empty", nil, "empty data"},
		{"json", []byte(`{"kind":"ConfigMap"}`), "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"},
		{"short", []byte{0x6b, 0x38}, "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"},
		{"magic only", []byte{0x6b, 0x38, 0x73, 0x00}, "empty body"},
		{"truncated length", []byte{0x6b, 0x38, 0x73, 0x00, 0x12, 0x05, 0x01}, "unable to decode protobuf envelope: unexpected EOF"},
		{"wrong wire type", []byte{0x6b, 0x38, 0x73, 0x00, 0x10, 0x01}, "unable to decode protobuf envelope: wrong wire type 0 for field 2"},
		{"bad type meta", []byte{0x6b, 0x38, 0x73, 0x00, 0x0a, 0x02, 0x0a, 0x05}, "unable to decode protobuf envelope: unexpected EOF"},
	}
	for _, tt := range tests {
		_, _, _, err := UnwrapProtobuf(tt.body)
		if !errors.Is(err, ErrProtobuf) || err.Error() != tt.want {
			t.Errorf("%s: err = %v, want %q wrapping ErrProtobuf", tt.name, err, tt.want)
		}
	}
}

func TestUnwrapProtobufSkipsUnknownFields(t *testing.T) {
	t.Parallel()
	body := WrapProtobuf(nil, "rbac.example/v1", "Role", []byte{0x0a, 0x00})
	body = append(body, 0x28, 0x07, 0x35, 1, 2, 3, 4) // field 5 varint, field 6 fixed32
	apiVersion, kind, raw, err := UnwrapProtobuf(body)
	if err != nil || apiVersion != "rbac.example/v1" || kind != "Role" || !bytes.Equal(raw, []byte{0x0a, 0x00}) {
		t.Fatalf("got %q %q %x %v", apiVersion, kind, raw, err)
	}
}

func FuzzUnwrapProtobuf(f *testing.F) {
	f.Add(readTestdata(f, "configmap.pb"))
	f.Add([]byte{0x6b, 0x38, 0x73, 0x00, 0x0a, 0x80})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		apiVersion, kind, raw, err := UnwrapProtobuf(b)
		if err != nil {
			return
		}
		// Whatever parses re-encodes to something that parses the same.
		a2, k2, r2, err := UnwrapProtobuf(WrapProtobuf(nil, apiVersion, kind, raw))
		if err != nil || a2 != apiVersion || k2 != kind || !bytes.Equal(r2, raw) {
			t.Fatalf("round trip: %q %q %x %v", a2, k2, r2, err)
		}
	})
}

// TestWrapProtobufAt: wrapping in place gives WrapProtobuf's bytes for
// every size class of the raw length.
func TestWrapProtobufAt(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 1 << 21} {
		for _, tm := range [][2]string{{"v1", "ConfigMapList"}, {"", ""}, {"flowcontrol.apiserver.example.com/v1", strings.Repeat("K", 300)}} {
			raw := bytes.Repeat([]byte{0x5a}, n)
			want := WrapProtobuf(nil, tm[0], tm[1], raw)
			hr := ProtobufHeadroom(tm[0], tm[1])
			buf := append(make([]byte, hr), raw...)
			if got := WrapProtobufAt(buf, hr, tm[0], tm[1]); !bytes.Equal(got, want) {
				t.Fatalf("raw %d %v: got %x... want %x...", n, tm, got[:min(len(got), 40)], want[:min(len(want), 40)])
			}
		}
	}
}
