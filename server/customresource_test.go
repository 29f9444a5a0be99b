package server_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"platd/codec"
	"platd/server/protobuf"
	"platd/server/schema"
)

// crdPath is the collection of CustomResourceDefinitions.
var crdPath = groupPath(platBrand.Group("apiextensions"), "v1", "", "customresourcedefinitions")

// gadgetCRD defines example.com Gadgets: namespaced, a storage version v1
// with status and scale subresources, a printer column, a selectable
// field, defaults, a nullable member, list semantics and validation
// rules, and a served v2 that is deprecated.
func gadgetCRD(group string) map[string]any {
	schema := func() map[string]any {
		return map[string]any{"type": "object", "properties": map[string]any{
			"spec": map[string]any{"type": "object",
				"x-kubernetes-validations": []any{
					map[string]any{"rule": "self.min <= self.max", "message": "min must not exceed max"},
					map[string]any{"rule": "!has(oldSelf.name) || has(self.name) && self.name == oldSelf.name", "message": "name is immutable"},
				},
				"properties": map[string]any{
					"name":     map[string]any{"type": "string", "maxLength": 10},
					"min":      map[string]any{"type": "integer", "default": 0},
					"max":      map[string]any{"type": "integer", "default": 10},
					"color":    map[string]any{"type": "string", "enum": []any{"red", "blue"}},
					"replicas": map[string]any{"type": "integer"},
					"note":     map[string]any{"type": "string", "nullable": true},
					"tags":     map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "x-kubernetes-list-type": "set"},
					"selector": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
				}},
			"status": map[string]any{"type": "object", "properties": map[string]any{
				"replicas": map[string]any{"type": "integer"},
				"phase":    map[string]any{"type": "string"},
			}},
		}}
	}
	version := func(name string, storage bool) map[string]any {
		return map[string]any{"name": name, "served": true, "storage": storage,
			"schema": map[string]any{"openAPIV3Schema": schema()},
			"subresources": map[string]any{"status": map[string]any{},
				"scale": map[string]any{"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
			"additionalPrinterColumns": []any{map[string]any{"name": "Color", "type": "string", "jsonPath": ".spec.color"},
				map[string]any{"name": "Max", "type": "integer", "jsonPath": ".spec.max", "priority": 1}},
			"selectableFields": []any{map[string]any{"jsonPath": ".spec.color"}},
		}
	}
	v2 := version("v2", false)
	v2["deprecated"] = true
	return map[string]any{
		"metadata": map[string]any{"name": "gadgets." + group},
		"spec": map[string]any{"group": group, "scope": "Namespaced",
			"names":    map[string]any{"plural": "gadgets", "kind": "Gadget", "shortNames": []any{"gd"}, "categories": []any{"all"}},
			"versions": []any{version("v1", true), v2}},
	}
}

// startGadgets runs a server with the gadget CRD of group created.
func startGadgets(t *testing.T, group string) (*env, map[string]any) {
	t.Helper()
	e := start(t)
	crd := e.do("POST", crdPath, gadgetCRD(group)).mustCode(t, 201).obj(t)
	return e, crd
}

func condition(obj map[string]any, typ string) map[string]any {
	conds, _ := at(obj, "status", "conditions").([]any)
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == typ {
			return m
		}
	}
	return nil
}

