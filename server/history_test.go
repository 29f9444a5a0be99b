package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// compact drops the history up to the revision of obj.
func compact(t *testing.T, e *env, obj map[string]any) {
	t.Helper()
	rev, err := strconv.ParseInt(rvOf(obj), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.srv.Store().Compact(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
}

func TestExpiredContinueAndExactList(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	createCMs(t, e, "default", 3, nil)
	p1 := e.do("GET", base+"?limit=1", nil).mustCode(t, 200).obj(t)
	tok := path(p1, "metadata.continue").(string)
	oldRV := rvOf(p1)
	last := e.do("POST", base, cm("later", nil, nil)).mustCreated(t)
	e.do("POST", base, cm("later2", nil, nil)).mustCreated(t)
	compact(t, e, last)

	st := e.do("GET", base+"?limit=1&continue="+tok, nil).mustCode(t, 410).obj(t)
	if st["reason"] != "Expired" || !strings.HasPrefix(st["message"].(string), "The provided continue parameter is too old to display a consistent list result.") {
		t.Fatalf("expired continue: %v", st)
	}
	fresh := decodeContinue(t, path(st, "metadata.continue").(string))
	if fresh["rv"] != float64(-1) || fresh["start"] != "cm-a\x00" {
		t.Errorf("fresh token %v", fresh)
	}
	// The fresh token continues from the latest state.
	next := e.do("GET", base+"?limit=10&continue="+path(st, "metadata.continue").(string), nil).mustCode(t, 200).obj(t)
	if got := strings.Join(names(t, next), ","); got != "cm-b,cm-c,later,later2" {
		t.Errorf("continuing with the fresh token: %s", got)
	}
	st = e.do("GET", base+"?resourceVersion="+oldRV+"&resourceVersionMatch=Exact", nil).mustCode(t, 410).obj(t)
	if st["message"] != "The resourceVersion for the provided list is too old." {
		t.Errorf("exact list below the history: %v", st["message"])
	}
}

func TestRestartKeepsStateAndHistory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o := testOptions(t, dir)
	e := startWith(t, o)
	base := "/api/v1/namespaces/default/configmaps"
	first := e.do("POST", base, cm("one", map[string]string{"k": "1"}, nil)).mustCreated(t)
	second := e.do("POST", base, cm("two", nil, nil)).mustCreated(t)
	e.do("DELETE", base+"/two", nil).mustCode(t, 200)
	e.stop()

	e2 := startWith(t, testOptions(t, dir))
	got := e2.do("GET", base+"/one", nil).mustCode(t, 200).obj(t)
	if path(got, "metadata.uid") != path(first, "metadata.uid") || path(got, "data.k") != "1" {
		t.Errorf("object after restart: %v", got)
	}
	w := e2.watch(base + "?watch=1&resourceVersion=" + rvOf(first))
	w.expect("ADDED", "two")
	del := w.expect("DELETED", "two")
	if rvOf(del.Object) <= rvOf(second) && len(rvOf(del.Object)) <= len(rvOf(second)) {
		t.Errorf("deletion replayed at %s, not after %s", rvOf(del.Object), rvOf(second))
	}
	created := e2.do("POST", base, cm("three", nil, nil)).mustCreated(t)
	w.expect("ADDED", "three")
	a, _ := strconv.Atoi(rvOf(created))
	b, _ := strconv.Atoi(rvOf(del.Object))
	if a <= b {
		t.Errorf("revision went backwards after restart: %d after %d", a, b)
	}
}

func TestDryRunUpdateAndPatch(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	o := e.do("POST", base, cm("d", map[string]string{"k": "v"}, nil)).mustCreated(t)
	o["data"] = map[string]any{"k": "dry"}
	r := e.do("PUT", base+"/d?dryRun=All", o).mustCode(t, 200).obj(t)
	if path(r, "data.k") != "dry" || rvOf(r) != rvOf(o) {
		t.Errorf("dry-run update result: %v", r)
	}
	p := e.do("PATCH", base+"/d?dryRun=All", `{"data":{"k":"patched"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200).obj(t)
	if path(p, "data.k") != "patched" {
		t.Errorf("dry-run patch result: %v", p)
	}
	stored := e.do("GET", base+"/d", nil).mustCode(t, 200).obj(t)
	if path(stored, "data.k") != "v" || rvOf(stored) != rvOf(o) {
		t.Errorf("dry run changed the object: %v", stored)
	}
}

func TestPatchKinds(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	e.do("POST", base, cm("p", map[string]string{"a": "1", "b": "2"}, map[string]string{"x": "y"})).mustCreated(t)
	merge := e.do("PATCH", base+"/p", `{"data":{"a":null,"c":"3"},"metadata":{"labels":{"z":"w"}}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200).obj(t)
	if path(merge, "data.a") != nil || path(merge, "data.c") != "3" || path(merge, "metadata.labels.x") != "y" || path(merge, "metadata.labels.z") != "w" {
		t.Errorf("merge patch: %v", merge)
	}
	strategic := e.do("PATCH", base+"/p", `{"data":{"d":"4"}}`, "Content-Type", "application/strategic-merge-patch+json").mustCode(t, 200).obj(t)
	if path(strategic, "data.d") != "4" || path(strategic, "data.b") != "2" {
		t.Errorf("strategic patch: %v", strategic)
	}
	jp := e.do("PATCH", base+"/p", `[{"op":"replace","path":"/data/b","value":"two"},{"op":"remove","path":"/data/c"}]`, "Content-Type", "application/json-patch+json").mustCode(t, 200).obj(t)
	if path(jp, "data.b") != "two" || path(jp, "data.c") != nil {
		t.Errorf("json patch: %v", jp)
	}
	// As upstream: a replace of a member the object lacks adds it.
	jp = e.do("PATCH", base+"/p", `[{"op":"replace","path":"/metadata/annotations","value":{"a":"b"}}]`, "Content-Type", "application/json-patch+json").mustCode(t, 200).obj(t)
	if path(jp, "metadata.annotations.a") != "b" {
		t.Errorf("json patch replacing missing annotations: %v", jp)
	}
	st := e.do("PATCH", base+"/p", `[{"op":"test","path":"/data/b","value":"wrong"}]`, "Content-Type", "application/json-patch+json").mustCode(t, 422).obj(t)
	if st["message"] != "the server rejected our request due to an error in our request" {
		t.Errorf("failed test op: %v", st)
	}
	st = e.do("PATCH", base+"/p", `{"data":`, "Content-Type", "application/merge-patch+json").mustCode(t, 400).obj(t)
	if st["message"] != "error decoding patch: unexpected end of JSON input" {
		t.Errorf("malformed patch: %v", st["message"])
	}
	st = e.do("PATCH", base+"/p?fieldValidation=Strict", `{"spec":{"x":1}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 422).obj(t)
	if !strings.Contains(st["message"].(string), `strict decoding error: unknown field "spec"`) || path(st, "details.causes") == nil {
		t.Errorf("strict patch: %v", st)
	}
	e.do("PATCH", base+"/missing", `{}`, "Content-Type", "application/merge-patch+json").mustCode(t, 404)
}

func TestAPIsDiscovery(t *testing.T) {
	t.Parallel()
	e := start(t)
	apis := e.do("GET", "/apis", nil).mustCode(t, 200).obj(t)
	if apis["kind"] != "APIGroupList" {
		t.Errorf("/apis: %v", apis)
	}
	agg := e.do("GET", "/api", nil, "Accept", "application/json;g=apidiscovery."+platBrand.Domain+";v=v2;as=APIGroupDiscoveryList,application/json").mustCode(t, 200)
	if ct := agg.header.Get("Content-Type"); ct != "application/json;g=apidiscovery."+platBrand.Domain+";v=v2;as=APIGroupDiscoveryList" {
		t.Errorf("aggregated content type %q", ct)
	}
	if !strings.Contains(string(agg.body), `"resource":"configmaps"`) {
		t.Errorf("aggregated body lacks configmaps: %.300s", agg.body)
	}
}

// TestStrictPatchMessages checks the bad value a patch that fails strict
// decoding is quoted with, as upstream quotes it: a merge patch as the
// merged document with the members of the objects it opened sorted, a
// strategic merge patch as Go prints the patch's map.
func TestStrictPatchMessages(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	e.do("POST", base, `{"metadata":{"name":"strictp"},"data":{"k":"v"}}`).mustCode(t, 201)
	var got struct{ Metadata json.RawMessage }
	if err := json.Unmarshal(e.do("GET", base+"/strictp", nil).mustCode(t, 200).body, &got); err != nil {
		t.Fatal(err)
	}
	merged := `{"apiVersion":"v1","data":{"k":"p"},"kind":"ConfigMap","metadata":` + string(got.Metadata) + `,"spec":{"x":1}}`
	const body = `{"spec": {"x": 1}, "data": {"k": "p"}}`
	for _, c := range []struct{ mt, body, value string }{
		{"application/merge-patch+json", body, merged},
		{"application/strategic-merge-patch+json", body, "map[data:map[k:p] spec:map[x:1]]"},
		// The patch as the merge left it: a null under a member the
		// object lacks is dropped.
		{"application/strategic-merge-patch+json", `{"spec":{"x":1},"data":{"k":"p"},"metadata":{"labels":{"gone":null,"a":"b"}}}`,
			"map[data:map[k:p] metadata:map[labels:map[a:b]] spec:map[x:1]]"},
	} {
		st := e.do("PATCH", base+"/strictp?fieldValidation=Strict", c.body, "Content-Type", c.mt).mustCode(t, 422).obj(t)
		cause := fmt.Sprintf("Invalid value: %q: strict decoding error: unknown field \"spec\"", c.value)
		if st["message"] != ` "" is invalid: patch: `+cause {
			t.Errorf("%s: message %q, want %q", c.mt, st["message"], ` "" is invalid: patch: `+cause)
		}
		want := []any{map[string]any{"reason": "FieldValueInvalid", "message": cause, "field": "patch"}}
		if causes := path(st, "details.causes"); !reflect.DeepEqual(causes, want) {
			t.Errorf("%s: causes %v, want %v", c.mt, causes, want)
		}
	}
	// A member the patch itself repeats is a strict decoding error too,
	// named before the patched object's own; a warning by default.
	st := e.do("PATCH", base+"/strictp?fieldValidation=Strict", `{"data":{"k":"1","k":"2"},"spec":{"x":1}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 422).obj(t)
	if msg, _ := st["message"].(string); !strings.HasSuffix(msg, `: strict decoding error: duplicate field "data.k", unknown field "spec"`) {
		t.Errorf("duplicate in the patch: %v", msg)
	}
	warned := e.do("PATCH", base+"/strictp", `{"data":{"k":"1","k":"2"}}`, "Content-Type", "application/strategic-merge-patch+json").mustCode(t, 200)
	if got := warned.header.Values("Warning"); len(got) != 1 || !strings.Contains(got[0], `duplicate field \"data.k\"`) {
		t.Errorf("warnings %q", got)
	}
	// A patched object of the wrong shape is the same 422, in any
	// validation mode, with the decoder's type error.
	st = e.do("PATCH", base+"/strictp", `{"metadata":{"labels":"x"}}`, "Content-Type", "application/strategic-merge-patch+json").mustCode(t, 422).obj(t)
	cause := `Invalid value: "map[metadata:map[labels:x]]": json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string`
	if st["message"] != ` "" is invalid: patch: `+cause || st["reason"] != "Invalid" {
		t.Errorf("type error: %v", st)
	}
}
