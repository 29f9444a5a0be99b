package openapi

import (
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

// fetchIndex returns the index's paths.
func fetchIndex(t *testing.T, h http.Handler) map[string]any {
	t.Helper()
	w := get(h, "/openapi/v3", nil)
	if w.Code != 200 {
		t.Fatalf("index: %d", w.Code)
	}
	return decode(t, w.Body.Bytes())["paths"].(map[string]any)
}

// fetchDoc follows the index to a group-version document.
func fetchDoc(t *testing.T, h http.Handler, key string) map[string]any {
	t.Helper()
	entry, ok := fetchIndex(t, h)[key]
	if !ok {
		t.Fatalf("index has no %q", key)
	}
	url := dig(entry, "serverRelativeURL").(string)
	w := get(h, url, map[string]string{"Accept": "application/json"})
	if w.Code != 200 {
		t.Fatalf("%s: %d", url, w.Code)
	}
	return decode(t, w.Body.Bytes())
}

func TestIndexHashesMatchDocuments(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "plat")
	b := mustBrand(t, "plat")
	w := get(h, "/openapi/v3", nil)
	if ct := w.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("index Content-Type %q", ct)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "no-cache, private" {
		t.Errorf("index Cache-Control %q", cc)
	}
	paths := fetchIndex(t, h)
	rbac := b.Group("rbac.authorization")
	want := []string{"api", "api/v1", "apis", "apis/" + rbac, "apis/" + rbac + "/v1", "apis/stable.example.com", "apis/stable.example.com/v1"}
	var keys []string
	for k := range paths {
		keys = append(keys, k)
	}
	if len(keys) != len(want) {
		t.Fatalf("index keys %v, want %v", keys, want)
	}
	for _, key := range want {
		url, _ := dig(paths[key], "serverRelativeURL").(string)
		prefix := "/openapi/v3/" + key + "?hash="
		if !strings.HasPrefix(url, prefix) {
			t.Fatalf("%s: url %q", key, url)
		}
		hash := url[len(prefix):]
		doc := get(h, url, nil)
		sum := sha512.Sum512(doc.Body.Bytes())
		if got := strings.ToUpper(hex.EncodeToString(sum[:])); got != hash {
			t.Errorf("%s: body hashes to %s, index says %s", key, got, hash)
		}
		if doc.Header().Get("ETag") != `"`+hash+`"` {
			t.Errorf("%s: ETag %q", key, doc.Header().Get("ETag"))
		}
		if d := decode(t, doc.Body.Bytes()); d["openapi"] != "3.0.0" || dig(d, "info", "version") != "1.32.0" || dig(d, "info", "title") != "Plat" {
			t.Errorf("%s: header fields %v %v", key, d["openapi"], d["info"])
		}
	}
}

// findPatchOp applies kubectl 1.32's rule: a PATCH operation whose
// x-kubernetes-group-version-kind is the kind and whose parameters include
// the query parameter fieldValidation.
func findPatchOp(doc map[string]any, group, version, kind string) map[string]map[string]any {
	found := map[string]map[string]any{}
	for path, item := range doc["paths"].(map[string]any) {
		op, ok := dig(item, "patch").(map[string]any)
		if !ok {
			continue
		}
		gvk, _ := op["x-kubernetes-group-version-kind"].(map[string]any)
		if gvk["group"] != group || gvk["version"] != version || gvk["kind"] != kind {
			continue
		}
		params, _ := op["parameters"].([]any)
		for _, p := range params {
			if dig(p, "name") == "fieldValidation" && dig(p, "in") == "query" {
				found[path] = op
			}
		}
	}
	return found
}

