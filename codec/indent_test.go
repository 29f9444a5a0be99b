package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestIndentGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		compact []byte
		want    string
	}{
		{"configmap", readTestdata(t, "configmap.json"), "configmap-pretty.json"},
		{"406 status", compactOf(t, "status-406-pretty.json"), "status-406-pretty.json"},
		{"415 status", compactOf(t, "status-415-pretty.json"), "status-415-pretty.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Indent(nil, tt.compact)
			want := readTestdata(t, tt.want)
			if !bytes.Equal(got, want) {
				t.Fatalf("Indent mismatch\n got %q\nwant %q", got, want)
			}
		})
	}
}

// compactOf returns the compact form of a pretty testdata file, with the
// trailing newline json.Encoder writes.
func compactOf(t *testing.T, name string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, readTestdata(t, name)); err != nil {
		t.Fatal(err)
	}
	return append(b.Bytes(), '\n')
}

func TestIndentMatchesMarshalIndent(t *testing.T) {
	t.Parallel()
	values := []any{
		nil, true, 12.5, "s", []any{}, map[string]any{},
		[]any{1, "a\"b\\", []any{}, map[string]any{"": nil}},
		map[string]any{"a": map[string]any{"b": []any{map[string]any{}, []any{[]any{}}}}, "c": "<&>\u2028"},
		map[string]any{"esc": `\"\\"`, "tail\\": `x\`},
		deepValue(40),
	}
	for i, v := range values {
		compact, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		prefix := []byte("keep:")
		got := Indent(append([]byte(nil), prefix...), compact)
		if !bytes.Equal(got, append(prefix, want...)) {
			t.Errorf("value %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// deepValue nests n arrays and objects, deeper than the ready-made
// indentation string covers.
func deepValue(n int) any {
	var v any = "leaf"
	for i := range n {
		if i%2 == 0 {
			v = []any{v, i}
		} else {
			v = map[string]any{"k": v}
		}
	}
	return v
}

func FuzzIndent(f *testing.F) {
	for _, s := range []string{`{}`, `[1,{"a":"\""}]`, `{"a":[{},[]],"b":null}`, `"x"`, `{"a" : [ ] }`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got := Indent(nil, in) // must not panic on any input
		var compact bytes.Buffer
		if json.Compact(&compact, in) != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got = Indent(got[:0], compact.Bytes()); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("Indent(%q)\n got %q\nwant %q", compact.Bytes(), got, want.Bytes())
		}
	})
}

// listBody builds a compact ConfigMapList of at least size bytes from the
// captured ConfigMap.
func listBody(tb testing.TB, size int) []byte {
	tb.Helper()
	item := bytes.TrimSpace(readTestdata(tb, "configmap.json"))
	var b bytes.Buffer
	b.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"900"},"items":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(bytes.Replace(item, []byte(`"name":"enc1"`), fmt.Appendf(nil, `"name":"cm-%d"`, i), 1))
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

// benchListSize is the list body size the benchmarks use: about the size of
// a large real-world list response.
const benchListSize = 9 << 20

func TestIndentLargeList(t *testing.T) {
	t.Parallel()
	body := listBody(t, 1<<20)
	var want bytes.Buffer
	if err := json.Indent(&want, bytes.TrimSpace(body), "", "  "); err != nil {
		t.Fatal(err)
	}
	if got := Indent(nil, body); !bytes.Equal(got, want.Bytes()) {
		t.Fatal("Indent differs from json.Indent on a 1 MiB list")
	}
}

func BenchmarkIndent(b *testing.B) {
	body := listBody(b, benchListSize)
	dst := make([]byte, 0, 2*len(body))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		dst = Indent(dst[:0], body)
	}
}

func BenchmarkIndentStdlib(b *testing.B) {
	body := listBody(b, benchListSize)
	var dst bytes.Buffer
	dst.Grow(2 * len(body))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		dst.Reset()
		if err := json.Indent(&dst, body, "", "  "); err != nil {
			b.Fatal(err)
		}
	}
}
