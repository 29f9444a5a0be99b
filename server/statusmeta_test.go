package server_test

import (
	"reflect"
	"testing"
)

// A status write is written whole but for what the type's status rules
// keep from the stored object, as upstream's status strategies: most keep
// only the spec, so labels and annotations change with the status; a
// deployment keeps its labels, a pod its owner references, and a custom
// resource everything but its status.
func TestStatusWriteMetadata(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", groupPath(platBrand.Group("apiextensions"), "v1", "", "customresourcedefinitions"), widgetCRD()).mustCode(t, 201)
	// The owner exists, so the garbage collector leaves the objects be.
	o := e.do("POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"st-owner"}}`).mustCode(t, 201).obj(t)
	owner := []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "st-owner", "uid": path(o, "metadata.uid")}}
	for _, c := range []struct {
		name, path, body string
		// kept are the metadata members the write must not change.
		kept []string
		// changed are those it must.
		changed []string
	}{
		{"service", "/api/v1/namespaces/default/services", `{"metadata":{"name":"st-svc","labels":{"a":"1"}},"spec":{"ports":[{"port":80}]}}`,
			nil, []string{"labels", "annotations", "ownerReferences"}},
		{"deployment", deploymentsPath, workloadJSON("st-dep", ""),
			[]string{"labels"}, []string{"annotations", "ownerReferences"}},
		{"pod", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"st-pod","labels":{"a":"1"}},"spec":{"containers":[{"name":"c","image":"x"}]}}`,
			[]string{"ownerReferences"}, []string{"labels", "annotations"}},
		{"custom resource", "/apis/example.com/v1/namespaces/default/widgets", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"st-cr","labels":{"a":"1"}}}`,
			[]string{"labels", "annotations", "ownerReferences"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			eventually(t, c.path+" served", func() bool { return e.do("GET", c.path, nil).code == 200 })
			created := e.do("POST", c.path, c.body).mustCode(t, 201).obj(t)
			name := path(created, "metadata.name").(string)
			obj := e.do("GET", c.path+"/"+name, nil).mustCode(t, 200).obj(t)
			md := obj["metadata"].(map[string]any)
			md["labels"] = map[string]any{"a": "2", "b": "3"}
			md["annotations"] = map[string]any{"note": "x"}
			md["ownerReferences"] = owner
			obj["status"] = map[string]any{}
			out := e.do("PUT", c.path+"/"+name+"/status", obj).mustCode(t, 200).obj(t)
			stored := e.do("GET", c.path+"/"+name, nil).mustCode(t, 200).obj(t)
			for _, got := range []map[string]any{out, stored} {
				gm := got["metadata"].(map[string]any)
				cm := created["metadata"].(map[string]any)
				for _, k := range c.kept {
					if !reflect.DeepEqual(gm[k], cm[k]) {
						t.Errorf("%s = %v, want it kept as %v", k, gm[k], cm[k])
					}
				}
				for _, k := range c.changed {
					if w := md[k]; !reflect.DeepEqual(gm[k], w) {
						t.Errorf("%s = %v, want it written as %v", k, gm[k], w)
					}
				}
			}
		})
	}
}

// What a status write changes beyond status is owned by its manager, so
// a later apply through the subresource can take it away again; what the
// type keeps (a deployment's labels) is owned by no status manager.
func TestStatusWriteOwnership(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", deploymentsPath, workloadJSON("own-dep", "")).mustCode(t, 201)
	obj := e.do("GET", deploymentsPath+"/own-dep", nil).mustCode(t, 200).obj(t)
	obj["metadata"].(map[string]any)["annotations"] = map[string]any{"w": "2"}
	obj["metadata"].(map[string]any)["labels"] = map[string]any{"kept": "no"}
	out := e.do("PUT", deploymentsPath+"/own-dep/status?fieldManager=upd", obj).mustCode(t, 200).obj(t)
	var entry map[string]any
	for _, m := range path(out, "metadata.managedFields").([]any) {
		if m := m.(map[string]any); m["manager"] == "upd" {
			entry = m
		}
	}
	if entry == nil || entry["subresource"] != "status" || path(entry, "fieldsV1.f:metadata.f:annotations.f:w") == nil || path(entry, "fieldsV1.f:metadata.f:labels") != nil {
		t.Errorf("status update entry %v", entry)
	}
	apply := func(ann string) map[string]any {
		body := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"own-dep"` + ann + `},"status":{"replicas":0}}`
		return e.do("PATCH", deploymentsPath+"/own-dep/status?fieldManager=ctl", body, "Content-Type", "application/apply-patch+yaml").mustCode(t, 200).obj(t)
	}
	if got := apply(`,"annotations":{"q":"1"}`); path(got, "metadata.annotations.q") != "1" {
		t.Errorf("applied annotation: %v", path(got, "metadata.annotations"))
	}
	if got := apply(""); path(got, "metadata.annotations.q") != nil || path(got, "metadata.annotations.w") != "2" {
		t.Errorf("annotation the apply no longer holds: %v", path(got, "metadata.annotations"))
	}
}
