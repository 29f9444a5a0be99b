package clients

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi3"
)

// TestOpenAPIClients reads the OpenAPI documents with client-go's clients:
// the v3 index and a group-version document parsed into kube-openapi's
// model (connect operations, unions and all), a non-resource endpoint's
// document, and the v2 document in its protobuf form.
func TestOpenAPIClients(t *testing.T) {
	t.Parallel()
	cs := clientset(t, config(t))
	client := cs.Discovery().OpenAPIV3()
	root := openapi3.NewRoot(client)
	gvs, err := root.GroupVersions()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, gv := range gvs {
		if gv == (schema.GroupVersion{Version: "v1"}) {
			found = true
		}
	}
	if !found {
		t.Fatalf("group versions %v lack v1", gvs)
	}
	doc, err := root.GVSpec(schema.GroupVersion{Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	exec := doc.Paths.Paths["/api/v1/namespaces/{namespace}/pods/{name}/exec"]
	if exec == nil || exec.Post == nil || exec.Post.Extensions["x-kubernetes-action"] != "connect" {
		t.Errorf("exec path %+v", exec)
	}
	if p := doc.Paths.Paths["/api/v1/nodes/{name}/proxy/{path}"]; p == nil || p.Head == nil || p.Options == nil {
		t.Errorf("node proxy path %+v", p)
	}
	seccomp := doc.Components.Schemas["io.k8s.api.core.v1.SeccompProfile"]
	if seccomp == nil || seccomp.Extensions["x-kubernetes-unions"] == nil {
		t.Errorf("SeccompProfile %+v", seccomp)
	}
	scale := doc.Components.Schemas["io.k8s.api.autoscaling.v1.Scale"]
	if scale == nil || len(scale.Properties) == 0 {
		t.Errorf("Scale %+v", scale)
	}

	paths, err := client.Paths()
	if err != nil {
		t.Fatal(err)
	}
	version, ok := paths["version"]
	if !ok {
		t.Fatalf("index lacks version: %v", len(paths))
	}
	b, err := version.Schema("application/json")
	if err != nil {
		t.Fatal(err)
	}
	var vdoc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &vdoc); err != nil || vdoc.Paths["/version/"] == nil {
		t.Errorf("version document %s (%v)", b, err)
	}

	v2, err := cs.Discovery().OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	var hasVersion bool
	for _, p := range v2.GetPaths().GetPath() {
		if p.GetName() == "/version/" {
			hasVersion = true
		}
	}
	if !hasVersion {
		t.Error("v2 document lacks /version/")
	}
}
