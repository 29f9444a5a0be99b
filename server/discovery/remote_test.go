package discovery

import (
	"encoding/json"
	"strings"
	"testing"

	"platd/server/registry"
)

func TestParseResourceList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want, err string
	}{
		{"resources and subresources",
			`{"kind":"APIResourceList","groupVersion":"w.example.com/v1","resources":[` +
				`{"name":"flunders/status","namespaced":true,"kind":"Flunder","verbs":["get","patch"]},` +
				`{"name":"flunders","singularName":"flunder","namespaced":true,"kind":"Flunder","verbs":["get","list"],"shortNames":["fl"],"categories":["all"]},` +
				`{"name":"fischers","singularName":"fischer","namespaced":false,"kind":"Fischer","verbs":["get"]},` +
				`{"name":"flunders/scale","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":["get"]}]}`,
			`[{"resource":"flunders","responseKind":{"group":"","version":"","kind":"Flunder"},"scope":"Namespaced","singularResource":"flunder","verbs":["get","list"],"shortNames":["fl"],"categories":["all"],` +
				`"subresources":[{"subresource":"status","responseKind":{"group":"","version":"","kind":"Flunder"},"verbs":["get","patch"]},` +
				`{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get"]}]},` +
				`{"resource":"fischers","responseKind":{"group":"","version":"","kind":"Fischer"},"scope":"Cluster","singularResource":"fischer","verbs":["get"]}]`, ""},
		{"subresource without its resource, without a kind",
			`{"kind":"APIResourceList","resources":[{"name":"pods/log","namespaced":true,"verbs":null}]}`,
			`[{"resource":"pods","responseKind":{"group":"","version":"","kind":""},"scope":"Namespaced","singularResource":"","verbs":[],` +
				`"subresources":[{"subresource":"log","responseKind":{"group":"","version":"","kind":""},"verbs":[]}]}]`, ""},
		{"empty", `{"kind":"APIResourceList","resources":[]}`, `[]`, ""},
		{"scope mismatch", `{"kind":"APIResourceList","resources":[{"name":"a","kind":"A","namespaced":true},{"name":"a/b","kind":"A"}]}`,
			"", "parent a (scope: Namespaced) and subresource b (scope: Cluster) scope do not match"},
		{"another kind", `{"kind":"APIGroup","name":"x"}`, "", ErrNotResourceList.Error()},
		{"not JSON", `<html>`, "", "invalid character '<' looking for beginning of value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseResourceList([]byte(tt.body))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := json.Marshal(got.list); string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}

// FuzzParseResourceList: any body parses or fails cleanly, and a parsed
// list keeps every subresource under one resource.
func FuzzParseResourceList(f *testing.F) {
	for _, s := range []string{
		`{"kind":"APIResourceList","resources":[{"name":"a","kind":"A","verbs":["get"]},{"name":"a/s","kind":"A"}]}`,
		`{"kind":"APIResourceList","resources":[{"name":"a/b/c"},{"name":"/x"},{"name":"y/"},{"name":""},{"name":""}]}`,
		`{"kind":"APIResourceList"}`, `null`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := ParseResourceList(body)
		if err != nil {
			if got != nil {
				t.Fatal("a result with an error")
			}
			return
		}
		var in struct{ Resources []apiResource }
		if err := json.Unmarshal(body, &in); err != nil {
			t.Fatalf("parsed a body that does not decode: %v", err)
		}
		var subs, wantSubs int
		for _, r := range in.Resources {
			if strings.Contains(r.Name, "/") {
				wantSubs++
			}
		}
		for _, r := range got.list {
			subs += len(r.Subresources)
		}
		if subs != wantSubs {
			t.Fatalf("%d subresources listed, %d given", subs, wantSubs)
		}
		if _, err := json.Marshal(got.list); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRemoteGroupVersions: the group-versions of extension servers are
// listed among the served ones by priority, /apis/<group> is served for
// them, their resource lists are not (the extension server answers), and
// aggregated discovery lists them stale until their resources are known.
func TestRemoteGroupVersions(t *testing.T) {
	t.Parallel()
	b := mustBrand(t, "plat")
	rbac := b.Group("rbac.authorization")
	reg := registry.New()
	for _, d := range append(coreDescriptors(), rbacDescriptors(b)...) {
		reg.Add(d)
	}
	res, err := ParseResourceList([]byte(`{"kind":"APIResourceList","resources":[{"name":"flunders","singularName":"flunder","namespaced":true,"kind":"Flunder","verbs":["get"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	remote := []RemoteGroupVersion{
		{Group: "metrics.example.com", Version: "v1beta1", Priority: registry.Priority{Group: 100, Version: 100}},
		{Group: "wardle.example.com", Version: "v1alpha1", Priority: registry.Priority{Group: 20000, Version: 10}},
		{Group: "wardle.example.com", Version: "v1beta1", Priority: registry.Priority{Group: 20000, Version: 20}, Resources: res},
		// Served here: the registry's version wins.
		{Group: rbac, Version: "v1", Priority: registry.Priority{Group: 1, Version: 1}},
	}
	h := New(reg, b, Options{Version: goldenVersion, Remote: func() []RemoteGroupVersion { return remote }})

	var list apiGroupList
	if err := json.Unmarshal(get(h, "/apis", nil).Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range list.Groups {
		names = append(names, g.Name)
		for _, v := range g.Versions {
			names = append(names, " "+v.Version)
		}
	}
	if got, want := names, []string{"wardle.example.com", " v1beta1", " v1alpha1", rbac, " v1", "metrics.example.com", " v1beta1"}; !equalStrings(got, want) {
		t.Errorf("/apis lists %q, want %q", got, want)
	}
	if w := get(h, "/apis/wardle.example.com", nil); w.Code != 200 || !json.Valid(w.Body.Bytes()) {
		t.Errorf("/apis/<group>: %d %s", w.Code, w.Body)
	}
	if w := get(h, "/apis/wardle.example.com/v1beta1", nil); w.Code != 404 {
		t.Errorf("a remote resource list was served here: %d", w.Code)
	}

	w := get(h, "/apis", map[string]string{"Accept": "application/json;g=" + b.DiscoveryGroup() + ";v=v2;as=APIGroupDiscoveryList"})
	var agg groupDiscoveryList
	if err := json.Unmarshal(w.Body.Bytes(), &agg); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, g := range agg.Items {
		for _, v := range g.Versions {
			got[g.Metadata.Name+"/"+v.Version] = v.Freshness
			if n := len(v.Resources); n > 0 {
				got[g.Metadata.Name+"/"+v.Version] += "+" + v.Resources[0].Resource
			}
		}
	}
	for gv, want := range map[string]string{"wardle.example.com/v1beta1": "Current+flunders", "wardle.example.com/v1alpha1": "Stale", "metrics.example.com/v1beta1": "Stale"} {
		if got[gv] != want {
			t.Errorf("aggregated %s: %q, want %q", gv, got[gv], want)
		}
	}

	// A change of the remote list is a new document.
	etag := w.Header().Get("ETag")
	remote = remote[:1]
	if w := get(h, "/apis", map[string]string{"Accept": "application/json;g=" + b.DiscoveryGroup() + ";v=v2;as=APIGroupDiscoveryList"}); w.Header().Get("ETag") == etag {
		t.Error("the ETag did not change with the remote group-versions")
	}
}

func TestParseAggregatedGroupVersion(t *testing.T) {
	t.Parallel()
	doc := `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.example/v2","metadata":{},"items":[` +
		`{"metadata":{"name":"w.example.com"},"versions":[{"version":"v1","resources":[{"resource":"flunders","responseKind":{"group":"","version":"","kind":"Flunder"},"scope":"Namespaced","singularResource":"flunder",` +
		`"subresources":[{"subresource":"status","responseKind":{"group":"","version":"","kind":"Flunder"}}]}],"freshness":"Current"},{"version":"v2","resources":[],"freshness":"Current"}]},` +
		`{"metadata":{"name":"other.example.com"},"versions":[{"version":"v1","resources":[{"resource":"others","verbs":["get"]}]}]}]}`
	tests := []struct {
		name, body, group, version, want, err string
	}{
		{"listed", doc, "w.example.com", "v1", `[{"resource":"flunders","responseKind":{"group":"","version":"","kind":"Flunder"},"scope":"Namespaced","singularResource":"flunder","verbs":[],` +
			`"subresources":[{"subresource":"status","responseKind":{"group":"","version":"","kind":"Flunder"},"verbs":[]}]}]`, ""},
		{"no resources", doc, "w.example.com", "v2", `[]`, ""},
		{"not listed", doc, "w.example.com", "v3", `[]`, ""},
		{"a resource list", `{"kind":"APIResourceList","resources":[]}`, "w.example.com", "v1", "", ErrNotAggregated.Error()},
		{"not JSON", `nope`, "w.example.com", "v1", "", "invalid character 'o' in literal null (expecting 'u')"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAggregatedGroupVersion([]byte(tt.body), tt.group, tt.version)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := json.Marshal(got.list); string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}

// FuzzParseAggregatedGroupVersion: any body parses or fails cleanly, and
// what parses has verbs everywhere (never null on the wire).
func FuzzParseAggregatedGroupVersion(f *testing.F) {
	f.Add([]byte(`{"kind":"APIGroupDiscoveryList","items":[{"metadata":{"name":"g"},"versions":[{"version":"v1","resources":[{"resource":"r","subresources":[{"subresource":"s"}]}]}]}]}`))
	f.Add([]byte(`{"kind":"APIGroupDiscoveryList","items":null}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := ParseAggregatedGroupVersion(body, "g", "v1")
		if err != nil {
			return
		}
		for _, r := range got.list {
			if r.Verbs == nil {
				t.Fatalf("resource %q without verbs", r.Resource)
			}
			for _, s := range r.Subresources {
				if s.Verbs == nil {
					t.Fatalf("subresource %q without verbs", s.Subresource)
				}
			}
		}
	})
}

func TestAggregatedAccept(t *testing.T) {
	t.Parallel()
	got := AggregatedAccept("apidiscovery.a", "apidiscovery.b")
	want := "application/json;g=apidiscovery.a;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.a;v=v2beta1;as=APIGroupDiscoveryList," +
		"application/json;g=apidiscovery.b;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.b;v=v2beta1;as=APIGroupDiscoveryList,application/json"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
