package openapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

func mustBrand(t *testing.T, name string) config.Brand {
	t.Helper()
	b, err := config.LookupBrand(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureSchemas builds, by hand, the few built-in schemas the tests need,
// named the way the schema catalog names them in brand b.
func fixtureSchemas(b config.Brand) (objectMeta, configMap, role, namespace *schema.Schema) {
	r := schema.ReverseDomain(b.Domain)
	str := func() *schema.Schema { return &schema.Schema{Type: schema.String} }
	time := &schema.Schema{Name: r + ".apimachinery.pkg.apis.meta.v1.Time", Type: schema.Time}
	objectMeta = &schema.Schema{Name: r + ".apimachinery.pkg.apis.meta.v1.ObjectMeta", Type: schema.Object, Fields: []*schema.Field{
		{Name: "creationTimestamp", Schema: time},
		{Name: "finalizers", PatchStrategy: "merge", Schema: &schema.Schema{Type: schema.Array, Elem: str(), ListType: "set"}},
		{Name: "labels", Schema: &schema.Schema{Type: schema.Map, Elem: str()}},
		{Name: "name", Schema: str()},
		{Name: "namespace", Schema: str()},
	}}
	meta := &schema.Field{Name: "metadata", Schema: objectMeta, Default: []byte("{}")}
	configMap = &schema.Schema{Name: r + ".api.core.v1.ConfigMap", Type: schema.Object, ProtoMessage: b.Domain + ".api.core.v1.ConfigMap", Fields: []*schema.Field{
		{Name: "apiVersion", Schema: str()},
		{Name: "binaryData", Schema: &schema.Schema{Type: schema.Map, Elem: &schema.Schema{Type: schema.Bytes, Format: "byte"}}},
		{Name: "data", Schema: &schema.Schema{Type: schema.Map, Elem: str()}},
		{Name: "immutable", Schema: &schema.Schema{Type: schema.Boolean}},
		{Name: "kind", Schema: str()},
		meta,
	}}
	rule := &schema.Schema{Name: r + ".api.rbac.v1.PolicyRule", Type: schema.Object, Fields: []*schema.Field{
		{Name: "verbs", Required: true, Schema: &schema.Schema{Type: schema.Array, Elem: str(), ListType: "atomic"}},
	}}
	role = &schema.Schema{Name: r + ".api.rbac.v1.Role", Type: schema.Object, ProtoMessage: b.Domain + ".api.rbac.v1.Role", Fields: []*schema.Field{
		{Name: "apiVersion", Schema: str()}, {Name: "kind", Schema: str()}, meta,
		{Name: "rules", Schema: &schema.Schema{Type: schema.Array, Elem: rule, ListType: "atomic"}},
	}}
	namespace = &schema.Schema{Name: r + ".api.core.v1.Namespace", Type: schema.Object, ProtoMessage: b.Domain + ".api.core.v1.Namespace", Fields: []*schema.Field{
		{Name: "apiVersion", Schema: str()}, {Name: "kind", Schema: str()}, meta,
	}}
	for _, s := range []*schema.Schema{configMap, role, namespace} {
		s.Seal()
	}
	return objectMeta, configMap, role, namespace
}

// cronTabSchema is a custom resource's schema: unnamed, no protobuf.
func cronTabSchema() *schema.Schema {
	return &schema.Schema{Type: schema.Object, Fields: []*schema.Field{
		{Name: "apiVersion", Schema: &schema.Schema{Type: schema.String}},
		{Name: "kind", Schema: &schema.Schema{Type: schema.String}},
		{Name: "spec", Schema: &schema.Schema{Type: schema.Object, PreserveUnknown: true}},
	}}
}

// newFixtureRegistry holds configmaps, namespaces (+status, finalize), RBAC
// roles and a custom resource in brand b.
func newFixtureRegistry(b config.Brand) *registry.Registry {
	_, cm, role, ns := fixtureSchemas(b)
	reg := registry.New()
	reg.Add(&registry.Descriptor{Version: "v1", Kind: "ConfigMap", ListKind: "ConfigMapList", Resource: "configmaps", Singular: "configmap", Namespaced: true, Verbs: allVerbs, Schema: cm})
	reg.Add(&registry.Descriptor{Version: "v1", Kind: "Namespace", ListKind: "NamespaceList", Resource: "namespaces", Singular: "namespace",
		Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}, Schema: ns,
		Subresources: []registry.Subresource{{Name: "finalize", Verbs: []string{"update"}}, {Name: "status", Verbs: []string{"get", "patch", "update"}}}})
	reg.Add(&registry.Descriptor{Group: b.Group("rbac.authorization"), Version: "v1", Kind: "Role", ListKind: "RoleList", Resource: "roles", Singular: "role", Namespaced: true, Verbs: allVerbs, Schema: role})
	reg.Add(&registry.Descriptor{Group: "stable.example.com", Version: "v1", Kind: "CronTab", ListKind: "CronTabList", Resource: "crontabs", Singular: "crontab", Namespaced: true, Verbs: allVerbs, Schema: cronTabSchema()})
	return reg
}

// fixedNow is the clock of handlers under test.
var fixedNow = time.Date(2026, 11, 21, 23, 8, 14, 0, time.UTC)

func newTestHandler(t *testing.T, brand string) (*Handler, *registry.Registry) {
	t.Helper()
	reg := newFixtureRegistry(mustBrand(t, brand))
	h := New(reg, mustBrand(t, brand))
	h.now = func() time.Time { return fixedNow }
	return h, reg
}

func get(h http.Handler, target string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// decode parses a JSON body into generic values.
func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode: %v in %.200s", err, b)
	}
	return out
}

// dig walks nested objects by key.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// stripKey removes every member called key, recursively.
func stripKey(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, key)
		for _, e := range x {
			stripKey(e, key)
		}
	case []any:
		for _, e := range x {
			stripKey(e, key)
		}
	}
	return v
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