// A CRD's create answers with the CRD established, and its resource is
// served, discovered and documented from the very next request.
func TestCRDEstablishedOnCreate(t *testing.T) {
	t.Parallel()
	e, crd := startGadgets(t, "est.example.com")
	for typ, reason := range map[string]string{"NamesAccepted": "NoConflicts", "Established": "InitialNamesAccepted"} {
		c := condition(crd, typ)
		if c == nil || c["status"] != "True" || c["reason"] != reason {
			t.Errorf("condition %s = %v, want True/%s", typ, c, reason)
		}
	}
	want := map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList",
		"shortNames": []any{"gd"}, "categories": []any{"all"}}
	if got := at(crd, "status", "acceptedNames"); !reflect.DeepEqual(got, want) {
		t.Errorf("acceptedNames = %v, want %v", got, want)
	}
	p := groupPath("est.example.com", "v1", "default", "gadgets")
	cr := e.do("POST", p, map[string]any{"apiVersion": "est.example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g1"}, "spec": map[string]any{"name": "a"}}).mustCode(t, 201).obj(t)
	if at(cr, "metadata", "generation") != 1.0 || at(cr, "spec", "max") != 10.0 {
		t.Errorf("created %v", cr)
	}

	list := e.do("GET", "/apis/est.example.com/v1", nil).mustCode(t, 200).obj(t)
	res, _ := list["resources"].([]any)
	names := map[string]bool{}
	for _, r := range res {
		names[at(r, "name").(string)] = true
		if at(r, "name") == "gadgets" {
			if at(r, "kind") != "Gadget" || at(r, "namespaced") != true || !reflect.DeepEqual(at(r, "shortNames"), []any{"gd"}) {
				t.Errorf("discovery entry %v", r)
			}
		}
	}
	for _, n := range []string{"gadgets", "gadgets/status", "gadgets/scale"} {
		if !names[n] {
			t.Errorf("discovery lacks %s: %v", n, names)
		}
	}
	groups := e.do("GET", "/apis", nil).mustCode(t, 200)
	if !strings.Contains(string(groups.body), `"name":"est.example.com"`) {
		t.Errorf("/apis lacks the group: %s", groups.body)
	}
	doc := e.do("GET", "/openapi/v3/apis/est.example.com/v1", nil).mustCode(t, 200).obj(t)
	def := at(doc, "components", "schemas", "com.example.est.v1.Gadget")
	if at(def, "properties", "spec", "properties", "name", "maxLength") != 10.0 {
		t.Errorf("OpenAPI definition %v", def)
	}
	// The deprecated version warns.
	r := e.do("GET", groupPath("est.example.com", "v2", "default", "gadgets"), nil).mustCode(t, 200)
	if w := r.header.Get("Warning"); w != `299 - "est.example.com/v2 Gadget is deprecated"` {
		t.Errorf("Warning %q", w)
	}
}

// A custom resource is decoded, pruned, defaulted and encoded from its
// schema: unknown members are dropped (or refused when strict),
// defaults fill absent members, nullable nulls stay, and members are
// written in key order.
func TestCustomResourceDecoding(t *testing.T) {
	t.Parallel()
	e, _ := startGadgets(t, "dec.example.com")
	p := groupPath("dec.example.com", "v1", "default", "gadgets")
	body := `{"apiVersion":"dec.example.com/v1","kind":"Gadget","metadata":{"name":"g1"},` +
		`"spec":{"name":"a","bogus":1,"note":null,"max":null,"tags":["x"],"selector":{"k":"v"}},"extra":true}`
	e.do("POST", p+"?fieldValidation=Strict", body).mustCode(t, 400).
		mustMessage(t, `Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field "spec.bogus", unknown field "extra"`)
	r := e.do("POST", p, body).mustCode(t, 201)
	if w := r.header.Values("Warning"); len(w) != 2 || !strings.Contains(w[1], `unknown field \"extra\"`) {
		t.Errorf("warnings %q", w)
	}
	got := r.obj(t)
	wantSpec := map[string]any{"name": "a", "note": nil, "min": 0.0, "max": 10.0, "tags": []any{"x"}, "selector": map[string]any{"k": "v"}}
	if !reflect.DeepEqual(got["spec"], wantSpec) || got["extra"] != nil {
		t.Errorf("stored %v, want spec %v", got, wantSpec)
	}
	raw := string(e.do("GET", p+"/g1", nil).mustCode(t, 200).body)
	if i := strings.Index(raw, `"spec":`); i < 0 || !strings.HasPrefix(raw[i:], `"spec":{"max":10,"min":0,"name":"a","note":null,"selector":{"k":"v"},"tags":["x"]}`) {
		t.Errorf("encoded %s", raw)
	}
	// Protobuf is not a custom resource's encoding.
	e.do("GET", p+"/g1", nil, "Accept", platBrand.ProtobufMediaType).mustCode(t, 406).
		mustMessage(t, "only the following media types are accepted: application/json, application/yaml")
	if r := e.do("GET", p+"/g1", nil, "Accept", platBrand.ProtobufMediaType+", application/json"); r.code != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Errorf("protobuf or JSON: %d %s", r.code, r.header.Get("Content-Type"))
	}
	e.do("POST", p, []byte{0x6b, 0x38, 0x73, 0}, "Content-Type", platBrand.ProtobufMediaType).mustCode(t, 415).
		mustMessage(t, "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml")

	// Its metadata is served in protobuf, as the metadata clients ask.
	cat, err := schema.Load(platBrand)
	if err != nil {
		t.Fatal(err)
	}
	metaSchema := cat.ByGVK("", "v1", "ConfigMap").Field("metadata").Schema
	full := e.do("GET", p+"/g1", nil).mustCode(t, 200).obj(t)
	checkMeta := func(what string, raw []byte) {
		t.Helper()
		num, _, n := protowire.ConsumeTag(raw)
		inner, _ := protowire.ConsumeBytes(raw[n:])
		md, err := protobuf.Unmarshal(inner, metaSchema)
		if mf, _ := md["managedFields"].([]any); num != 1 || err != nil || md["name"] != "g1" || md["uid"] != at(full, "metadata", "uid") || len(mf) != 1 {
			t.Errorf("%s: field %d: %v %v", what, num, md, err)
		}
	}
	one := e.do("GET", p+"/g1", nil, "Accept", metaAccept(platBrand, platBrand.ProtobufMediaType, "PartialObjectMetadata", "v1")).mustCode(t, 200)
	if _, kind, raw, err := codec.UnwrapProtobuf(one.body); err != nil || kind != "PartialObjectMetadata" {
		t.Errorf("metadata envelope %q %v", kind, err)
	} else {
		checkMeta("PartialObjectMetadata", raw)
	}
	list := e.do("GET", p, nil, "Accept", metaAccept(platBrand, platBrand.ProtobufMediaType, "PartialObjectMetadataList", "v1")+", application/json").mustCode(t, 200)
	_, kind, rest, err := codec.UnwrapProtobuf(list.body)
	if err != nil || kind != "PartialObjectMetadataList" {
		t.Fatalf("metadata list envelope %q %v", kind, err)
	}
	items := 0
	for len(rest) > 0 {
		f, _, n := protowire.ConsumeTag(rest)
		val, m := protowire.ConsumeBytes(rest[n:])
		if f == 2 {
			items++
			checkMeta("PartialObjectMetadataList item", val)
		}
		rest = rest[n+m:]
	}
	if items != 1 {
		t.Errorf("metadata list has %d items", items)
	}
}

