package server_test

import (
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"platd/codec"
	"platd/config"
	"platd/server/protobuf"
	"platd/server/schema"
)

// metaAccept asks for a conversion target of the meta group.
func metaAccept(b config.Brand, media, as, version string) string {
	return media + ";as=" + as + ";g=" + b.MetaGroup() + ";v=" + version
}

// TestPartialObjectMetadata checks the metadata-only forms of get, list
// and watch in JSON and protobuf, and their refusals.
func TestPartialObjectMetadata(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	cat, err := schema.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	metaSchema := cat.ByGVK("", "v1", "ConfigMap").Field("metadata").Schema
	for _, n := range []string{"m1", "m2"} {
		e.do("POST", "/api/v1/namespaces/default/configmaps", cm(n, map[string]string{"k": "v"}, map[string]string{"app": "x"})).mustCode(t, 201)
	}
	full := e.do("GET", "/api/v1/namespaces/default/configmaps/m1", nil).mustCode(t, 200).obj(t)
	// The metadata forms carry ownership with the rest of the metadata.
	if mf, _ := path(full, "metadata.managedFields").([]any); len(mf) != 1 {
		t.Fatalf("created object's managedFields: %v", path(full, "metadata.managedFields"))
	}

	for _, v := range []string{"v1", "v1beta1"} {
		got := e.do("GET", "/api/v1/namespaces/default/configmaps/m1", nil, "Accept", metaAccept(b, "application/json", "PartialObjectMetadata", v)).mustCode(t, 200)
		if ct := got.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("content type %q", ct)
		}
		o := got.obj(t)
		if o["kind"] != "PartialObjectMetadata" || o["apiVersion"] != b.MetaGroup()+"/"+v || !reflect.DeepEqual(o["metadata"], full["metadata"]) || o["data"] != nil {
			t.Errorf("%s PartialObjectMetadata: %v", v, o)
		}
	}

	// Protobuf: the envelope names the kind; its one field is ObjectMeta.
	pb := e.do("GET", "/api/v1/namespaces/default/configmaps/m1", nil, "Accept", metaAccept(b, b.ProtobufMediaType, "PartialObjectMetadata", "v1")).mustCode(t, 200)
	apiVersion, kind, raw, err := codec.UnwrapProtobuf(pb.body)
	if err != nil || kind != "PartialObjectMetadata" || apiVersion != b.MetaGroup()+"/v1" {
		t.Fatalf("envelope %q %q %v", apiVersion, kind, err)
	}
	num, _, n := protowire.ConsumeTag(raw)
	metaRaw, _ := protowire.ConsumeBytes(raw[n:])
	md, err := protobuf.Unmarshal(metaRaw, metaSchema)
	if num != 1 || err != nil || md["name"] != "m1" || md["uid"] != path(full, "metadata.uid") {
		t.Errorf("protobuf metadata field %d: %v %v", num, md, err)
	}

	// Lists.
	l := e.do("GET", "/api/v1/namespaces/default/configmaps", nil, "Accept", metaAccept(b, "application/json", "PartialObjectMetadataList", "v1")).mustCode(t, 200).obj(t)
	items, _ := l["items"].([]any)
	if l["kind"] != "PartialObjectMetadataList" || len(items) != 2 || path(items[0].(map[string]any), "kind") != "PartialObjectMetadata" || path(l, "metadata.resourceVersion") == nil {
		t.Errorf("metadata list: %v", l)
	}
	for _, v := range []string{"v1", "v1beta1"} {
		pl := e.do("GET", "/api/v1/namespaces/default/configmaps", nil, "Accept", metaAccept(b, b.ProtobufMediaType, "PartialObjectMetadataList", v)).mustCode(t, 200)
		_, kind, raw, err := codec.UnwrapProtobuf(pl.body)
		if err != nil || kind != "PartialObjectMetadataList" {
			t.Fatalf("list envelope %q %v", kind, err)
		}
		// v1 lists metadata as field 1 and items as 2; v1beta1 the other way.
		itemField := protowire.Number(2)
		if v == "v1beta1" {
			itemField = 1
		}
		count := 0
		for len(raw) > 0 {
			f, _, n := protowire.ConsumeTag(raw)
			val, m := protowire.ConsumeBytes(raw[n:])
			if f == itemField {
				count++
				_, _, k := protowire.ConsumeTag(val)
				inner, _ := protowire.ConsumeBytes(val[k:])
				if md, err := protobuf.Unmarshal(inner, metaSchema); err != nil || !strings.HasPrefix(md["name"].(string), "m") {
					t.Errorf("%s item: %v %v", v, md, err)
				}
			}
			raw = raw[n+m:]
		}
		if count != 2 {
			t.Errorf("%s list has %d items", v, count)
		}
	}

	// Wrong shapes and unknown targets.
	r := e.do("GET", "/api/v1/namespaces/default/configmaps", nil, "Accept", metaAccept(b, "application/json", "PartialObjectMetadata", "v1")).mustCode(t, 406).obj(t)
	if r["message"] != "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)" {
		t.Errorf("list as object: %v", r["message"])
	}
	r = e.do("GET", "/api/v1/namespaces/default/configmaps/m1", nil, "Accept", metaAccept(b, "application/json", "PartialObjectMetadataList", "v1")).mustCode(t, 406).obj(t)
	if r["message"] != "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)" {
		t.Errorf("object as list: %v", r["message"])
	}
	r = e.do("GET", "/api/v1/namespaces/default/configmaps/m1", nil, "Accept", metaAccept(b, "application/json", "Widget", "v1")).mustCode(t, 406).obj(t)
	if r["message"] != "only the following media types are accepted: application/json, application/yaml, "+b.ProtobufMediaType {
		t.Errorf("unknown target: %v", r["message"])
	}

	// Watch events carry metadata only.
	w := e.watch("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0", "Accept", metaAccept(b, "application/json", "PartialObjectMetadata", "v1"))
	for range 2 {
		ev := w.next()
		if ev.Type != "ADDED" || ev.Object["kind"] != "PartialObjectMetadata" || ev.Object["data"] != nil {
			t.Errorf("watch event %v", ev)
		}
	}
}