func TestKubectlFindsFieldValidationOnPatch(t *testing.T) {
	t.Parallel()
	for _, brand := range []string{"plat", "kubernetes"} {
		b := mustBrand(t, brand)
		tests := []struct {
			key, group, kind, path string
			strategic              bool
		}{
			{"api/v1", "", "ConfigMap", "/api/v1/namespaces/{namespace}/configmaps/{name}", true},
			{"api/v1", "", "Namespace", "/api/v1/namespaces/{name}", true},
			{"apis/" + b.Group("rbac.authorization") + "/v1", b.Group("rbac.authorization"), "Role", "/apis/" + b.Group("rbac.authorization") + "/v1/namespaces/{namespace}/roles/{name}", true},
			{"apis/stable.example.com/v1", "stable.example.com", "CronTab", "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}", false},
		}
		for _, tc := range tests {
			t.Run(brand+"/"+tc.kind, func(t *testing.T) {
				t.Parallel()
				h, _ := newTestHandler(t, brand)
				found := findPatchOp(fetchDoc(t, h, tc.key), tc.group, "v1", tc.kind)
				op, ok := found[tc.path]
				if !ok {
					t.Fatalf("no PATCH operation with fieldValidation on %s (found %d elsewhere)", tc.path, len(found))
				}
				content, _ := dig(op, "requestBody", "content").(map[string]any)
				if _, ok := content["application/strategic-merge-patch+json"]; ok != tc.strategic {
					t.Errorf("strategic merge offered=%v, want %v", ok, tc.strategic)
				}
				if _, ok := content["application/apply-patch+yaml"]; !ok {
					t.Error("apply patch not offered")
				}
			})
		}
	}
}

// TestPatchOperationMatchesGolden compares the generated configmap item
// path (shared parameters and PATCH operation) with the upstream extract,
// descriptions aside.
func TestPatchOperationMatchesGolden(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "kubernetes")
	golden := decode(t, readTestdata(t, "openapi-v3-api-v1-extract.json"))
	const p = "/api/v1/namespaces/{namespace}/configmaps/{name}"
	want := stripKey(dig(golden, "paths", p), "description").(map[string]any)
	got := stripKey(dig(fetchDoc(t, h, "api/v1"), "paths", p), "description").(map[string]any)
	for _, k := range []string{"parameters", "patch"} {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s differs\n got: %v\nwant: %v", k, got[k], want[k])
		}
	}
}

// TestConfigMapSchemaMatchesGolden compares the generated ConfigMap schema
// with the upstream one. Descriptions are not modelled, so they are dropped
// from the comparison.
func TestConfigMapSchemaMatchesGolden(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "kubernetes")
	b := mustBrand(t, "kubernetes")
	name := reverse(b) + ".api.core.v1.ConfigMap"
	golden := decode(t, readTestdata(t, "openapi-v3-api-v1-extract.json"))
	want := stripKey(dig(golden, "components", "schemas", name), "description").(map[string]any)
	doc := fetchDoc(t, h, "api/v1")
	got := stripKey(dig(doc, "components", "schemas", name), "description")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ConfigMap schema differs\n got: %v\nwant: %v", got, want)
	}
	// Everything referenced is defined.
	schemas := dig(doc, "components", "schemas").(map[string]any)
	for _, ref := range collectRefs(doc, nil) {
		if _, ok := schemas[strings.TrimPrefix(ref, "#/components/schemas/")]; !ok {
			t.Errorf("dangling $ref %s", ref)
		}
	}
	list := dig(schemas, reverse(b)+".api.core.v1.ConfigMapList")
	if kinds := dig(list, "x-kubernetes-group-version-kind"); !reflect.DeepEqual(kinds, []any{map[string]any{"group": "", "kind": "ConfigMapList", "version": "v1"}}) {
		t.Errorf("ConfigMapList kinds %v", kinds)
	}
	if req := dig(list, "required"); !reflect.DeepEqual(req, []any{"items"}) {
		t.Errorf("ConfigMapList required %v", req)
	}
	del := dig(schemas, reverse(b)+".apimachinery.pkg.apis.meta.v1.DeleteOptions", "x-kubernetes-group-version-kind")
	if !reflect.DeepEqual(del, []any{map[string]any{"group": "", "kind": "DeleteOptions", "version": "v1"}}) {
		t.Errorf("DeleteOptions kinds in core doc %v", del)
	}
}

