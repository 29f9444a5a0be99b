package patch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"platd/server/apierr"
)

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoldenConfigMapPatches replays the captured chain update → merge →
// strategic → json patch of one ConfigMap. The server, not the patch, sets
// resourceVersion and managedFields, so those are carried over from the
// input before comparing.
func TestGoldenConfigMapPatches(t *testing.T) {
	t.Parallel()
	cm := testSchema(t, "ConfigMap")
	steps := []struct {
		name, before, patch, after string
		apply                      func(o, p []byte) ([]byte, error)
	}{
		{"merge", "cm-before-merge.json", "patch-merge.json", "cm-after-merge.json", MergePatch},
		{"strategic", "cm-after-merge.json", "patch-strategic.json", "cm-after-strategic.json",
			func(o, p []byte) ([]byte, error) { return StrategicMergeBytes(o, p, cm) }},
		{"json", "cm-after-strategic.json", "patch-json.json", "cm-after-json.json", JSONPatch},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			before := readGolden(t, st.before)
			out, err := st.apply(before, readGolden(t, st.patch))
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			var got, want, orig map[string]any
			for _, x := range []struct {
				b []byte
				v *map[string]any
			}{{out, &got}, {readGolden(t, st.after), &want}, {before, &orig}} {
				if err := json.Unmarshal(x.b, x.v); err != nil {
					t.Fatal(err)
				}
			}
			wm, om := want["metadata"].(map[string]any), orig["metadata"].(map[string]any)
			wm["resourceVersion"], wm["managedFields"] = om["resourceVersion"], om["managedFields"]
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Fatalf("result differs\n got %s\nwant %s", g, w)
			}
		})
	}
}

// TestGoldenPatchErrors checks the captured error Status bodies.
func TestGoldenPatchErrors(t *testing.T) {
	t.Parallel()
	var cases []struct {
		Name   string          `json:"name"`
		Type   string          `json:"type"`
		Patch  string          `json:"patch"`
		Status json.RawMessage `json:"status"`
	}
	if err := json.Unmarshal(readGolden(t, "errors.json"), &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	original := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"exists","namespace":"golden-err"},"data":{"k":"v"}}`)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			var err error
			switch c.Type {
			case "json":
				_, err = JSONPatch(original, []byte(c.Patch))
			case "merge":
				_, err = MergePatch(original, []byte(c.Patch))
			default:
				t.Fatalf("unknown type %q", c.Type)
			}
			if err == nil {
				t.Fatal("no error")
			}
			got, _ := json.Marshal(apierr.FromError(err).Status)
			if canonical(t, got) != canonical(t, c.Status) {
				t.Fatalf("status\n got %s\nwant %s", got, c.Status)
			}
		})
	}
}
