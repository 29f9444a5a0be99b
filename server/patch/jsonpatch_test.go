package patch

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch"

	"platd/server/apierr"
)

func TestJSONPatch(t *testing.T) {
	t.Parallel()
	const doc = `{"metadata":{"name":"a","labels":{"x":"1"}},"data":{"k":"v"},"list":[1,2,3]}`
	cases := []struct {
		name, patch, want string
	}{
		{"add", `[{"op":"add","path":"/data/n","value":"w"}]`,
			`{"data":{"k":"v","n":"w"},"list":[1,2,3],"metadata":{"labels":{"x":"1"},"name":"a"}}`},
		{"remove", `[{"op":"remove","path":"/metadata/labels/x"}]`,
			`{"data":{"k":"v"},"list":[1,2,3],"metadata":{"labels":{},"name":"a"}}`},
		{"replace", `[{"op":"replace","path":"/data/k","value":{"deep":true}}]`,
			`{"data":{"k":{"deep":true}},"list":[1,2,3],"metadata":{"labels":{"x":"1"},"name":"a"}}`},
		{"move", `[{"op":"move","from":"/data/k","path":"/metadata/k"}]`,
			`{"data":{},"list":[1,2,3],"metadata":{"k":"v","labels":{"x":"1"},"name":"a"}}`},
		{"copy", `[{"op":"copy","from":"/metadata/labels","path":"/data/l"}]`,
			`{"data":{"k":"v","l":{"x":"1"}},"list":[1,2,3],"metadata":{"labels":{"x":"1"},"name":"a"}}`},
		{"test then replace", `[{"op":"test","path":"/data/k","value":"v"},{"op":"replace","path":"/data/k","value":"z"}]`,
			`{"data":{"k":"z"},"list":[1,2,3],"metadata":{"labels":{"x":"1"},"name":"a"}}`},
		{"append to list", `[{"op":"add","path":"/list/-","value":4}]`,
			`{"data":{"k":"v"},"list":[1,2,3,4],"metadata":{"labels":{"x":"1"},"name":"a"}}`},
		{"negative index", `[{"op":"remove","path":"/list/-1"}]`,
			`{"data":{"k":"v"},"list":[1,2],"metadata":{"labels":{"x":"1"},"name":"a"}}`},
		{"escaped pointer", `[{"op":"add","path":"/metadata/labels/a~1b","value":"s"}]`,
			`{"data":{"k":"v"},"list":[1,2,3],"metadata":{"labels":{"a/b":"s","x":"1"},"name":"a"}}`},
		{"empty patch", `[]`, doc},
		{"null patch", `null`, doc},
		// Upstream's library: a replace of a missing member adds it (kubectl
		// patch --type=json replacing labels an object lacks), an add
		// without a value adds null, a copy from a missing member copies
		// null.
		{"replace missing member", `[{"op":"replace","path":"/metadata/annotations","value":{"a":"b"}}]`,
			`{"data":{"k":"v"},"list":[1,2,3],"metadata":{"annotations":{"a":"b"},"labels":{"x":"1"},"name":"a"}}`},
		{"add without value", `[{"op":"add","path":"/data/n"}]`,
			`{"data":{"k":"v","n":null},"list":[1,2,3],"metadata":{"labels":{"x":"1"},"name":"a"}}`},
		{"copy missing member", `[{"op":"copy","from":"/data/none","path":"/data/n"}]`,
			`{"data":{"k":"v","n":null},"list":[1,2,3],"metadata":{"labels":{"x":"1"},"name":"a"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, err := JSONPatch([]byte(doc), []byte(c.patch))
			if err != nil {
				t.Fatalf("JSONPatch: %v", err)
			}
			if got, want := canonical(t, out), canonical(t, []byte(c.want)); got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestJSONPatchErrors(t *testing.T) {
	t.Parallel()
	const doc = `{"data":{"k":"v"}}`
	cases := []struct {
		name, patch string
		code        int
		reason      apierr.Reason
		message     string
		kind        error
	}{
		{"truncated", `[{"op":`, 400, apierr.ReasonBadRequest, "error decoding patch: unexpected end of JSON input", ErrMalformed},
		{"object not array", `{"op":"add"}`, 400, apierr.ReasonBadRequest,
			"error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp", ErrMalformed},
		{"scalar operation", `[1]`, 400, apierr.ReasonBadRequest,
			"error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp", ErrMalformed},
		{"op of wrong type", `[{"op":1,"path":"/a"}]`, 400, apierr.ReasonBadRequest,
			"error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string", ErrMalformed},
		{"unknown op", `[{"op":"frobnicate","path":"/data"}]`, 422, apierr.ReasonInvalid, rejectedMessage, ErrRejected},
		{"remove missing", `[{"op":"remove","path":"/data/missing"}]`, 422, apierr.ReasonInvalid, rejectedMessage, ErrRejected},
		{"test failed", `[{"op":"test","path":"/data/k","value":"no"}]`, 422, apierr.ReasonInvalid, rejectedMessage, ErrRejected},
		{"replace missing parent", `[{"op":"replace","path":"/spec/x","value":1}]`, 422, apierr.ReasonInvalid, rejectedMessage, ErrRejected},
		{"index out of range", `[{"op":"add","path":"/data/k/9","value":1}]`, 422, apierr.ReasonInvalid, rejectedMessage, ErrRejected},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, err := JSONPatch([]byte(doc), []byte(c.patch))
			if out != nil {
				t.Fatalf("got output %s with error", out)
			}
			wantStatus(t, err, c.code, c.reason, c.message)
			wantKind(t, err, c.kind)
		})
	}
}

func TestJSONPatchTestFailureKeepsCause(t *testing.T) {
	t.Parallel()
	_, err := JSONPatch([]byte(`{"a":1}`), []byte(`[{"op":"test","path":"/a","value":2}]`))
	wantKind(t, err, jsonpatch.ErrTestFailed)
	if d := apierr.FromError(err).Status.Details; d == nil || d.Name != "" || len(d.Causes) != 0 {
		t.Fatalf("details %+v, want empty details", d)
	}
}

func TestJSONPatchOperationLimit(t *testing.T) {
	t.Parallel()
	ops := func(n int) []byte {
		var b strings.Builder
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"op":"replace","path":"/a","value":1}`)
		}
		b.WriteByte(']')
		return []byte(b.String())
	}
	out, err := JSONPatch([]byte(`{"a":0}`), ops(maxJSONPatchOperations))
	if err != nil || canonical(t, out) != `{"a":1}` {
		t.Fatalf("at the limit: %s, %v", out, err)
	}
	_, err = JSONPatch([]byte(`{"a":0}`), ops(maxJSONPatchOperations+1))
	wantStatus(t, err, http.StatusRequestEntityTooLarge, apierr.ReasonTooLarge,
		fmt.Sprintf("Request entity too large: The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, maxJSONPatchOperations+1))
	wantKind(t, err, ErrTooManyOperations)
}

func TestJSONPatchCopyLimit(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"a":"` + strings.Repeat("x", 1<<20) + `"}`)
	// Each copy adds about 1 MiB; the fourth crosses 3 MiB.
	ok := []byte(`[{"op":"copy","from":"/a","path":"/b"},{"op":"copy","from":"/a","path":"/c"}]`)
	out, err := JSONPatch(doc, ok)
	if err != nil || len(out) < 3<<20 {
		t.Fatalf("two copies: len %d, %v", len(out), err)
	}
	over := []byte(`[{"op":"copy","from":"/a","path":"/b"},{"op":"copy","from":"/a","path":"/c"},` +
		`{"op":"copy","from":"/a","path":"/d"},{"op":"copy","from":"/a","path":"/e"}]`)
	_, err = JSONPatch(doc, over)
	wantStatus(t, err, http.StatusUnprocessableEntity, apierr.ReasonInvalid, rejectedMessage)
}
