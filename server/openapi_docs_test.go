package server_test

import (
	"bytes"
	"encoding/json"
	"platd/config"
	"sort"
	"strings"
	"sync"
	"testing"
)

// openAPIDocs fetches v3 documents of one kubernetes-brand server through
// the index, once per key.
type openAPIDocs struct {
	e     *env
	index map[string]any
	mu    sync.Mutex
	docs  map[string]map[string]any
}

// kubernetesOpenAPI starts a kubernetes-brand server and reads its index.
func kubernetesOpenAPI(t *testing.T) *openAPIDocs {
	t.Helper()
	e := start(t, withBrand("kubernetes"))
	idx := e.do("GET", "/openapi/v3", nil).mustCode(t, 200).obj(t)
	return &openAPIDocs{e: e, index: idx["paths"].(map[string]any), docs: map[string]map[string]any{}}
}

func (d *openAPIDocs) doc(t *testing.T, key string) map[string]any {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if doc, ok := d.docs[key]; ok {
		return doc
	}
	entry, ok := d.index[key].(map[string]any)
	if !ok {
		t.Fatalf("index has no %q", key)
	}
	doc := d.e.do("GET", entry["serverRelativeURL"].(string), nil).mustCode(t, 200).obj(t)
	d.docs[key] = doc
	return doc
}

// op returns the operation method of path in doc, failing when missing.
func oaOp(t *testing.T, doc map[string]any, p, method string) map[string]any {
	t.Helper()
	item, ok := doc["paths"].(map[string]any)[p].(map[string]any)
	if !ok {
		t.Fatalf("no path %s", p)
	}
	op, ok := item[method].(map[string]any)
	if !ok {
		t.Fatalf("no %s on %s", method, p)
	}
	return op
}

// refOf is the schema name an operation's response code names in JSON.
func refOf(op map[string]any, code string) string {
	ref, _ := path(op, "responses."+code+".content.application/json.schema.$ref").(string)
	if ref == "" {
		// path splits on dots: walk by hand.
		r, _ := op["responses"].(map[string]any)[code].(map[string]any)
		c, _ := r["content"].(map[string]any)
		j, _ := c["application/json"].(map[string]any)
		s, _ := j["schema"].(map[string]any)
		ref, _ = s["$ref"].(string)
	}
	return strings.TrimPrefix(ref, "#/components/schemas/")
}

// TestOpenAPIDocuments checks the v3 documents of the kubernetes brand
// against facts of upstream's.
func TestOpenAPIDocuments(t *testing.T) {
	t.Parallel()
	d := kubernetesOpenAPI(t)
	kb, _ := config.LookupBrand("kubernetes")
	storage, authn := "apis/"+kb.Group("storage")+"/v1", "apis/"+kb.Group("authentication")+"/v1"

	t.Run("index", func(t *testing.T) {
		for _, key := range []string{"version", ".well-known/openid-configuration", "openid/v1/jwks"} {
			doc := d.doc(t, key)
			if len(doc["paths"].(map[string]any)) != 1 {
				t.Errorf("%s: paths %v", key, doc["paths"])
			}
		}
		// Documents hold only the schemas their operations reach: the
		// reviews answer no Status.
		auth := d.doc(t, authn)["components"].(map[string]any)
		if _, ok := auth["schemas"].(map[string]any)["io.k8s.apimachinery.pkg.apis.meta.v1.Status"]; ok {
			t.Error(authn + " holds Status")
		}
		// Shared kinds list every group-version, whatever the document; a
		// kind reached from another group's document keeps its own.
		del := d.doc(t, "api/v1")["components"].(map[string]any)["schemas"].(map[string]any)["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"].(map[string]any)
		if marks, _ := del["x-kubernetes-group-version-kind"].([]any); len(marks) < 20 {
			t.Errorf("DeleteOptions kinds %v", marks)
		}
		pvc := d.doc(t, "apis/apps/v1")["components"].(map[string]any)["schemas"].(map[string]any)["io.k8s.api.core.v1.PersistentVolumeClaim"].(map[string]any)
		if marks, _ := pvc["x-kubernetes-group-version-kind"].([]any); len(marks) != 1 {
			t.Errorf("PersistentVolumeClaim kinds in apps/v1 %v", marks)
		}
		if path(auth, "securitySchemes.BearerToken.in") != "header" {
			t.Errorf("security schemes %v", auth["securitySchemes"])
		}
	})

	// Upstream documents DELETE as answering the object exactly for the
	// stores that return it; namespaces' wrapped delete says Status.
	t.Run("delete answers", func(t *testing.T) {
		want := map[string]bool{
			"api/v1 /api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}": true,
			"api/v1 /api/v1/namespaces/{namespace}/pods/{name}":                   true,
			"api/v1 /api/v1/namespaces/{namespace}/podtemplates/{name}":           true,
			"api/v1 /api/v1/namespaces/{namespace}/resourcequotas/{name}":         true,
			"api/v1 /api/v1/namespaces/{namespace}/serviceaccounts/{name}":        true,
			"api/v1 /api/v1/namespaces/{namespace}/services/{name}":               true,
			"api/v1 /api/v1/persistentvolumes/{name}":                             true,
			storage + " /" + storage + "/csidrivers/{name}":                       true,
			storage + " /" + storage + "/csinodes/{name}":                         true,
			storage + " /" + storage + "/storageclasses/{name}":                   true,
			storage + " /" + storage + "/volumeattachments/{name}":                true,
		}
		var got []string
		for _, key := range []string{"api/v1", storage, "apis/apps/v1"} {
			doc := d.doc(t, key)
			for p, item := range doc["paths"].(map[string]any) {
				op, ok := item.(map[string]any)["delete"].(map[string]any)
				if !ok || op["x-kubernetes-action"] != "delete" {
					continue
				}
				for _, code := range []string{"200", "202"} {
					isStatus := refOf(op, code) == "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
					if isStatus == want[key+" "+p] {
						got = append(got, key+" "+p+" "+code+" answers "+refOf(op, code))
					}
				}
			}
		}
		sort.Strings(got)
		for _, g := range got {
			t.Error(g)
		}
	})
}