func reverse(b config.Brand) string {
	p := strings.Split(b.Domain, ".")
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	return strings.Join(p, ".")
}

func collectRefs(v any, out []string) []string {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				out = append(out, s)
			}
			out = collectRefs(e, out)
		}
	case []any:
		for _, e := range x {
			out = collectRefs(e, out)
		}
	}
	return out
}

func TestGroupVersionPaths(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "plat")
	doc := fetchDoc(t, h, "api/v1")
	tests := []struct{ path, method, id, action string }{
		{"/api/v1/", "get", "getCoreV1APIResources", ""},
		{"/api/v1/namespaces/{namespace}/configmaps", "get", "listCoreV1NamespacedConfigMap", "list"},
		{"/api/v1/namespaces/{namespace}/configmaps", "post", "createCoreV1NamespacedConfigMap", "post"},
		{"/api/v1/namespaces/{namespace}/configmaps", "delete", "deleteCoreV1CollectionNamespacedConfigMap", "deletecollection"},
		{"/api/v1/namespaces/{namespace}/configmaps/{name}", "get", "readCoreV1NamespacedConfigMap", "get"},
		{"/api/v1/namespaces/{namespace}/configmaps/{name}", "put", "replaceCoreV1NamespacedConfigMap", "put"},
		{"/api/v1/namespaces/{namespace}/configmaps/{name}", "delete", "deleteCoreV1NamespacedConfigMap", "delete"},
		{"/api/v1/configmaps", "get", "listCoreV1ConfigMapForAllNamespaces", "list"},
		{"/api/v1/watch/namespaces/{namespace}/configmaps", "get", "watchCoreV1NamespacedConfigMapList", "watchlist"},
		{"/api/v1/watch/namespaces/{namespace}/configmaps/{name}", "get", "watchCoreV1NamespacedConfigMap", "watch"},
		{"/api/v1/watch/configmaps", "get", "watchCoreV1ConfigMapListForAllNamespaces", "watchlist"},
		{"/api/v1/namespaces", "get", "listCoreV1Namespace", "list"},
		{"/api/v1/namespaces/{name}", "patch", "patchCoreV1Namespace", "patch"},
		{"/api/v1/namespaces/{name}/status", "get", "readCoreV1NamespaceStatus", "get"},
		{"/api/v1/namespaces/{name}/status", "patch", "patchCoreV1NamespaceStatus", "patch"},
		{"/api/v1/namespaces/{name}/finalize", "put", "replaceCoreV1NamespaceFinalize", "put"},
		{"/api/v1/watch/namespaces/{name}", "get", "watchCoreV1Namespace", "watch"},
	}
	for _, tc := range tests {
		op := dig(doc, "paths", tc.path, tc.method)
		if op == nil {
			t.Errorf("%s %s missing", tc.method, tc.path)
			continue
		}
		if dig(op, "operationId") != tc.id || (tc.action != "" && dig(op, "x-kubernetes-action") != tc.action) {
			t.Errorf("%s %s: id %v action %v", tc.method, tc.path, dig(op, "operationId"), dig(op, "x-kubernetes-action"))
		}
		if tags, _ := dig(op, "tags").([]any); len(tags) != 1 || tags[0] != "core_v1" {
			t.Errorf("%s %s: tags %v", tc.method, tc.path, tags)
		}
	}
	for _, absent := range []string{"/api/v1/namespaces/{name}/finalize:get", "/api/v1/namespaces:delete"} {
		p, m, _ := strings.Cut(absent, ":")
		if dig(doc, "paths", p, m) != nil {
			t.Errorf("%s %s should not exist", m, p)
		}
	}
	pb := mustBrand(t, "plat").ProtobufMediaType
	list := dig(doc, "paths", "/api/v1/namespaces/{namespace}/configmaps", "get", "responses", "200", "content").(map[string]any)
	var types []string
	for mt := range list {
		types = append(types, mt)
	}
	slices.Sort(types)
	want := []string{"application/json", "application/json;stream=watch", "application/yaml", pb, pb + ";stream=watch"}
	slices.Sort(want)
	if !slices.Equal(types, want) {
		t.Errorf("list response types %v, want %v", types, want)
	}
}

