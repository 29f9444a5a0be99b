package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// owned is a ConfigMap body whose owner references name owners; block
// sets blockOwnerDeletion on each.
func owned(name string, block bool, owners ...map[string]any) map[string]any {
	body := cm(name, nil, nil)
	var refs []any
	for _, o := range owners {
		meta := o["metadata"].(map[string]any)
		r := map[string]any{"apiVersion": o["apiVersion"], "kind": o["kind"], "name": meta["name"], "uid": meta["uid"]}
		if block {
			r["blockOwnerDeletion"] = true
		}
		refs = append(refs, r)
	}
	body["metadata"].(map[string]any)["ownerReferences"] = refs
	return body
}

func finalizersOf(o map[string]any) []string {
	var out []string
	l, _ := path(o, "metadata.finalizers").([]any)
	for _, f := range l {
		s, _ := f.(string)
		out = append(out, s)
	}
	return out
}

func TestGarbageCollection(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "gc"}}).mustCreated(t)
	base := "/api/v1/namespaces/gc/configmaps"
	gone := func(name string) func() bool {
		return func() bool { return e.do("GET", base+"/"+name, nil).code == 404 }
	}

	t.Run("background", func(t *testing.T) {
		owner := e.do("POST", base, cm("bg-owner", nil, nil)).mustCreated(t)
		other := e.do("POST", base, cm("bg-other", nil, nil)).mustCreated(t)
		e.do("POST", base, owned("bg-dep", false, owner)).mustCreated(t)
		e.do("POST", base, owned("bg-shared", false, owner, other)).mustCreated(t)
		e.do("DELETE", base+"/bg-owner", nil).mustCode(t, 200)
		eventually(t, "the dependent to go", gone("bg-dep"))
		eventually(t, "the shared dependent to keep only the other owner", func() bool {
			refs, _ := path(e.do("GET", base+"/bg-shared", nil).mustCode(t, 200).obj(t), "metadata.ownerReferences").([]any)
			return len(refs) == 1 && path(refs[0].(map[string]any), "name") == "bg-other"
		})
	})

	t.Run("background-legacy-orphanDependents-false", func(t *testing.T) {
		owner := e.do("POST", base, cm("lbg-owner", nil, nil)).mustCreated(t)
		e.do("POST", base, owned("lbg-dep", false, owner)).mustCreated(t)
		e.do("DELETE", base+"/lbg-owner?orphanDependents=false", nil).mustCode(t, 200)
		eventually(t, "the dependent to go", gone("lbg-dep"))
	})

	for _, c := range []struct{ name, query, body string }{
		{"orphan", "", `{"propagationPolicy":"Orphan"}`},
		{"orphan-legacy", "?orphanDependents=true", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			owner := e.do("POST", base, cm(c.name+"-owner", nil, nil)).mustCreated(t)
			e.do("POST", base, owned(c.name+"-dep", true, owner)).mustCreated(t)
			var body any
			if c.body != "" {
				body = c.body
			}
			marked := e.do("DELETE", base+"/"+c.name+"-owner"+c.query, body).mustCode(t, 200).obj(t)
			if !slices.Equal(finalizersOf(marked), []string{"orphan"}) || path(marked, "metadata.deletionTimestamp") == nil {
				t.Fatalf("owner as marked: %v", marked["metadata"])
			}
			eventually(t, "the owner to go", gone(c.name+"-owner"))
			dep := e.do("GET", base+"/"+c.name+"-dep", nil).mustCode(t, 200).obj(t)
			if refs := path(dep, "metadata.ownerReferences"); refs != nil {
				t.Errorf("orphaned dependent keeps %v", refs)
			}
		})
	}

	t.Run("foreground", func(t *testing.T) {
		owner := e.do("POST", base, cm("fg-owner", nil, nil)).mustCreated(t)
		held := owned("fg-dep", true, owner)
		held["metadata"].(map[string]any)["finalizers"] = []string{"example.com/hold"}
		e.do("POST", base, held).mustCreated(t)
		marked := e.do("DELETE", base+"/fg-owner", `{"propagationPolicy":"Foreground"}`).mustCode(t, 200).obj(t)
		if !slices.Equal(finalizersOf(marked), []string{"foregroundDeletion"}) {
			t.Fatalf("owner as marked: %v", marked["metadata"])
		}
		// The held dependent is deleted but stays; the owner waits for it.
		eventually(t, "the dependent to be deleted", func() bool {
			return path(e.do("GET", base+"/fg-dep", nil).mustCode(t, 200).obj(t), "metadata.deletionTimestamp") != nil
		})
		if o := e.do("GET", base+"/fg-owner", nil).mustCode(t, 200).obj(t); !slices.Equal(finalizersOf(o), []string{"foregroundDeletion"}) {
			t.Fatalf("owner while its dependent stays: %v", o["metadata"])
		}
		e.do("PATCH", base+"/fg-dep", `{"metadata":{"finalizers":null}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
		eventually(t, "the dependent to go", gone("fg-dep"))
		eventually(t, "the owner to go", gone("fg-owner"))
	})

	t.Run("cluster-scoped-owner", func(t *testing.T) {
		icBase := "/apis/networking." + platBrand.Domain + "/v1/ingressclasses"
		owner := e.do("POST", icBase, map[string]any{
			"apiVersion": "networking." + platBrand.Domain + "/v1", "kind": "IngressClass",
			"metadata": map[string]any{"name": "gc-owner"}, "spec": map[string]any{"controller": "example.com/ingress"},
		}).mustCreated(t)
		e.do("POST", base, owned("cs-dep", false, owner)).mustCreated(t)
		e.do("DELETE", icBase+"/gc-owner", nil).mustCode(t, 200)
		eventually(t, "the namespaced dependent to go", gone("cs-dep"))
	})
}

// TestGracefulPodDeletionExpires: a bound pod deleted with a grace period
// stays marked, then goes when the period is over.
func TestGracefulPodDeletionExpires(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/pods"
	e.do("POST", base, map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "bound"},
		"spec": map[string]any{"nodeName": "node-1", "containers": []any{map[string]any{"name": "c", "image": "busybox"}}},
	}).mustCreated(t)
	marked := e.do("DELETE", base+"/bound?gracePeriodSeconds=1", nil).mustCode(t, 200).obj(t)
	if path(marked, "metadata.deletionGracePeriodSeconds") != float64(1) || path(marked, "metadata.deletionTimestamp") == nil {
		t.Fatalf("pod as marked: %v", marked["metadata"])
	}
	eventually(t, "the pod to go", func() bool { return e.do("GET", base+"/bound", nil).code == 404 })
}

// TestNamespaceDefaults: a new namespace gets its default service account
// and the root CA bundle, in the upstream spellings under that brand.
func TestNamespaceDefaults(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"), withControllers("*"))
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "fresh"}}).mustCreated(t)
	eventually(t, "the default service account", func() bool {
		return e.do("GET", "/api/v1/namespaces/fresh/serviceaccounts/default", nil).code == 200
	})
	ca, err := os.ReadFile(filepath.Join(e.opts.CertDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	b := e.opts.Brand
	var got map[string]any
	eventually(t, "the root CA bundle", func() bool {
		r := e.do("GET", "/api/v1/namespaces/fresh/configmaps/"+b.RootCAConfigMap, nil)
		if r.code != 200 {
			return false
		}
		got = r.obj(t)
		return true
	})
	if data, _ := got["data"].(map[string]any); len(data) != 1 || data["ca.crt"] != string(ca) {
		t.Errorf("data: %v", got["data"])
	}
	if ann := path(got, "metadata.annotations").(map[string]any); ann[b.Label("description")] != b.RootCADescription {
		t.Errorf("annotations: %v", ann)
	}
}
