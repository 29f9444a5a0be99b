package fieldmanager

import (
	"os"
	"strings"
	"sync"
	"testing"

	"platd/config"
	"platd/server/schema"
)

var (
	catalogOnce sync.Once
	catalog     *schema.Catalog
	catalogErr  error
)

func testCatalog(t testing.TB) *schema.Catalog {
	t.Helper()
	catalogOnce.Do(func() { catalog, catalogErr = schema.Load(config.Brands["plat"]) })
	if catalogErr != nil {
		t.Fatal(catalogErr)
	}
	return catalog
}

// kindSchema is the catalog schema of a built-in kind (group as the
// catalog spells it for the plat brand).
func kindSchema(t testing.TB, group, version, kind string) *schema.Schema {
	t.Helper()
	s := testCatalog(t).ByGVK(group, version, kind)
	if s == nil {
		t.Fatalf("no schema for %s/%s %s", group, version, kind)
	}
	return s
}

// fieldsOf types obj (JSON) and returns its field set as FieldsV1 JSON.
func fieldsOf(t *testing.T, typ *Type, obj string) (string, error) {
	t.Helper()
	m, ok := decodeJSON(t, obj).(map[string]any)
	if !ok {
		t.Fatalf("%s is not an object", obj)
	}
	tv, err := typ.Typed(m)
	if err != nil {
		return "", err
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		t.Fatalf("field set of %s: %v", obj, err)
	}
	js, err := set.ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(js), nil
}