func TestServingHeaders(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "plat")
	url := dig(fetchIndex(t, h)["api/v1"], "serverRelativeURL").(string)
	hash := url[strings.Index(url, "=")+1:]
	const (
		json     = "application/json"
		pb       = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"
		pbAlias  = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"
		noCache  = "no-cache, private"
		unhashed = "/openapi/v3/api/v1"
	)
	tests := []struct {
		name, target, accept string
		code                 int
		// contentType is the form answered: JSON or protobuf (pb) for a
		// 200 or 301, "" when nothing is.
		contentType    string
		cache, expires string
		location       string
	}{
		{"hashed", url, json, 200, json, "public, immutable", "Sun, 21 Nov 2027 23:08:14 UTC", ""},
		{"unhashed", unhashed, "", 200, json, noCache, "", ""},
		{"wildcard", unhashed, "*/*", 200, json, noCache, "", ""},
		{"stale hash", unhashed + "?hash=ABC", "", 301, json, "", "", url},
		{"stale hash, protobuf", unhashed + "?hash=ABC", pbAlias, 301, pb, "", "", url},
		{"protobuf", unhashed, pb, 200, pb, noCache, "", ""},
		{"protobuf, hashed", url, pbAlias, 200, pb, "public, immutable", "Sun, 21 Nov 2027 23:08:14 UTC", ""},
		{"protobuf then json", unhashed, pbAlias + "," + json, 200, pb, noCache, "", ""},
		{"json preferred", unhashed, pbAlias + ";q=0.5," + json, 200, json, noCache, "", ""},
		{"json refused by q=0 still served", unhashed, json + ";q=0", 200, json, noCache, "", ""},
		{"types compare case-sensitively", unhashed, "Application/JSON", 406, "", "", "", ""},
		{"no media range", unhashed, "json", 200, "", "", "", ""},
		{"unknown", "/openapi/v3/apis/nothing/v1", "", 404, "", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := get(h, tc.target, map[string]string{"Accept": tc.accept})
			if w.Code != tc.code {
				t.Fatalf("status %d", w.Code)
			}
			hdr := w.Header()
			if hdr.Get("Cache-Control") != tc.cache || hdr.Get("Expires") != tc.expires || hdr.Get("Location") != tc.location {
				t.Errorf("Cache-Control %q Expires %q Location %q", hdr.Get("Cache-Control"), hdr.Get("Expires"), hdr.Get("Location"))
			}
			// As upstream: a served group-version's answers vary with
			// Accept, and the document's and the redirect's name their
			// media type and the current hash; the redirect, 406 and 404
			// have no body, and the 404 no headers.
			var wantETag, wantVary string
			if tc.contentType != "" {
				wantETag = `"` + hash + `"`
			}
			if tc.code != 404 {
				wantVary = "Accept"
			}
			if hdr.Get("Content-Type") != tc.contentType || hdr.Get("ETag") != wantETag || hdr.Get("Vary") != wantVary {
				t.Errorf("Content-Type %q ETag %q Vary %q, want %q %q %q", hdr.Get("Content-Type"), hdr.Get("ETag"), hdr.Get("Vary"), tc.contentType, wantETag, wantVary)
			}
			switch {
			case tc.code != 200 || tc.contentType == "":
				if w.Body.Len() != 0 {
					t.Errorf("%d body %q", tc.code, w.Body)
				}
			case tc.contentType == pb:
				want, err := encodeV3Protobuf(h.currentV3().docs["api/v1"].body)
				if err != nil || !bytes.Equal(w.Body.Bytes(), want) {
					t.Errorf("protobuf body of %d bytes is not the document's protobuf form (%d bytes, %v)", w.Body.Len(), len(want), err)
				}
			default:
				if !bytes.Equal(w.Body.Bytes(), h.currentV3().docs["api/v1"].body) {
					t.Errorf("JSON body is not the document")
				}
			}
		})
	}
	if w := get(h, url, map[string]string{"If-None-Match": `"` + hash + `"`}); w.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", w.Code)
	}
}

