package server_test

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// hostsWebhook is a conversion webhook between v1 of hosts
// ({spec.hostPort: "h:p"}) and v2 ({spec.host, spec.port}). It records
// the reviews it gets; its mode makes it answer wrongly.
type hostsWebhook struct {
	srv *httptest.Server

	mu      sync.Mutex
	reviews []map[string]any
	mode    string
}

// Modes of hostsWebhook.
const (
	hostsConvert     = ""
	hostsWrongUID    = "uid"
	hostsExtra       = "extra"
	hostsRename      = "rename"
	hostsWrongAPI    = "apiVersion"
	hostsMetadata    = "metadata"
	hostsFail        = "fail"
	hostsServerError = "500"
)

func newHostsWebhook(t *testing.T) *hostsWebhook {
	h := &hostsWebhook{}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

// clientConfig points at the webhook by url, trusting its certificate.
func (h *hostsWebhook) clientConfig() map[string]any {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
	return map[string]any{"url": h.srv.URL + "/convert", "caBundle": base64.StdEncoding.EncodeToString(ca)}
}

func (h *hostsWebhook) setMode(m string) {
	h.mu.Lock()
	h.mode = m
	h.mu.Unlock()
}

// take returns the reviews received since the last call.
func (h *hostsWebhook) take() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.reviews
	h.reviews = nil
	return out
}

func (h *hostsWebhook) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var review map[string]any
	if err := json.Unmarshal(body, &review); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var recorded map[string]any
	_ = json.Unmarshal(body, &recorded)
	recorded["timeout"] = r.URL.Query().Get("timeout")
	recorded["contentType"] = r.Header.Get("Content-Type")
	h.mu.Lock()
	h.reviews = append(h.reviews, recorded)
	mode := h.mode
	h.mu.Unlock()
	if mode == hostsServerError {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	req, _ := review["request"].(map[string]any)
	desired, _ := req["desiredAPIVersion"].(string)
	var converted []any
	for _, o := range req["objects"].([]any) {
		obj := o.(map[string]any)
		spec, _ := obj["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
		}
		if strings.HasSuffix(desired, "/v2") {
			host, port, _ := strings.Cut(spec["hostPort"].(string), ":")
			obj["spec"] = map[string]any{"host": host, "port": port}
		} else {
			obj["spec"] = map[string]any{"hostPort": spec["host"].(string) + ":" + spec["port"].(string)}
		}
		obj["apiVersion"] = desired
		md := obj["metadata"].(map[string]any)
		switch mode {
		case hostsRename:
			md["name"] = "other"
		case hostsWrongAPI:
			obj["apiVersion"] = strings.TrimSuffix(desired, desired[len(desired)-2:]) + "v9"
		case hostsMetadata:
			labels, _ := md["labels"].(map[string]any)
			if labels == nil {
				labels = map[string]any{}
			}
			labels["converted"] = "yes"
			md["labels"] = labels
			md["generation"] = 99
			md["finalizers"] = []any{"example.com/kept"}
		}
		converted = append(converted, obj)
	}
	if mode == hostsExtra {
		converted = append(converted, converted[0])
	}
	resp := map[string]any{"uid": req["uid"], "convertedObjects": converted, "result": map[string]any{"status": "Success"}}
	switch mode {
	case hostsWrongUID:
		resp["uid"] = "wrong"
	case hostsFail:
		resp["result"] = map[string]any{"status": "Failure", "message": "cannot convert this"}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "ConversionReview", "apiVersion": review["apiVersion"], "response": resp})
}

// hostsCRD is a CRD of hosts in group with versions v1 and v2, storage
// the one named, converted by the webhook cc names.
func hostsCRD(group, storage string, cc map[string]any, reviewVersions ...any) map[string]any {
	str := map[string]any{"type": "string"}
	version := func(name string, spec map[string]any, columns []any) map[string]any {
		return map[string]any{"name": name, "served": true, "storage": name == storage,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
				"spec": map[string]any{"type": "object", "properties": spec}}}},
			"subresources":             map[string]any{"status": map[string]any{}},
			"additionalPrinterColumns": columns}
	}
	return map[string]any{
		"metadata": map[string]any{"name": "hosts." + group},
		"spec": map[string]any{"group": group, "scope": "Namespaced", "names": map[string]any{"plural": "hosts", "kind": "Host"},
			"conversion": map[string]any{"strategy": "Webhook",
				"webhook": map[string]any{"clientConfig": cc, "conversionReviewVersions": reviewVersions}},
			"versions": []any{
				version("v1", map[string]any{"hostPort": str}, []any{map[string]any{"name": "Address", "type": "string", "jsonPath": ".spec.hostPort"}}),
				version("v2", map[string]any{"host": str, "port": str}, []any{map[string]any{"name": "Host", "type": "string", "jsonPath": ".spec.host"}}),
			}},
	}
}