func TestTypeConversion(t *testing.T) {
	pod := TypeOf(kindSchema(t, "", "v1", "Pod"))
	deploy := TypeOf(kindSchema(t, "apps", "v1", "Deployment"))
	svc := TypeOf(kindSchema(t, "", "v1", "Service"))
	cm := TypeOf(kindSchema(t, "", "v1", "ConfigMap"))
	rev := TypeOf(kindSchema(t, "apps", "v1", "ControllerRevision"))
	cases := []struct {
		name string
		typ  *Type
		obj  string
		want string
	}{
		{"granular map: labels and data", cm, `{"metadata":{"labels":{"a":"1","b":"2"}},"data":{"k":"v"}}`,
			`{"f:data":{"f:k":{}},"f:metadata":{"f:labels":{"f:a":{},"f:b":{}}}}`},
		{"set list: finalizers", cm, `{"metadata":{"finalizers":["b","a"]}}`,
			`{"f:metadata":{"f:finalizers":{"v:\"a\"":{},"v:\"b\"":{}}}}`},
		{"atomic list: args", pod, `{"spec":{"containers":[{"name":"c","args":["x","y"]}]}}`,
			`{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:args":{},"f:name":{}}}}}`},
		{"map list of one key: containers by name", pod, `{"spec":{"containers":[{"name":"a","image":"i"},{"name":"b"}]}}`,
			`{"f:spec":{"f:containers":{"k:{\"name\":\"a\"}":{".":{},"f:image":{},"f:name":{}},"k:{\"name\":\"b\"}":{".":{},"f:name":{}}}}}`},
		{"map list of two keys: ports, protocol defaulted in the key", pod,
			`{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80},{"containerPort":53,"protocol":"UDP"}]}]}}`,
			`{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:name":{},"f:ports":{"k:{\"containerPort\":53,\"protocol\":\"UDP\"}":{".":{},"f:containerPort":{},"f:protocol":{}},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}`},
		{"atomic struct: a LabelSelector", deploy, `{"spec":{"selector":{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"k","operator":"Exists"}]}}}`,
			`{"f:spec":{"f:selector":{}}}`},
		{"atomic map: a Service selector", svc, `{"spec":{"selector":{"a":"b","c":"d"}}}`,
			`{"f:spec":{"f:selector":{}}}`},
		{"atomic map: a pod's nodeSelector", pod, `{"spec":{"nodeSelector":{"a":"b"}}}`,
			`{"f:spec":{"f:nodeSelector":{}}}`},
		{"any: a RawExtension is granular in maps, atomic in lists", rev, `{"data":{"spec":{"x":1,"l":[{"a":1}]},"s":"v"}}`,
			`{"f:data":{"f:s":{},"f:spec":{".":{},"f:l":{},"f:x":{}}}}`},
		{"any: a scalar RawExtension", rev, `{"data":"text"}`, `{"f:data":{}}`},
		{"int-or-string: a number", svc, `{"spec":{"ports":[{"port":80,"targetPort":8080}]}}`,
			`{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{},"f:targetPort":{}}}}}`},
		{"int-or-string: a string", svc, `{"spec":{"ports":[{"port":80,"targetPort":"http"}]}}`,
			`{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{},"f:targetPort":{}}}}}`},
		{"quantity: string, integer and float", pod, `{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"100m","memory":1024,"x":0.5}}}]}}`,
			`{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:name":{},"f:resources":{"f:limits":{"f:cpu":{},"f:memory":{},"f:x":{}}}}}}}`},
		{"a key field left out takes its default (the catalog's \"\" of a required name)", pod, `{"spec":{"containers":[{"image":"i"}]}}`,
			`{"f:spec":{"f:containers":{"k:{\"name\":\"\"}":{".":{},"f:image":{}}}}}`},
		{"time: a string", cm, `{"metadata":{"creationTimestamp":"2025-01-02T03:04:05Z"}}`,
			`{"f:metadata":{"f:creationTimestamp":{}}}`},
		{"nulls type as any field", pod, `{"metadata":{"creationTimestamp":null,"labels":null},"spec":{"containers":null}}`,
			`{"f:metadata":{"f:creationTimestamp":{},"f:labels":{}},"f:spec":{"f:containers":{}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := fieldsOf(t, c.typ, c.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("fields\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestTypeConversionRefuses(t *testing.T) {
	pod := TypeOf(kindSchema(t, "", "v1", "Pod"))
	cm := TypeOf(kindSchema(t, "", "v1", "ConfigMap"))
	rev := TypeOf(kindSchema(t, "apps", "v1", "ControllerRevision"))
	cases := []struct {
		name string
		typ  *Type
		obj  string
		want string // the error's text contains it
	}{
		{"a string for a number", rev, `{"revision":"one"}`, ".revision: expected numeric (int or float), got string"},
		{"a number for a string", cm, `{"data":{"k":1}}`, ".data.k: expected string, got"},
		{"a number for a time", cm, `{"metadata":{"creationTimestamp":5}}`, ".metadata.creationTimestamp: expected string, got"},
		{"a list for a map", cm, `{"data":["k"]}`, ".data: expected map, got"},
		{"an undeclared field", cm, `{"spec":{}}`, ".spec: field not declared in schema"},
		{"a duplicate key in a map list", pod, `{"spec":{"containers":[{"name":"a"},{"name":"a"}]}}`,
			`.spec.containers: duplicate entries for key [name="a"]`},
		{"a duplicate key of two fields", pod, `{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80},{"containerPort":80,"protocol":"TCP"}]}]}}`,
			`.spec.containers[name="c"].ports: duplicate entries for key [containerPort=80,protocol="TCP"]`},
		{"a duplicate set item", cm, `{"metadata":{"finalizers":["a","a"]}}`, `.metadata.finalizers: duplicate entries for key [="a"]`},
		{"a list for an int-or-string", pod, `{"spec":{"containers":[{"name":"c","livenessProbe":{"httpGet":{"port":[1]}}}]}}`,
			`.spec.containers[name="c"].livenessProbe.httpGet.port: expected any scalar, got`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := fieldsOf(t, c.typ, c.obj)
			if err == nil {
				t.Fatalf("typed, fields %s; want an error with %q", got, c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}

// The catalog has no merge-strategy list without a list type and no
// object keeping unknown fields (those come with custom resources), so
// a schema of its own shows how they convert.
func TestTypeConversionUndeclaredLists(t *testing.T) {
	str := &schema.Schema{Type: schema.String}
	item := &schema.Schema{Name: "test.Item", Type: schema.Object, Fields: []*schema.Field{
		{Name: "name", Schema: str}, {Name: "v", Schema: str}}}
	open := &schema.Schema{Name: "test.Open", Type: schema.Object, PreserveUnknown: true, Fields: []*schema.Field{
		{Name: "known", Schema: str}}}
	root := &schema.Schema{Name: "test.Root", Type: schema.Object, Fields: []*schema.Field{
		{Name: "keyed", Schema: &schema.Schema{Type: schema.Array, Elem: item}, PatchStrategy: "merge", PatchMergeKey: "name"},
		{Name: "retained", Schema: &schema.Schema{Type: schema.Array, Elem: item}, PatchStrategy: "merge,retainKeys", PatchMergeKey: "name"},
		{Name: "set", Schema: &schema.Schema{Type: schema.Array, Elem: str}, PatchStrategy: "merge"},
		{Name: "replaced", Schema: &schema.Schema{Type: schema.Array, Elem: item}, PatchStrategy: "replace", PatchMergeKey: "name"},
		{Name: "plain", Schema: &schema.Schema{Type: schema.Array, Elem: str}},
		{Name: "open", Schema: open},
	}}
	root.Seal()
	typ := TypeOf(root)
	cases := []struct{ name, obj, want string }{
		{"merge key makes a map list", `{"keyed":[{"name":"a","v":"1"}]}`, `{"f:keyed":{"k:{\"name\":\"a\"}":{".":{},"f:name":{},"f:v":{}}}}`},
		{"merge among strategies", `{"retained":[{"name":"a"}]}`, `{"f:retained":{"k:{\"name\":\"a\"}":{".":{},"f:name":{}}}}`},
		{"merge without key makes a set", `{"set":["x"]}`, `{"f:set":{"v:\"x\"":{}}}`},
		{"replace is atomic", `{"replaced":[{"name":"a"}]}`, `{"f:replaced":{}}`},
		{"no strategy is atomic", `{"plain":["x"]}`, `{"f:plain":{}}`},
		{"unknown fields kept, granular", `{"open":{"known":"k","extra":{"deep":1},"l":[1]}}`,
			`{"f:open":{"f:extra":{".":{},"f:deep":{}},"f:known":{},"f:l":{}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := fieldsOf(t, typ, c.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("fields\n got %s\nwant %s", got, c.want)
			}
		})
	}
	if _, err := fieldsOf(t, typ, `{"keyed":[{"v":"1"}]}`); err == nil || !strings.Contains(err.Error(), `.keyed: element 0: associative list with keys has an element that omits all key fields ["name"]`) {
		t.Errorf("a keyed item without its key and no default: %v", err)
	}
	if _, err := fieldsOf(t, typ, `{"plain":[1]}`); err == nil {
		t.Errorf("a number in a list of strings typed")
	}
	if _, err := fieldsOf(t, typ, `{"open":{"known":1}}`); err == nil {
		t.Errorf("a number for a declared string of an open object typed")
	}
}