func TestV2Document(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "kubernetes")
	b := mustBrand(t, "kubernetes")
	w := get(h, "/openapi/v2", map[string]string{"Accept": "application/json"})
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || len(w.Header().Get("ETag")) != 130 {
		t.Fatalf("v2: %d %v", w.Code, w.Header())
	}
	doc := decode(t, w.Body.Bytes())
	if doc["swagger"] != "2.0" || dig(doc, "info", "title") != "Kubernetes" {
		t.Errorf("swagger %v info %v", doc["swagger"], doc["info"])
	}
	defs := doc["definitions"].(map[string]any)
	cm := defs[reverse(b)+".api.core.v1.ConfigMap"]
	if ref := dig(cm, "properties", "metadata", "$ref"); ref != "#/definitions/"+reverse(b)+".apimachinery.pkg.apis.meta.v1.ObjectMeta" {
		t.Errorf("v2 metadata ref %v", ref)
	}
	for _, ref := range collectRefs(doc, nil) {
		if _, ok := defs[strings.TrimPrefix(ref, "#/definitions/")]; !ok {
			t.Errorf("dangling $ref %s", ref)
		}
	}
	patch := dig(doc, "paths", "/apis/"+b.Group("rbac.authorization")+"/v1/namespaces/{namespace}/roles/{name}", "patch")
	consumes, _ := dig(patch, "consumes").([]any)
	if len(consumes) != 4 {
		t.Errorf("patch consumes %v", consumes)
	}
	var names []string
	for _, p := range dig(patch, "parameters").([]any) {
		names = append(names, dig(p, "name").(string))
	}
	if !reflect.DeepEqual(names, []string{"body", "dryRun", "fieldManager", "fieldValidation", "force"}) {
		t.Errorf("patch parameters %v", names)
	}
	if paths := doc["paths"].(map[string]any); paths["/api/"] == nil || paths["/apis/"] == nil || paths["/api/v1/namespaces/{name}/status"] == nil {
		t.Error("v2 lacks discovery or subresource paths")
	}
}

func TestLazyBuildAndInvalidation(t *testing.T) {
	t.Parallel()
	h, reg := newTestHandler(t, "plat")
	if h.v3 != nil || h.v2 != nil {
		t.Fatal("documents built before any request")
	}
	oldURL := dig(fetchIndex(t, h)["api/v1"], "serverRelativeURL").(string)
	rbacURL := dig(fetchIndex(t, h)["apis/"+mustBrand(t, "plat").Group("rbac.authorization")+"/v1"], "serverRelativeURL").(string)
	reg.Add(&registry.Descriptor{Version: "v1", Kind: "Secret", ListKind: "SecretList", Resource: "secrets", Singular: "secret", Namespaced: true, Verbs: allVerbs})
	reg.Add(&registry.Descriptor{Group: "batch", Version: "v1", Kind: "Job", ListKind: "JobList", Resource: "jobs", Namespaced: true, Verbs: allVerbs})
	index := fetchIndex(t, h)
	if _, ok := index["apis/batch/v1"]; !ok {
		t.Error("new group-version not indexed")
	}
	newURL := dig(index["api/v1"], "serverRelativeURL").(string)
	if newURL == oldURL {
		t.Fatal("api/v1 hash unchanged after adding secrets")
	}
	if w := get(h, oldURL, nil); w.Code != 301 || w.Header().Get("Location") != newURL {
		t.Errorf("old URL: %d -> %q", w.Code, w.Header().Get("Location"))
	}
	if got := dig(index["apis/"+mustBrand(t, "plat").Group("rbac.authorization")+"/v1"], "serverRelativeURL"); got != rbacURL {
		t.Errorf("untouched group-version changed hash: %v", got)
	}
	if dig(fetchDoc(t, h, "api/v1"), "paths", "/api/v1/namespaces/{namespace}/secrets/{name}", "patch") == nil {
		t.Error("new resource has no paths")
	}
}