// Schema validation and validation rules refuse bad custom resources with
// upstream's texts, and store nothing.
func TestCustomResourceRefusals(t *testing.T) {
	t.Parallel()
	e, _ := startGadgets(t, "val.example.com")
	p := groupPath("val.example.com", "v1", "default", "gadgets")
	gadget := func(spec map[string]any) map[string]any {
		return map[string]any{"apiVersion": "val.example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g1"}, "spec": spec}
	}
	e.do("POST", p, gadget(map[string]any{"name": "toolongname!", "min": 5, "max": 1})).mustCode(t, 422).
		mustMessage(t, `Gadget.val.example.com "g1" is invalid: [spec.name: Too long: may not be more than 10 bytes, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`)
	e.do("POST", p, gadget(map[string]any{"name": "ok", "min": 5, "max": 1})).mustCode(t, 422).
		mustMessage(t, `Gadget.val.example.com "g1" is invalid: spec: Invalid value: "object": min must not exceed max`)
	e.do("POST", p, gadget(map[string]any{"color": "green", "min": "x"})).mustCode(t, 422).
		mustMessage(t, `Gadget.val.example.com "g1" is invalid: [spec.color: Unsupported value: "green": supported values: "red", "blue", spec.min: Invalid value: "string": spec.min in body must be of type integer: "string", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`)
	e.do("POST", p, gadget(map[string]any{"tags": []any{"a", "a"}})).mustCode(t, 422).
		mustMessage(t, `Gadget.val.example.com "g1" is invalid: spec.tags[1]: Duplicate value: "a"`)
	e.do("GET", p+"/g1", nil).mustCode(t, 404)

	// A transition rule sees the old object on update.
	cur := e.do("POST", p, gadget(map[string]any{"name": "a"})).mustCode(t, 201).obj(t)
	cur["spec"].(map[string]any)["name"] = "b"
	e.do("PUT", p+"/g1", cur).mustCode(t, 422).
		mustMessage(t, `Gadget.val.example.com "g1" is invalid: spec: Invalid value: "object": name is immutable`)
}