// TestDefaultTable checks the Table of a resource without a printer, the
// includeObject forms and the Table refusals.
func TestDefaultTable(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	tableAccept := metaAccept(b, "application/json", "Table", "v1")
	path0 := "/api/v1/namespaces/default/limitranges"
	lr := `{"metadata":{"name":"lr"},"spec":{"limits":[{"type":"Container","max":{"cpu":"1"}}]}}`
	// An empty list of a printer-less resource has null rows.
	empty := e.do("GET", path0, nil, "Accept", tableAccept).mustCode(t, 200).obj(t)
	if _, ok := empty["rows"]; !ok || empty["rows"] != nil {
		t.Errorf("empty table rows %v", empty["rows"])
	}
	created := e.do("POST", path0, lr).mustCode(t, 201).obj(t)
	tab := e.do("GET", path0, nil, "Accept", tableAccept).mustCode(t, 200).obj(t)
	cols, _ := tab["columnDefinitions"].([]any)
	if tab["kind"] != "Table" || tab["apiVersion"] != b.MetaGroup()+"/v1" || len(cols) != 2 ||
		path(cols[0].(map[string]any), "name") != "Name" || path(cols[0].(map[string]any), "format") != "name" ||
		path(cols[1].(map[string]any), "name") != "Created At" || path(cols[1].(map[string]any), "type") != "date" {
		t.Fatalf("table %v", tab)
	}
	rows, _ := tab["rows"].([]any)
	row, _ := rows[0].(map[string]any)
	cells, _ := row["cells"].([]any)
	if len(rows) != 1 || cells[0] != "lr" || cells[1] != path(created, "metadata.creationTimestamp") {
		t.Errorf("rows %v", rows)
	}
	if o, _ := row["object"].(map[string]any); o["kind"] != "PartialObjectMetadata" || path(o, "metadata.uid") != path(created, "metadata.uid") ||
		!reflect.DeepEqual(path(o, "metadata.managedFields"), path(created, "metadata.managedFields")) || path(created, "metadata.managedFields") == nil {
		t.Errorf("row object %v", row["object"])
	}
	if path(tab, "metadata.resourceVersion") == nil {
		t.Error("table without resourceVersion")
	}
	none := e.do("GET", path0+"?includeObject=None", nil, "Accept", tableAccept).mustCode(t, 200).obj(t)
	if r := none["rows"].([]any)[0].(map[string]any); r["object"] != nil {
		t.Errorf("includeObject=None row %v", r)
	}
	obj := e.do("GET", path0+"?includeObject=Object", nil, "Accept", tableAccept).mustCode(t, 200).obj(t)
	if r := obj["rows"].([]any)[0].(map[string]any); path(r["object"].(map[string]any), "kind") != "LimitRange" || path(r["object"].(map[string]any), "spec") == nil ||
		!reflect.DeepEqual(path(r["object"].(map[string]any), "metadata.managedFields"), path(created, "metadata.managedFields")) {
		t.Errorf("includeObject=Object row %v", r)
	}
	bad := e.do("GET", path0+"?includeObject=All", nil, "Accept", tableAccept).mustCode(t, 400).obj(t)
	if bad["message"] != `Unable to convert to Table as requested: includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty` {
		t.Errorf("bad includeObject: %v", bad["message"])
	}
	// One object as a Table is one row.
	single := e.do("GET", path0+"/lr", nil, "Accept", tableAccept).mustCode(t, 200).obj(t)
	if rows, _ := single["rows"].([]any); len(rows) != 1 || path(single, "metadata.resourceVersion") != path(created, "metadata.resourceVersion") {
		t.Errorf("single-object table %v", single)
	}
	// Tables exist in JSON and YAML only, as upstream.
	e.do("GET", path0, nil, "Accept", metaAccept(b, b.ProtobufMediaType, "Table", "v1")).mustCode(t, 406)
	yaml := e.do("GET", path0, nil, "Accept", metaAccept(b, "application/yaml", "Table", "v1")).mustCode(t, 200)
	if !strings.Contains(string(yaml.body), "kind: Table") {
		t.Errorf("yaml table %s", yaml.body)
	}
	// Watches send column definitions in the first event only.
	w := e.watch(path0+"?watch=1&resourceVersion=0", "Accept", tableAccept)
	first := w.next()
	if first.Object["kind"] != "Table" || first.Object["columnDefinitions"] == nil {
		t.Errorf("first table event %v", first.Object)
	}
	e.do("POST", path0, `{"metadata":{"name":"lr2"},"spec":{"limits":[{"type":"Container","max":{"cpu":"2"}}]}}`).mustCode(t, 201)
	second := w.next()
	if cd, ok := second.Object["columnDefinitions"]; !ok || cd != nil || path(second.Object["rows"].([]any)[0].(map[string]any), "cells") == nil {
		t.Errorf("second table event %v", second.Object)
	}
}