func TestConcurrentRequestsWhileRegistering(t *testing.T) {
	t.Parallel()
	h, reg := newTestHandler(t, "plat")
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 3 {
				if i == 0 {
					reg.Add(&registry.Descriptor{Group: "g" + string(rune('a'+j)) + ".example", Version: "v1", Kind: "K", ListKind: "KList", Resource: "ks", Verbs: allVerbs})
				}
				if w := get(h, "/openapi/v3/api/v1", nil); w.Code != 200 {
					t.Errorf("status %d", w.Code)
				}
				if w := get(h, "/openapi/v3", nil); w.Code != 200 {
					t.Errorf("index status %d", w.Code)
				}
			}
		}()
	}
	wg.Wait()
	if _, ok := fetchIndex(t, h)["apis/gc.example/v1"]; !ok {
		t.Error("last registered group missing")
	}
}

// An index rebuilt within the same second as the one a client holds is
// not reported unchanged: the index has no ETag, and HTTP dates count
// seconds.
func TestIndexRevalidationSeesChangesWithinASecond(t *testing.T) {
	t.Parallel()
	h, reg := newTestHandler(t, "plat")
	first := get(h, "/openapi/v3", nil)
	lm := first.Header().Get("Last-Modified")
	reg.Add(&registry.Descriptor{Group: "late.example.com", Version: "v1", Kind: "Late", ListKind: "LateList", Resource: "lates",
		Singular: "late", Namespaced: true, Verbs: allVerbs, Schema: cronTabSchema()})
	again := get(h, "/openapi/v3", map[string]string{"If-Modified-Since": lm})
	if again.Code != http.StatusOK || !strings.Contains(again.Body.String(), "apis/late.example.com/v1") {
		t.Fatalf("revalidated index: %d %s", again.Code, again.Body.String())
	}
	if again.Header().Get("Last-Modified") == lm {
		t.Errorf("Last-Modified did not move: %s", lm)
	}
	if same := get(h, "/openapi/v3", map[string]string{"If-Modified-Since": again.Header().Get("Last-Modified")}); same.Code != http.StatusNotModified {
		t.Errorf("unchanged index revalidated with %d", same.Code)
	}
}

// TestEndpointDocuments checks that the index lists the documents of
// /version and of the issuer's discovery endpoints when the server serves
// them, and that those documents are upstream's (descriptions aside), in
// v3 and in v2.
func TestEndpointDocuments(t *testing.T) {
	t.Parallel()
	b := mustBrand(t, "kubernetes")
	golden := decode(t, readTestdata(t, "endpoints-v3.json"))["docs"].(map[string]any)
	h := New(newFixtureRegistry(b), b, WithVersion(), WithIssuerDiscovery("/.well-known/openid-configuration", "/openid/v1/jwks", "application/jwk-set+json"))
	h.now = func() time.Time { return fixedNow }
	for key, want := range golden {
		got := stripKey(fetchDoc(t, h, key), "description").(map[string]any)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got: %v\nwant: %v", key, got, want)
		}
	}
	v2 := decode(t, get(h, "/openapi/v2", map[string]string{"Accept": "application/json"}).Body.Bytes())
	if got := dig(v2, "paths", "/openid/v1/jwks/", "get", "produces"); !reflect.DeepEqual(got, []any{"application/jwk-set+json"}) {
		t.Errorf("v2 jwks produces %v", got)
	}
	if _, ok := dig(v2, "paths", "/openid/v1/jwks/", "get").(map[string]any)["consumes"]; ok {
		t.Error("v2 jwks lists consumes")
	}
	if got := dig(v2, "paths", "/version/", "get", "consumes"); !reflect.DeepEqual(got, []any{"application/json"}) {
		t.Errorf("v2 version consumes %v", got)
	}
	if dig(v2, "definitions", "io.k8s.apimachinery.pkg.version.Info") == nil {
		t.Error("v2 lacks the version Info definition")
	}

	// Without the options the endpoints are not documented.
	plain, _ := newTestHandler(t, "kubernetes")
	for key := range golden {
		if _, ok := fetchIndex(t, plain)[key]; ok {
			t.Errorf("index lists %s though it was not told the server serves it", key)
		}
	}
}

