package server_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// applyCT is the media type of a server-side apply patch.
const applyCT = "application/apply-patch+yaml"

// ownership renders an object's managedFields as compact JSON without the
// times, which are the request's.
func ownership(t *testing.T, obj map[string]any) string {
	t.Helper()
	mf, _ := path(obj, "metadata.managedFields").([]any)
	b, err := json.Marshal(mf)
	if err != nil {
		t.Fatal(err)
	}
	return timeMember.ReplaceAllString(string(b), "")
}

var timeMember = regexp.MustCompile(`,"time":"[^"]*"`)

// mustOwnSorted is mustOwn for entries listed by manager: upstream orders
// entries by their time in seconds first, so the order of managers that
// wrote in different seconds depends on the clock.
func mustOwnSorted(t *testing.T, obj map[string]any, want string) {
	t.Helper()
	mf, _ := path(obj, "metadata.managedFields").([]any)
	sorted := slices.Clone(mf)
	slices.SortStableFunc(sorted, func(p, q any) int {
		pm, _ := p.(map[string]any)
		qm, _ := q.(map[string]any)
		return strings.Compare(fmt.Sprint(pm["operation"], pm["manager"]), fmt.Sprint(qm["operation"], qm["manager"]))
	})
	b, err := json.Marshal(sorted)
	if err != nil {
		t.Fatal(err)
	}
	if got := timeMember.ReplaceAllString(string(b), ""); got != want {
		t.Errorf("managedFields:\n got  %s\n want %s", got, want)
	}
}

// mustOwn fails unless obj's managedFields are want (without times; keys
// in encoding/json's sorted order).
func mustOwn(t *testing.T, obj map[string]any, want string) {
	t.Helper()
	if got := ownership(t, obj); got != want {
		t.Errorf("managedFields:\n got  %s\n want %s", got, want)
	}
}

func dataOf(obj map[string]any) string {
	b, _ := json.Marshal(obj["data"])
	return string(b)
}

