package server_test

import (
	"sort"
	"strings"
	"testing"

	"platd/config"
)

func TestDefaultNamespaces(t *testing.T) {
	t.Parallel()
	for _, name := range config.BrandNames() {
		b, _ := config.LookupBrand(name)
		want := []string{"default", b.NodeLeaseNamespace, b.PublicNamespace, b.SystemNamespace}
		sort.Strings(want)
		c := struct {
			brand string
			want  []string
			label string
			fin   string
		}{name, want, b.Label("metadata.name"), b.NamespaceFinalizer}
		e := start(t, withBrand(c.brand))
		list := e.do("GET", "/api/v1/namespaces", nil).mustCode(t, 200).obj(t)
		if got := strings.Join(names(t, list), ","); got != strings.Join(c.want, ",") {
			t.Errorf("%s: namespaces %s", c.brand, got)
		}
		ns := e.do("GET", "/api/v1/namespaces/default", nil).mustCode(t, 200).obj(t)
		labels := path(ns, "metadata.labels").(map[string]any)
		if labels[c.label] != "default" || path(ns, "status.phase") != "Active" {
			t.Errorf("%s: default namespace %v", c.brand, ns)
		}
		if fins := path(ns, "spec.finalizers").([]any); len(fins) != 1 || fins[0] != c.fin {
			t.Errorf("%s: finalizers %v", c.brand, fins)
		}
		for _, protected := range []string{"default", b.SystemNamespace, b.PublicNamespace} {
			st := e.do("DELETE", "/api/v1/namespaces/"+protected, nil).mustCode(t, 403).obj(t)
			if st["message"] != `namespaces "`+protected+`" is forbidden: this namespace may not be deleted` {
				t.Errorf("delete %s: %v", protected, st["message"])
			}
		}
	}
}

func TestNamespaceDeletionRemovesContent(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "doomed"}}).mustCreated(t)
	e.do("POST", "/api/v1/namespaces/doomed/configmaps", cm("c1", nil, nil)).mustCreated(t)
	held := cm("held", nil, nil)
	held["metadata"].(map[string]any)["finalizers"] = []any{"example.com/hold"}
	e.do("POST", "/api/v1/namespaces/doomed/configmaps", held).mustCreated(t)

	del := e.do("DELETE", "/api/v1/namespaces/doomed", nil).mustCode(t, 200).obj(t)
	if del["kind"] != "Namespace" || path(del, "status.phase") != "Terminating" || path(del, "metadata.deletionTimestamp") == nil {
		t.Fatalf("delete response: %v", del)
	}
	// A namespace's deletion is marked by a time alone, as upstream's
	// namespace storage marks it: no grace period.
	if g, ok := path(del, "metadata").(map[string]any)["deletionGracePeriodSeconds"]; ok {
		t.Errorf("deleted namespace has deletionGracePeriodSeconds %v", g)
	}
	// Terminating: no new content.
	st := e.do("POST", "/api/v1/namespaces/doomed/configmaps", cm("late", nil, nil)).mustCode(t, 403).obj(t)
	if st["message"] != `configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated` ||
		path(st, "details.causes") == nil {
		t.Errorf("create in terminating namespace: %v", st)
	}
	again := e.do("DELETE", "/api/v1/namespaces/doomed", nil).mustCode(t, 409).obj(t)
	if !strings.Contains(again["message"].(string), "The system is ensuring all content is removed from this namespace.  Upon completion") {
		t.Errorf("second delete: %v", again["message"])
	}
	// Unheld content goes; the held object stays, marked, until its finalizer is removed.
	eventually(t, "c1 deleted", func() bool { return e.do("GET", "/api/v1/namespaces/doomed/configmaps/c1", nil).code == 404 })
	// The controller deletes content in no set order: wait for the mark.
	var h map[string]any
	eventually(t, "held object marked for deletion", func() bool {
		h = e.do("GET", "/api/v1/namespaces/doomed/configmaps/held", nil).mustCode(t, 200).obj(t)
		return path(h, "metadata.deletionTimestamp") != nil
	})
	// The namespace reports what keeps it.
	want := map[string]string{
		"NamespaceDeletionDiscoveryFailure":           "False",
		"NamespaceDeletionGroupVersionParsingFailure": "False",
		"NamespaceDeletionContentFailure":             "False",
		"NamespaceContentRemaining":                   "True|Some resources are remaining: configmaps. has 1 resource instances",
		"NamespaceFinalizersRemaining":                "True|Some finalizers are remaining: example.com/hold in 1 resource instances",
	}
	eventually(t, "namespace conditions", func() bool {
		ns := e.do("GET", "/api/v1/namespaces/doomed", nil).mustCode(t, 200).obj(t)
		conds, _ := path(ns, "status.conditions").([]any)
		if len(conds) != len(want) {
			return false
		}
		for _, c := range conds {
			m := c.(map[string]any)
			got := m["status"].(string)
			if got == "True" {
				got += "|" + m["message"].(string)
			}
			if want[m["type"].(string)] != got || m["lastTransitionTime"] == nil {
				return false
			}
		}
		return true
	})
	h["metadata"].(map[string]any)["finalizers"] = []any{}
	e.do("PUT", "/api/v1/namespaces/doomed/configmaps/held", h).mustCode(t, 200)
	e.do("GET", "/api/v1/namespaces/doomed/configmaps/held", nil).mustCode(t, 404)
	eventually(t, "namespace removed", func() bool { return e.do("GET", "/api/v1/namespaces/doomed", nil).code == 404 })
	// The name is reusable.
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "doomed"}}).mustCreated(t)
	e.do("POST", "/api/v1/namespaces/doomed/configmaps", cm("c1", nil, nil)).mustCreated(t)
}

