package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"

	"platd/codec"
	"platd/config"
)

const (
	mediaCBOR    = "application/cbor"
	mediaCBORSeq = "application/cbor-seq"
)

// withCBOR turns the CBORServingAndStorage gate on.
func withCBOR(o *config.Options) {
	o.FeatureGatesFlag = append(o.FeatureGatesFlag, config.CBORServingAndStorage+"=true")
}

// cborBody encodes v as a client would: text strings, enclosed in the
// self-described tag.
func cborBody(t *testing.T, v any) []byte {
	t.Helper()
	b, err := cbor.Marshal(cbor.Tag{Number: 55799, Content: v})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sortedCBOR encodes v with map keys in a fixed order (shorter first).
func sortedCBOR(t *testing.T, v any) []byte {
	t.Helper()
	em, _ := cbor.EncOptions{Sort: cbor.SortBytewiseLexical}.EncMode()
	b, err := em.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cborObj checks that r is a CBOR body and decodes it as JSON would be.
func (r *resp) cborObj(t *testing.T) map[string]any {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != mediaCBOR {
		t.Fatalf("Content-Type %q, want %s; body %q", ct, mediaCBOR, r.body)
	}
	if !bytes.HasPrefix(r.body, []byte{0xd9, 0xd9, 0xf7}) {
		t.Fatalf("body does not start with the self-described CBOR tag: % x", r.body[:min(len(r.body), 8)])
	}
	j, err := codec.CBORToJSON(r.body)
	if err != nil {
		t.Fatalf("decoding CBOR: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// cborMessage is the message of a CBOR Status.
func (r *resp) cborMessage(t *testing.T) string {
	t.Helper()
	m := r.cborObj(t)
	if m["kind"] != "Status" {
		t.Fatalf("not a Status: %v", m)
	}
	s, _ := m["message"].(string)
	return s
}

// With the gate off (the default), CBOR is refused as upstream refuses it,
// byte for byte (golden encoding/cbor-406-gate-off, cbor-request-body-415-
// gate-off).
func TestCBORGateOff(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"))
	p := "/api/v1/namespaces/default/configmaps"
	e.do("POST", p, `{"metadata":{"name":"enc1"}}`).mustCode(t, 201)
	r := e.do("GET", p+"/enc1", nil, "Accept", mediaCBOR).mustCode(t, 406)
	kube, _ := config.LookupBrand("kubernetes")
	pbs := func(s string) string { return strings.ReplaceAll(s, "{pb}", kube.ProtobufMediaType) }
	want406 := pbs(`{
  "kind": "Status",
  "apiVersion": "v1",
  "metadata": {},
  "status": "Failure",
  "message": "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, {pb}",
  "reason": "NotAcceptable",
  "details": {},
  "code": 406
}`)
	if string(r.body) != want406 || r.header.Get("Content-Type") != "application/json" {
		t.Errorf("406 body:\n%s\nwant\n%s", r.body, want406)
	}
	r = e.do("POST", p, []byte{0xa0}, "Content-Type", mediaCBOR, "User-Agent", "curl/7.88.1").mustCode(t, 415)
	want415 := pbs(`{
  "kind": "Status",
  "apiVersion": "v1",
  "metadata": {},
  "status": "Failure",
  "message": "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, {pb}",
  "reason": "UnsupportedMediaType",
  "code": 415
}`)
	if string(r.body) != want415 {
		t.Errorf("415 body:\n%s\nwant\n%s", r.body, want415)
	}
	// A CBOR apply is an unknown patch type.
	e.do("PATCH", p+"/enc1?fieldManager=m", []byte{0xa0}, "Content-Type", codec.ApplyCBORMediaType).mustCode(t, 415).
		mustMessage(t, "415: Unsupported Media Type")
	// Watches do not offer a CBOR sequence (the 406 of a watch is YAML).
	r = e.do("GET", p+"?watch=1", nil, "Accept", mediaCBORSeq).mustCode(t, 406)
	if want := pbs("Available representations: application/json, application/yaml, {pb}, application/json;stream=watch, {pb};stream=watch"); !strings.HasSuffix(yamlMessage(t, r), want) {
		t.Errorf("watch 406 %s", r.body)
	}
}

// TestCBOR covers CBOR with the gate on: bodies in and out for every shape
// of response, the encoding rules, errors, apply, patches and refusals.
func TestCBOR(t *testing.T) {
	t.Parallel()
	e := start(t, withCBOR)
	cms := "/api/v1/namespaces/default/configmaps"

	t.Run("create and read back", func(t *testing.T) {
		body := cborBody(t, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c1", "labels": map[string]any{"app": "x"}},
			"data":     map[string]any{"k": "v", "u": "ünï"}})
		created := e.do("POST", cms, body, "Content-Type", mediaCBOR, "Accept", mediaCBOR).mustCode(t, 201).cborObj(t)
		asJSON := e.do("GET", cms+"/c1", nil).mustCode(t, 200).obj(t)
		if !reflect.DeepEqual(created, asJSON) {
			t.Errorf("created (CBOR) %v\nread (JSON) %v", created, asJSON)
		}
		got := e.do("GET", cms+"/c1", nil, "Accept", mediaCBOR).mustCode(t, 200).cborObj(t)
		if !reflect.DeepEqual(got, asJSON) {
			t.Errorf("CBOR get %v\nJSON get %v", got, asJSON)
		}
		// An update in CBOR, without the self-described tag (it is optional).
		asJSON["data"] = map[string]any{"k": "w"}
		raw, _ := cbor.Marshal(asJSON)
		upd := e.do("PUT", cms+"/c1", raw, "Content-Type", mediaCBOR, "Accept", mediaCBOR).mustCode(t, 200).cborObj(t)
		if !reflect.DeepEqual(upd["data"], map[string]any{"k": "w"}) {
			t.Errorf("updated data %v", upd["data"])
		}
	})

	t.Run("encoding rules", func(t *testing.T) {
		// Integers stay integers, strings are byte strings (keys too),
		// keys sort by their encoded bytes, and the item is tagged.
		e.do("POST", "/apis/apps/v1/namespaces/default/deployments", `{"metadata":{"name":"d1"},"spec":{"replicas":3,`+
			`"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`).mustCode(t, 201)
		r := e.do("GET", "/apis/apps/v1/namespaces/default/deployments/d1", nil, "Accept", mediaCBOR).mustCode(t, 200)
		var item map[any]any
		dm, _ := cbor.DecOptions{DefaultByteStringType: reflect.TypeOf([]byte(nil))}.DecMode()
		if err := dm.Unmarshal(r.body, &item); err != nil {
			t.Fatal(err)
		}
		spec, _ := item[string("spec")].(map[any]any)
		if item["kind"] != nil || spec != nil {
			t.Errorf("keys are text strings: %v", item)
		}
		diag, _ := cbor.Diagnose(r.body)
		if !strings.HasPrefix(diag, "55799({h'6b696e64': h'4465706c6f796d656e74', h'73706563': {") || !strings.Contains(diag, "h'7265706c69636173': 3,") {
			t.Errorf("diagnostic %s", diag)
		}
		// A subresource answering with another kind.
		sc := e.do("GET", "/apis/apps/v1/namespaces/default/deployments/d1/scale", nil, "Accept", mediaCBOR).mustCode(t, 200).cborObj(t)
		if sc["kind"] != "Scale" || path(sc, "spec.replicas") != 3.0 {
			t.Errorf("scale %v", sc)
		}
		sc = e.do("PUT", "/apis/apps/v1/namespaces/default/deployments/d1/scale", cborBody(t, map[string]any{"kind": "Scale", "apiVersion": "autoscaling/v1",
			"metadata": map[string]any{"name": "d1", "namespace": "default"}, "spec": map[string]any{"replicas": 5}}), "Content-Type", mediaCBOR, "Accept", mediaCBOR).mustCode(t, 200).cborObj(t)
		if path(sc, "spec.replicas") != 5.0 {
			t.Errorf("scaled %v", sc)
		}
		r = e.do("GET", "/apis/apps/v1/namespaces/default/deployments/d1", nil, "Accept", mediaCBOR).mustCode(t, 200)
		// Deterministic: the same object encodes to the same bytes.
		again := e.do("GET", "/apis/apps/v1/namespaces/default/deployments/d1", nil, "Accept", mediaCBOR).mustCode(t, 200)
		if !bytes.Equal(r.body, again.body) {
			t.Error("two reads of one object differ")
		}
	})

	t.Run("openapi", func(t *testing.T) {
		doc := e.do("GET", "/openapi/v2", nil).mustCode(t, 200).obj(t)
		op := func(p, method, key string) string {
			l, _ := path(doc, "paths").(map[string]any)[p].(map[string]any)[method].(map[string]any)[key].([]any)
			var s []string
			for _, v := range l {
				s = append(s, v.(string))
			}
			return strings.Join(s, ", ")
		}
		one, coll := "/api/v1/namespaces/{namespace}/configmaps/{name}", "/api/v1/namespaces/{namespace}/configmaps"
		for _, c := range []struct{ got, want string }{
			{op(one, "get", "produces"), "application/json, application/yaml, " + platBrand.ProtobufMediaType + ", application/cbor"},
			{op(coll, "get", "produces"), "application/json, application/yaml, " + platBrand.ProtobufMediaType + ", application/cbor, " +
				"application/json;stream=watch, " + platBrand.ProtobufMediaType + ";stream=watch, application/cbor-seq"},
			{op(one, "patch", "consumes"), "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, " +
				"application/apply-patch+yaml, application/apply-patch+cbor"},
		} {
			if c.got != c.want {
				t.Errorf("got  %s\nwant %s", c.got, c.want)
			}
		}
	})

	t.Run("bytes", func(t *testing.T) {
		// A client sends []byte as raw bytes in tag 22; the server
		// answers the same way, where JSON has base64.
		body := cborBody(t, map[string]any{"metadata": map[string]any{"name": "s1"},
			"data": map[string]any{"k": cbor.Tag{Number: 22, Content: []byte("secret\x00")}}})
		r := e.do("POST", "/api/v1/namespaces/default/secrets", body, "Content-Type", mediaCBOR, "Accept", mediaCBOR).mustCode(t, 201)
		diag, _ := cbor.Diagnose(r.body)
		if !strings.Contains(diag, "h'64617461': {h'6b': 22(h'73656372657400')}") {
			t.Errorf("secret data is not tagged bytes: %s", diag)
		}
		j := e.do("GET", "/api/v1/namespaces/default/secrets/s1", nil).mustCode(t, 200).obj(t)
		if path(j, "data.k") != "c2VjcmV0AA==" {
			t.Errorf("stored data %v", j["data"])
		}
		if got := r.cborObj(t); !reflect.DeepEqual(got["data"], j["data"]) {
			t.Errorf("CBOR data %v, JSON data %v", got["data"], j["data"])
		}
		list := e.do("GET", "/api/v1/namespaces/default/secrets?fieldSelector=metadata.name=s1", nil, "Accept", mediaCBOR).mustCode(t, 200)
		if diag, _ := cbor.Diagnose(list.body); !strings.Contains(diag, "22(h'73656372657400')") {
			t.Errorf("listed secret data is not tagged bytes: %s", diag)
		}
	})

	t.Run("lists, metadata and Status", func(t *testing.T) {
		e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"cbor-list"}}`).mustCode(t, 201)
		p := "/api/v1/namespaces/cbor-list/configmaps"
		for _, n := range []string{"a", "b", "c"} {
			e.do("POST", p, `{"metadata":{"name":"`+n+`"},"data":{"n":"`+n+`"}}`).mustCode(t, 201)
		}
		list := e.do("GET", p, nil, "Accept", mediaCBOR).mustCode(t, 200).cborObj(t)
		if !reflect.DeepEqual(list, e.do("GET", p, nil).mustCode(t, 200).obj(t)) {
			t.Errorf("CBOR list %v differs from JSON", list)
		}
		pom := e.do("GET", p+"/a", nil, "Accept", metaAccept(platBrand, mediaCBOR, "PartialObjectMetadata", "v1")).mustCode(t, 200).cborObj(t)
		if pom["kind"] != "PartialObjectMetadata" || path(pom, "metadata.name") != "a" {
			t.Errorf("metadata %v", pom)
		}
		pomList := e.do("GET", p, nil, "Accept", metaAccept(platBrand, mediaCBOR, "PartialObjectMetadataList", "v1")).mustCode(t, 200).cborObj(t)
		if items, _ := pomList["items"].([]any); pomList["kind"] != "PartialObjectMetadataList" || len(items) != 3 {
			t.Errorf("metadata list %v", pomList)
		}
		// Errors are Status objects in CBOR.
		r := e.do("GET", p+"/nope", nil, "Accept", mediaCBOR).mustCode(t, 404)
		if got := r.cborMessage(t); got != `configmaps "nope" not found` {
			t.Errorf("404 message %q", got)
		}
		// DeleteOptions in CBOR.
		opts := cborBody(t, map[string]any{"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": map[string]any{"uid": "not-it"}})
		r = e.do("DELETE", p+"/a", opts, "Content-Type", mediaCBOR, "Accept", mediaCBOR).mustCode(t, 409)
		if got := r.cborMessage(t); !strings.Contains(got, "the UID in the precondition (not-it) does not match") {
			t.Errorf("409 message %q", got)
		}
		// A delete's Status too.
		r = e.do("DELETE", "/api/v1/namespaces/cbor-list/configmaps?labelSelector=none", nil, "Accept", mediaCBOR).mustCode(t, 200)
		if got := r.cborObj(t)["kind"]; got != "ConfigMapList" {
			t.Errorf("deletecollection kind %v", got)
		}
	})

	t.Run("negotiation", func(t *testing.T) {
		// Tables are JSON and YAML only.
		e.do("GET", cms, nil, "Accept", metaAccept(platBrand, mediaCBOR, "Table", "v1")).mustCode(t, 406).
			mustMessage(t, "only the following media types are accepted: application/json, application/yaml, "+platBrand.ProtobufMediaType+", application/cbor")
		e.do("GET", cms+"/c0", nil, "Accept", "text/plain").mustCode(t, 406).
			mustMessage(t, "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, "+platBrand.ProtobufMediaType+", application/cbor")
		e.do("GET", cms, nil, "Accept", "text/plain").mustCode(t, 406).
			mustMessage(t, "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, "+platBrand.ProtobufMediaType+", application/cbor, "+
				"application/json;stream=watch, "+platBrand.ProtobufMediaType+";stream=watch, application/cbor-seq")
		// A watch asks for application/cbor; cbor-seq names no serializer.
		r := e.do("GET", cms+"?watch=1", nil, "Accept", mediaCBORSeq).mustCode(t, 406)
		if got, want := yamlMessage(t, r), "only the following media types are accepted: application/json;stream=watch, "+platBrand.ProtobufMediaType+";stream=watch, application/cbor-seq"; got != want {
			t.Errorf("watch 406 %q, want %q", got, want)
		}
		// The filters' errors (here a 401) are not in CBOR: upstream's
		// server-wide serializer lacks it.
		r401 := e.send(req{method: "GET", path: cms, token: "bad-token", header: map[string]string{"Accept": mediaCBOR}}).mustCode(t, 401)
		if r401.header.Get("Content-Type") != "application/json" || !strings.HasPrefix(string(r401.body), "{\n  \"kind\": \"Status\"") {
			t.Errorf("401 for a CBOR client: %s %q", r401.header.Get("Content-Type"), r401.body)
		}
		r401 = e.send(req{method: "GET", path: cms, token: "bad-token", header: map[string]string{"Accept": mediaCBOR + ", application/json"}}).mustCode(t, 401)
		if r401.header.Get("Content-Type") != "application/json" || !strings.HasPrefix(string(r401.body), `{"kind":"Status"`) {
			t.Errorf("401 for a CBOR or JSON client: %s %q", r401.header.Get("Content-Type"), r401.body)
		}
		// CBOR ranks after the clauses before it.
		if r := e.do("GET", cms, nil, "Accept", "application/json;q=0.5, application/cbor"); r.header.Get("Content-Type") != mediaCBOR {
			t.Errorf("preferred CBOR answered %s", r.header.Get("Content-Type"))
		}
	})

	t.Run("bad bodies", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			body []byte
			want string
		}{
			{"JSON", []byte("{}"), "the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: unexpected EOF ({})"},
			{"trailing bytes", []byte{0xa0, 0xa0}, "the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: cbor: 1 bytes of extraneous data starting at index 1 (\xa0\xa0)"},
			{"truncated", []byte{0xd9, 0xd9, 0xf7, 0xa1, 0x61}, "the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: unexpected EOF (\xd9\xd9\xf7\xa1a)"},
			{"duplicate top-level key", []byte{0xa2, 0x64, 'k', 'i', 'n', 'd', 0x61, 'x', 0x64, 'k', 'i', 'n', 'd', 0x61, 'y'},
				`the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: cbor: found duplicate map key "kind" at map element index 1 (` + "\xa2dkindaxdkinday)"},
			{"duplicate nested key", []byte{0xa1, 0x64, 'd', 'a', 't', 'a', 0xa2, 0x61, 'a', 0x61, '1', 0x61, 'a', 0x61, '2'},
				`ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: found duplicate map key "a" at map element index 1`},
			{"integer key", []byte{0xa1, 0x64, 'd', 'a', 't', 'a', 0xa1, 0x01, 0x61, '1'},
				`ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal positive integer into Go value of type string`},
			{"undefined", []byte{0xa1, 0x64, 'd', 'a', 't', 'a', 0xf7},
				"the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: cbor: data item of cbor type primitives is not accepted by protocol: simple value 23 is not recognized (\xa1ddata\xf7)"},
			{"text key not UTF-8", []byte{0xa1, 0x64, 'd', 'a', 't', 'a', 0xa1, 0x61, 0xff, 0x61, '1'},
				`ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: invalid UTF-8 string`},
			{"NaN", []byte{0xa1, 0x64, 'd', 'a', 't', 'a', 0xf9, 0x7e, 0x00},
				"the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: cbor: data item of cbor type primitives is not accepted by protocol: floating-point NaN (\xa1ddata\xf9~\x00)"},
		} {
			r := e.do("POST", cms, tc.body, "Content-Type", mediaCBOR).mustCode(t, 400)
			// The JSON encoder of the Status message replaces invalid UTF-8.
			var want string
			j, _ := json.Marshal(tc.want)
			_ = json.Unmarshal(j, &want)
			if got, _ := r.obj(t)["message"].(string); got != want {
				t.Errorf("%s:\n got  %q\n want %q", tc.name, got, want)
			}
		}
		// A built-in type's strict check names the first unknown field
		// by its index in its map, as upstream's typed decoding does.
		body := sortedCBOR(t, map[string]any{"kind": "ConfigMap", "bogus": 1, "metadata": map[string]any{"name": "c9"}})
		e.do("POST", cms+"?fieldValidation=Strict", body, "Content-Type", mediaCBOR).mustCode(t, 400).
			mustMessage(t, `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: cbor: found unknown field at map element index 1`)
		body = sortedCBOR(t, map[string]any{"metadata": map[string]any{"name": "c9", "zzzzzz": true}})
		r := e.do("POST", cms+"?fieldValidation=Warn", body, "Content-Type", mediaCBOR).mustCode(t, 201)
		if w := r.header.Values("Warning"); len(w) != 1 || w[0] != `299 - "cbor: found unknown field at map element index 1"` {
			t.Errorf("warnings %q", w)
		}
		e.do("POST", cms+"?fieldValidation=Ignore", sortedCBOR(t, map[string]any{"metadata": map[string]any{"name": "c10"}, "x": 1}), "Content-Type", mediaCBOR).mustCode(t, 201)
	})

	t.Run("patch and apply", func(t *testing.T) {
		e.do("POST", cms, `{"metadata":{"name":"p1"},"data":{"a":"1"}}`).mustCode(t, 201)
		// CBOR is no patch format: only apply has a CBOR form.
		for _, ct := range []string{mediaCBOR, "application/merge-patch+cbor", "application/json-patch+cbor", "application/strategic-merge-patch+cbor"} {
			e.do("PATCH", cms+"/p1", cborBody(t, map[string]any{"data": map[string]any{"a": "2"}}), "Content-Type", ct).mustCode(t, 415).
				mustMessage(t, "415: Unsupported Media Type")
		}
		cfg := cborBody(t, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "ap1"}, "data": map[string]any{"x": "y"}})
		got := e.do("PATCH", cms+"/ap1?fieldManager=cbor-mgr", cfg, "Content-Type", codec.ApplyCBORMediaType, "Accept", mediaCBOR).mustCode(t, 201).cborObj(t)
		if !reflect.DeepEqual(got["data"], map[string]any{"x": "y"}) || path(got, "metadata.managedFields") == nil {
			t.Errorf("applied %v", got)
		}
		mf := path(got, "metadata.managedFields").([]any)[0].(map[string]any)
		if mf["manager"] != "cbor-mgr" || mf["operation"] != "Apply" {
			t.Errorf("managed fields %v", mf)
		}
		e.do("PATCH", cms+"/ap1?fieldManager=cbor-mgr", []byte{0xa2, 0x61, 'a', 1, 0x61, 'a', 2}, "Content-Type", codec.ApplyCBORMediaType).mustCode(t, 400).
			mustMessage(t, `error decoding YAML: cbor: found duplicate map key "a" at map element index 1`)
	})

	t.Run("custom resources", func(t *testing.T) {
		e.do("POST", crdPath, gadgetCRD("cbor.example.com")).mustCode(t, 201)
		p := groupPath("cbor.example.com", "v1", "default", "gadgets")
		body := cborBody(t, map[string]any{"apiVersion": "cbor.example.com/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": "g1"}, "spec": map[string]any{"name": "a", "replicas": 2}})
		var created map[string]any
		deadline := 100
		for ; deadline > 0; deadline-- {
			r := e.do("POST", p, body, "Content-Type", mediaCBOR, "Accept", mediaCBOR)
			if r.code == 201 {
				created = r.cborObj(t)
				break
			}
			if r.code != 404 {
				t.Fatalf("create: %d %q", r.code, r.body)
			}
		}
		if !reflect.DeepEqual(created, e.do("GET", p+"/g1", nil).mustCode(t, 200).obj(t)) || path(created, "spec.max") != 10.0 {
			t.Errorf("created %v", created)
		}
		e.do("GET", p+"/g1", nil, "Accept", platBrand.ProtobufMediaType).mustCode(t, 406).
			mustMessage(t, "only the following media types are accepted: application/json, application/yaml, application/cbor")
		e.do("POST", p, body, "Content-Type", platBrand.ProtobufMediaType).mustCode(t, 415).
			mustMessage(t, "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/cbor")
		e.do("PATCH", p+"/g1", `{}`, "Content-Type", "application/strategic-merge-patch+json").mustCode(t, 415).
			mustMessage(t, "the body of the request was in an unknown format - accepted media types include: "+
				"application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/apply-patch+cbor")
	})
}

// TestCBORWatch checks the CBOR sequence of a watch: one self-described
// data item per event, its object embedded with its own tag.
func TestCBORWatch(t *testing.T) {
	t.Parallel()
	e := start(t, withCBOR)
	p := "/api/v1/namespaces/default/configmaps"
	e.do("POST", p, `{"metadata":{"name":"w1"},"data":{"a":"1"}}`).mustCode(t, 201)
	r := e.do("GET", p+"?watch=1&resourceVersion=0&timeoutSeconds=1&allowWatchBookmarks=true", nil, "Accept", mediaCBOR).mustCode(t, 200)
	if ct := r.header.Get("Content-Type"); ct != mediaCBORSeq {
		t.Fatalf("Content-Type %q", ct)
	}
	dec := cbor.NewDecoder(bytes.NewReader(r.body))
	var types []string
	for {
		// The decoder reads through the self-described tag: check the
		// item's own bytes.
		start := dec.NumBytesRead()
		var skip any
		if err := dec.Decode(&skip); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("event %d: %v", len(types), err)
		}
		raw := r.body[start:dec.NumBytesRead()]
		diag, _ := cbor.Diagnose(raw)
		if !strings.HasPrefix(diag, "55799({h'74797065': h'") || !strings.Contains(diag, "h'6f626a656374': 55799({") {
			t.Fatalf("event is not a tagged {type, object} with a tagged object: %s", diag)
		}
		var ev struct {
			Type   string          `cbor:"type"`
			Object cbor.RawMessage `cbor:"object"`
		}
		dm, _ := cbor.DecOptions{DefaultByteStringType: reflect.TypeOf(""), ByteStringToString: cbor.ByteStringToStringAllowed, FieldNameByteString: cbor.FieldNameByteStringAllowed}.DecMode()
		if err := dm.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		j, err := codec.CBORToJSON(ev.Object)
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		if ev.Type == "ADDED" {
			var obj map[string]any
			_ = json.Unmarshal(j, &obj)
			if path(obj, "metadata.name") != "w1" || obj["kind"] != "ConfigMap" {
				t.Errorf("ADDED object %v", obj)
			}
		}
	}
	if len(types) == 0 || types[0] != "ADDED" {
		t.Errorf("events %v", types)
	}

	// The list blueprint of the initial-events-end bookmark is CBOR too.
	r = e.do("GET", p+"?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1", nil, "Accept", mediaCBOR).mustCode(t, 200)
	dec = cbor.NewDecoder(bytes.NewReader(r.body))
	found := false
	for {
		start := dec.NumBytesRead()
		var skip any
		if err := dec.Decode(&skip); err != nil {
			break
		}
		j, err := codec.CBORToJSON(r.body[start:dec.NumBytesRead()])
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(j, &m)
		ann, _ := path(m, "object.metadata.annotations").(map[string]any)
		bp, _ := ann[platBrand.Label("initial-events-list-blueprint")].(string)
		if m["type"] != "BOOKMARK" || bp == "" {
			continue
		}
		found = true
		raw, err := base64.StdEncoding.DecodeString(bp)
		if err != nil || !codec.HasCBORPrefix(raw) {
			t.Fatalf("blueprint %q %v", bp, err)
		}
		if j, err := codec.CBORToJSON(raw); err != nil || string(j) != `{"apiVersion":"v1","items":null,"kind":"ConfigMapList","metadata":{}}` {
			t.Errorf("blueprint %s %v", j, err)
		}
	}
	if !found {
		t.Errorf("no initial-events-end bookmark in %x", r.body)
	}
}

// yamlMessage is the message of a Status written in YAML.
func yamlMessage(t *testing.T, r *resp) string {
	t.Helper()
	j, err := codec.YAMLToJSON(r.body)
	if err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	var m map[string]any
	_ = json.Unmarshal(j, &m)
	s, _ := m["message"].(string)
	return s
}
