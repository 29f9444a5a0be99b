package patch

import (
	"strings"
	"testing"

	"platd/server/apierr"
)

func TestMergePatch(t *testing.T) {
	t.Parallel()
	const doc = `{"metadata":{"name":"a","labels":{"x":"1","y":"2"}},"data":{"k":"v"},"list":[1,2,3]}`
	cases := []struct {
		name, patch, want string
	}{
		{"add member", `{"data":{"n":"w"}}`,
			`{"data":{"k":"v","n":"w"},"list":[1,2,3],"metadata":{"labels":{"x":"1","y":"2"},"name":"a"}}`},
		{"null deletes", `{"metadata":{"labels":{"x":null}}}`,
			`{"data":{"k":"v"},"list":[1,2,3],"metadata":{"labels":{"y":"2"},"name":"a"}}`},
		{"null deletes subtree", `{"metadata":{"labels":null}}`,
			`{"data":{"k":"v"},"list":[1,2,3],"metadata":{"name":"a"}}`},
		{"lists replace", `{"list":[9]}`,
			`{"data":{"k":"v"},"list":[9],"metadata":{"labels":{"x":"1","y":"2"},"name":"a"}}`},
		{"scalar replaces map", `{"data":"s"}`,
			`{"data":"s","list":[1,2,3],"metadata":{"labels":{"x":"1","y":"2"},"name":"a"}}`},
		{"nulls in new subtree dropped", `{"spec":{"a":1,"b":null}}`,
			`{"data":{"k":"v"},"list":[1,2,3],"metadata":{"labels":{"x":"1","y":"2"},"name":"a"},"spec":{"a":1}}`},
		{"empty patch", `{}`, doc},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, err := MergePatch([]byte(doc), []byte(c.patch))
			if err != nil {
				t.Fatalf("MergePatch: %v", err)
			}
			if got, want := canonical(t, out), canonical(t, []byte(c.want)); got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestMergePatchErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, patch, message string
	}{
		{"truncated", `{"data":`, "error decoding patch: unexpected end of JSON input"},
		{"array", `[1]`, "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{"string", `"x"`, "error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}"},
		{"garbage", `x`, "error decoding patch: invalid character 'x' looking for beginning of value"},
		{"trailing", `{"a":1} x`, "error decoding patch: invalid character 'x' after top-level value"},
		{"empty", ``, "error decoding patch: unexpected end of JSON input"},
		// Upstream's library refuses a null patch.
		{"null", `null`, "Invalid JSON Patch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := MergePatch([]byte(`{"a":1}`), []byte(c.patch))
			wantStatus(t, err, 400, apierr.ReasonBadRequest, c.message)
			wantKind(t, err, ErrMalformed)
		})
	}
}

func TestMergePatchBadOriginal(t *testing.T) {
	t.Parallel()
	_, err := MergePatch([]byte(`{"a":`), []byte(`{"b":1}`))
	wantStatus(t, err, 500, apierr.ReasonUnknown, "Invalid JSON Document")
	wantKind(t, err, ErrDocument)
}

func TestMergeText(t *testing.T) {
	cases := []struct{ name, original, patch, want string }{
		{"top level sorted, untouched members as written",
			`{"z":1,"meta":{"b":1,"a":2},"data":{"y":"1","x":"2"}}`, `{"data":{"w":"3"}}`,
			`{"data":{"w":"3","x":"2","y":"1"},"meta":{"b":1,"a":2},"z":1}`},
		{"null removes, also inside what the patch adds",
			`{"a":1,"b":{"c":1}}`, `{"a":null,"d":{"f":null,"e":[{"h":null,"g":1},null]}}`,
			`{"b":{"c":1},"d":{"e":[{"g":1},null]}}`},
		{"a non-object replaces an object and the other way round",
			`{"a":{"b":1},"c":[1,2]}`, `{"a":"s","c":{"y":1,"x":null}}`,
			`{"a":"s","c":{"y":1}}`},
		{"raw values compacted, HTML escaped",
			`{"a": [ 1, {"q":"<&>"} ]}`, `{}`,
			`{"a":[1,{"q":"\u003c\u0026\u003e"}]}`},
		{"escapes kept as written, in what the patch adds too",
			`{"a":"\u00e9","m":{"x":"a\/b"}}`, `{"m":{"y":"\u00e9"},"n":{"z":["\/", {"w":"\u00e9","v":null}]}}`,
			`{"a":"\u00e9","m":{"x":"a\/b","y":"\u00e9"},"n":{"z":["\/",{"w":"\u00e9"}]}}`},
	}
	for _, c := range cases {
		got, err := MergeText([]byte(c.original), []byte(c.patch))
		if err != nil || got != c.want {
			t.Errorf("%s: got %s, %v; want %s", c.name, got, err, c.want)
		}
	}
	if _, err := MergeText([]byte(`[1]`), []byte(`{}`)); err == nil {
		t.Error("an original that is not an object gave no error")
	}
}

// TestMergeTextDeep merges a patch value nested thousands deep.
func TestMergeTextDeep(t *testing.T) {
	const depth = 5000
	deep := `{"x":` + strings.Repeat(`[`, depth) + strings.Repeat(`]`, depth) + `}`
	got, err := MergeText([]byte(`{"a":1}`), []byte(deep))
	if want := `{"a":1,` + deep[1:]; err != nil || got != want {
		t.Errorf("deep patch: %v, %d bytes, want %d", err, len(got), len(want))
	}
}