// With a status subresource, the main resource does not write status and
// the status subresource writes nothing else; the generation counts spec
// changes only. The scale subresource reads and writes the replica paths.
func TestCustomResourceSubresources(t *testing.T) {
	t.Parallel()
	e, _ := startGadgets(t, "sub.example.com")
	p := groupPath("sub.example.com", "v1", "default", "gadgets")
	obj := e.do("POST", p, map[string]any{"apiVersion": "sub.example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g1"},
		"spec": map[string]any{"replicas": 1}, "status": map[string]any{"phase": "made up"}}).mustCode(t, 201).obj(t)
	if obj["status"] != nil {
		t.Errorf("create kept status %v", obj["status"])
	}
	obj["status"] = map[string]any{"phase": "Running", "replicas": 1}
	obj["spec"].(map[string]any)["color"] = "red"
	st := e.do("PUT", p+"/g1/status", obj).mustCode(t, 200).obj(t)
	if at(st, "status", "phase") != "Running" || at(st, "spec", "color") != nil || at(st, "metadata", "generation") != 1.0 {
		t.Errorf("status write stored %v", st)
	}
	st["status"] = map[string]any{"phase": "ignored"}
	st["spec"].(map[string]any)["color"] = "blue"
	main := e.do("PUT", p+"/g1", st).mustCode(t, 200).obj(t)
	if at(main, "status", "phase") != "Running" || at(main, "spec", "color") != "blue" || at(main, "metadata", "generation") != 2.0 {
		t.Errorf("main write stored %v", main)
	}
	main["metadata"].(map[string]any)["labels"] = map[string]any{"a": "b"}
	if g := at(e.do("PUT", p+"/g1", main).mustCode(t, 200).obj(t), "metadata", "generation"); g != 2.0 {
		t.Errorf("a metadata change moved the generation to %v", g)
	}

	scale := e.do("GET", p+"/g1/scale", nil).mustCode(t, 200).obj(t)
	if scale["kind"] != "Scale" || at(scale, "spec", "replicas") != 1.0 || at(scale, "status", "replicas") != 1.0 {
		t.Errorf("scale %v", scale)
	}
	e.do("PATCH", p+"/g1/scale", `{"spec":{"replicas":4}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	if r := at(e.do("GET", p+"/g1", nil).mustCode(t, 200).obj(t), "spec", "replicas"); r != 4.0 {
		t.Errorf("replicas after scale %v", r)
	}
	// The Scale prints with the replica columns the version's paths name.
	tab := e.do("GET", p+"/g1/scale", nil, "Accept", "application/json;as=Table;v=v1;g="+platBrand.MetaGroup()).mustCode(t, 200).obj(t)
	var cols []any
	for _, c := range tab["columnDefinitions"].([]any) {
		cols = append(cols, c.(map[string]any)["name"])
	}
	if rows, _ := tab["rows"].([]any); !reflect.DeepEqual(cols, []any{"Name", "Desired", "Available", "Age"}) || len(rows) != 1 ||
		!reflect.DeepEqual(at(rows[0].(map[string]any), "cells").([]any)[:3], []any{"g1", 4.0, 1.0}) {
		t.Errorf("scale table %v", tab)
	}
}

// Custom resources take JSON and merge patches but not strategic ones;
// they print their printer columns; they are listed by their selectable
// fields; and every served version reads the same objects.
func TestCustomResourcePatchTableSelectVersions(t *testing.T) {
	t.Parallel()
	e, _ := startGadgets(t, "pts.example.com")
	p := groupPath("pts.example.com", "v1", "default", "gadgets")
	for _, name := range []string{"r", "b"} {
		color := map[string]string{"r": "red", "b": "blue"}[name]
		e.do("POST", p, map[string]any{"apiVersion": "pts.example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"color": color}}).mustCode(t, 201)
	}
	e.do("PATCH", p+"/r", `{"spec":{"max":20}}`, "Content-Type", "application/strategic-merge-patch+json").mustCode(t, 415).
		mustMessage(t, "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
	got := e.do("PATCH", p+"/r", `[{"op":"replace","path":"/spec/max","value":20}]`, "Content-Type", "application/json-patch+json").mustCode(t, 200).obj(t)
	if at(got, "spec", "max") != 20.0 {
		t.Errorf("patched %v", got)
	}

	tab := e.do("GET", p, nil, "Accept", "application/json;as=Table;v=v1;g="+platBrand.MetaGroup()).mustCode(t, 200).obj(t)
	var cols []string
	for _, c := range tab["columnDefinitions"].([]any) {
		cols = append(cols, at(c, "name").(string)+"/"+at(c, "type").(string))
	}
	if !reflect.DeepEqual(cols, []string{"Name/string", "Color/string", "Max/integer"}) {
		t.Errorf("columns %v", cols)
	}
	if cells := at(tab, "rows", 1, "cells"); !reflect.DeepEqual(cells, []any{"r", "red", 20.0}) {
		t.Errorf("row %v", cells)
	}

	sel := e.do("GET", p+"?fieldSelector=spec.color%3Dblue", nil).mustCode(t, 200).obj(t)
	if items := sel["items"].([]any); len(items) != 1 || at(items[0], "metadata", "name") != "b" {
		t.Errorf("selected %v", items)
	}
	e.do("GET", p+"?fieldSelector=spec.max%3D1", nil).mustCode(t, 400).mustMessage(t, "field label not supported: spec.max")

	// List items carry their kind and apiVersion, as upstream's
	// unstructured custom resources do, in every version and rendering.
	for _, q := range []string{p, p + "?pretty=true", p + "?limit=1", groupPath("pts.example.com", "v2", "default", "gadgets")} {
		gv := "pts.example.com/v1"
		if strings.Contains(q, "/v2/") {
			gv = "pts.example.com/v2"
		}
		l := e.do("GET", q, nil).mustCode(t, 200).obj(t)
		for i, item := range l["items"].([]any) {
			if at(item, "kind") != "Gadget" || at(item, "apiVersion") != gv || at(item, "metadata", "name") == nil {
				t.Errorf("GET %s: item %d = %v", q, i, item)
			}
		}
	}

	v2 := e.do("GET", groupPath("pts.example.com", "v2", "default", "gadgets")+"/b", nil).mustCode(t, 200).obj(t)
	if v2["apiVersion"] != "pts.example.com/v2" || at(v2, "spec", "color") != "blue" {
		t.Errorf("v2 read %v", v2)
	}
}

// A CRD whose names clash with another's is stored but not served; a
// deleted CRD takes its custom resources with it, waiting for their
// finalizers, and its resource is no longer served.
func TestCRDConflictAndDeletion(t *testing.T) {
	t.Parallel()
	e, _ := startGadgets(t, "del.example.com")
	clash := gadgetCRD("del.example.com")
	clash["metadata"] = map[string]any{"name": "widgets.del.example.com"}
	clash["spec"].(map[string]any)["names"] = map[string]any{"plural": "widgets", "singular": "widget", "kind": "Gadget"}
	crd := e.do("POST", crdPath, clash).mustCode(t, 201).obj(t)
	// Its kind and (defaulted) list kind both clash; upstream checks the
	// list kind last and reports it.
	if c := condition(crd, "NamesAccepted"); c == nil || c["status"] != "False" || c["reason"] != "ListKindConflict" || c["message"] != `"GadgetList" is already in use` {
		t.Errorf("NamesAccepted %v", c)
	}
	if c := condition(crd, "Established"); c == nil || c["status"] != "False" || c["reason"] != "NotAccepted" {
		t.Errorf("Established %v", c)
	}
	e.do("GET", groupPath("del.example.com", "v1", "default", "widgets"), nil).mustCode(t, 404)

	p := groupPath("del.example.com", "v1", "default", "gadgets")
	e.do("POST", p, map[string]any{"apiVersion": "del.example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "held", "finalizers": []any{"example.com/hold"}}}).mustCode(t, 201)
	e.do("POST", p, map[string]any{"apiVersion": "del.example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "free"}}).mustCode(t, 201)

	before := e.watch(p + "?watch=1")
	defer before.stop()
	del := e.do("DELETE", crdPath+"/gadgets.del.example.com", nil).mustCode(t, 200).obj(t)
	if fins := at(del, "metadata", "finalizers"); !reflect.DeepEqual(fins, []any{"customresourcecleanup." + platBrand.Group("apiextensions")}) {
		t.Errorf("finalizers %v", fins)
	}
	if c := condition(del, "Terminating"); c == nil || c["reason"] != "InstanceDeletionPending" ||
		c["message"] != "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon" {
		t.Errorf("Terminating %v", c)
	}
	// From the delete's answer on, no new custom resource is taken.
	refused := e.do("POST", p, map[string]any{"apiVersion": "del.example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "late"}}).
		mustCode(t, 405).mustMessage(t, "create not allowed while custom resource definition is terminating").obj(t)
	if d := at(refused, "details"); !reflect.DeepEqual(d, map[string]any{"group": "del.example.com", "kind": "gadgets"}) || refused["reason"] != "MethodNotAllowed" {
		t.Errorf("refused create: %v", refused)
	}
	// Both discovery forms list only the verbs a terminating CRD's
	// resources take, as upstream.
	terminatingVerbs := []any{"delete", "deletecollection", "get", "list", "watch"}
	if v := legacyResource(t, e, "/apis/del.example.com/v1", "gadgets")["verbs"]; !reflect.DeepEqual(v, terminatingVerbs) {
		t.Errorf("legacy discovery verbs %v, want %v", v, terminatingVerbs)
	}
	if v := aggregatedResource(t, e, "del.example.com", "v1", "gadgets")["verbs"]; !reflect.DeepEqual(v, terminatingVerbs) {
		t.Errorf("aggregated discovery verbs %v, want %v", v, terminatingVerbs)
	}
	eventually(t, "the free gadget deleted", func() bool { return e.do("GET", p+"/free", nil).code == 404 })
	// A watch carries on while the CRD terminates, seeing its objects go,
	// and ends once the CRD is gone.
	for ev := before.next(); ev.Type != "DELETED" || at(ev.Object, "metadata", "name") != "free"; ev = before.next() {
	}
	eventually(t, "the held gadget marked for deletion", func() bool {
		return at(e.do("GET", p+"/held", nil).mustCode(t, 200).obj(t), "metadata", "deletionTimestamp") != nil
	})
	eventually(t, "the CRD terminating while instances remain", func() bool {
		crd = e.do("GET", crdPath+"/gadgets.del.example.com", nil).mustCode(t, 200).obj(t)
		c := condition(crd, "Terminating")
		return c != nil && c["reason"] == "InstanceDeletionInProgress"
	})
	e.do("PATCH", p+"/held", `{"metadata":{"finalizers":null}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	eventually(t, "the CRD gone", func() bool { return e.do("GET", crdPath+"/gadgets.del.example.com", nil).code == 404 })
	eventually(t, "the resource unserved", func() bool { return e.do("GET", p, nil).code == 404 })
	before.waitClosed()
	if body := string(e.do("GET", "/apis/del.example.com/v1", nil).body); strings.Contains(body, `"gadgets"`) {
		t.Errorf("discovery still lists gadgets: %s", body)
	}
}

// A CRD's names may not be any name another resource of its group uses
// in any role: a plural that is another's short name, a kind that is
// another's list kind. The last clash upstream checks is reported.
func TestCRDNamesClashAcrossRoles(t *testing.T) {
	t.Parallel()
	e := start(t)
	const group = "names.example.com"
	first := gadgetCRD(group)
	first["spec"].(map[string]any)["names"] = map[string]any{"plural": "gadgets", "kind": "Gadget", "shortNames": []any{"bars"}, "listKind": "ThingList"}
	e.do("POST", crdPath, first).mustCode(t, 201)
	second := gadgetCRD(group)
	second["metadata"] = map[string]any{"name": "bars." + group}
	second["spec"].(map[string]any)["names"] = map[string]any{"plural": "bars", "kind": "ThingList"}
	crd := e.do("POST", crdPath, second).mustCode(t, 201).obj(t)
	if c := condition(crd, "NamesAccepted"); c == nil || c["status"] != "False" || c["reason"] != "KindConflict" || c["message"] != `"ThingList" is already in use` {
		t.Errorf("NamesAccepted %v", c)
	}
	if c := condition(crd, "Established"); c == nil || c["status"] != "False" {
		t.Errorf("Established %v", c)
	}
	e.do("GET", groupPath(group, "v1", "default", "bars"), nil).mustCode(t, 404)
	third := gadgetCRD(group)
	third["metadata"] = map[string]any{"name": "things." + group}
	third["spec"].(map[string]any)["names"] = map[string]any{"plural": "things", "singular": "gadget", "kind": "Widget", "shortNames": []any{"gadgets", "bars"}}
	crd = e.do("POST", crdPath, third).mustCode(t, 201).obj(t)
	if c := condition(crd, "NamesAccepted"); c == nil || c["reason"] != "ShortNamesConflict" || c["message"] != `["gadgets" is already in use, "bars" is already in use]` {
		t.Errorf("NamesAccepted %v", c)
	}
}

// Deleting a CRD that serves no version deletes its stored objects all
// the same: recreated, it lists none of them.
func TestCRDDeletionServingNothing(t *testing.T) {
	t.Parallel()
	e, _ := startGadgets(t, "unserved.example.com")
	p := groupPath("unserved.example.com", "v1", "default", "gadgets")
	e.do("POST", p, map[string]any{"apiVersion": "unserved.example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "kept"}}).mustCode(t, 201)
	crd := e.do("GET", crdPath+"/gadgets.unserved.example.com", nil).mustCode(t, 200).obj(t)
	for _, v := range at(crd, "spec", "versions").([]any) {
		v.(map[string]any)["served"] = false
	}
	e.do("PUT", crdPath+"/gadgets.unserved.example.com", crd).mustCode(t, 200)
	eventually(t, "the resource unserved", func() bool { return e.do("GET", p, nil).code == 404 })
	e.do("DELETE", crdPath+"/gadgets.unserved.example.com", nil).mustCode(t, 200)
	eventually(t, "the CRD gone", func() bool { return e.do("GET", crdPath+"/gadgets.unserved.example.com", nil).code == 404 })

	e.do("POST", crdPath, gadgetCRD("unserved.example.com")).mustCode(t, 201)
	if got := names(t, e.do("GET", p, nil).mustCode(t, 200).obj(t)); len(got) != 0 {
		t.Errorf("the recreated CRD lists %v", got)
	}
}

// CRDs are served again after a restart before the server reports ready.
func TestCRDServedAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir))
	e.do("POST", crdPath, gadgetCRD("rst.example.com")).mustCode(t, 201)
	p := groupPath("rst.example.com", "v1", "default", "gadgets")
	e.do("POST", p, map[string]any{"apiVersion": "rst.example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g"},
		"spec": map[string]any{}}).mustCode(t, 201)
	e.stop()
	e2 := startWith(t, testOptions(t, dir))
	got := e2.do("GET", p+"/g", nil).mustCode(t, 200).obj(t)
	var spec map[string]any
	_ = json.Unmarshal([]byte(`{"max":10,"min":0}`), &spec)
	if !reflect.DeepEqual(got["spec"], spec) {
		t.Errorf("after restart %v", got)
	}
}