// TestSchemaKindMarks checks that a schema the catalog knows lists all of
// its kinds whatever document holds it, and that the discovery kinds are
// marked where they are reached.
func TestSchemaKindMarks(t *testing.T) {
	t.Parallel()
	b := mustBrand(t, "kubernetes")
	cm := reverse(b) + ".api.core.v1.ConfigMap"
	h := New(newFixtureRegistry(b), b, WithSchemaKinds(func(name string) []schema.GVK {
		if name == cm {
			return []schema.GVK{{Version: "v1", Kind: "ConfigMap"}, {Group: "other.example", Version: "v2", Kind: "ConfigMap"}}
		}
		return nil
	}))
	h.now = func() time.Time { return fixedNow }
	schemas := dig(fetchDoc(t, h, "api/v1"), "components", "schemas")
	want := []any{map[string]any{"group": "", "kind": "ConfigMap", "version": "v1"}, map[string]any{"group": "other.example", "kind": "ConfigMap", "version": "v2"}}
	if got := dig(schemas, cm, "x-kubernetes-group-version-kind"); !reflect.DeepEqual(got, want) {
		t.Errorf("ConfigMap kinds %v", got)
	}
	// Unknown to the lookup: the document's own marks.
	ns := dig(schemas, reverse(b)+".api.core.v1.Namespace", "x-kubernetes-group-version-kind")
	if !reflect.DeepEqual(ns, []any{map[string]any{"group": "", "kind": "Namespace", "version": "v1"}}) {
		t.Errorf("Namespace kinds %v", ns)
	}
	group := dig(fetchDoc(t, h, "apis"), "components", "schemas", reverse(b)+".apimachinery.pkg.apis.meta.v1.APIGroup", "x-kubernetes-group-version-kind")
	if !reflect.DeepEqual(group, []any{map[string]any{"group": "", "kind": "APIGroup", "version": "v1"}}) {
		t.Errorf("APIGroup kinds in the apis document %v", group)
	}
}

// TestDiscoverySchemas checks the package's own discovery schemas against
// upstream's: required members in its order, required strings defaulting
// to "".
func TestDiscoverySchemas(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "kubernetes")
	m := "io.k8s.apimachinery.pkg.apis.meta.v1."
	api := dig(fetchDoc(t, h, "api"), "components", "schemas").(map[string]any)
	if got := dig(api, m+"APIVersions", "required"); !reflect.DeepEqual(got, []any{"versions", "serverAddressByClientCIDRs"}) {
		t.Errorf("APIVersions required %v", got)
	}
	want := map[string]any{"default": "", "type": "string"}
	for _, p := range [][]string{{"ServerAddressByClientCIDR", "clientCIDR"}, {"ServerAddressByClientCIDR", "serverAddress"}} {
		if got := dig(api, m+p[0], "properties", p[1]); !reflect.DeepEqual(got, want) {
			t.Errorf("%s.%s: %v", p[0], p[1], got)
		}
	}
	apis := dig(fetchDoc(t, h, "apis"), "components", "schemas").(map[string]any)
	for _, p := range [][]string{{"APIGroup", "name"}, {"GroupVersionForDiscovery", "groupVersion"}, {"GroupVersionForDiscovery", "version"}} {
		if got := dig(apis, m+p[0], "properties", p[1]); !reflect.DeepEqual(got, want) {
			t.Errorf("%s.%s: %v", p[0], p[1], got)
		}
	}
}
