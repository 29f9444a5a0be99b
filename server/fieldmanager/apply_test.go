package fieldmanager

import (
	"testing"
	"time"

	"platd/config"
	"platd/server/schema"
)

// configMaps returns the Resource of v1 ConfigMaps with a clock the test
// moves.
func configMaps(t *testing.T, now *time.Time) *Resource {
	t.Helper()
	b, _ := config.LookupBrand("plat")
	cat, err := schema.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	s := cat.ByGVK("", "v1", "ConfigMap")
	if s == nil {
		t.Fatal("no ConfigMap schema")
	}
	return New(Options{Version: "v1", Kind: "ConfigMap", Schema: s, Now: func() time.Time { return *now }})
}

// stored is obj as the store keeps it: without kind and apiVersion.
func stored(obj map[string]any) map[string]any {
	out := schema.DeepCopy(obj).(map[string]any)
	delete(out, "kind")
	delete(out, "apiVersion")
	return out
}

// TestApplyUnchangedObjectKeepsTimes: an apply that leaves the object as
// it is stamps no time, so applying the same configuration again writes
// nothing, and a manager that only joins in owning has no time.
func TestApplyUnchangedObjectKeepsTimes(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := configMaps(t, &now)
	config := func() map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"},
			"data": map[string]any{"k": "v"}}
	}
	first, err := r.Apply(nil, config(), "x", false)
	if err != nil {
		t.Fatal(err)
	}
	const created = `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k":{}}},"manager":"x","operation":"Apply","time":"2026-01-02T03:04:05Z"}]`
	if got := managedOf(t, first); got != created {
		t.Fatalf("created:\n got  %s\n want %s", got, created)
	}

	now = now.Add(time.Minute)
	tests := []struct {
		name, manager, want string
	}{
		{"same manager", "x", created},
		{"new co-owner", "y", `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k":{}}},"manager":"y","operation":"Apply"},` +
			`{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k":{}}},"manager":"x","operation":"Apply","time":"2026-01-02T03:04:05Z"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			live := stored(first)
			out, err := r.Apply(live, config(), tc.manager, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := managedOf(t, out); got != tc.want {
				t.Errorf("managedFields:\n got  %s\n want %s", got, tc.want)
			}
			if _, ok := live["kind"]; ok {
				t.Errorf("Apply changed the live object: %v", live)
			}
		})
	}

	changed := config()
	changed["data"] = map[string]any{"k": "w"}
	out, err := r.Apply(stored(first), changed, "x", false)
	if err != nil {
		t.Fatal(err)
	}
	const stamped = `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k":{}}},"manager":"x","operation":"Apply","time":"2026-01-02T03:05:05Z"}]`
	if got := managedOf(t, out); got != stamped {
		t.Errorf("after a change:\n got  %s\n want %s", got, stamped)
	}
}