// Custom resources of a CRD with conversion strategy Webhook are served in
// every version: objects are stored in the storage version, and converted
// by the webhook between it and the version a request addresses.
func TestCustomResourceWebhookConversion(t *testing.T) {
	t.Parallel()
	e := start(t)
	hook := newHostsWebhook(t)
	const group = "hosts.example.com"
	e.do("POST", crdPath, hostsCRD(group, "v2", hook.clientConfig(), "v1", "v1beta1")).mustCode(t, 201)
	v1, v2 := groupPath(group, "v1", "default", "hosts"), groupPath(group, "v2", "default", "hosts")
	host := func(name, hostPort string) map[string]any {
		return map[string]any{"apiVersion": group + "/v1", "kind": "Host", "metadata": map[string]any{"name": name}, "spec": map[string]any{"hostPort": hostPort}}
	}

	// Created through v1: stored in v2 and answered in v1.
	created := e.do("POST", v1, host("a", "example.org:80")).mustCode(t, 201).obj(t)
	if created["apiVersion"] != group+"/v1" || at(created, "spec", "hostPort") != "example.org:80" {
		t.Errorf("created: %v", created)
	}
	reviews := hook.take()
	if len(reviews) != 2 {
		t.Fatalf("a create through v1 made %d reviews, want 2 (to v2, and back)", len(reviews))
	}
	rv := reviews[0]
	req, _ := rv["request"].(map[string]any)
	if rv["kind"] != "ConversionReview" || rv["apiVersion"] != platBrand.Group("apiextensions")+"/v1" ||
		req["desiredAPIVersion"] != group+"/v2" || req["uid"] == "" || rv["timeout"] != "30s" || rv["contentType"] != "application/json" {
		t.Errorf("review: %v", rv)
	}
	if objs, _ := req["objects"].([]any); len(objs) != 1 || at(objs[0], "apiVersion") != group+"/v1" || at(objs[0], "kind") != "Host" ||
		at(objs[0], "spec", "hostPort") != "example.org:80" {
		t.Errorf("review objects: %v", req["objects"])
	}
	got := e.do("GET", v2+"/a", nil).mustCode(t, 200).obj(t)
	if got["apiVersion"] != group+"/v2" || at(got, "spec", "host") != "example.org" || at(got, "spec", "port") != "80" || at(got, "spec", "hostPort") != nil {
		t.Errorf("read through v2: %v", got)
	}
	if n := len(hook.take()); n != 0 {
		t.Errorf("a read in the storage version made %d reviews", n)
	}
	got = e.do("GET", v1+"/a", nil).mustCode(t, 200).obj(t)
	if got["apiVersion"] != group+"/v1" || at(got, "spec", "hostPort") != "example.org:80" || at(got, "spec", "host") != nil {
		t.Errorf("read through v1: %v", got)
	}

	// A list through v1 converts all its items in one review.
	for _, name := range []string{"b", "c"} {
		e.do("POST", v2, map[string]any{"apiVersion": group + "/v2", "kind": "Host", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"host": name + ".example.org", "port": "443"}}).mustCode(t, 201)
	}
	hook.take()
	list := e.do("GET", v1, nil).mustCode(t, 200).obj(t)
	items, _ := list["items"].([]any)
	if len(items) != 3 || at(items[1], "apiVersion") != group+"/v1" || at(items[1], "spec", "hostPort") != "b.example.org:443" {
		t.Errorf("list through v1: %v", items)
	}
	if reviews := hook.take(); len(reviews) != 1 || len(at(reviews[0], "request", "objects").([]any)) != 3 {
		t.Errorf("a list of 3 made reviews %v, want one of 3 objects", reviews)
	}

	// Tables print the columns of the version addressed.
	tab := e.do("GET", v1, nil, "Accept", "application/json;as=Table;v=v1;g="+platBrand.MetaGroup()).mustCode(t, 200).obj(t)
	if at(tab, "columnDefinitions", 1, "name") != "Address" || at(tab, "rows", 2, "cells", 1) != "c.example.org:443" {
		t.Errorf("table through v1: %v", tab)
	}

	// Watches through v1 see v1 objects.
	w := e.watch(v1 + "?watch=true")
	for _, name := range []string{"a", "b", "c"} {
		ev := w.expect("ADDED", name)
		if ev.Object["apiVersion"] != group+"/v1" || at(ev.Object, "spec", "hostPort") == nil {
			t.Errorf("watch event: %v", ev.Object)
		}
	}

	// Patch and apply through v1 write the converted object.
	e.do("PATCH", v1+"/a", `{"spec":{"hostPort":"example.org:81"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	if got := e.do("GET", v2+"/a", nil).mustCode(t, 200).obj(t); at(got, "spec", "port") != "81" {
		t.Errorf("after a merge patch through v1: %v", got)
	}
	if ev := w.expect("MODIFIED", "a"); at(ev.Object, "spec", "hostPort") != "example.org:81" {
		t.Errorf("watch event of the patch: %v", ev.Object)
	}
	applied := e.do("PATCH", v1+"/d?fieldManager=tester", "apiVersion: "+group+"/v1\nkind: Host\nmetadata:\n  name: d\nspec:\n  hostPort: d.example.org:8080\n",
		"Content-Type", "application/apply-patch+yaml").mustCode(t, 201).obj(t)
	if at(applied, "spec", "hostPort") != "d.example.org:8080" || at(applied, "metadata", "managedFields", 0, "apiVersion") != group+"/v1" {
		t.Errorf("applied through v1: %v", applied)
	}
	if got := e.do("GET", v2+"/d", nil).mustCode(t, 200).obj(t); at(got, "spec", "host") != "d.example.org" || at(got, "spec", "port") != "8080" {
		t.Errorf("applied object read through v2: %v", got)
	}
	w.expect("ADDED", "d")

	// Labels the webhook sets are kept; the other metadata it changes is not.
	hook.setMode(hostsMetadata)
	got = e.do("GET", v1+"/a", nil).mustCode(t, 200).obj(t)
	if at(got, "metadata", "labels", "converted") != "yes" || at(got, "metadata", "generation") == float64(99) || at(got, "metadata", "finalizers") != nil {
		t.Errorf("metadata after conversion: %v", got["metadata"])
	}

	// A failed conversion is a 500 without reason, for reads and writes.
	tests := []struct {
		mode, method, path string
		body               any
		want               string
	}{
		{hostsWrongUID, "GET", v1 + "/a", nil, `conversion webhook for ` + group + `/v2, Kind=Host failed: expected response.uid="`},
		{hostsExtra, "GET", v1 + "/a", nil, `conversion webhook for ` + group + `/v2, Kind=Host returned 2 objects, expected 1`},
		{hostsRename, "GET", v1 + "/a", nil, `conversion webhook for ` + group + `/v2, Kind=Host returned invalid object: must have the same name: a != other`},
		{hostsWrongAPI, "GET", v1 + "/a", nil, `conversion webhook for ` + group + `/v2, Kind=Host returned invalid object at index 0: invalid groupVersion (expected ` + group + `/v1, received ` + group + `/v9)`},
		{hostsWrongAPI, "GET", v1, nil, `conversion webhook for ` + group + `/v2, Kind=HostList returned invalid converted object at index 1: invalid groupVersion (expected ` + group + `/v1, received ` + group + `/v9)`},
		{hostsFail, "POST", v1, host("e", "e:1"), `conversion webhook for ` + group + `/v1, Kind=Host failed: cannot convert this`},
		{hostsServerError, "GET", v1 + "/a", nil, `conversion webhook for ` + group + `/v2, Kind=Host failed: the server responded with the status code 500 but did not return more information`},
	}
	for _, tt := range tests {
		hook.setMode(tt.mode)
		r := e.do(tt.method, tt.path, tt.body).mustCode(t, 500).obj(t)
		if msg, _ := r["message"].(string); !strings.HasPrefix(msg, tt.want) || r["reason"] != nil {
			t.Errorf("%s %s %s: %v, want message %q and no reason", tt.mode, tt.method, tt.path, r, tt.want)
		}
	}
	if r := e.do("GET", v1+"/e", nil); r.code != 404 {
		t.Errorf("an object whose conversion failed was stored: %d %s", r.code, r.body)
	}
	// Metadata is served as converted, so it fails with the conversion.
	meta := e.do("GET", v1, nil, "Accept", "application/json;as=PartialObjectMetadataList;v=v1;g="+platBrand.MetaGroup()).mustCode(t, 500).obj(t)
	if msg, _ := meta["message"].(string); !strings.HasPrefix(msg, `conversion webhook for `+group+`/v2, Kind=HostList failed: `) {
		t.Errorf("metadata list with the webhook failing: %v", meta)
	}
	hook.setMode(hostsConvert)
	if got := e.do("GET", v1+"/a/status", nil).mustCode(t, 200).obj(t); got["apiVersion"] != group+"/v1" || at(got, "spec", "hostPort") != "example.org:81" {
		t.Errorf("status through v1: %v", got)
	}

	// A watch whose event cannot be converted ends with the failure.
	hook.setMode(hostsWrongUID)
	e.do("POST", v2, map[string]any{"apiVersion": group + "/v2", "kind": "Host", "metadata": map[string]any{"name": "f"},
		"spec": map[string]any{"host": "f", "port": "1"}}).mustCode(t, 201)
	ev := w.next()
	if ev.Type != "ERROR" || ev.Object["code"] != float64(500) || !strings.Contains(ev.Object["message"].(string), "expected response.uid=") {
		t.Errorf("watch event of an unconvertible object: %v", ev)
	}
	w.waitClosed()
	hook.setMode(hostsConvert)
}

