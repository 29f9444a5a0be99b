package patch

import (
	"encoding/json"
	"reflect"
	"testing"

	"platd/server/apierr"
)

var fuzzSeeds = [][2]string{
	{pod, `{"spec":{"containers":[{"name":"b","image":"x"},{"name":"c"}]}}`},
	{pod, `{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],"containers":[{"name":"a","$patch":"delete"}]}}`},
	{pod, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"],"finalizers":["z"],"$retainKeys":["finalizers"]}}`},
	{pod, `{"metadata":{"$setElementOrder/finalizers":[{"a":1},[1],null],"finalizers":[null]}}`},
	{pod, `{"spec":{"containers":[{"$patch":"replace"},{"name":{"x":1}}],"volumes":[{"name":[1]}]}}`},
	{`{"a":[{"k":{"x":1}},{"k":[1]}]}`, `{"a":[{"k":{"x":1},"v":1}],"$patch":"replace"}`},
	{`{"data":{"k":"v"}}`, `[{"op":"add","path":"/data/x","value":1}]`},
	{`{"data":{"k":"v"}}`, `{"data":{"k":null,"n":{"$patch":"delete"}}}`},
}

// exerciseStatus checks an error renders as a Status of a known class.
func exerciseStatus(t *testing.T, err error) {
	switch c := apierr.Code(err); c {
	case 400, 413, 422, 500:
	default:
		t.Fatalf("unexpected status %d for %v", c, err)
	}
}

func FuzzStrategicMerge(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	podSchema := testSchema(f, "Pod")
	f.Fuzz(func(t *testing.T, original, patch []byte) {
		for _, s := range []any{podSchema, nil} {
			run := func() ([]byte, error) {
				if s == nil {
					return StrategicMergeBytes(original, patch, nil)
				}
				return StrategicMergeBytes(original, patch, podSchema)
			}
			out1, err1 := run()
			out2, err2 := run()
			if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(out1, out2) {
				t.Fatalf("not deterministic: %s / %v vs %s / %v", out1, err1, out2, err2)
			}
			if err1 != nil {
				exerciseStatus(t, err1)
				continue
			}
			if !json.Valid(out1) {
				t.Fatalf("invalid output %q", out1)
			}
		}
	})
}

func FuzzJSONPatch(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Add([]byte(`{"a":[1,2]}`), []byte(`[{"op":"move","from":"/a/0","path":"/a/-"},{"op":"copy","from":"/a","path":"/b"}]`))
	f.Fuzz(func(t *testing.T, original, patch []byte) {
		out, err := JSONPatch(original, patch)
		if err != nil {
			exerciseStatus(t, err)
			return
		}
		if len(original) > 0 && json.Valid(original) && !json.Valid(out) {
			t.Fatalf("invalid output %q", out)
		}
	})
}

func FuzzMergePatch(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, original, patch []byte) {
		out, err := MergePatch(original, patch)
		if err != nil {
			exerciseStatus(t, err)
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %q", out)
		}
		// The text quoted in errors is the same document.
		text, err := MergeText(original, patch)
		if err != nil {
			return
		}
		var want, got any
		if json.Unmarshal(out, &want) != nil || json.Unmarshal([]byte(text), &got) != nil {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("merge text %s, merged %s", text, out)
		}
	})
}