// TestOpenAPISubresourceKinds checks that subresources answering with a
// kind of their own are documented with it, its schema in the document.
func TestOpenAPISubresourceKinds(t *testing.T) {
	t.Parallel()
	d := kubernetesOpenAPI(t)
	kb, _ := config.LookupBrand("kubernetes")
	tests := []struct {
		key, path, method, group, kind, schema string
	}{
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/binding", "post", "", "Binding", "io.k8s.api.core.v1.Binding"},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/eviction", "post", "policy", "Eviction", "io.k8s.api.policy.v1.Eviction"},
		{"api/v1", "/api/v1/namespaces/{namespace}/replicationcontrollers/{name}/scale", "put", "autoscaling", "Scale", "io.k8s.api.autoscaling.v1.Scale"},
		{"api/v1", "/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token", "post", kb.Group("authentication"), "TokenRequest", "io.k8s.api.authentication.v1.TokenRequest"},
		{"apis/apps/v1", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", "patch", "autoscaling", "Scale", "io.k8s.api.autoscaling.v1.Scale"},
	}
	for _, tc := range tests {
		doc := d.doc(t, tc.key)
		op := oaOp(t, doc, tc.path, tc.method)
		gvk, _ := op["x-kubernetes-group-version-kind"].(map[string]any)
		if gvk["group"] != tc.group || gvk["kind"] != tc.kind || gvk["version"] != "v1" {
			t.Errorf("%s %s: kind %v", tc.method, tc.path, gvk)
		}
		if got := refOf(op, "200"); got != tc.schema {
			t.Errorf("%s %s: answers %s, want %s", tc.method, tc.path, got, tc.schema)
		}
		schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
		s, ok := schemas[tc.schema].(map[string]any)
		if !ok {
			t.Errorf("%s: %s not in the document", tc.key, tc.schema)
			continue
		}
		marks, _ := s["x-kubernetes-group-version-kind"].([]any)
		if len(marks) != 1 || marks[0].(map[string]any)["kind"] != tc.kind {
			t.Errorf("%s marked %v", tc.schema, marks)
		}
	}
	schemas := d.doc(t, "api/v1")["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{"io.k8s.api.autoscaling.v1.ScaleSpec", "io.k8s.api.autoscaling.v1.ScaleStatus", "io.k8s.api.authentication.v1.BoundObjectReference", "io.k8s.api.authentication.v1.TokenRequestSpec"} {
		if _, ok := schemas[name]; !ok {
			t.Errorf("api/v1 lacks %s", name)
		}
	}
}