func TestFinalizersKeepObjects(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	o := cm("f", nil, nil)
	o["metadata"].(map[string]any)["finalizers"] = []any{"example.com/one"}
	e.do("POST", base, o).mustCreated(t)
	d := e.do("DELETE", base+"/f", nil).mustCode(t, 200).obj(t)
	if d["kind"] != "ConfigMap" || path(d, "metadata.deletionTimestamp") == nil || path(d, "metadata.deletionGracePeriodSeconds") != float64(0) {
		t.Fatalf("delete with finalizer: %v", d)
	}
	d2 := e.do("DELETE", base+"/f", nil).mustCode(t, 200).obj(t)
	if path(d2, "metadata.deletionTimestamp") != path(d, "metadata.deletionTimestamp") {
		t.Error("repeat delete moved deletionTimestamp")
	}
	st := e.do("POST", base, cm("f", nil, nil)).mustCode(t, 409).obj(t)
	if st["message"] != `object is being deleted: configmaps "f" already exists` {
		t.Errorf("create over terminating object: %v", st["message"])
	}
	// Adding a finalizer to a terminating object is refused.
	d["metadata"].(map[string]any)["finalizers"] = []any{"example.com/one", "example.com/two"}
	e.do("PUT", base+"/f", d).mustCode(t, 422)
	d["metadata"].(map[string]any)["finalizers"] = nil
	last := e.do("PUT", base+"/f", d).mustCode(t, 200).obj(t)
	if path(last, "metadata.name") != "f" {
		t.Errorf("final update: %v", last)
	}
	e.do("GET", base+"/f", nil).mustCode(t, 404)
	e.do("POST", base, cm("f", nil, nil)).mustCreated(t)
}

func TestDeleteOptions(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	o := e.do("POST", base, cm("d", nil, nil)).mustCreated(t)
	st := e.do("DELETE", base+"/d", map[string]any{"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": map[string]any{"uid": "00000000-0000-0000-0000-000000000000"}}).mustCode(t, 409).obj(t)
	want := `Operation cannot be fulfilled on ConfigMap "d": the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record (` + path(o, "metadata.uid").(string) + `). The object might have been deleted and then recreated`
	if st["message"] != want || path(st, "details.kind") != "ConfigMap" {
		t.Errorf("uid precondition:\n got %v\nwant %s", st["message"], want)
	}
	st = e.do("DELETE", base+"/d", map[string]any{"preconditions": map[string]any{"resourceVersion": "1"}}).mustCode(t, 409).obj(t)
	if !strings.Contains(st["message"].(string), "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record") {
		t.Errorf("rv precondition: %v", st["message"])
	}
	st = e.do("DELETE", base+"/d?propagationPolicy=Sideways", nil).mustCode(t, 422).obj(t)
	if st["message"] != `DeleteOptions.`+platBrand.MetaGroup()+` "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"` {
		t.Errorf("bad policy: %v", st["message"])
	}
	e.do("DELETE", base+"/d?dryRun=All", nil).mustCode(t, 200)
	e.do("GET", base+"/d", nil).mustCode(t, 200)
	e.do("DELETE", base+"/d?gracePeriodSeconds=0&propagationPolicy=Background", map[string]any{"preconditions": map[string]any{"uid": path(o, "metadata.uid")}}).mustCode(t, 200)
	e.do("GET", base+"/d", nil).mustCode(t, 404)
}

