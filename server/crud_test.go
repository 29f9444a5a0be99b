package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestConfigMapLifecycle(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"

	created := e.do("POST", base, cm("cm1", map[string]string{"a": "1", "b": "two"}, map[string]string{"app": "x"})).mustCode(t, 201).obj(t)
	if created["kind"] != "ConfigMap" || created["apiVersion"] != "v1" {
		t.Fatalf("create response type: %v %v", created["kind"], created["apiVersion"])
	}
	md := created["metadata"].(map[string]any)
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp"} {
		if s, _ := md[f].(string); s == "" {
			t.Errorf("created object lacks metadata.%s: %v", f, md)
		}
	}
	if md["namespace"] != "default" || path(created, "data.b") != "two" || path(created, "metadata.labels.app") != "x" {
		t.Errorf("created object: %v", created)
	}

	got := e.do("GET", base+"/cm1", nil).mustCode(t, 200)
	if got.header.Get("Content-Type") != "application/json" {
		t.Errorf("content type %q", got.header.Get("Content-Type"))
	}
	if !strings.HasPrefix(string(got.body), `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm1","namespace":"default","uid":"`) {
		t.Errorf("get body does not start as upstream does: %s", got.body)
	}
	if got.obj(t)["metadata"].(map[string]any)["uid"] != md["uid"] {
		t.Error("get returned a different uid")
	}

	// Update with the current resourceVersion, then with a stale one.
	upd := got.obj(t)
	upd["data"] = map[string]any{"a": "changed"}
	updated := e.do("PUT", base+"/cm1", upd).mustCode(t, 200).obj(t)
	if path(updated, "data.a") != "changed" || path(updated, "data.b") != nil {
		t.Errorf("updated data: %v", updated["data"])
	}
	if path(updated, "metadata.resourceVersion") == md["resourceVersion"] {
		t.Error("resourceVersion did not change on update")
	}
	stale := e.do("PUT", base+"/cm1", upd).mustCode(t, 409).obj(t)
	if stale["reason"] != "Conflict" || !strings.Contains(stale["message"].(string), "the object has been modified") {
		t.Errorf("stale update: %v", stale)
	}

	list := e.do("GET", base, nil).mustCode(t, 200).obj(t)
	if list["kind"] != "ConfigMapList" {
		t.Errorf("list kind %v", list["kind"])
	}
	items := list["items"].([]any)
	if len(items) != 1 || path(items[0].(map[string]any), "metadata.name") != "cm1" {
		t.Fatalf("list items: %v", items)
	}
	if _, has := items[0].(map[string]any)["kind"]; has {
		t.Error("list items carry kind; upstream omits it for built-in types")
	}

	del := e.do("DELETE", base+"/cm1", nil).mustCode(t, 200).obj(t)
	if del["kind"] != "Status" || del["status"] != "Success" || path(del, "details.name") != "cm1" ||
		path(del, "details.kind") != "configmaps" || path(del, "details.uid") != md["uid"] {
		t.Errorf("delete status: %v", del)
	}
	nf := e.do("GET", base+"/cm1", nil).mustCode(t, 404).obj(t)
	if nf["message"] != `configmaps "cm1" not found` || nf["reason"] != "NotFound" {
		t.Errorf("not found: %v", nf)
	}
}

