package openapi

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMarshalOrdered(t *testing.T) {
	t.Parallel()
	doc := obj{
		"components": obj{
			"securitySchemes": obj{"BearerToken": bearerSchemeDef()},
			"schemas": obj{"b": obj{"x-kubernetes-map-type": "atomic", "properties": obj{"type": obj{"type": "string"}, "items": obj{"default": obj{"z": 1, "a": 2}, "type": "string"}},
				"required": []string{"type"}, "type": "object", "x-kubernetes-group-version-kind": []gvk{{Version: "v1", Kind: "K"}}}, "a": obj{"type": "string"}},
		},
		"paths": obj{"/b": obj{"parameters": []any{obj{"schema": obj{"uniqueItems": true, "type": "string"}, "required": true, "in": "path", "name": "n"}},
			"patch": obj{}, "get": obj{"x-kubernetes-group-version-kind": gvk{Group: "g", Version: "v1", Kind: "K"}, "responses": obj{"401": obj{}, "200": obj{"content": obj{}, "description": "OK"}},
				"operationId": "o", "tags": []string{"t"}}}, "/a": obj{}},
		"info":    obj{"version": "1", "title": "T"},
		"openapi": "3.0.0",
	}
	got, err := marshalOrdered(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"openapi":"3.0.0","info":{"title":"T","version":"1"},"paths":{"/a":{},"/b":{"get":{"tags":["t"],"operationId":"o",` +
		`"responses":{"200":{"description":"OK","content":{}},"401":{}},"x-kubernetes-group-version-kind":{"group":"g","version":"v1","kind":"K"}},"patch":{},` +
		`"parameters":[{"name":"n","in":"path","required":true,"schema":{"type":"string","uniqueItems":true}}]}},` +
		`"components":{"schemas":{"a":{"type":"string"},"b":{"type":"object","required":["type"],"properties":{"items":{"type":"string","default":{"a":2,"z":1}},"type":{"type":"string"}},` +
		`"x-kubernetes-group-version-kind":[{"group":"","kind":"K","version":"v1"}],"x-kubernetes-map-type":"atomic"}},` +
		`"securitySchemes":{"BearerToken":{"type":"apiKey","name":"authorization","in":"header"}}}}`
	if string(got) != want {
		t.Errorf("\n got: %s\nwant: %s", got, want)
	}
	// The same document as encoding/json reads it.
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(doc)
	_ = json.Unmarshal(plain, &b)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("content differs:\n%s\n%s", ja, jb)
	}
}

// TestV3DocumentsAreOrdered checks a served v3 document starts as
// upstream's do; the v2 document stays sorted.
func TestV3DocumentsAreOrdered(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "kubernetes")
	w := get(h, "/openapi/v3/api/v1", nil)
	if body := w.Body.String(); !strings.HasPrefix(body, `{"openapi":"3.0.0","info":{"title":"Kubernetes","version":"1.32.0"},"paths":{"/api/v1/":{"get":{"tags":["core_v1"],"operationId":`) {
		t.Errorf("v3 document starts %.200s", body)
	}
	if body := get(h, "/openapi/v2", map[string]string{"Accept": "application/json"}).Body.String(); !strings.HasPrefix(body, `{"definitions":`) {
		t.Errorf("v2 document starts %.100s", body)
	}
}