func TestDeleteCollection(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	createCMs(t, e, "default", 4, func(i int) map[string]string {
		if i < 3 {
			return map[string]string{"batch": "dc"}
		}
		return nil
	})
	r := e.do("DELETE", base+"?labelSelector=batch%3Ddc", nil).mustCode(t, 200).obj(t)
	if r["kind"] != "ConfigMapList" || strings.Join(names(t, r), ",") != "cm-a,cm-b,cm-c" {
		t.Errorf("deletecollection: %v", r)
	}
	if got := strings.Join(names(t, e.do("GET", base, nil).mustCode(t, 200).obj(t)), ","); got != "cm-d" {
		t.Errorf("after deletecollection: %s", got)
	}
	// An object a finalizer keeps is only marked; the answer lists it as
	// it was listed, as upstream's does.
	e.do("POST", base, map[string]any{"metadata": map[string]any{"name": "held", "labels": map[string]any{"batch": "held"},
		"finalizers": []any{"example.com/hold"}}}).mustCreated(t)
	r = e.do("DELETE", base+"?labelSelector=batch%3Dheld", nil).mustCode(t, 200).obj(t)
	if items, _ := r["items"].([]any); len(items) != 1 || path(items[0].(map[string]any), "metadata.name") != "held" ||
		path(items[0].(map[string]any), "metadata.deletionTimestamp") != nil {
		t.Errorf("deletecollection of a kept object answered %v, want it as listed", r["items"])
	}
	if got := path(e.do("GET", base+"/held", nil).mustCode(t, 200).obj(t), "metadata.deletionTimestamp"); got == nil {
		t.Errorf("the kept object was not marked for deletion")
	}
	// With a limit, one page goes; its continue token deletes the next.
	other := "/api/v1/namespaces/paged/configmaps"
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "paged"}}).mustCreated(t)
	createCMs(t, e, "paged", 5, func(int) map[string]string { return nil })
	page := e.do("DELETE", other+"?limit=2", nil).mustCode(t, 200).obj(t)
	cont, _ := path(page, "metadata.continue").(string)
	if strings.Join(names(t, page), ",") != "cm-a,cm-b" || cont == "" || path(page, "metadata.remainingItemCount") != float64(3) {
		t.Fatalf("first page: %v", page)
	}
	if got := strings.Join(names(t, e.do("GET", other, nil).mustCode(t, 200).obj(t)), ","); got != "cm-c,cm-d,cm-e" {
		t.Errorf("after one page: %s", got)
	}
	rest := e.do("DELETE", other+"?continue="+cont, nil).mustCode(t, 200).obj(t)
	if strings.Join(names(t, rest), ",") != "cm-c,cm-d,cm-e" || path(rest, "metadata.continue") != nil {
		t.Errorf("the rest: %v", rest)
	}
	if got := names(t, e.do("GET", other, nil).mustCode(t, 200).obj(t)); len(got) != 0 {
		t.Errorf("left: %v", got)
	}
	st := e.do("DELETE", "/api/v1/namespaces", nil).mustCode(t, 405).obj(t)
	if st["message"] != `deletecollection is not supported on resources of kind "namespaces"` {
		t.Errorf("namespaces deletecollection: %v", st["message"])
	}
}