// TestOpenAPIConnectSubresources checks the connect subresources and the
// log against upstream's documents: methods, operation ids, parameters and
// answers.
func TestOpenAPIConnectSubresources(t *testing.T) {
	t.Parallel()
	doc := kubernetesOpenAPI(t).doc(t, "api/v1")
	const pod = "/api/v1/namespaces/{namespace}/pods/{name}"
	proxyMethods := []string{"delete", "get", "head", "options", "patch", "post", "put"}
	tests := []struct {
		path, idKind, kind string
		methods            []string
		params             string // name:in, as listed
	}{
		{pod + "/attach", "NamespacedPodAttach", "PodAttachOptions", []string{"get", "post"},
			"container:query name:path namespace:path stderr:query stdin:query stdout:query tty:query"},
		{pod + "/exec", "NamespacedPodExec", "PodExecOptions", []string{"get", "post"},
			"command:query container:query name:path namespace:path stderr:query stdin:query stdout:query tty:query"},
		{pod + "/portforward", "NamespacedPodPortforward", "PodPortForwardOptions", []string{"get", "post"},
			"name:path namespace:path ports:query"},
		{pod + "/proxy", "NamespacedPodProxy", "PodProxyOptions", proxyMethods, "name:path namespace:path path:query"},
		{pod + "/proxy/{path}", "NamespacedPodProxyWithPath", "PodProxyOptions", proxyMethods, "name:path namespace:path path:path path:query"},
		{"/api/v1/nodes/{name}/proxy", "NodeProxy", "NodeProxyOptions", proxyMethods, "name:path path:query"},
		{"/api/v1/nodes/{name}/proxy/{path}", "NodeProxyWithPath", "NodeProxyOptions", proxyMethods, "name:path path:path path:query"},
		{"/api/v1/namespaces/{namespace}/services/{name}/proxy/{path}", "NamespacedServiceProxyWithPath", "ServiceProxyOptions", proxyMethods,
			"name:path namespace:path path:path path:query"},
	}
	for _, tc := range tests {
		item, ok := doc["paths"].(map[string]any)[tc.path].(map[string]any)
		if !ok {
			t.Errorf("no path %s", tc.path)
			continue
		}
		var params []string
		for _, p := range item["parameters"].([]any) {
			m := p.(map[string]any)
			params = append(params, m["name"].(string)+":"+m["in"].(string))
		}
		if got := strings.Join(params, " "); got != tc.params {
			t.Errorf("%s: parameters %s, want %s", tc.path, got, tc.params)
		}
		var methods []string
		for m := range item {
			if m != "parameters" {
				methods = append(methods, m)
			}
		}
		sort.Strings(methods)
		if strings.Join(methods, ",") != strings.Join(tc.methods, ",") {
			t.Errorf("%s: methods %v, want %v", tc.path, methods, tc.methods)
		}
		for _, m := range tc.methods {
			op := oaOp(t, doc, tc.path, m)
			if want := "connectCoreV1" + strings.ToUpper(m[:1]) + m[1:] + tc.idKind; op["operationId"] != want {
				t.Errorf("%s %s: id %v, want %s", m, tc.path, op["operationId"], want)
			}
			if op["x-kubernetes-action"] != "connect" || path(op, "x-kubernetes-group-version-kind.kind") != tc.kind {
				t.Errorf("%s %s: action %v kind %v", m, tc.path, op["x-kubernetes-action"], op["x-kubernetes-group-version-kind"])
			}
			content, _ := path(op, "responses.200.content").(map[string]any)
			if len(content) != 1 || path(content["*/*"].(map[string]any), "schema.type") != "string" || op["requestBody"] != nil || op["parameters"] != nil {
				t.Errorf("%s %s: %v", m, tc.path, op)
			}
		}
	}

	log := oaOp(t, doc, pod+"/log", "get")
	content, _ := path(log, "responses.200.content").(map[string]any)
	if len(content) != 4 || content["text/plain"] == nil || path(content["application/json"].(map[string]any), "schema.type") != "string" ||
		log["x-kubernetes-action"] != "get" || path(log, "x-kubernetes-group-version-kind.kind") != "Pod" {
		t.Errorf("log: %v", log)
	}
	var logParams []string
	for _, p := range doc["paths"].(map[string]any)[pod+"/log"].(map[string]any)["parameters"].([]any) {
		logParams = append(logParams, p.(map[string]any)["name"].(string))
	}
	if got := strings.Join(logParams, " "); got != "container follow insecureSkipTLSVerifyBackend limitBytes name namespace pretty previous sinceSeconds stream tailLines timestamps" {
		t.Errorf("log parameters %s", got)
	}
}

