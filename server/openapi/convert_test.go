package openapi

import (
	"encoding/json"
	"testing"

	"platd/server/schema"
)

func TestConvertSchemaKinds(t *testing.T) {
	t.Parallel()
	str := &schema.Schema{Type: schema.String}
	named := &schema.Schema{Name: "x.Named", Type: schema.Object}
	cyclic := &schema.Schema{Type: schema.Object}
	cyclic.Fields = []*schema.Field{{Name: "self", Schema: cyclic}}
	tests := []struct {
		name string
		s    *schema.Schema
		dl   dialect
		want string
	}{
		{"string enum", &schema.Schema{Type: schema.String, Enum: []string{"A", "B"}}, v3, `{"enum":["A","B"],"type":"string"}`},
		{"int64", &schema.Schema{Type: schema.Integer, Format: "int64"}, v3, `{"format":"int64","type":"integer"}`},
		{"double", &schema.Schema{Type: schema.Number, Format: "double"}, v3, `{"format":"double","type":"number"}`},
		{"time", &schema.Schema{Type: schema.Time}, v3, `{"format":"date-time","type":"string"}`},
		{"bytes", &schema.Schema{Type: schema.Bytes}, v3, `{"format":"byte","type":"string"}`},
		{"quantity v3", &schema.Schema{Name: "q", Type: schema.Quantity}, v3, `{"oneOf":[{"type":"string"},{"type":"number"}]}`},
		{"quantity v2", &schema.Schema{Name: "q", Type: schema.Quantity}, v2, `{"type":"string"}`},
		{"int-or-string named v3", &schema.Schema{Name: "i", Type: schema.IntOrString}, v3, `{"format":"int-or-string","oneOf":[{"type":"integer"},{"type":"string"}]}`},
		{"int-or-string named v2", &schema.Schema{Name: "i", Type: schema.IntOrString}, v2, `{"format":"int-or-string","type":"string"}`},
		{"int-or-string custom", &schema.Schema{Type: schema.IntOrString}, v3, `{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true}`},
		{"raw named", &schema.Schema{Name: "r", Type: schema.Any}, v3, `{"type":"object"}`},
		{"raw untyped", &schema.Schema{Name: "r", Type: schema.Any, Untyped: true}, v3, `{}`},
		{"raw anonymous", &schema.Schema{Type: schema.Any}, v3, `{"x-kubernetes-preserve-unknown-fields":true}`},
		{"map list", &schema.Schema{Type: schema.Array, Elem: named, ListType: "map", ListMapKeys: []string{"name", "protocol"}}, v3,
			`{"items":{"allOf":[{"$ref":"#/components/schemas/x.Named"}],"default":{}},"type":"array","x-kubernetes-list-map-keys":["name","protocol"],"x-kubernetes-list-type":"map"}`},
		{"map list v2", &schema.Schema{Type: schema.Array, Elem: named, ListType: "set"}, v2,
			`{"items":{"$ref":"#/definitions/x.Named"},"type":"array","x-kubernetes-list-type":"set"}`},
		{"atomic map", &schema.Schema{Type: schema.Map, Elem: str, MapType: "atomic"}, v3, `{"additionalProperties":{"default":"","type":"string"},"type":"object","x-kubernetes-map-type":"atomic"}`},
		// Elements without a zero-value default: references stay bare.
		{"raw items", &schema.Schema{Type: schema.Array, Elem: &schema.Schema{Name: "x.JSON", Type: schema.Any}}, v3,
			`{"items":{"$ref":"#/components/schemas/x.JSON"},"type":"array"}`},
		{"quantity values", &schema.Schema{Type: schema.Map, Elem: &schema.Schema{Name: "x.Quantity", Type: schema.Quantity}}, v3,
			`{"additionalProperties":{"$ref":"#/components/schemas/x.Quantity"},"type":"object"}`},
		{"struct values", &schema.Schema{Type: schema.Map, Elem: named}, v3,
			`{"additionalProperties":{"allOf":[{"$ref":"#/components/schemas/x.Named"}],"default":{}},"type":"object"}`},
		{"integer items", &schema.Schema{Type: schema.Array, Elem: &schema.Schema{Type: schema.Integer, Format: "int64"}}, v3,
			`{"items":{"default":0,"format":"int64","type":"integer"},"type":"array"}`},
		{"byte values", &schema.Schema{Type: schema.Map, Elem: &schema.Schema{Type: schema.Bytes, Format: "byte"}}, v3,
			`{"additionalProperties":{"format":"byte","type":"string"},"type":"object"}`},
		{"custom resource items", &schema.Schema{Type: schema.Array, Elem: &schema.Schema{Type: schema.String, Loose: true}, Loose: true}, v3,
			`{"items":{"type":"string"},"type":"array"}`},
		{"string items v2", &schema.Schema{Type: schema.Array, Elem: str}, v2, `{"items":{"type":"string"},"type":"array"}`},
		{"unions", &schema.Schema{Type: schema.Object, Unions: []schema.Union{{Discriminator: "type", Fields: map[string]string{"localhostProfile": "LocalhostProfile"}}}}, v3,
			`{"type":"object","x-kubernetes-unions":[{"discriminator":"type","fields-to-discriminateBy":{"localhostProfile":"LocalhostProfile"}}]}`},
		{"unions v2", &schema.Schema{Type: schema.Object, Unions: []schema.Union{{Discriminator: "kind", Fields: map[string]string{"user": "User", "group": "Group"}}}}, v2,
			`{"type":"object","x-kubernetes-unions":[{"discriminator":"kind","fields-to-discriminateBy":{"group":"Group","user":"User"}}]}`},
		{"required order", &schema.Schema{Type: schema.Object, RequiredOrder: []string{"b", "a"}, Fields: []*schema.Field{
			{Name: "a", Required: true, Schema: str}, {Name: "b", Required: true, Schema: str},
		}}, v3, `{"properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["b","a"],"type":"object"}`},
		{"atomic bytes", &schema.Schema{Type: schema.Bytes, ListType: "atomic"}, v3, `{"format":"byte","type":"string","x-kubernetes-list-type":"atomic"}`},
		{"types beside a reference", &schema.Schema{Type: schema.Object, Fields: []*schema.Field{
			{Name: "d", Schema: named, DocListType: "atomic"}, {Name: "r", Schema: named, DocMapType: "granular"},
		}}, v3, `{"properties":{"d":{"allOf":[{"$ref":"#/components/schemas/x.Named"}],"x-kubernetes-list-type":"atomic"},` +
			`"r":{"allOf":[{"$ref":"#/components/schemas/x.Named"}],"x-kubernetes-map-type":"granular"}},"type":"object"}`},
		{"bare reference", &schema.Schema{Type: schema.Object, Fields: []*schema.Field{{Name: "n", Schema: named, DocBareRef: true}}}, v3,
			`{"properties":{"n":{"$ref":"#/components/schemas/x.Named"}},"type":"object"}`},
		{"nullable preserve", &schema.Schema{Type: schema.Object, Nullable: true, PreserveUnknown: true}, v3, `{"nullable":true,"type":"object","x-kubernetes-preserve-unknown-fields":true}`},
		{"fields", &schema.Schema{Type: schema.Object, Fields: []*schema.Field{
			{Name: "b", Required: true, Schema: str, Default: []byte(`"x"`)},
			{Name: "a", Schema: named, Default: []byte(`{}`), PatchStrategy: "retainKeys"},
			{Name: "c", Schema: &schema.Schema{Type: schema.Array, Elem: named}, PatchStrategy: "merge", PatchMergeKey: "name"},
		}}, v3, `{"properties":{"a":{"allOf":[{"$ref":"#/components/schemas/x.Named"}],"default":{},"x-kubernetes-patch-strategy":"retainKeys"},` +
			`"b":{"default":"x","type":"string"},"c":{"items":{"allOf":[{"$ref":"#/components/schemas/x.Named"}],"default":{}},"type":"array","x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}},"required":["b"],"type":"object"}`},
		{"inline skipped", &schema.Schema{Type: schema.Object, Fields: []*schema.Field{
			{Schema: named, Inline: true, ProtoNumber: 1}, {Name: "n", Schema: str},
		}}, v3, `{"properties":{"n":{"type":"string"}},"type":"object"}`},
		{"cycle cut", cyclic, v3, `{"properties":{"self":{"type":"object","x-kubernetes-preserve-unknown-fields":true}},"type":"object"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newConverter(tc.dl, nil)
			got, err := json.Marshal(c.body(tc.s))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
}

func TestDefinitionsFollowReferences(t *testing.T) {
	t.Parallel()
	leaf := &schema.Schema{Name: "x.Leaf", Type: schema.String}
	mid := &schema.Schema{Name: "x.Mid", Type: schema.Object, Fields: []*schema.Field{{Name: "leaf", Schema: leaf}}}
	top := &schema.Schema{Name: "x.Top", Type: schema.Object}
	top.Fields = []*schema.Field{{Name: "mid", Schema: mid}, {Name: "again", Schema: top}}
	c := newConverter(v3, map[string][]gvk{"x.Top": {{Group: "g", Version: "v1", Kind: "Top"}}})
	c.ref(top.Name, top)
	defs := c.definitions()
	got, _ := json.Marshal(defs)
	want := `{"x.Leaf":{"type":"string"},"x.Mid":{"properties":{"leaf":{"allOf":[{"$ref":"#/components/schemas/x.Leaf"}]}},"type":"object"},` +
		`"x.Top":{"properties":{"again":{"allOf":[{"$ref":"#/components/schemas/x.Top"}]},"mid":{"allOf":[{"$ref":"#/components/schemas/x.Mid"}]}},"type":"object",` +
		`"x-kubernetes-group-version-kind":[{"group":"g","kind":"Top","version":"v1"}]}}`
	if string(got) != want {
		t.Errorf("\n got: %s\nwant: %s", got, want)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	plat, kube := mustBrand(t, "plat"), mustBrand(t, "kubernetes")
	tests := []struct{ got, want string }{
		{gvName(plat, "", "v1"), "CoreV1"},
		{gvName(kube, kube.Group("rbac.authorization"), "v1"), "RbacAuthorizationV1"},
		{gvName(plat, plat.Group("rbac.authorization"), "v1"), "RbacAuthorizationV1"},
		{gvName(plat, plat.Group("flowcontrol.apiserver"), "v1beta3"), "FlowcontrolApiserverV1beta3"},
		{gvName(plat, "stable.example.com", "v1"), "StableExampleComV1"},
		{gvTag(plat, plat.Group("rbac.authorization"), "v1"), "rbacAuthorization_v1"},
		{gvTag(plat, "", "v1"), "core_v1"},
		{indexKey("apps", "v1"), "apis/apps/v1"},
		{indexKey("", "v1"), "api/v1"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q want %q", tc.got, tc.want)
		}
	}
}
