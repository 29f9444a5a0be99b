package schema

import (
	"testing"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	pod := c.ByGVK("", "v1", "Pod")
	role := c.ByGVK(kn("rbac.authorization.@D@"), "v1", "Role")
	tests := []struct {
		name string
		s    *Schema
		obj  map[string]any
		want string
	}{
		{"valid", pod, map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "a"}}}}, ""},
		{"required", pod, map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "x"}}}},
			"spec.containers[0].name: Required value"},
		{"enum", pod, map[string]any{"spec": map[string]any{"restartPolicy": "Sometimes", "containers": []any{map[string]any{"name": "a"}}}},
			`spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"`},
		{"list map duplicate", pod, map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}}},
			`spec.containers[1]: Duplicate value: map[string]interface {}{"name":"a"}`},
		{"set duplicate and missing verbs", role, map[string]any{"metadata": map[string]any{"finalizers": []any{"f"}}, "rules": []any{map[string]any{}}},
			"rules[0].verbs: Required value"},
		{"two errors", pod, map[string]any{"spec": map[string]any{"containers": []any{map[string]any{}}, "tolerations": []any{map[string]any{"operator": "Maybe"}}}},
			`[spec.containers[0].name: Required value, spec.tolerations[0].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			errs := Validate(tt.obj, tt.s)
			got := ""
			if len(errs) > 0 {
				got = errs.Error()
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestValidateSetAndMapPaths(t *testing.T) {
	t.Parallel()
	s := &Schema{Type: Object, Fields: []*Field{
		{Name: "tags", Schema: &Schema{Type: Array, ListType: "set", Elem: &Schema{Type: String}}},
		{Name: "data", Schema: &Schema{Type: Map, Elem: &Schema{Type: String, Enum: []string{"on"}}}},
	}}
	s.Seal()
	errs := Validate(map[string]any{"tags": []any{"a", "b", "a"}, "data": map[string]any{"k": "off"}}, s)
	want := `[tags[2]: Duplicate value: "a", data[k]: Unsupported value: "off": supported values: "on"]`
	if errs.Error() != want {
		t.Errorf("got  %s\nwant %s", errs.Error(), want)
	}
}