// TestOpenAPIElementDefaults checks the zero-value defaults upstream's
// documents carry on list items and map values of built-in types, and the
// unions of its types.
func TestOpenAPIElementDefaults(t *testing.T) {
	t.Parallel()
	schemas := kubernetesOpenAPI(t).doc(t, "api/v1")["components"].(map[string]any)["schemas"].(map[string]any)
	prop := func(schemaName, field string) map[string]any {
		s, _ := schemas[schemaName].(map[string]any)
		p, _ := s["properties"].(map[string]any)
		f, _ := p[field].(map[string]any)
		return f
	}
	tests := []struct {
		schema, field, at, want string
	}{
		{"io.k8s.api.core.v1.Container", "args", "items", `{"default":"","type":"string"}`},
		{"io.k8s.api.core.v1.Container", "ports", "items", `{"allOf":[{"$ref":"#/components/schemas/io.k8s.api.core.v1.ContainerPort"}],"default":{}}`},
		{"io.k8s.api.core.v1.ConfigMap", "data", "additionalProperties", `{"default":"","type":"string"}`},
		{"io.k8s.api.core.v1.ConfigMap", "binaryData", "additionalProperties", `{"format":"byte","type":"string"}`},
		{"io.k8s.api.core.v1.ResourceRequirements", "limits", "additionalProperties", `{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}`},
		{"io.k8s.api.core.v1.PodSecurityContext", "supplementalGroups", "items", `{"default":0,"format":"int64","type":"integer"}`},
	}
	unions, _ := json.Marshal(schemas["io.k8s.api.core.v1.SeccompProfile"].(map[string]any)["x-kubernetes-unions"])
	if string(unions) != `[{"discriminator":"type","fields-to-discriminateBy":{"localhostProfile":"LocalhostProfile"}}]` {
		t.Errorf("SeccompProfile unions %s", unions)
	}
	for _, tc := range tests {
		got, err := json.Marshal(prop(tc.schema, tc.field)[tc.at])
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s.%s %s: %s, want %s", tc.schema, tc.field, tc.at, got, tc.want)
		}
	}
}

// TestDeleteAnswersRemovedObject checks the wire side of what the
// documents say: a pod removed at once is answered with the pod.
func TestDeleteAnswersRemovedObject(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", podsPath, podJSON("gone", "")).mustCode(t, 201)
	got := e.do("DELETE", podsPath+"/gone?gracePeriodSeconds=0", nil).mustCode(t, 200).obj(t)
	if got["kind"] != "Pod" || path(got, "metadata.name") != "gone" {
		t.Errorf("delete answered %v", got)
	}
}

// TestOpenAPIV3Protobuf fetches every v3 document of a server serving a
// custom resource in protobuf, as upstream serves it: the dotted media
// type for either spelling asked, the JSON's ETag, and an openapi.v3
// Document that starts with its version.
func TestOpenAPIV3Protobuf(t *testing.T) {
	t.Parallel()
	e, _ := startGadgets(t, "proto.example.com")
	idx := e.do("GET", "/openapi/v3", nil).mustCode(t, 200).obj(t)["paths"].(map[string]any)
	if _, ok := idx["apis/proto.example.com/v1"]; !ok {
		t.Fatal("the custom resource's document is not indexed")
	}
	// openapi = 1: "3.0.0".
	head := []byte("\x0a\x053.0.0")
	for key, entry := range idx {
		url := entry.(map[string]any)["serverRelativeURL"].(string)
		asJSON := e.do("GET", url, nil).mustCode(t, 200)
		for _, accept := range []string{"application/com.github.proto-openapi.spec.v3@v1.0+protobuf", "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"} {
			r := e.do("GET", url, nil, "Accept", accept).mustCode(t, 200)
			if ct := r.header.Get("Content-Type"); ct != "application/com.github.proto-openapi.spec.v3.v1.0+protobuf" {
				t.Errorf("%s as %s: Content-Type %q", key, accept, ct)
			}
			if r.header.Get("ETag") == "" || r.header.Get("ETag") != asJSON.header.Get("ETag") {
				t.Errorf("%s: ETag %q, JSON's %q", key, r.header.Get("ETag"), asJSON.header.Get("ETag"))
			}
			if !bytes.HasPrefix(r.body, head) {
				t.Errorf("%s: protobuf body starts %q", key, r.body[:min(len(r.body), 16)])
			}
		}
	}
}