// TestApplyUpstreamSequence replays the captured upstream apply sequence
// on a ConfigMap: create, conflict, force, re-apply dropping fields,
// a merge patch by another manager, a dry run and a JSON body.
func TestApplyUpstreamSequence(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "golden-apply"}}).mustCode(t, 201)
	base := "/api/v1/namespaces/golden-apply/configmaps/"
	apply := func(name, query, body string) *resp {
		return e.do("PATCH", base+name+"?"+query, body, "Content-Type", applyCT)
	}

	created := apply("ssa", "fieldManager=a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  labels:\n    owner: a\ndata:\n  shared: from-a\n  only-a: \"1\"\n").mustCode(t, 201).obj(t)
	mustOwn(t, created, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:only-a":{},"f:shared":{}},"f:metadata":{"f:labels":{"f:owner":{}}}},"manager":"a","operation":"Apply"}]`)
	if got := dataOf(created); got != `{"only-a":"1","shared":"from-a"}` {
		t.Errorf("data after create: %s", got)
	}
	if ts, _ := path(created, "metadata.managedFields").([]any)[0].(map[string]any)["time"].(string); ts != path(created, "metadata.creationTimestamp") {
		t.Errorf("entry time %q, want the creation time %v", ts, path(created, "metadata.creationTimestamp"))
	}

	conflict := apply("ssa", "fieldManager=b", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  shared: from-b\n  only-b: \"2\"\n").mustCode(t, 409)
	if got := strings.TrimSpace(string(conflict.body)); got != `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Apply failed with 1 conflict: conflict with \"a\": .data.shared","reason":"Conflict","details":{"causes":[{"reason":"FieldManagerConflict","message":"conflict with \"a\"","field":".data.shared"}]},"code":409}` {
		t.Errorf("conflict body: %s", got)
	}
	if got := e.do("GET", base+"ssa", nil).mustCode(t, 200).obj(t); path(got, "metadata.resourceVersion") != path(created, "metadata.resourceVersion") {
		t.Errorf("a refused apply changed the object: %v", got)
	}

	forced := apply("ssa", "fieldManager=b&force=true", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  shared: from-b\n  only-b: \"2\"\n").mustCode(t, 200).obj(t)
	mustOwn(t, forced, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:only-a":{}},"f:metadata":{"f:labels":{"f:owner":{}}}},"manager":"a","operation":"Apply"},{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:only-b":{},"f:shared":{}}},"manager":"b","operation":"Apply"}]`)
	if got := dataOf(forced); got != `{"only-a":"1","only-b":"2","shared":"from-b"}` {
		t.Errorf("data after force: %s", got)
	}

	dropped := apply("ssa", "fieldManager=a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  labels:\n    owner: a\ndata: {}\n").mustCode(t, 200).obj(t)
	// a wrote last, maybe in a later second than b.
	mustOwnSorted(t, dropped, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{},"f:metadata":{"f:labels":{"f:owner":{}}}},"manager":"a","operation":"Apply"},{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:only-b":{},"f:shared":{}}},"manager":"b","operation":"Apply"}]`)
	if got := dataOf(dropped); got != `{"only-b":"2","shared":"from-b"}` {
		t.Errorf("data after a dropped its field: %s", got)
	}

	again := apply("ssa", "fieldManager=a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  labels:\n    owner: a\ndata: {}\n").mustCode(t, 200).obj(t)
	if path(again, "metadata.resourceVersion") != path(dropped, "metadata.resourceVersion") {
		t.Errorf("an apply that changes nothing wrote: resourceVersion %v, was %v", path(again, "metadata.resourceVersion"), path(dropped, "metadata.resourceVersion"))
	}

	edited := e.do("PATCH", base+"ssa?fieldManager=editor", `{"data": {"edited": "yes"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200).obj(t)
	mustOwnSorted(t, edited, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{},"f:metadata":{"f:labels":{"f:owner":{}}}},"manager":"a","operation":"Apply"},{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:only-b":{},"f:shared":{}}},"manager":"b","operation":"Apply"},{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:edited":{}}},"manager":"editor","operation":"Update"}]`)

	dry := apply("ssa3", "fieldManager=a&dryRun=All", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa3\ndata:\n  x: value\n").mustCode(t, 201).obj(t)
	mustOwn(t, dry, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:x":{}}},"manager":"a","operation":"Apply"}]`)
	if rv := path(dry, "metadata.resourceVersion"); rv != nil {
		t.Errorf("dry-run apply has resourceVersion %v", rv)
	}
	e.do("GET", base+"ssa3", nil).mustCode(t, 404)

	js := apply("ssa2", "fieldManager=a", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa2"}, "data": {"x": "y"}}`).mustCode(t, 201).obj(t)
	mustOwn(t, js, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:x":{}}},"manager":"a","operation":"Apply"}]`)
}

// TestApplyRefusals checks the requests apply refuses, each with
// upstream's Status, and that none changes the stored object.
func TestApplyRefusals(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps/"
	e.do("PATCH", base+"r?fieldManager=a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r\ndata:\n  k: v\n", "Content-Type", applyCT).mustCode(t, 201)
	before := e.do("GET", base+"r", nil).mustCode(t, 200).body
	cases := []struct {
		name, query, body string
		code              int
		message           string
	}{
		{"no manager", "", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r\n", 422,
			`PatchOptions.` + platBrand.MetaGroup() + ` "" is invalid: fieldManager: Required value: is required for apply patch`},
		{"managedFields in the body", "fieldManager=a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r\n  managedFields:\n  - manager: x\n", 400,
			"metadata.managedFields must be nil"},
		{"wrong kind", "fieldManager=a", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: r\n", 400,
			"invalid object type: /v1, Kind=Secret"},
		{"no kind", "fieldManager=a", "metadata:\n  name: r\n", 400,
			"invalid object type: /, Kind="},
		{"unknown field", "fieldManager=a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r\nspec:\n  x: 1\n", 500,
			"failed to create typed patch object (/r; /v1, Kind=ConfigMap): .spec: field not declared in schema"},
		{"not YAML", "fieldManager=a", "a: [", 400, ""},
		{"not an object", "fieldManager=a", "- 1\n", 400,
			"error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{"not YAML, in the decoder's words", "fieldManager=a", "a: [", 400,
			"error decoding YAML: error converting YAML to JSON: yaml: line 1: did not find expected node content"},
		{"null", "fieldManager=a", "null", 400, "invalid object type: /, Kind="},
		{"a surrogate escape YAML refuses", "fieldManager=a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r"},"data":{"k":"\udc00"}}`, 400,
			"error decoding YAML: error converting YAML to JSON: yaml: found invalid Unicode character escape code"},
		{"duplicate field, strict", "fieldManager=a&fieldValidation=Strict", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r\ndata:\n  k: v\n  k: w\n", 400, ""},
		{"stale resourceVersion", "fieldManager=a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r\n  resourceVersion: \"1\"\ndata:\n  k: w\n", 409,
			`Operation cannot be fulfilled on configmaps "r": the object has been modified; please apply your changes to the latest version and try again`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("PATCH", base+"r?"+c.query, c.body, "Content-Type", applyCT).mustCode(t, c.code)
			if c.message != "" {
				r.mustMessage(t, c.message)
			} else if m, _ := r.obj(t)["message"].(string); m == "" {
				t.Errorf("no message: %s", r.body)
			}
		})
	}
	if after := e.do("GET", base+"r", nil).mustCode(t, 200).body; string(after) != string(before) {
		t.Errorf("refused applies changed the object:\n%s\n%s", before, after)
	}
	e.do("PATCH", base+"r?force=true", `{"data":{"k":"x"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 422).
		mustMessage(t, `PatchOptions.`+platBrand.MetaGroup()+` "" is invalid: force: Forbidden: may not be specified for non-apply patch`)
}

// TestApplyAfterClientSideApply replays kubectl's client-side apply (a
// create and a strategic patch carrying the last-applied annotation, as
// captured upstream) and then its server-side apply, which takes over
// the fields the annotation shows without a conflict and keeps the
// annotation current.
func TestApplyAfterClientSideApply(t *testing.T) {
	t.Parallel()
	e := start(t)
	ann := platBrand.LastAppliedAnnotation()
	base := "/api/v1/namespaces/default/configmaps"
	last1 := `{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{},"labels":{"app":"csa"},"name":"csa","namespace":"default"}}` + "\n"
	created := e.do("POST", base+"?fieldManager=kubectl-client-side-apply&fieldValidation=Strict", map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"a": "1", "b": "2"},
		"metadata": map[string]any{"name": "csa", "namespace": "default", "labels": map[string]any{"app": "csa"}, "annotations": map[string]any{ann: last1}},
	}).mustCode(t, 201).obj(t)
	mustOwn(t, created, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{},"f:b":{}},"f:metadata":{"f:annotations":{".":{},"f:`+ann+`":{}},"f:labels":{".":{},"f:app":{}}}},"manager":"kubectl-client-side-apply","operation":"Update"}]`)

	last2 := `{"apiVersion":"v1","data":{"a":"1","c":"3"},"kind":"ConfigMap","metadata":{"annotations":{},"labels":{"app":"csa","stage":"two"},"name":"csa","namespace":"default"}}` + "\n"
	patch, _ := json.Marshal(map[string]any{"data": map[string]any{"b": nil, "c": "3"},
		"metadata": map[string]any{"annotations": map[string]any{ann: last2}, "labels": map[string]any{"stage": "two"}}})
	patched := e.do("PATCH", base+"/csa?fieldManager=kubectl-client-side-apply&fieldValidation=Strict", patch, "Content-Type", "application/strategic-merge-patch+json").mustCode(t, 200).obj(t)
	mustOwn(t, patched, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{},"f:c":{}},"f:metadata":{"f:annotations":{".":{},"f:`+ann+`":{}},"f:labels":{".":{},"f:app":{},"f:stage":{}}}},"manager":"kubectl-client-side-apply","operation":"Update"}]`)

	// Another manager applying the same change conflicts on the value it
	// changes: only kubectl migrates from the annotation.
	cfg := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa\n  labels:\n    app: csa\ndata:\n  a: \"10\"\n  c: \"3\"\n"
	e.do("PATCH", base+"/csa?fieldManager=other", cfg, "Content-Type", applyCT).mustCode(t, 409).
		mustMessage(t, `Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a`)
	migrated := e.do("PATCH", base+"/csa?fieldManager=kubectl", cfg, "Content-Type", applyCT).mustCode(t, 200).obj(t)
	if got := dataOf(migrated); got != `{"a":"10","c":"3"}` {
		t.Errorf("data after migration: %s", got)
	}
	mustOwn(t, migrated, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{},"f:c":{}},"f:metadata":{"f:labels":{"f:app":{}}}},"manager":"kubectl","operation":"Apply"},{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:c":{}},"f:metadata":{"f:annotations":{".":{},"f:`+ann+`":{}},"f:labels":{".":{},"f:app":{},"f:stage":{}}}},"manager":"kubectl-client-side-apply","operation":"Update"}]`)
	want := `{"apiVersion":"v1","data":{"a":"10","c":"3"},"kind":"ConfigMap","metadata":{"labels":{"app":"csa"},"name":"csa"}}` + "\n"
	if got := path(migrated, "metadata.annotations").(map[string]any)[ann]; got != want {
		t.Errorf("last-applied after server-side apply:\n got  %q\n want %q", got, want)
	}
}