func TestCreateErrors(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	e.do("POST", base, cm("exists", map[string]string{"k": "v"}, nil)).mustCode(t, 201)
	meta := platBrand.MetaGroup()

	cases := []struct {
		name    string
		path    string
		body    any
		code    int
		reason  string
		message string
	}{
		{"already exists", base, cm("exists", nil, nil), 409, "AlreadyExists", `configmaps "exists" already exists`},
		{"missing namespace", "/api/v1/namespaces/no-such-ns/configmaps", cm("x", nil, nil), 404, "NotFound", `namespaces "no-such-ns" not found`},
		{"namespace mismatch", base, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "n", "namespace": "other"}}, 400, "BadRequest",
			"the namespace of the provided object does not match the namespace sent on the request"},
		{"kind mismatch", base, map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "wrongkind"}}, 400, "BadRequest",
			`Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion`},
		{"resourceVersion set", base, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "withrv", "resourceVersion": "5"}}, 500, "",
			"resourceVersion should not be set on objects to be created"},
		// Validation comes first, as upstream's storage checks last.
		{"resourceVersion set on an invalid object", base, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "Bad", "resourceVersion": "5"}}, 422, "Invalid",
			`ConfigMap "Bad" is invalid: metadata.name: Invalid value: "Bad": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"malformed", base, `{"apiVersion":"v1","kind":"ConfigMap",`, 400, "BadRequest",
			`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":"v1","kind":"Con ...)`},
		{"invalid name and key", base, cm("Bad_Name", map[string]string{"bad key!": "v"}, nil), 422, "Invalid",
			`ConfigMap "Bad_Name" is invalid: [metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), data[bad key!]: Invalid value: "bad key!": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')]`},
		{"no name", base, map[string]any{"metadata": map[string]any{}}, 422, "Invalid",
			`ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`},
		{"owner references", base, map[string]any{"metadata": map[string]any{"name": "owned", "ownerReferences": []any{
			map[string]any{"apiVersion": "apps/", "kind": "", "name": "a", "uid": "u1", "controller": true},
			map[string]any{"apiVersion": "v1", "kind": "Event", "name": "", "uid": "", "controller": true},
		}}}, 422, "Invalid",
			`ConfigMap "owned" is invalid: [metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty, ` +
				`metadata.ownerReferences.kind: Invalid value: "": kind must not be empty, ` +
				`metadata.ownerReferences.name: Invalid value: "": name must not be empty, ` +
				`metadata.ownerReferences.uid: Invalid value: "": uid must not be empty, ` +
				`metadata.ownerReferences: Invalid value: v1.OwnerReference{APIVersion:"v1", Kind:"Event", Name:"", UID:"", Controller:(*bool)(true), BlockOwnerDeletion:(*bool)(nil)}: /v1, Kind=Event is disallowed from being an owner, ` +
				`metadata.ownerReferences: Invalid value: []v1.OwnerReference{v1.OwnerReference{APIVersion:"apps/", Kind:"", Name:"a", UID:"u1", Controller:(*bool)(true), BlockOwnerDeletion:(*bool)(nil)}, ` +
				`v1.OwnerReference{APIVersion:"v1", Kind:"Event", Name:"", UID:"", Controller:(*bool)(true), BlockOwnerDeletion:(*bool)(nil)}}: ` +
				`Only one reference can have Controller set to true. Found "true" in references for /a and Event/]`},
		{"orphan and foreground", base, map[string]any{"metadata": map[string]any{"name": "both", "finalizers": []any{"orphan", "foregroundDeletion"}}}, 422, "Invalid",
			`ConfigMap "both" is invalid: metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set`},
		{"bad generateName first", base, map[string]any{"metadata": map[string]any{"name": "Bad", "generateName": "Gen-"}}, 422, "Invalid",
			`ConfigMap "Bad" is invalid: [metadata.generateName: Invalid value: "Gen-": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), ` +
				`metadata.name: Invalid value: "Bad": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]`},
		{"strict unknown", base + "?fieldValidation=Strict", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "strict", "bogusMeta": 1}, "data": {"k": "v"}, "spec": {"x": 1}}`, 400, "BadRequest",
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.bogusMeta", unknown field "spec"`},
		{"strict duplicate", base + "?fieldValidation=Strict", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"k":"v"},"data":{"k":"w"}}`, 400, "BadRequest",
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data"`},
		{"bad dryRun", base + "?dryRun=bogus", cm("drb", nil, nil), 422, "Invalid",
			`CreateOptions.` + meta + ` "" is invalid: dryRun: Unsupported value: []string{"bogus"}: supported values: "All"`},
		{"bad fieldValidation", base + "?fieldValidation=Bogus", cm("fv", nil, nil), 422, "Invalid",
			`CreateOptions.` + meta + ` "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"`},
		{"post to named path", base + "/exists", cm("exists", nil, nil), 405, "MethodNotAllowed", "the server does not allow this method on the requested resource"},
		{"put to collection", base, cm("x", nil, nil), 405, "MethodNotAllowed", "the server does not allow this method on the requested resource"},
		{"unknown resource", "/api/v1/namespaces/default/widgets", cm("x", nil, nil), 404, "NotFound", "the server could not find the requested resource"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method := "POST"
			if c.name == "put to collection" {
				method = "PUT"
			}
			r := e.do(method, c.path, c.body).mustCode(t, c.code)
			st := r.obj(t)
			if st["kind"] != "Status" || st["apiVersion"] != "v1" || st["status"] != "Failure" {
				t.Errorf("not a failure Status: %s", r.body)
			}
			if got, _ := st["reason"].(string); got != c.reason {
				t.Errorf("reason %q, want %q", got, c.reason)
			}
			if st["message"] != c.message {
				t.Errorf("message\n got: %v\nwant: %s", st["message"], c.message)
			}
			if code, _ := st["code"].(float64); int(code) != c.code {
				t.Errorf("code %v", st["code"])
			}
		})
	}
}