// A CRD's changes reach its conversion: the ConversionReview version is
// the first of conversionReviewVersions the server knows (v1beta1 answers
// are not checked for their uid), a changed clientConfig is called from
// the next conversion on, and objects keep the version they were written
// in when the storage version changes.
func TestCustomResourceWebhookConversionChanges(t *testing.T) {
	t.Parallel()
	e := start(t)
	hook := newHostsWebhook(t)
	const group = "hostchanges.example.com"
	name := "hosts." + group
	e.do("POST", crdPath, hostsCRD(group, "v2", hook.clientConfig(), "v1beta1", "v1")).mustCode(t, 201)
	v1, v2 := groupPath(group, "v1", "default", "hosts"), groupPath(group, "v2", "default", "hosts")
	setSpec := func(crd map[string]any) {
		t.Helper()
		cur := e.do("GET", crdPath+"/"+name, nil).mustCode(t, 200).obj(t)
		cur["spec"] = crd["spec"]
		e.do("PUT", crdPath+"/"+name, cur).mustCode(t, 200)
	}

	hook.setMode(hostsWrongUID)
	e.do("POST", v2, map[string]any{"apiVersion": group + "/v2", "kind": "Host", "metadata": map[string]any{"name": "old"},
		"spec": map[string]any{"host": "old.example.org", "port": "80"}}).mustCode(t, 201)
	if got := e.do("GET", v1+"/old", nil).mustCode(t, 200).obj(t); at(got, "spec", "hostPort") != "old.example.org:80" {
		t.Errorf("read through v1 with a v1beta1 review: %v", got)
	}
	if reviews := hook.take(); len(reviews) != 1 || reviews[0]["apiVersion"] != platBrand.Group("apiextensions")+"/v1beta1" {
		t.Errorf("reviews %v, want one v1beta1 review", reviews)
	}
	hook.setMode(hostsConvert)

	// The webhook moves: until the CRD says so, conversions fail.
	moved := newHostsWebhook(t)
	hook.srv.Close()
	r := e.do("GET", v1+"/old", nil).mustCode(t, 500).obj(t)
	want := "conversion webhook for " + group + `/v2, Kind=Host failed: Post "` + hook.srv.URL + `/convert?timeout=30s": `
	if msg, _ := r["message"].(string); !strings.HasPrefix(msg, want) || r["reason"] != nil {
		t.Errorf("webhook down: %v, want message %q... and no reason", r, want)
	}
	setSpec(hostsCRD(group, "v2", moved.clientConfig(), "v1"))
	eventually(t, "the moved webhook called", func() bool {
		return e.do("GET", v1+"/old", nil).code == 200
	})
	if len(moved.take()) == 0 {
		t.Error("the moved webhook was not called")
	}

	// The storage version becomes v1: objects written before are still
	// v2 in storage, converted from it, and new ones are stored as v1.
	setSpec(hostsCRD(group, "v1", moved.clientConfig(), "v1"))
	eventually(t, "v1 stored", func() bool {
		e.do("POST", v2, map[string]any{"apiVersion": group + "/v2", "kind": "Host", "metadata": map[string]any{"generateName": "probe-"},
			"spec": map[string]any{"host": "probe", "port": "1"}}).mustCode(t, 201)
		reviews := moved.take()
		return len(reviews) > 0 && at(reviews[0], "request", "desiredAPIVersion") == group+"/v1"
	})
	e.do("POST", v2, map[string]any{"apiVersion": group + "/v2", "kind": "Host", "metadata": map[string]any{"name": "new"},
		"spec": map[string]any{"host": "new.example.org", "port": "8080"}}).mustCode(t, 201)
	moved.take()
	if got := e.do("GET", v1+"/new", nil).mustCode(t, 200).obj(t); at(got, "spec", "hostPort") != "new.example.org:8080" {
		t.Errorf("new object through v1: %v", got)
	}
	if reviews := moved.take(); len(reviews) != 0 {
		t.Errorf("reading an object stored in v1 through v1 made reviews: %v", reviews)
	}
	if got := e.do("GET", v2+"/old", nil).mustCode(t, 200).obj(t); at(got, "spec", "host") != "old.example.org" || at(got, "spec", "port") != "80" {
		t.Errorf("old object through v2: %v", got)
	}
	if reviews := moved.take(); len(reviews) != 0 {
		t.Errorf("reading an object stored in v2 through v2 made reviews: %v", reviews)
	}
	if got := e.do("GET", v1+"/old", nil).mustCode(t, 200).obj(t); at(got, "spec", "hostPort") != "old.example.org:80" {
		t.Errorf("old object through v1: %v", got)
	}
	if reviews := moved.take(); len(reviews) != 1 || at(reviews[0], "request", "objects", 0, "apiVersion") != group+"/v2" {
		t.Errorf("reading an object stored in v2 through v1: reviews %v, want one from v2", reviews)
	}
	crd := e.do("GET", crdPath+"/"+name, nil).mustCode(t, 200).obj(t)
	if sv, _ := at(crd, "status", "storedVersions").([]any); len(sv) != 2 {
		t.Errorf("storedVersions %v", at(crd, "status", "storedVersions"))
	}
	// A namespace's deletion deletes its objects of every version.
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "hostsns"}}).mustCode(t, 201)
	e.do("POST", groupPath(group, "v2", "hostsns", "hosts"), map[string]any{"apiVersion": group + "/v2", "kind": "Host",
		"metadata": map[string]any{"name": "gone"}, "spec": map[string]any{"host": "gone", "port": "1"}}).mustCode(t, 201)
	e.do("DELETE", "/api/v1/namespaces/hostsns", nil).mustCode(t, 200)
	eventually(t, "the namespace and its hosts deleted", func() bool {
		return e.do("GET", "/api/v1/namespaces/hostsns", nil).code == 404
	})
	if r := e.do("GET", groupPath(group, "v1", "hostsns", "hosts")+"/gone", nil); r.code != 404 {
		t.Errorf("a host of the deleted namespace: %d %s", r.code, r.body)
	}

	// Rewritten, an old object is stored in v1.
	e.do("PATCH", v2+"/old", `{"spec":{"port":"81"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	moved.take()
	if got := e.do("GET", v1+"/old", nil).mustCode(t, 200).obj(t); at(got, "spec", "hostPort") != "old.example.org:81" {
		t.Errorf("rewritten old object through v1: %v", got)
	}
	if reviews := moved.take(); len(reviews) != 0 {
		t.Errorf("reading a rewritten object through v1 made reviews: %v", reviews)
	}
}
