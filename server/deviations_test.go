package server_test

import (
	"strings"
	"testing"

	"platd/codec"
	"platd/config"
	"platd/server/protobuf"
	"platd/server/schema"
)

// TestDeleteOptionsInProtobuf checks that DELETE and deletecollection
// read a DeleteOptions body in protobuf, as controller-runtime sends it.
func TestDeleteOptionsInProtobuf(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"))
	b, _ := config.LookupBrand("kubernetes")
	cat, err := schema.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	opts := func(m map[string]any) []byte {
		raw, err := protobuf.Marshal(nil, m, cat.ByGVK("", "v1", "DeleteOptions"))
		if err != nil {
			t.Fatal(err)
		}
		return codec.WrapProtobuf(nil, "v1", "DeleteOptions", raw)
	}
	pb := "Content-Type"
	for _, n := range []string{"a", "b", "c"} {
		e.do("POST", "/api/v1/namespaces/default/configmaps", cm(n, nil, map[string]string{"set": "x"})).mustCode(t, 201)
	}
	// A precondition the body carries is applied: a wrong uid is refused.
	r := e.do("DELETE", "/api/v1/namespaces/default/configmaps/a",
		opts(map[string]any{"preconditions": map[string]any{"uid": "not-the-uid"}}), pb, b.ProtobufMediaType).mustCode(t, 409)
	if !strings.Contains(string(r.body), "the UID in the precondition (not-the-uid)") {
		t.Errorf("precondition failure: %s", r.body)
	}
	e.do("DELETE", "/api/v1/namespaces/default/configmaps/a", opts(map[string]any{"gracePeriodSeconds": int64(0)}), pb, b.ProtobufMediaType).mustCode(t, 200)
	e.do("GET", "/api/v1/namespaces/default/configmaps/a", nil).mustCode(t, 404)
	// A dry run in the body deletes nothing.
	e.do("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=set%3Dx",
		opts(map[string]any{"dryRun": []any{"All"}}), pb, b.ProtobufMediaType).mustCode(t, 200)
	if got := names(t, e.do("GET", "/api/v1/namespaces/default/configmaps?labelSelector=set%3Dx", nil).mustCode(t, 200).obj(t)); len(got) != 2 {
		t.Errorf("dry-run deletecollection removed objects: left %v", got)
	}
	e.do("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=set%3Dx",
		opts(map[string]any{"propagationPolicy": "Background"}), pb, b.ProtobufMediaType).mustCode(t, 200)
	if got := names(t, e.do("GET", "/api/v1/namespaces/default/configmaps?labelSelector=set%3Dx", nil).mustCode(t, 200).obj(t)); len(got) != 0 {
		t.Errorf("deletecollection left %v", got)
	}
	// A body that is not protobuf under the protobuf type is a 400.
	e.do("DELETE", "/api/v1/namespaces/default/configmaps/b", []byte("{}"), pb, b.ProtobufMediaType).mustCode(t, 400)
}

// TestDuplicateMembersMerge checks that an object member given twice
// merges as upstream's decoder merges it.
func TestDuplicateMembersMerge(t *testing.T) {
	t.Parallel()
	e := start(t)
	r := e.do("POST", "/api/v1/namespaces/default/configmaps",
		`{"metadata":{"name":"dup","labels":{"a":"1"}},"data":{"a":"1"},"data":{"b":"2"},"metadata":{"labels":{"b":"2"}}}`).mustCode(t, 201)
	if w := r.header.Values("Warning"); len(w) != 2 || !strings.Contains(w[0], `duplicate field \"data\"`) {
		t.Errorf("warnings %q", w)
	}
	got := e.do("GET", "/api/v1/namespaces/default/configmaps/dup", nil).mustCode(t, 200).obj(t)
	if path(got, "data.a") != "1" || path(got, "data.b") != "2" || path(got, "metadata.labels.a") != "1" || path(got, "metadata.labels.b") != "2" {
		t.Errorf("merged object: %v %v", got["metadata"], got["data"])
	}
}

// TestNotAcceptableOnCollections checks the router-stage 406: collection
// routes also offer the watch media types, object routes do not.
func TestNotAcceptableOnCollections(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	e.do("POST", "/api/v1/namespaces/default/configmaps", cm("one", nil, nil)).mustCode(t, 201)
	list := e.do("GET", "/api/v1/namespaces/default/configmaps", nil, "Accept", "text/foo").mustCode(t, 406).obj(t)
	want := "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, " + b.ProtobufMediaType +
		", application/json;stream=watch, " + b.ProtobufMediaType + ";stream=watch"
	if list["message"] != want {
		t.Errorf("collection 406 message %q, want %q", list["message"], want)
	}
	one := e.do("GET", "/api/v1/namespaces/default/configmaps/one", nil, "Accept", "text/foo").mustCode(t, 406).obj(t)
	if one["message"] != "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, "+b.ProtobufMediaType {
		t.Errorf("object 406 message %q", one["message"])
	}
}
