package server_test

import (
	"testing"
)

// gizmoCRD is a CRD whose schema uses the value validations custom
// resources are checked with.
func gizmoCRD() map[string]any {
	return map[string]any{
		"metadata": map[string]any{"name": "gizmos.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "gizmos", "kind": "Gizmo"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object", "required": []any{"image"},
						"x-kubernetes-validations": []any{map[string]any{"rule": "!has(self.replicas) || self.replicas <= 5"}},
						"properties": map[string]any{
							"image":    map[string]any{"type": "string", "maxLength": 8, "pattern": "^[a-z]+$"},
							"replicas": map[string]any{"type": "integer", "minimum": 0, "maximum": 10},
							"mode":     map[string]any{"type": "string", "enum": []any{"a", "b"}},
							"when":     map[string]any{"type": "string", "format": "date-time"},
							"tags":     map[string]any{"type": "array", "maxItems": 2, "x-kubernetes-list-type": "set", "items": map[string]any{"type": "string"}},
							"ports": map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"},
								"items": map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{
									"name": map[string]any{"type": "string"}, "port": map[string]any{"type": "integer"}}}},
							"template": map[string]any{"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
						}},
					"status": map[string]any{"type": "object", "properties": map[string]any{
						"phase": map[string]any{"type": "string", "enum": []any{"Ready"}},
						"count": map[string]any{"type": "integer"}}},
				}}}}},
		},
	}
}

func gizmo(name string, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": name}, "spec": spec}
}

// TestCustomResourceValidation writes custom resources that break their
// schema and checks upstream's Status: the texts, field paths and cause
// reasons of the schema, embedded resource and list checks, in upstream's
// order, the validation rules run only when no failure blocks them, and
// nothing is stored.
func TestCustomResourceValidation(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", groupPath(platBrand.Group("apiextensions"), "v1", "", "customresourcedefinitions"), gizmoCRD()).mustCode(t, 201)
	p := groupPath("example.com", "v1", "default", "gizmos")
	kind := "Gizmo.example.com"

	mustRefuse(t, e, p, gizmo("g1", map[string]any{
		"image": "Bad-Image", "replicas": 11, "mode": "c", "when": "yesterday",
		"tags":     []any{"x", "y", "x"},
		"ports":    []any{map[string]any{"name": "http", "port": 80}, map[string]any{"name": "http", "port": "81"}},
		"template": map[string]any{"kind": "Pod", "metadata": map[string]any{"name": "a/b"}},
	}), kind, []string{
		`spec.image: Too long: may not be more than 8 bytes`,
		`spec.mode: Unsupported value: "c": supported values: "a", "b"`,
		`spec.ports[1].port: Invalid value: "string": spec.ports[1].port in body must be of type integer: "string"`,
		`spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10`,
		`spec.tags: Too many: 3: must have at most 2 items`,
		`spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"`,
		`spec.template.apiVersion: Required value: must not be empty`,
		`spec.template.metadata.name: Invalid value: "a/b": may not contain '/'`,
		`spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}`,
		`spec.tags[2]: Duplicate value: "x"`,
		`<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
	})
	// Failures that do not block the rules leave them evaluated.
	mustRefuse(t, e, p, gizmo("g4", map[string]any{"image": "ABC", "replicas": 7}), kind, []string{
		`spec.image: Invalid value: "ABC": spec.image in body should match '^[a-z]+$'`,
		`spec: Invalid value: "object": failed rule: !has(self.replicas) || self.replicas <= 5`,
	})
	st := e.do("POST", p, gizmo("g2", map[string]any{"replicas": "3"})).mustCode(t, 422).obj(t)
	causes, _ := at(st, "details", "causes").([]any)
	want := []map[string]any{
		{"reason": "FieldValueTypeInvalid", "field": "spec.replicas", "message": `Invalid value: "string": spec.replicas in body must be of type integer: "string"`},
		{"reason": "FieldValueRequired", "field": "spec.image", "message": "Required value"},
		{"reason": "FieldValueInvalid", "field": "<nil>", "message": `Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`},
	}
	if len(causes) != len(want) {
		t.Fatalf("causes: %v", causes)
	}
	for i, w := range want {
		c, _ := causes[i].(map[string]any)
		for k, v := range w {
			if c[k] != v {
				t.Errorf("cause %d %s = %v, want %v", i, k, c[k], v)
			}
		}
	}
	if at(st, "details", "kind") != "Gizmo" || at(st, "details", "group") != "example.com" || at(st, "details", "name") != "g2" {
		t.Errorf("details: %v", st["details"])
	}
	e.do("GET", p+"/g1", nil).mustCode(t, 404)
	e.do("GET", p+"/g2", nil).mustCode(t, 404)

	// A valid object is stored; an update that breaks a field it changes
	// is refused, and the status subresource checks status alone.
	ok := e.do("POST", p, gizmo("g3", map[string]any{"image": "nginx", "replicas": 1})).mustCode(t, 201).obj(t)
	ok["spec"].(map[string]any)["replicas"] = -1
	e.do("PUT", p+"/g3", ok).mustCode(t, 422).
		mustMessage(t, `Gizmo.example.com "g3" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0`)
	cur := e.do("GET", p+"/g3", nil).mustCode(t, 200).obj(t)
	cur["status"] = map[string]any{"phase": "Broken"}
	e.do("PUT", p+"/g3/status", cur).mustCode(t, 422).
		mustMessage(t, `Gizmo.example.com "g3" is invalid: [status.phase: Unsupported value: "Broken": supported values: "Ready", `+
			`<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`)
	// The status schema is applied on its own: its messages name members
	// relative to it.
	cur["status"] = map[string]any{"count": "many"}
	e.do("PUT", p+"/g3/status", cur).mustCode(t, 422).
		mustMessage(t, `Gizmo.example.com "g3" is invalid: [status.count: Invalid value: "string": count in body must be of type integer: "string", `+
			`<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`)
	cur["status"] = map[string]any{"phase": "Ready", "count": 2}
	e.do("PUT", p+"/g3/status", cur).mustCode(t, 200)
}