// TestApplyFirstToUntrackedObject checks that an object whose ownership
// was reset is attributed to before-first-apply when it is first
// applied to, so that the applier conflicts with what it did not set.
func TestApplyFirstToUntrackedObject(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps/"
	e.do("POST", "/api/v1/namespaces/default/configmaps", cm("untracked", map[string]string{"k": "v", "o": "1"}, nil)).mustCode(t, 201)
	reset := e.do("PATCH", base+"untracked", `{"metadata":{"managedFields":[{}]}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200).obj(t)
	if mf := path(reset, "metadata.managedFields"); mf != nil {
		t.Fatalf("managedFields after reset: %v", mf)
	}
	still := e.do("PATCH", base+"untracked", `{"data":{"n":"2"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200).obj(t)
	if mf := path(still, "metadata.managedFields"); mf != nil {
		t.Fatalf("an update after a reset was tracked: %v", mf)
	}
	e.do("PATCH", base+"untracked?fieldManager=a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: untracked\ndata:\n  k: w\n", "Content-Type", applyCT).mustCode(t, 409).
		mustMessage(t, `Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.k`)
	applied := e.do("PATCH", base+"untracked?fieldManager=a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: untracked\ndata:\n  x: \"1\"\n", "Content-Type", applyCT).mustCode(t, 200).obj(t)
	mustOwn(t, applied, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:x":{}}},"manager":"a","operation":"Apply"},{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k":{},"f:n":{},"f:o":{}}},"manager":"before-first-apply","operation":"Update"}]`)
}

// TestManagedFieldsOnStatusAndUpdates checks the entries of a create,
// a status write, a PUT that omits managedFields and a PUT that replaces
// them.
func TestManagedFieldsOnStatusAndUpdates(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/apis/apps/v1/namespaces/default/deployments"
	dep := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}},
		"status": map[string]any{"replicas": 3}}
	created := e.send(req{method: "POST", path: base, body: dep, token: adminToken, header: map[string]string{"User-Agent": "kubectl-create/v1.32.0 (linux/amd64) kubernetes/abc"}}).mustCode(t, 201).obj(t)
	mf := ownership(t, created)
	for _, want := range []string{`"manager":"kubectl-create","operation":"Update"`, `"f:imagePullPolicy":{}`, `"f:progressDeadlineSeconds":{}`, `"k:{\"name\":\"c\"}":{".":{}`, `"f:selector":{}`} {
		if !strings.Contains(mf, want) {
			t.Errorf("create managedFields lack %s: %s", want, mf)
		}
	}
	if strings.Contains(mf, `"f:status"`) {
		t.Errorf("the creator owns status: %s", mf)
	}
	created["status"] = map[string]any{"replicas": 1, "observedGeneration": 1}
	status := e.do("PUT", base+"/web/status?fieldManager=ctl", created).mustCode(t, 200).obj(t)
	entries := path(status, "metadata.managedFields").([]any)
	if len(entries) != 2 {
		t.Fatalf("entries after a status write: %s", ownership(t, status))
	}
	var st map[string]any
	for _, e := range entries {
		if m := e.(map[string]any); m["manager"] == "ctl" {
			st = m
		}
	}
	if st["manager"] != "ctl" || st["subresource"] != "status" || st["operation"] != "Update" {
		t.Errorf("status entry: %v", st)
	}
	if b, _ := json.Marshal(st["fieldsV1"]); string(b) != `{"f:status":{"f:observedGeneration":{},"f:replicas":{}}}` {
		t.Errorf("status entry fields: %s", b)
	}

	// A PUT that omits managedFields keeps them; one that sends a valid
	// list replaces them, with this write merged in.
	delete(path(status, "metadata").(map[string]any), "managedFields")
	path(status, "spec").(map[string]any)["replicas"] = 2
	kept := e.do("PUT", base+"/web?fieldManager=scaler", status).mustCode(t, 200).obj(t)
	if got := ownership(t, kept); !strings.Contains(got, `"manager":"kubectl-create"`) || !strings.Contains(got, `"fieldsV1":{"f:spec":{"f:replicas":{}}},"manager":"scaler","operation":"Update"`) {
		t.Errorf("managedFields after a PUT without them: %s", got)
	}
	path(kept, "metadata").(map[string]any)["managedFields"] = []any{map[string]any{"manager": "only", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:paused": map[string]any{}}}}}
	path(kept, "spec").(map[string]any)["minReadySeconds"] = 5
	replaced := e.do("PUT", base+"/web?fieldManager=scaler", kept).mustCode(t, 200).obj(t)
	mustOwn(t, replaced, `[{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:paused":{}}},"manager":"only","operation":"Update"},{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:minReadySeconds":{}}},"manager":"scaler","operation":"Update"}]`)
}

// TestApplySubresources applies to status and to scale: each is its own
// Apply entry with its subresource, and a scale apply conflicts with the
// manager that applied the replica count.
func TestApplySubresources(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/apis/apps/v1/namespaces/default/deployments/web"
	spec := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: c\n        image: nginx\n"
	e.do("PATCH", base+"?fieldManager=deployer", spec, "Content-Type", applyCT).mustCode(t, 201)

	st := e.do("PATCH", base+"/status?fieldManager=ctl", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 9\nstatus:\n  replicas: 2\n  readyReplicas: 1\n", "Content-Type", applyCT).mustCode(t, 200).obj(t)
	if path(st, "spec.replicas") != float64(2) || path(st, "status.readyReplicas") != float64(1) {
		t.Errorf("status apply: spec.replicas %v (want 2, untouched), status.readyReplicas %v", path(st, "spec.replicas"), path(st, "status.readyReplicas"))
	}
	got := ownership(t, st)
	if want := `{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:readyReplicas":{},"f:replicas":{}}},"manager":"ctl","operation":"Apply","subresource":"status"}`; !strings.Contains(got, want) {
		t.Errorf("status apply entry missing %s in %s", want, got)
	}

	scale := "apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: web\nspec:\n  replicas: 5\n"
	e.do("PATCH", base+"/scale?fieldManager=hpa", scale, "Content-Type", applyCT).mustCode(t, 409).
		mustMessage(t, `Apply failed with 1 conflict: conflict with "deployer": .spec.replicas`)
	res := e.do("PATCH", base+"/scale?fieldManager=hpa&force=true", scale, "Content-Type", applyCT).mustCode(t, 200).obj(t)
	if res["kind"] != "Scale" || path(res, "spec.replicas") != float64(5) {
		t.Errorf("scale apply answered %v", res)
	}
	dep := e.do("GET", base, nil).mustCode(t, 200).obj(t)
	if path(dep, "spec.replicas") != float64(5) {
		t.Errorf("replicas after scale apply: %v", path(dep, "spec.replicas"))
	}
	if got := ownership(t, dep); !strings.Contains(got, `{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}},"manager":"hpa","operation":"Apply","subresource":"scale"}`) {
		t.Errorf("scale apply entry missing: %s", got)
	}
	e.do("PATCH", base+"/scale?fieldManager=hpa", "apiVersion: v1\nkind: Scale\nmetadata:\n  name: web\n", "Content-Type", applyCT).mustCode(t, 400).
		mustMessage(t, "invalid object type: /v1, Kind=Scale")
}

