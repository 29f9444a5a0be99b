package openapi

import (
	"errors"
	"reflect"
	"testing"
)

func TestResolveRefs(t *testing.T) {
	t.Parallel()
	components := map[string]any{
		"Meta": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
		"IntOrString": map[string]any{"format": "int-or-string", "oneOf": []any{
			map[string]any{"type": "integer"}, map[string]any{"type": "string"},
		}},
		// Props refers to itself, as a CRD's JSONSchemaProps does.
		"Props": map[string]any{"type": "object", "properties": map[string]any{
			"not":   map[string]any{"$ref": refPrefix + "Props"},
			"items": map[string]any{"type": "array", "items": map[string]any{"allOf": []any{map[string]any{"$ref": refPrefix + "Props"}}}},
		}},
	}
	cut := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	meta := components["Meta"]
	for _, tc := range []struct {
		name     string
		node     map[string]any
		visiting string
		want     map[string]any
	}{{
		name: "a reference is replaced by its schema",
		node: map[string]any{"$ref": refPrefix + "Meta"},
		want: meta.(map[string]any),
	}, {
		name: "an allOf-wrapped reference loses its siblings, as upstream's",
		node: map[string]any{"allOf": []any{map[string]any{"$ref": refPrefix + "Meta"}}, "default": map[string]any{}, "description": "d"},
		want: meta.(map[string]any),
	}, {
		name: "properties, map values and items are resolved",
		node: map[string]any{"type": "object", "properties": map[string]any{
			"m":    map[string]any{"type": "object", "additionalProperties": map[string]any{"$ref": refPrefix + "Meta"}},
			"l":    map[string]any{"type": "array", "items": map[string]any{"$ref": refPrefix + "Meta"}},
			"flag": map[string]any{"type": "boolean"},
		}},
		want: map[string]any{"type": "object", "properties": map[string]any{
			"m":    map[string]any{"type": "object", "additionalProperties": meta},
			"l":    map[string]any{"type": "array", "items": meta},
			"flag": map[string]any{"type": "boolean"},
		}},
	}, {
		name: "the int-or-string format is the extension",
		node: map[string]any{"$ref": refPrefix + "IntOrString"},
		want: map[string]any{"format": "int-or-string", "x-kubernetes-int-or-string": true, "oneOf": []any{
			map[string]any{"type": "integer"}, map[string]any{"type": "string"},
		}},
	}, {
		name:     "a cycle is cut by an object keeping unknown fields",
		node:     components["Props"].(map[string]any),
		visiting: "Props",
		want: map[string]any{"type": "object", "properties": map[string]any{
			"not":   cut,
			"items": map[string]any{"type": "array", "items": cut},
		}},
	}, {
		name: "a dangling reference stands for nothing",
		node: map[string]any{"$ref": refPrefix + "Gone"},
		want: map[string]any{},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			visiting := map[string]bool{}
			if tc.visiting != "" {
				visiting[tc.visiting] = true
			}
			if got := resolveRefs(components, tc.node, visiting); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestKindSchemas(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "kubernetes")
	schemas := h.KindSchemas()

	cm, err := schemas("", "v1", "ConfigMap")
	if err != nil {
		t.Fatal(err)
	}
	// ObjectMeta is inlined from its reference; maps keep their values.
	md := cm.Properties["metadata"]
	labels := md.Properties["labels"]
	if md.Type != "object" || md.Properties["name"].Type != "string" || labels.ValueSchema() == nil || labels.ValueSchema().Type != "string" {
		t.Errorf("ConfigMap metadata not resolved: %+v", md)
	}
	if bd := cm.Properties["binaryData"]; bd.ValueSchema() == nil || bd.ValueSchema().Format != "byte" {
		t.Errorf("binaryData %+v, want values of format byte", bd)
	}
	cron, err := schemas("stable.example.com", "v1", "CronTab")
	if err != nil {
		t.Fatal(err)
	}
	if spec := cron.Properties["spec"]; spec.Type != "object" || !spec.PreservesUnknown() {
		t.Errorf("CronTab spec %+v, want an object keeping unknown fields", spec)
	}

	for _, miss := range [][3]string{{"", "v1", "Secret"}, {"", "v2", "ConfigMap"}, {"apps", "v1", "Deployment"}} {
		if _, err := schemas(miss[0], miss[1], miss[2]); !errors.Is(err, ErrSchemaNotFound) {
			t.Errorf("%v: error %v, want ErrSchemaNotFound", miss, err)
		}
	}
}