func TestWarnUnknownFields(t *testing.T) {
	t.Parallel()
	e := start(t)
	r := e.do("POST", "/api/v1/namespaces/default/configmaps",
		`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "warned", "bogusMeta": 1}, "data": {"k": "v"}, "spec": {"x": 1}}`).mustCode(t, 201)
	want := []string{`299 - "unknown field \"metadata.bogusMeta\""`, `299 - "unknown field \"spec\""`}
	if got := r.header.Values("Warning"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("warnings %q, want %q", got, want)
	}
	o := r.obj(t)
	if _, has := o["spec"]; has {
		t.Error("unknown field was stored")
	}
	if _, has := o["metadata"].(map[string]any)["bogusMeta"]; has {
		t.Error("unknown metadata field was stored")
	}
}

func TestDryRunCreateStoresNothing(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	r := e.do("POST", base+"?dryRun=All", cm("dry", map[string]string{"k": "v"}, nil)).mustCode(t, 201).obj(t)
	md := r["metadata"].(map[string]any)
	if md["uid"] == nil || md["creationTimestamp"] == nil {
		t.Errorf("dry-run result lacks system fields: %v", md)
	}
	if _, has := md["resourceVersion"]; has {
		t.Errorf("dry-run result has a resourceVersion: %v", md)
	}
	e.do("GET", base+"/dry", nil).mustCode(t, 404)
	// A dry run never reaches the storage check of a resourceVersion.
	withRV := cm("dry", nil, nil)
	withRV["metadata"].(map[string]any)["resourceVersion"] = "5"
	e.do("POST", base+"?dryRun=All", withRV).mustCode(t, 201)
	e.do("GET", base+"/dry", nil).mustCode(t, 404)
}

func TestGenerateName(t *testing.T) {
	t.Parallel()
	e := start(t)
	body := map[string]any{"metadata": map[string]any{"generateName": "gen-"}, "data": map[string]any{"k": "v"}}
	seen := map[string]bool{}
	for i := 0; i < 5; i++ {
		name, _ := path(e.do("POST", "/api/v1/namespaces/default/configmaps", body).mustCode(t, 201).obj(t), "metadata.name").(string)
		if !strings.HasPrefix(name, "gen-") || len(name) != len("gen-")+5 || strings.ContainsAny(name[4:], "aeiou01") {
			t.Errorf("generated name %q", name)
		}
		if seen[name] {
			t.Errorf("name %q generated twice", name)
		}
		seen[name] = true
	}
	// A name the client gives is kept, generateName or not: taken, it is
	// a conflict, not another object.
	named := map[string]any{"metadata": map[string]any{"name": "taken", "generateName": "gen-"}}
	e.do("POST", "/api/v1/namespaces/default/configmaps", named).mustCode(t, 201)
	e.do("POST", "/api/v1/namespaces/default/configmaps", named).mustCode(t, 409).mustMessage(t, `configmaps "taken" already exists`)
	list := e.do("GET", "/api/v1/namespaces/default/configmaps", nil).mustCode(t, 200).obj(t)
	if n := len(list["items"].([]any)); n != 6 {
		t.Errorf("%d configmaps, want the 5 generated and taken", n)
	}
}

