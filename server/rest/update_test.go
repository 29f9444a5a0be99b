package rest

import (
	"encoding/json"
	"testing"
)

func TestKeepPath(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, dst, src, path, want string
	}{
		{"member replaced", `{"spec":{"a":1},"status":{"s":1}}`, `{"spec":{"b":2}}`, "spec", `{"spec":{"b":2},"status":{"s":1}}`},
		{"member removed", `{"spec":{"a":1}}`, `{}`, "spec", `{}`},
		{"nested replaced", `{"metadata":{"labels":{"x":"1"},"name":"n"}}`, `{"metadata":{"labels":{"y":"2"}}}`, "metadata.labels", `{"metadata":{"labels":{"y":"2"},"name":"n"}}`},
		{"nested removed", `{"metadata":{"labels":{"x":"1"},"name":"n"}}`, `{"metadata":{"name":"n"}}`, "metadata.labels", `{"metadata":{"name":"n"}}`},
		{"nested created", `{}`, `{"metadata":{"labels":{"y":"2"}}}`, "metadata.labels", `{"metadata":{"labels":{"y":"2"}}}`},
		{"absent both", `{}`, `{}`, "metadata.labels", `{}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var dst, src Object
			if err := json.Unmarshal([]byte(c.dst), &dst); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(c.src), &src); err != nil {
				t.Fatal(err)
			}
			keepPath(dst, src, c.path)
			got, _ := json.Marshal(dst)
			if string(got) != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
			// The kept value is a copy: changing it leaves the source alone.
			if m, ok := dst["spec"].(map[string]any); ok {
				m["changed"] = true
				if s, _ := src["spec"].(map[string]any); s != nil && s["changed"] != nil {
					t.Error("kept value shares the source's map")
				}
			}
		})
	}
}