// TestTypeOfEveryKind converts every root kind of the catalog and types
// its empty and its zero object (every member the type always carries).
func TestTypeOfEveryKind(t *testing.T) {
	raw, err := os.ReadFile("../schema/data/catalog.txt")
	if err != nil {
		t.Fatal(err)
	}
	domain := config.Brands["plat"].Domain
	n, applied := 0, 0
	for _, line := range strings.Split(string(raw), "\n") {
		col := strings.Split(line, "\t")
		if col[0] != "G" || len(col) != 5 {
			continue
		}
		group := strings.ReplaceAll(col[1], "@D@", domain)
		s := kindSchema(t, group, col[2], col[3])
		n++
		name := group + "/" + col[2] + "/" + col[3]
		typ := TypeOf(s)
		if TypeOf(s) != typ {
			t.Errorf("%s: converted twice", name)
		}
		if _, err := typ.Typed(map[string]any{}); err != nil {
			t.Errorf("%s: empty object: %v", name, err)
		}
		// The zero object as a create starts from it (null members
		// kept) and as it is stored (null members dropped).
		encoded := schema.Encode(nil, map[string]any{}, s)
		withNulls, err := schema.DecodeAny(encoded)
		if err != nil {
			t.Errorf("%s: zero object: %v", name, err)
			continue
		}
		stored, err := schema.DecodeStored(encoded, s)
		if err != nil {
			t.Errorf("%s: stored zero object: %v", name, err)
			continue
		}
		// Kinds with object metadata are created by an apply of a name alone.
		if m := s.Field("metadata"); m != nil && m.Schema.Field("name") != nil {
			applied++
			gv := col[2]
			if group != "" {
				gv = group + "/" + col[2]
			}
			r := New(Options{Group: group, Version: col[2], Kind: col[3], Schema: s})
			config := map[string]any{"apiVersion": gv, "kind": col[3], "metadata": map[string]any{"name": "x"}}
			if _, err := r.Apply(nil, config, "m", false); err != nil {
				t.Errorf("%s: apply of a name: %v", name, err)
			}
		}
		for _, zero := range []map[string]any{withNulls.(map[string]any), stored} {
			tv, err := typ.Typed(zero)
			if err != nil {
				t.Errorf("%s: zero object %v: %v", name, zero, err)
				continue
			}
			if _, err := tv.ToFieldSet(); err != nil {
				t.Errorf("%s: fields of the zero object: %v", name, err)
			}
		}
	}
	if n < 200 {
		t.Errorf("only %d kinds in the catalog", n)
	}
	if applied < 50 {
		t.Errorf("only %d kinds with metadata applied to", applied)
	}
}