func TestSecretStringDataAndImmutableType(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/secrets"
	s := e.do("POST", base, map[string]any{"metadata": map[string]any{"name": "s1"},
		"stringData": map[string]any{"username": "admin"}, "data": map[string]any{"raw": "aGVsbG8="}}).mustCode(t, 201).obj(t)
	if path(s, "data.username") != "YWRtaW4=" || path(s, "data.raw") != "aGVsbG8=" {
		t.Errorf("data: %v", s["data"])
	}
	if _, has := s["stringData"]; has {
		t.Error("stringData returned")
	}
	if s["type"] != "Opaque" {
		t.Errorf("type %v", s["type"])
	}
	s["type"] = "example.com/other"
	r := e.do("PUT", base+"/s1", s).mustCode(t, 422).obj(t)
	if !strings.Contains(r["message"].(string), `type: Invalid value: "example.com/other": field is immutable`) {
		t.Errorf("type change: %v", r["message"])
	}
}

func TestPrettyAndYAML(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", "/api/v1/namespaces/default/configmaps", cm("p", map[string]string{"k": "v"}, nil)).mustCode(t, 201)
	pretty := e.do("GET", "/api/v1/namespaces/default/configmaps/p?pretty=true", nil).mustCode(t, 200)
	if !strings.HasPrefix(string(pretty.body), "{\n  \"kind\": \"ConfigMap\",\n  \"apiVersion\": \"v1\",\n") || strings.HasSuffix(string(pretty.body), "\n") {
		t.Errorf("pretty body: %q", pretty.body)
	}
	compact := e.do("GET", "/api/v1/namespaces/default/configmaps/p", nil).mustCode(t, 200)
	if !strings.HasSuffix(string(compact.body), "}\n") || strings.Contains(string(compact.body), "\n ") {
		t.Errorf("compact body: %q", compact.body)
	}
	y := e.do("GET", "/api/v1/namespaces/default/configmaps/p", nil, "Accept", "application/yaml").mustCode(t, 200)
	if y.header.Get("Content-Type") != "application/yaml" || !strings.Contains(string(y.body), "kind: ConfigMap\n") {
		t.Errorf("yaml: %s %q", y.header.Get("Content-Type"), y.body)
	}
	na := e.do("GET", "/api/v1/namespaces/default/configmaps/p", nil, "Accept", "text/foo").mustCode(t, 406).obj(t)
	if !strings.HasPrefix(na["message"].(string), "406: Not Acceptable") {
		t.Errorf("406: %v", na)
	}
}

func TestUnsupportedBody(t *testing.T) {
	t.Parallel()
	e := start(t)
	r := e.do("POST", "/api/v1/namespaces/default/configmaps", "x", "Content-Type", "text/plain").mustCode(t, http.StatusUnsupportedMediaType).obj(t)
	if r["reason"] != "UnsupportedMediaType" || !strings.HasPrefix(r["message"].(string), "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml") {
		t.Errorf("415: %v", r)
	}
	var st map[string]any
	_ = json.Unmarshal(e.do("PATCH", "/api/v1/namespaces/default/configmaps/x", `{}`, "Content-Type", "application/json").mustCode(t, 415).body, &st)
	if st["message"] != "415: Unsupported Media Type" {
		t.Errorf("patch 415: %v", st)
	}
}

func TestBuiltinSchemaMarkersAreNotRules(t *testing.T) {
	t.Parallel()
	e := start(t)
	// LimitRangeSpec.limits has no omitempty upstream, so the OpenAPI
	// document calls it required; upstream still accepts a LimitRange
	// without it, and names a nameless LimitRange itself.
	lr := e.do("POST", "/api/v1/namespaces/default/limitranges", map[string]any{"metadata": map[string]any{}}).mustCreated(t)
	name, _ := path(lr, "metadata.name").(string)
	if len(name) != 36 || strings.Count(name, "-") != 4 {
		t.Errorf("nameless LimitRange got name %q", name)
	}
	ev := e.do("POST", "/api/v1/namespaces/default/events", map[string]any{"metadata": map[string]any{"name": "e"}}).mustCreated(t)
	if ev["involvedObject"] == nil || ev["firstTimestamp"] != nil {
		t.Errorf("event: %v", ev)
	}
	if _, ok := ev["firstTimestamp"]; !ok {
		t.Error("event lacks firstTimestamp: null")
	}
}