// The garbage collector follows owner references to custom resources, and
// deleting a namespace deletes the custom resources in it.
func TestCustomResourceGCAndNamespaces(t *testing.T) {
	t.Parallel()
	e, _ := startGadgets(t, "gc.example.com")
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "crns"}}).mustCode(t, 201)
	p := groupPath("gc.example.com", "v1", "crns", "gadgets")
	owner := e.do("POST", p, map[string]any{"apiVersion": "gc.example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "owner"}}).mustCode(t, 201).obj(t)
	dep := cm("dep", nil, nil)
	dep["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"apiVersion": "gc.example.com/v1", "kind": "Gadget",
		"name": "owner", "uid": at(owner, "metadata", "uid")}}
	e.do("POST", "/api/v1/namespaces/crns/configmaps", dep).mustCode(t, 201)
	e.do("DELETE", p+"/owner", nil).mustCode(t, 200)
	eventually(t, "the dependent collected", func() bool { return e.do("GET", "/api/v1/namespaces/crns/configmaps/dep", nil).code == 404 })

	e.do("POST", p, map[string]any{"apiVersion": "gc.example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "inside", "finalizers": []any{"example.com/hold"}}}).mustCode(t, 201)
	e.do("DELETE", "/api/v1/namespaces/crns", nil).mustCode(t, 200)
	eventually(t, "the gadget marked for deletion", func() bool {
		return at(e.do("GET", p+"/inside", nil).obj(t), "metadata", "deletionTimestamp") != nil
	})
	ns := e.do("GET", "/api/v1/namespaces/crns", nil).mustCode(t, 200).obj(t)
	if at(ns, "status", "phase") != "Terminating" {
		t.Errorf("namespace %v", ns["status"])
	}
	e.do("PATCH", p+"/inside", `{"metadata":{"finalizers":null}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	eventually(t, "the namespace gone", func() bool { return e.do("GET", "/api/v1/namespaces/crns", nil).code == 404 })
}

// Server-side apply merges custom resources by their schema's list
// semantics and records ownership per set item and map key.
func TestCustomResourceApply(t *testing.T) {
	t.Parallel()
	e, _ := startGadgets(t, "ssa.example.com")
	p := groupPath("ssa.example.com", "v1", "default", "gadgets")
	apply := func(manager, body string) *resp {
		return e.do("PATCH", p+"/g?fieldManager="+manager, body, "Content-Type", "application/apply-patch+yaml")
	}
	apply("a", `{"apiVersion":"ssa.example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"tags":["x","y"],"selector":{"k1":"v1"}}}`).mustCode(t, 201)
	got := apply("b", `{"apiVersion":"ssa.example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"tags":["z"],"selector":{"k2":"v2"}}}`).mustCode(t, 200).obj(t)
	if tags := at(got, "spec", "tags"); !reflect.DeepEqual(tags, []any{"x", "y", "z"}) {
		t.Errorf("tags %v", tags)
	}
	if sel := at(got, "spec", "selector"); !reflect.DeepEqual(sel, map[string]any{"k1": "v1", "k2": "v2"}) {
		t.Errorf("selector %v", sel)
	}
	mf, _ := at(got, "metadata", "managedFields").([]any)
	if len(mf) != 2 || at(mf[1], "manager") != "b" ||
		!reflect.DeepEqual(at(mf[1], "fieldsV1", "f:spec", "f:tags"), map[string]any{`v:"z"`: map[string]any{}}) {
		t.Errorf("managedFields %v", mf)
	}
	// A different value for a field another manager owns conflicts.
	r := apply("b", `{"apiVersion":"ssa.example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"selector":{"k1":"other"}}}`).mustCode(t, 409)
	if msg, _ := r.obj(t)["message"].(string); !strings.Contains(msg, `conflict with "a": .spec.selector.k1`) {
		t.Errorf("conflict message %q", msg)
	}
}

// pairCRD is a CRD of group with a storage version v1 and a served v2,
// both declaring spec.x and spec.y; v1 defaults y to 7 when y7 is set.
func pairCRD(group string, y7 bool, withX bool) map[string]any {
	version := func(name string, storage, withDefault bool) map[string]any {
		props := map[string]any{"y": map[string]any{"type": "integer"}}
		if withDefault {
			props["y"].(map[string]any)["default"] = 7
		}
		if withX {
			props["x"] = map[string]any{"type": "string"}
		}
		return map[string]any{"name": name, "served": true, "storage": storage, "schema": map[string]any{"openAPIV3Schema": map[string]any{
			"type": "object", "properties": map[string]any{"spec": map[string]any{"type": "object", "properties": props}}}}}
	}
	return map[string]any{
		"metadata": map[string]any{"name": "pairs." + group},
		"spec": map[string]any{"group": group, "scope": "Namespaced", "names": map[string]any{"plural": "pairs", "kind": "Pair"},
			"versions": []any{version("v1", true, y7), version("v2", false, false)}},
	}
}

// Objects read from storage are defaulted by the storage version's schema
// (upstream defaults them before converting), whichever version wrote
// them, and pruned of what the schema no longer declares once the CRD
// changes.
func TestCustomResourceStorageDefaultsAndPruning(t *testing.T) {
	t.Parallel()
	e := start(t)
	const group = "pairs.example.com"
	e.do("POST", crdPath, pairCRD(group, true, true)).mustCode(t, 201)
	v1, v2 := groupPath(group, "v1", "default", "pairs"), groupPath(group, "v2", "default", "pairs")
	created := e.do("POST", v2, map[string]any{"apiVersion": group + "/v2", "kind": "Pair", "metadata": map[string]any{"name": "a"},
		"spec": map[string]any{"x": "keep"}}).mustCode(t, 201).obj(t)
	if at(created, "spec", "y") != float64(7) {
		t.Errorf("created through v2: spec %v, want the storage version's default y=7", at(created, "spec"))
	}
	if got := e.do("GET", v1+"/a", nil).mustCode(t, 200).obj(t); at(got, "spec", "y") != float64(7) || at(got, "spec", "x") != "keep" {
		t.Errorf("read through v1: spec %v", at(got, "spec"))
	}

	// The CRD narrows: spec.x is no longer declared. Objects stored before
	// are served without it.
	crd := e.do("GET", crdPath+"/pairs."+group, nil).mustCode(t, 200).obj(t)
	crd["spec"] = pairCRD(group, true, false)["spec"]
	e.do("PUT", crdPath+"/pairs."+group, crd).mustCode(t, 200)
	eventually(t, "the narrowed schema served", func() bool {
		got := e.do("GET", v1+"/a", nil).mustCode(t, 200).obj(t)
		return at(got, "spec", "x") == nil && at(got, "spec", "y") == float64(7)
	})
	list := e.do("GET", v2, nil).mustCode(t, 200).obj(t)
	if items := list["items"].([]any); len(items) != 1 || at(items[0], "spec", "x") != nil {
		t.Errorf("list after narrowing: %v", items)
	}
}

// Nulls meet defaults as upstream's defaulting treats them: a nullable
// member's null stays null, and a null map value or list item takes its
// additionalProperties or items default.
func TestCustomResourceNullDefaults(t *testing.T) {
	t.Parallel()
	e := start(t)
	const group = "nulls.example.com"
	spec := map[string]any{"type": "object", "properties": map[string]any{
		"n": map[string]any{"type": "string", "nullable": true, "default": "d"},
		"m": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string", "default": "v"}},
		"l": map[string]any{"type": "array", "items": map[string]any{"type": "string", "default": "i"}},
	}}
	e.do("POST", crdPath, map[string]any{
		"metadata": map[string]any{"name": "nulls." + group},
		"spec": map[string]any{"group": group, "scope": "Namespaced", "names": map[string]any{"plural": "nulls", "kind": "Null"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object", "properties": map[string]any{"spec": spec}}}}}},
	}).mustCode(t, 201)
	p := groupPath(group, "v1", "default", "nulls")
	got := e.do("POST", p, `{"apiVersion":"`+group+`/v1","kind":"Null","metadata":{"name":"a"},"spec":{"n":null,"m":{"k":null,"j":"set"},"l":["x",null]}}`).mustCode(t, 201).obj(t)
	want := map[string]any{"n": nil, "m": map[string]any{"k": "v", "j": "set"}, "l": []any{"x", "i"}}
	if s := at(got, "spec"); !reflect.DeepEqual(s, want) {
		t.Errorf("spec %v, want %v", s, want)
	}
	if s := at(e.do("GET", p+"/a", nil).mustCode(t, 200).obj(t), "spec"); !reflect.DeepEqual(s, want) {
		t.Errorf("read back: spec %v, want %v", s, want)
	}
	absent := e.do("POST", p, `{"apiVersion":"`+group+`/v1","kind":"Null","metadata":{"name":"b"},"spec":{}}`).mustCode(t, 201).obj(t)
	if s := at(absent, "spec"); !reflect.DeepEqual(s, map[string]any{"n": "d"}) {
		t.Errorf("absent members: spec %v", s)
	}
}
