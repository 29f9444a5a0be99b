package discovery

import (
	"encoding/json"
	"testing"

	"platd/server/registry"
)

// TestSubresourceResponseKinds checks that both discovery forms name the
// kind a subresource answers with, with a group and version only when
// they differ from the resource's, as upstream lists pods and
// deployments.
func TestSubresourceResponseKinds(t *testing.T) {
	t.Parallel()
	pods := &registry.Descriptor{Version: "v1", Kind: "Pod", ListKind: "PodList", Resource: "pods", Singular: "pod", Namespaced: true, Verbs: allVerbs,
		Subresources: []registry.Subresource{
			{Name: "status", Verbs: []string{"get", "patch", "update"}},
			{Name: "binding", Verbs: []string{"create"}, Version: "v1", Kind: "Binding"},
			{Name: "eviction", Verbs: []string{"create"}, Group: "policy", Version: "v1", Kind: "Eviction"},
		}}
	deployments := &registry.Descriptor{Group: "apps", Version: "v1", Kind: "Deployment", ListKind: "DeploymentList", Resource: "deployments", Singular: "deployment", Namespaced: true, Verbs: allVerbs,
		Subresources: []registry.Subresource{{Name: "scale", Verbs: []string{"get", "patch", "update"}, Group: "autoscaling", Version: "v1", Kind: "Scale"}}}

	legacy, _ := json.Marshal(newAPIResourceList("", "v1", []*registry.Descriptor{pods}).Resources)
	want := `[{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"storageVersionHash":"` + storageVersionHash("", "v1", "Pod") + `"},` +
		`{"name":"pods/binding","singularName":"","namespaced":true,"kind":"Binding","verbs":["create"]},` +
		`{"name":"pods/eviction","singularName":"","namespaced":true,"group":"policy","version":"v1","kind":"Eviction","verbs":["create"]},` +
		`{"name":"pods/status","singularName":"","namespaced":true,"kind":"Pod","verbs":["get","patch","update"]}]`
	if string(legacy) != want {
		t.Errorf("legacy:\n got  %s\n want %s", legacy, want)
	}

	agg, _ := json.Marshal(newResourceDiscovery(pods).Subresources)
	want = `[{"subresource":"binding","responseKind":{"group":"","version":"","kind":"Binding"},"verbs":["create"]},` +
		`{"subresource":"eviction","responseKind":{"group":"policy","version":"v1","kind":"Eviction"},"verbs":["create"]},` +
		`{"subresource":"status","responseKind":{"group":"","version":"","kind":"Pod"},"verbs":["get","patch","update"]}]`
	if string(agg) != want {
		t.Errorf("aggregated pods:\n got  %s\n want %s", agg, want)
	}
	agg, _ = json.Marshal(newResourceDiscovery(deployments).Subresources)
	want = `[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get","patch","update"]}]`
	if string(agg) != want {
		t.Errorf("aggregated deployments:\n got  %s\n want %s", agg, want)
	}
}

// TestCustomResourceResponseKinds checks that aggregated discovery names
// the group and version of a custom resource's response kind and of its
// status subresource's, as upstream lists custom resources, while the
// scale subresource answers with an autoscaling/v1 Scale; built-in
// resources keep them empty.
func TestCustomResourceResponseKinds(t *testing.T) {
	t.Parallel()
	subs := []registry.Subresource{
		{Name: "status", Verbs: []string{"get", "patch", "update"}},
		{Name: "scale", Verbs: []string{"get", "patch", "update"}, Group: "autoscaling", Version: "v1", Kind: "Scale"},
	}
	tests := []struct {
		name      string
		qualified bool
		want      string
	}{
		{"custom resource", true, `{"resource":"gadgets","responseKind":{"group":"example.com","version":"v2","kind":"Gadget"},"scope":"Namespaced","singularResource":"gadget","verbs":["get"],` +
			`"subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get","patch","update"]},` +
			`{"subresource":"status","responseKind":{"group":"example.com","version":"v2","kind":"Gadget"},"verbs":["get","patch","update"]}]}`},
		{"built-in resource", false, `{"resource":"gadgets","responseKind":{"group":"","version":"","kind":"Gadget"},"scope":"Namespaced","singularResource":"gadget","verbs":["get"],` +
			`"subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get","patch","update"]},` +
			`{"subresource":"status","responseKind":{"group":"","version":"","kind":"Gadget"},"verbs":["get","patch","update"]}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := &registry.Descriptor{Group: "example.com", Version: "v2", Kind: "Gadget", Resource: "gadgets", Singular: "gadget", Namespaced: true,
				Verbs: []string{"get"}, Subresources: subs, QualifiedResponseKinds: tc.qualified}
			got, _ := json.Marshal(newResourceDiscovery(d))
			if string(got) != tc.want {
				t.Errorf("\n got  %s\n want %s", got, tc.want)
			}
		})
	}
}
