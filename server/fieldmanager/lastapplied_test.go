package fieldmanager

import (
	"strings"
	"testing"
)

// csaLive is a ConfigMap written by client-side apply (k, recorded in
// the last-applied annotation) and then by an editor (e).
func csaLive(t *testing.T, r *Resource, k string) map[string]any {
	t.Helper()
	ann := r.o.LastApplied
	last := `{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\"},\"data\":{\"k\":\"v\"}}\n`
	live := update(t, r, nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","annotations":{"`+ann+`":"`+last+`"}},"data":{"k":"v"}}`, "kubectl-client-side-apply")
	return update(t, r, live, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","annotations":{"`+ann+`":"`+last+`"}},"data":{"k":"`+k+`","e":"1"}}`, "editor")
}

func TestLastAppliedMigration(t *testing.T) {
	c := &clock{}
	c.set(0)
	r := tracker(t, c, "", "v1", "ConfigMap", "")
	cases := []struct {
		name, k, manager, data string
		message                string // "" when the apply succeeds
	}{
		{"kubectl takes what client-side apply set", "v", "kubectl", `{"k":"w"}`, ""},
		{"another manager conflicts", "v", "mine", `{"k":"w"}`,
			`Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.k`},
		{"kubectl conflicts on what client-side apply did not set", "v", "kubectl", `{"e":"2"}`,
			`Apply failed with 1 conflict: conflict with "editor" using v1: .data.e`},
		{"only the conflicts client-side apply does not explain remain", "v", "kubectl", `{"k":"w","e":"2"}`,
			`Apply failed with 1 conflict: conflict with "editor" using v1: .data.e`},
		{"a value changed since the client-side apply is not taken", "changed", "kubectl", `{"k":"w"}`,
			`Apply failed with 1 conflict: conflict with "editor" using v1: .data.k`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			live := csaLive(t, r, tc.k)
			config := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":` + tc.data + `}`
			out, err := r.Apply(live, object(t, config), tc.manager, false)
			if tc.message != "" {
				checkStatus(t, err, 409, tc.message, "")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := encodeJSON(t, out["data"]); got != `{"e":"1","k":"w"}` {
				t.Errorf("data %s", got)
			}
			want := mfList(mfEntry("kubectl", "Apply", "v1", "", 0, `{"f:data":{"f:k":{}}}`),
				mfEntry("editor", "Update", "v1", "", 0, `{"f:data":{"f:e":{}}}`),
				mfEntry("kubectl-client-side-apply", "Update", "v1", "", 0, `{"f:data":{},"f:metadata":{"f:annotations":{".":{},"f:`+r.o.LastApplied+`":{}}}}`))
			if got := managedOf(t, out); got != want {
				t.Errorf("managedFields\n got %s\nwant %s", got, want)
			}
			// The record follows the server-side configuration.
			if got, want := annotations(out)[r.o.LastApplied], `{"apiVersion":"v1","data":{"k":"w"},"kind":"ConfigMap","metadata":{"name":"x"}}`+"\n"; got != want {
				t.Errorf("last applied %q, want %q", got, want)
			}
		})
	}
}

func TestLastAppliedSync(t *testing.T) {
	c := &clock{}
	c.set(0)
	r := tracker(t, c, "", "v1", "ConfigMap", "")
	ann := r.o.LastApplied
	cases := []struct {
		name, meta, want string
	}{
		{"no annotations", `"name":"x"`, `{"apiVersion":"v1","data":{"k":"w"},"kind":"ConfigMap","metadata":{"name":"x"}}` + "\n"},
		{"other annotations kept", `"name":"x","annotations":{"a":"b","` + ann + `":"old"}`,
			`{"apiVersion":"v1","data":{"k":"w"},"kind":"ConfigMap","metadata":{"annotations":{"a":"b"},"name":"x"}}` + "\n"},
		{"emptied annotations stay", `"name":"x","annotations":{"` + ann + `":"old"}`,
			`{"apiVersion":"v1","data":{"k":"w"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"x"}}` + "\n"},
		{"null annotations go", `"name":"x","annotations":null`,
			`{"apiVersion":"v1","data":{"k":"w"},"kind":"ConfigMap","metadata":{"name":"x"}}` + "\n"},
		{"HTML characters escaped as encoding/json does", `"name":"x","labels":{"a":"<&>"}`,
			`{"apiVersion":"v1","data":{"k":"w"},"kind":"ConfigMap","metadata":{"labels":{"a":"\u003c\u0026\u003e"},"name":"x"}}` + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			live := csaLive(t, r, "v")
			// Forced: the configuration's record differs from the live one.
			out, err := r.Apply(live, object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{`+tc.meta+`},"data":{"k":"w"}}`), "kubectl", true)
			if err != nil {
				t.Fatal(err)
			}
			if got := annotations(out)[ann]; got != tc.want {
				t.Errorf("last applied\n got %q\nwant %q", got, tc.want)
			}
		})
	}

	// Another manager leaves the record alone.
	live := csaLive(t, r, "v")
	before := annotations(live)[ann]
	out, err := r.Apply(live, object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"n":"1"}}`), "mine", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := annotations(out)[ann]; got != before {
		t.Errorf("another manager's apply changed the record to %q", got)
	}

	// Without a record, kubectl does not start one.
	plain := update(t, r, nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"k":"v"}}`, "creator")
	out, err = r.Apply(plain, object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"n":"1"}}`), "kubectl", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := annotations(out)[ann]; ok {
		t.Errorf("kubectl's apply started a record")
	}
}

// The annotations limit counts every annotation: a record that would
// take them past it is dropped.
func TestLastAppliedSizeLimit(t *testing.T) {
	c := &clock{}
	c.set(0)
	r := tracker(t, c, "", "v1", "ConfigMap", "")
	ann := r.o.LastApplied
	const limit = 256 * 1024
	// Everything in the configuration's annotations counts twice (in the
	// annotations and in the record); the data value once, so its length
	// makes the remainder even and the limit reachable to the byte.
	val := "w"
	record := func() int {
		return len(`{"apiVersion":"v1","data":{"k":"` + val + `"},"kind":"ConfigMap","metadata":{"annotations":{"big":""},"name":"x"}}` + "\n")
	}
	if (limit-len("big")-len(ann)-record())%2 != 0 {
		val = "ww"
	}
	atLimit := (limit - len("big") - len(ann) - record()) / 2
	config := func(big int) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","annotations":{"big":"` + strings.Repeat("b", big) + `"}},"data":{"k":"` + val + `"}}`
	}
	for _, tc := range []struct {
		name string
		big  int
		kept bool
	}{
		{"at the limit", atLimit, true},
		{"one byte over", atLimit + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := csaLive(t, r, "v")
			out, err := r.Apply(live, object(t, config(tc.big)), "kubectl", true)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := annotations(out)[ann]
			if ok != tc.kept {
				t.Fatalf("record kept %v, want %v (size %d)", ok, tc.kept, annotationsSize(annotations(out)))
			}
			if size := annotationsSize(annotations(out)); ok && size != limit {
				t.Errorf("annotations of %d bytes, want %d", size, limit)
			}
			if ok && len(got.(string)) != record()+tc.big {
				t.Errorf("record of %d bytes", len(got.(string)))
			}
		})
	}
}