// TestServerOwnManagers checks the manager names of the server's own
// writes: its kept objects are the API server's, what its controllers
// write is the controller manager's.
func TestServerOwnManagers(t *testing.T) {
	t.Parallel()
	e := start(t, withControllers("*"))
	svc := e.do("GET", "/api/v1/namespaces/default/services/"+platBrand.APIServiceName, nil).mustCode(t, 200).obj(t)
	if got := ownership(t, svc); !strings.Contains(got, `"manager":"`+platBrand.FieldManager+`","operation":"Update"`) {
		t.Errorf("the API server's Service: %s", got)
	}
	ca := "/api/v1/namespaces/default/configmaps/" + platBrand.RootCAConfigMap
	eventually(t, "the root CA config map", func() bool { return e.do("GET", ca, nil).code == 200 })
	if got := ownership(t, e.do("GET", ca, nil).obj(t)); !strings.Contains(got, `"manager":"`+platBrand.ControllerManager+`","operation":"Update"`) {
		t.Errorf("the root CA config map: %s", got)
	}
}

// TestCreateOwnershipAsUpstream creates a Deployment and a Pod with the
// bodies kubectl create and kubectl run send and compares their
// ownership with what upstream records for them.
func TestCreateOwnershipAsUpstream(t *testing.T) {
	t.Parallel()
	e := start(t)
	dep := `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"nginx","creationTimestamp":null,"labels":{"app":"nginx"}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx","resources":{}}]}},"strategy":{}},"status":{}}`
	got := e.do("POST", "/apis/apps/v1/namespaces/default/deployments?fieldManager=kubectl-create", dep).mustCode(t, 201).obj(t)
	mustOwn(t, got, `[{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}},"manager":"kubectl-create","operation":"Update"}]`)
	pod := `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"nginx","creationTimestamp":null,"labels":{"run":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx","resources":{}}],"restartPolicy":"Always","dnsPolicy":"ClusterFirst"},"status":{}}`
	got = e.do("POST", "/api/v1/namespaces/default/pods?fieldManager=kubectl-run", pod).mustCode(t, 201).obj(t)
	mustOwn(t, got, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:run":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}},"manager":"kubectl-run","operation":"Update"}]`)
}

// TestOwnershipKeepsKeyOrder checks that keyed items are listed in the
// order of their key values, as upstream encodes a FieldsV1 trie: port
// 80 before port 443, though "443" sorts first as text.
func TestOwnershipKeepsKeyOrder(t *testing.T) {
	t.Parallel()
	e := start(t)
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"ports"},"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":443},{"containerPort":80}]}]}}`
	for _, r := range []*resp{
		e.do("POST", "/api/v1/namespaces/default/pods?fieldManager=m", pod).mustCode(t, 201),
		e.do("GET", "/api/v1/namespaces/default/pods/ports", nil).mustCode(t, 200),
	} {
		body := string(r.body)
		p80 := strings.Index(body, `"k:{\"containerPort\":80,\"protocol\":\"TCP\"}"`)
		p443 := strings.Index(body, `"k:{\"containerPort\":443,\"protocol\":\"TCP\"}"`)
		if p80 < 0 || p443 < 0 || p80 > p443 {
			t.Errorf("port items in the trie at %d (80) and %d (443): %s", p80, p443, body)
		}
	}
}

// TestInvalidManagedFieldsAreReplaced checks that a write sending
// managedFields that do not decode keeps the stored ones rather than
// failing, and that a status write cannot set them.
func TestInvalidManagedFieldsAreReplaced(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps/"
	created := e.do("POST", "/api/v1/namespaces/default/configmaps?fieldManager=maker", cm("bad-mf", map[string]string{"k": "v"}, nil)).mustCode(t, 201).obj(t)
	want := ownership(t, created)
	for _, mf := range []string{
		`[{"manager":"x"}]`,
		`[{"manager":"x","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV2","fieldsV1":{}}]`,
		`[{"manager":"x","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":"not a trie"}]`,
	} {
		got := e.do("PATCH", base+"bad-mf?fieldManager=other", `{"metadata":{"managedFields":`+mf+`}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200).obj(t)
		if o := ownership(t, got); o != want {
			t.Errorf("managedFields %s:\n got  %s\n want %s", mf, o, want)
		}
	}
	// Status writes never set ownership from the body (pods have status).
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"st"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`
	p := e.do("POST", "/api/v1/namespaces/default/pods?fieldManager=maker", pod).mustCode(t, 201).obj(t)
	path(p, "metadata").(map[string]any)["managedFields"] = []any{map[string]any{"manager": "forged", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}}
	p["status"] = map[string]any{"phase": "Running"}
	got := ownership(t, e.do("PUT", "/api/v1/namespaces/default/pods/st/status?fieldManager=kubelet", p).mustCode(t, 200).obj(t))
	if strings.Contains(got, "forged") || !strings.Contains(got, `"fieldsV1":{"f:status":{"f:phase":{}}},"manager":"kubelet","operation":"Update","subresource":"status"`) {
		t.Errorf("status write ownership: %s", got)
	}
}

// TestPatchRefusesAnotherNamespace: a patch of any type, apply included,
// that names another namespace is refused, and an apply that would create
// an object with a given uid is a conflict, as upstream.
func TestPatchRefusesAnotherNamespace(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps/"
	e.do("PATCH", base+"cm?fieldManager=a", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n", "Content-Type", applyCT).mustCode(t, 201)
	before := e.do("GET", base+"cm", nil).mustCode(t, 200).body
	const mismatch = "the namespace of the provided object does not match the namespace sent on the request"
	for _, ct := range []string{applyCT, "application/merge-patch+json", "application/strategic-merge-patch+json"} {
		t.Run(ct, func(t *testing.T) {
			e.do("PATCH", base+"cm?fieldManager=a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"other"},"data":{"k":"w"}}`,
				"Content-Type", ct).mustCode(t, 400).mustMessage(t, mismatch)
		})
	}
	if after := e.do("GET", base+"cm", nil).mustCode(t, 200).body; string(after) != string(before) {
		t.Errorf("refused patches changed the object:\n%s\n%s", before, after)
	}
	// The request's own namespace is fine.
	e.do("PATCH", base+"cm?fieldManager=a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default"},"data":{"k":"w"}}`,
		"Content-Type", applyCT).mustCode(t, 200)

	e.do("PATCH", base+"fresh?fieldManager=a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fresh","uid":"abc"}}`,
		"Content-Type", applyCT).mustCode(t, 409).
		mustMessage(t, `Operation cannot be fulfilled on configmaps "fresh": uid mismatch: the provided object specified uid abc, and no existing object was found`)
	e.do("GET", base+"fresh", nil).mustCode(t, 404)
}