func TestUpdateSemantics(t *testing.T) {
	t.Parallel()
	e := start(t)
	// ConfigMaps are not created by PUT; LimitRanges are.
	st := e.do("PUT", "/api/v1/namespaces/default/configmaps/nope", cm("nope", nil, nil)).mustCode(t, 404).obj(t)
	if st["message"] != `configmaps "nope" not found` {
		t.Errorf("put missing configmap: %v", st["message"])
	}
	lr := map[string]any{"metadata": map[string]any{"name": "lr"}, "spec": map[string]any{"limits": []any{map[string]any{"type": "Container", "max": map[string]any{"cpu": "2000m", "memory": "1024Mi"}}}}}
	got := e.do("PUT", "/api/v1/namespaces/default/limitranges/lr", lr).mustCode(t, 201).obj(t)
	limits := path(got, "spec.limits").([]any)[0].(map[string]any)
	if path(limits, "max.cpu") != "2" || path(limits, "max.memory") != "1Gi" {
		t.Errorf("quantities not canonical: %v", limits)
	}
	// Name mismatch.
	e.do("POST", "/api/v1/namespaces/default/configmaps", cm("exists", nil, nil)).mustCreated(t)
	st = e.do("PUT", "/api/v1/namespaces/default/configmaps/exists", cm("other", nil, nil)).mustCode(t, 400).obj(t)
	if st["message"] != "the name of the object (other) does not match the name on the URL (exists)" {
		t.Errorf("name mismatch: %v", st["message"])
	}
	// A body without a name is refused, not given the URL's.
	e.do("PUT", "/api/v1/namespaces/default/configmaps/exists", `{"data":{"a":"b"}}`).mustCode(t, 400).
		mustMessage(t, "the name of the object (exists based on URL) was undeterminable: name must be provided")
	if got := e.do("GET", "/api/v1/namespaces/default/configmaps/exists", nil).mustCode(t, 200).obj(t); got["data"] != nil {
		t.Errorf("the nameless PUT was stored: %v", got["data"])
	}
	elsewhere := cm("exists", nil, nil)
	elsewhere["metadata"].(map[string]any)["namespace"] = "other"
	e.do("PUT", "/api/v1/namespaces/default/configmaps/exists", elsewhere).mustCode(t, 400).
		mustMessage(t, "the namespace of the object (other) does not match the namespace on the request (default)")
	// An unchanged PUT keeps the resourceVersion.
	cur := e.do("GET", "/api/v1/namespaces/default/configmaps/exists", nil).mustCode(t, 200).obj(t)
	same := e.do("PUT", "/api/v1/namespaces/default/configmaps/exists", cur).mustCode(t, 200).obj(t)
	if rvOf(same) != rvOf(cur) {
		t.Errorf("no-op update changed resourceVersion %s -> %s", rvOf(cur), rvOf(same))
	}
	// Immutable ConfigMaps.
	imm := cm("imm", map[string]string{"k": "v"}, nil)
	imm["immutable"] = true
	o := e.do("POST", "/api/v1/namespaces/default/configmaps", imm).mustCreated(t)
	o["data"] = map[string]any{"k": "changed"}
	st = e.do("PUT", "/api/v1/namespaces/default/configmaps/imm", o).mustCode(t, 422).obj(t)
	if !strings.Contains(st["message"].(string), "data: Forbidden: field is immutable when `immutable` is set") {
		t.Errorf("immutable: %v", st["message"])
	}
	// Namespace status is written only through /status.
	ns := e.do("GET", "/api/v1/namespaces/default", nil).mustCode(t, 200).obj(t)
	ns["status"] = map[string]any{"phase": "Terminating"}
	ns["spec"] = map[string]any{"finalizers": []any{}}
	after := e.do("PUT", "/api/v1/namespaces/default", ns).mustCode(t, 200).obj(t)
	if path(after, "status.phase") != "Active" || len(path(after, "spec.finalizers").([]any)) != 1 {
		t.Errorf("main-resource update changed status or finalizers: %v", after)
	}
	st2 := e.do("GET", "/api/v1/namespaces/default/status", nil).mustCode(t, 200).obj(t)
	if st2["kind"] != "Namespace" {
		t.Errorf("status get: %v", st2)
	}
}

// A label or annotation named deletionTimestamp marks nothing for
// deletion: the namespace takes new content, and a second create of a name
// is the plain conflict.
func TestDeletionTimestampNamedLabelIsNoMark(t *testing.T) {
	t.Parallel()
	e := start(t)
	marks := map[string]any{"deletionTimestamp": "x"}
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "marked", "labels": marks, "annotations": marks}}).mustCreated(t)
	c := cm("c1", nil, nil)
	c["metadata"].(map[string]any)["annotations"] = marks
	e.do("POST", "/api/v1/namespaces/marked/configmaps", c).mustCreated(t)
	e.do("POST", "/api/v1/namespaces/marked/configmaps", c).mustCode(t, 409).mustMessage(t, `configmaps "c1" already exists`)
}
