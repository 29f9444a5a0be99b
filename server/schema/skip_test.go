package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// skipCases are values skipAt must treat as the nested scan does: the
// same end or the same error.
var skipCases = []string{
	`{}`, `[]`, `{ }`, `[ ]`, `""`, `"a\"b\\c\u00e9\n"`, `true`, `false`, `null`, `0`, `-1.5e+3`, `12`,
	`{"a":1,"b":[1,2,{"c":null}],"d":{"e":"f"}} tail`, `[1, 2 ,3 ] `, " \t\r\n{\"a\" : [ ] , \"b\" : { } }",
	`{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{a:1}`, `[1 2]`, `{"a":1 "b":2}`, `{"a":1]`, `[1}`, `[`, `{`, `{"a":`,
	`"abc`, `"\x"`, `"\u12g4"`, "\"a\x01\"", `tru`, `nul`, `falsy`, `-`, `-a`, `01`, `1.`, `1.e5`, `1e`, `1e+`,
	`]`, `}`, `,`, ``, `  `, `{"a":[{"b":[{"c":[]}]}]}`, `["a\u0000b",{"\u0041":true}]`, "[\"\xff\xfe\"]",
	strings.Repeat("[", 70) + strings.Repeat("]", 70),
	strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat("[", 70) + strings.Repeat("]", 69),
}

func checkSkip(t *testing.T, data []byte, depth int) {
	t.Helper()
	fast := &scanner{data: data}
	fastErr := fast.skipAt(depth)
	nested := &scanner{data: data}
	nestedErr := nested.skipNested(depth)
	if (fastErr == nil) != (nestedErr == nil) || fastErr != nil && fastErr.Error() != nestedErr.Error() {
		t.Fatalf("skip of %.80q at depth %d: error %v, nested scan %v", data, depth, fastErr, nestedErr)
	}
	if fastErr == nil && fast.pos != nested.pos {
		t.Fatalf("skip of %.80q at depth %d ends at %d, nested scan at %d", data, depth, fast.pos, nested.pos)
	}
}

func TestSkipMatchesNestedScan(t *testing.T) {
	for _, c := range skipCases {
		for _, depth := range []int{0, 1, anyMaxDepth - 3, anyMaxDepth} {
			checkSkip(t, []byte(c), depth)
		}
	}
	files, _ := filepath.Glob("testdata/golden/*.json")
	if len(files) == 0 {
		t.Fatal("no golden objects")
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		checkSkip(t, b, 0)
		// Every cut of a valid object is an error at the same place.
		for i := 0; i < len(b); i += 7 {
			checkSkip(t, b[:i], 0)
		}
	}
}

// FuzzSkip holds skipAt to the nested scan on any input.
func FuzzSkip(f *testing.F) {
	for _, c := range skipCases[:len(skipCases)-2] {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSkip(t, data, 0)
		checkSkip(t, data, anyMaxDepth-1)
	})
}