// TestApplyInStoredVersionSeesOtherVersions: a write in the version a
// resource is stored in compares with and keeps the entries recorded in
// its other versions.
func TestApplyInStoredVersionSeesOtherVersions(t *testing.T) {
	t.Parallel()
	e := start(t)
	v1 := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"maxReplicas":3,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}}}`
	e.do("POST", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers?fieldManager=creator", v1).mustCode(t, 201)
	base := "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/h"
	apply := func(query, body string) *resp { return e.do("PATCH", base+"?"+query, body, "Content-Type", applyCT) }
	const v2 = `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"maxReplicas":4}}`
	apply("fieldManager=a", v2).mustCode(t, 409).
		mustMessage(t, `Apply failed with 1 conflict: conflict with "creator" using autoscaling/v1: .spec.maxReplicas`)
	got := apply("fieldManager=a&force=true", v2).mustCode(t, 200).obj(t)
	mustOwn(t, got, `[{"apiVersion":"autoscaling/v2","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:maxReplicas":{}}},"manager":"a","operation":"Apply"},`+
		`{"apiVersion":"autoscaling/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:minReplicas":{},"f:scaleTargetRef":{}}},"manager":"creator","operation":"Update"}]`)
}

// TestOwnershipAcrossGroups: events are served by the core group and the
// events group; a write through either keeps the entries of the other.
func TestOwnershipAcrossGroups(t *testing.T) {
	t.Parallel()
	e := start(t)
	ev := `{"apiVersion":"v1","kind":"Event","metadata":{"name":"ev"},"involvedObject":{"kind":"Pod","name":"p","namespace":"default"},"reason":"R","message":"m","type":"Normal"}`
	e.do("POST", "/api/v1/namespaces/default/events?fieldManager=core", ev).mustCode(t, 201)
	groupPath := "/apis/" + platBrand.Group("events") + "/v1/namespaces/default/events/ev"
	got := e.do("PATCH", groupPath+"?fieldManager=grp", `{"metadata":{"labels":{"l":"v"}}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200).obj(t)
	mustOwn(t, got, `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:involvedObject":{},"f:message":{},"f:reason":{},"f:type":{}},"manager":"core","operation":"Update"},`+
		`{"apiVersion":"`+platBrand.Group("events")+`/v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:l":{}}}},"manager":"grp","operation":"Update"}]`)
	got = e.do("PATCH", "/api/v1/namespaces/default/events/ev?fieldManager=core2", `{"metadata":{"annotations":{"a":"b"}}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200).obj(t)
	if o := ownership(t, got); !strings.Contains(o, `"manager":"grp"`) || !strings.Contains(o, `"manager":"core2"`) || !strings.Contains(o, `"manager":"core"`) {
		t.Errorf("a core write lost entries: %s", o)
	}
}

// TestUpdateIgnoresCreationTimestamp: a write sending another
// creationTimestamp keeps the stored one, whatever the verb, as upstream.
func TestUpdateIgnoresCreationTimestamp(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps/"
	created := e.do("POST", "/api/v1/namespaces/default/configmaps", cm("ts", map[string]string{"k": "v"}, nil)).mustCode(t, 201).obj(t)
	want := path(created, "metadata.creationTimestamp")
	put := created
	path(put, "metadata").(map[string]any)["creationTimestamp"] = "2000-01-01T00:00:00Z"
	put["data"] = map[string]any{"k": "put"}
	for _, r := range []*resp{
		e.do("PUT", base+"ts", put),
		e.do("PATCH", base+"ts", `{"metadata":{"creationTimestamp":"2000-01-01T00:00:00Z"},"data":{"k":"merge"}}`, "Content-Type", "application/merge-patch+json"),
		e.do("PATCH", base+"ts?fieldManager=a&force=true", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ts","creationTimestamp":"2000-01-01T00:00:00Z"},"data":{"k":"apply"}}`, "Content-Type", applyCT),
	} {
		got := r.mustCode(t, 200).obj(t)
		if ts := path(got, "metadata.creationTimestamp"); ts != want {
			t.Errorf("creationTimestamp %v, want the stored %v", ts, want)
		}
	}
	if got := e.do("GET", base+"ts", nil).mustCode(t, 200).obj(t); path(got, "metadata.creationTimestamp") != want || path(got, "data.k") != "apply" {
		t.Errorf("stored %v", got)
	}
}