// TestUpdateUIDPrecondition checks that the uid a PUT names is a
// precondition of the write, as upstream: another object's uid is a
// Conflict (before the resourceVersion is looked at) and stores nothing,
// and a uid on an object a PUT would create is one too.
func TestUpdateUIDPrecondition(t *testing.T) {
	t.Parallel()
	e := start(t)
	nsUID := path(e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"uidpre"}}`).mustCode(t, 201).obj(t), "metadata.uid").(string)
	base := "/api/v1/namespaces/uidpre/configmaps"
	cm := e.do("POST", base, `{"metadata":{"name":"cm"},"data":{"a":"1"}}`).mustCode(t, 201).obj(t)
	uid := path(cm, "metadata.uid").(string)
	const other = "00000000-0000-0000-0000-000000000000"
	for _, rv := range []string{path(cm, "metadata.resourceVersion").(string), "1", ""} {
		body := fmt.Sprintf(`{"metadata":{"name":"cm","uid":%q,"resourceVersion":%q},"data":{"a":"2"}}`, other, rv)
		got := e.do("PUT", base+"/cm", body).mustCode(t, 409).obj(t)
		want := fmt.Sprintf(`Operation cannot be fulfilled on configmaps "cm": StorageError: invalid object, Code: 4, Key: /registry/configmaps/uidpre/cm, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s`, other, uid)
		if got["reason"] != "Conflict" || got["message"] != want {
			t.Errorf("rv %q: got %v %q, want Conflict %q", rv, got["reason"], got["message"], want)
		}
		if d := path(got, "details"); !reflect.DeepEqual(d, map[string]any{"name": "cm", "kind": "configmaps"}) {
			t.Errorf("rv %q: details %v", rv, d)
		}
	}
	if a := path(e.do("GET", base+"/cm", nil).mustCode(t, 200).obj(t), "data.a"); a != "1" {
		t.Errorf("a refused update changed the object: data.a = %v", a)
	}
	// The right uid is no obstacle.
	ok := fmt.Sprintf(`{"metadata":{"name":"cm","uid":%q},"data":{"a":"3"}}`, uid)
	if a := path(e.do("PUT", base+"/cm", ok).mustCode(t, 200).obj(t), "data.a"); a != "3" {
		t.Errorf("update with the stored uid: data.a = %v", a)
	}
	// A status update is held to the same uid.
	status := fmt.Sprintf(`{"metadata":{"name":"uidpre","uid":%q},"status":{"phase":"Active"}}`, other)
	if msg, _ := e.do("PUT", "/api/v1/namespaces/uidpre/status", status).mustCode(t, 409).obj(t)["message"].(string); !strings.HasSuffix(msg, "UID in precondition: "+other+", UID in object meta: "+nsUID) {
		t.Errorf("status update with another uid: %q", msg)
	}
	// A missing object has no uid: an update naming one conflicts, whether
	// or not the update could create it (leases are created by update).
	leases := "/apis/coordination." + platBrand.Domain + "/v1/namespaces/uidpre/leases"
	for _, p := range []string{leases + "/l1", base + "/gone"} {
		name := p[strings.LastIndex(p, "/")+1:]
		got := e.do("PUT", p, fmt.Sprintf(`{"metadata":{"name":%q,"uid":%q}}`, name, other)).mustCode(t, 409).obj(t)
		if msg, _ := got["message"].(string); !strings.HasSuffix(msg, "UID in precondition: "+other+", UID in object meta: ") {
			t.Errorf("%s: update of a missing object with a uid: %q", p, msg)
		}
		e.do("GET", p, nil).mustCode(t, 404)
	}
}
