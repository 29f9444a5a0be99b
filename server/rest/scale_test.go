package rest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// scaleTestDeployment is a deployment of three replicas in default.
const scaleTestDeployment = `{"metadata":{"name":"web"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},` +
	`"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`

const deploymentsURL = "/apis/apps/v1/namespaces/default/deployments"

// call sends one request to srv and returns its status, Content-Type
// and body.
func call(t *testing.T, srv *httptest.Server, method, path, contentType, accept, body string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header.Get("Content-Type"), b
}

// TestScaleConversions: a Scale is answered in every form an object is,
// on reads and on writes: whole, as its metadata, or as a Table of the
// replica columns, whose row holds the Scale's counts.
func TestScaleConversions(t *testing.T) {
	t.Parallel()
	h, srv, _ := newTestHandler(t, Config{})
	if code, _, b := call(t, srv, "POST", deploymentsURL, "application/json", "", scaleTestDeployment); code != 201 {
		t.Fatalf("create: %d %s", code, b)
	}
	meta := h.brand.MetaGroup()
	as := func(kind, version string) string {
		return "application/json;as=" + kind + ";g=" + meta + ";v=" + version
	}
	scaleURL := deploymentsURL + "/web/scale"
	for _, c := range []struct {
		name, method, body, accept string
		// kind and apiVersion of the answer; replicas the Table's Desired.
		kind, apiVersion string
		replicas         float64
	}{
		{"get", "GET", "", "", "Scale", "autoscaling/v1", 3},
		{"get table v1", "GET", "", as("Table", "v1"), "Table", meta + "/v1", 3},
		{"get table v1beta1", "GET", "", as("Table", "v1beta1"), "Table", meta + "/v1beta1", 3},
		{"get metadata v1", "GET", "", as("PartialObjectMetadata", "v1"), "PartialObjectMetadata", meta + "/v1", 0},
		{"get metadata v1beta1", "GET", "", as("PartialObjectMetadata", "v1beta1"), "PartialObjectMetadata", meta + "/v1beta1", 0},
		{"put table", "PUT", `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"web"},"spec":{"replicas":4}}`, as("Table", "v1"), "Table", meta + "/v1", 4},
		{"patch table", "PATCH", `{"spec":{"replicas":5}}`, as("Table", "v1"), "Table", meta + "/v1", 5},
		{"patch metadata", "PATCH", `{"spec":{"replicas":6}}`, as("PartialObjectMetadata", "v1"), "PartialObjectMetadata", meta + "/v1", 0},
	} {
		ct := "application/json"
		if c.method == "PATCH" {
			ct = "application/merge-patch+json"
		}
		code, _, b := call(t, srv, c.method, scaleURL, ct, c.accept, c.body)
		if code != 200 {
			t.Fatalf("%s: %d %s", c.name, code, b)
		}
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v in %s", c.name, err, b)
		}
		if got["kind"] != c.kind || got["apiVersion"] != c.apiVersion {
			t.Errorf("%s: answered %v %v, want %s %s", c.name, got["apiVersion"], got["kind"], c.apiVersion, c.kind)
			continue
		}
		switch c.kind {
		case "Table":
			var names []string
			for _, col := range got["columnDefinitions"].([]any) {
				names = append(names, col.(map[string]any)["name"].(string))
			}
			if want := []string{"Name", "Desired", "Available", "Age"}; !reflect.DeepEqual(names, want) {
				t.Errorf("%s: columns %v, want %v", c.name, names, want)
			}
			rows := got["rows"].([]any)
			if len(rows) != 1 {
				t.Fatalf("%s: %d rows", c.name, len(rows))
			}
			row := rows[0].(map[string]any)
			cells := row["cells"].([]any)
			if cells[0] != "web" || cells[1] != c.replicas || cells[2] != float64(0) {
				t.Errorf("%s: cells %v", c.name, cells)
			}
			obj := row["object"].(map[string]any)
			if obj["kind"] != "PartialObjectMetadata" || obj["metadata"].(map[string]any)["name"] != "web" {
				t.Errorf("%s: row object %v", c.name, obj)
			}
		case "PartialObjectMetadata":
			md := got["metadata"].(map[string]any)
			if md["name"] != "web" || md["namespace"] != "default" || md["uid"] == nil || md["resourceVersion"] == nil {
				t.Errorf("%s: metadata %v", c.name, md)
			}
			if _, ok := got["spec"]; ok {
				t.Errorf("%s: metadata answer carries a spec: %s", c.name, b)
			}
		case "Scale":
			if r := got["spec"].(map[string]any)["replicas"]; r != c.replicas {
				t.Errorf("%s: spec.replicas %v", c.name, r)
			}
		}
	}
	// The other encodings: YAML, protobuf, the metadata in protobuf.
	for _, c := range []struct{ accept, contentType, holds string }{
		{"application/yaml", "application/yaml", "kind: Scale\n"},
		{h.brand.ProtobufMediaType, h.brand.ProtobufMediaType, "autoscaling/v1"},
		{h.brand.ProtobufMediaType + ";as=PartialObjectMetadata;g=" + meta + ";v=v1", h.brand.ProtobufMediaType, "PartialObjectMetadata"},
	} {
		code, ct, b := call(t, srv, "GET", scaleURL, "", c.accept, "")
		if code != 200 || ct != c.contentType || !strings.Contains(string(b), c.holds) {
			t.Errorf("Accept %s: %d %s, body %q", c.accept, code, ct, b)
		}
	}
	// A Scale is no list.
	code, _, b := call(t, srv, "GET", scaleURL, "", as("PartialObjectMetadataList", "v1"), "")
	if code != 406 || !strings.Contains(string(b), "(*autoscaling.Scale)") {
		t.Errorf("metadata list of a scale: %d %s", code, b)
	}
}

// TestScaleUIDAndMissing: a Scale naming another uid than the object's is
// refused and changes nothing: a PUT's uid as the precondition every
// update's is, a patched one as the built-in scale storages refuse it.
// Reads and writes of a missing object are NotFound of the resource,
// except a replication controller's scale read.
func TestScaleUIDAndMissing(t *testing.T) {
	t.Parallel()
	h, srv, _ := newTestHandler(t, Config{})
	rcURL := "/api/v1/namespaces/default/replicationcontrollers"
	uids := map[string]string{}
	for url, body := range map[string]string{
		deploymentsURL: scaleTestDeployment,
		rcURL:          `{"metadata":{"name":"web"},"spec":{"replicas":3,"selector":{"app":"web"},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`,
	} {
		code, _, b := call(t, srv, "POST", url, "application/json", "", body)
		var obj map[string]any
		if code != 201 || json.Unmarshal(b, &obj) != nil {
			t.Fatalf("create %s: %d %s", url, code, b)
		}
		uids[url] = obj["metadata"].(map[string]any)["uid"].(string)
	}
	const other = "00000000-0000-0000-0000-000000000000"
	deployments := h.reg.Lookup("apps", "v1", "deployments")
	put := `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"web","uid":"` + other + `"},"spec":{"replicas":-1}}`
	patch := `{"metadata":{"uid":"` + other + `"},"spec":{"replicas":7}}`
	for _, c := range []struct {
		name, method, url, body string
		code                    int
		message                 string
		details                 map[string]any
	}{
		{"put deployment", "PUT", deploymentsURL + "/web/scale", put, 409,
			`Operation cannot be fulfilled on deployments.apps "web": StorageError: invalid object, Code: 4, Key: ` + h.storedAt(deployments.Key("default", "web")) +
				`, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ` + other + `, UID in object meta: ` + uids[deploymentsURL],
			map[string]any{"name": "web", "group": "apps", "kind": "deployments"}},
		{"patch deployment", "PATCH", deploymentsURL + "/web/scale", patch, 409,
			`Operation cannot be fulfilled on deployments/scale.apps "web": Precondition failed: UID in precondition: ` + other + `, UID in object meta: ` + uids[deploymentsURL],
			map[string]any{"name": "web", "group": "apps", "kind": "deployments/scale"}},
		{"patch replication controller", "PATCH", rcURL + "/web/scale", patch, 409,
			`Operation cannot be fulfilled on replicationcontrollers/scale "web": Precondition failed: UID in precondition: ` + other + `, UID in object meta: ` + uids[rcURL],
			map[string]any{"name": "web", "kind": "replicationcontrollers/scale"}},
		{"put missing with uid", "PUT", deploymentsURL + "/gone/scale", strings.Replace(put, `"web"`, `"gone"`, 1), 409,
			`Operation cannot be fulfilled on deployments.apps "gone": StorageError: invalid object, Code: 4, Key: ` + h.storedAt(deployments.Key("default", "gone")) +
				`, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ` + other + `, UID in object meta: `,
			map[string]any{"name": "gone", "group": "apps", "kind": "deployments"}},
		{"put missing", "PUT", deploymentsURL + "/gone/scale", `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"gone"},"spec":{"replicas":-1}}`, 404,
			`deployments.apps "gone" not found`, map[string]any{"name": "gone", "group": "apps", "kind": "deployments"}},
		{"patch missing replication controller", "PATCH", rcURL + "/gone/scale", patch, 404,
			`replicationcontrollers "gone" not found`, map[string]any{"name": "gone", "kind": "replicationcontrollers"}},
		{"put without a name", "PUT", deploymentsURL + "/web/scale", `{"kind":"Scale","apiVersion":"autoscaling/v1","spec":{"replicas":2}}`, 400,
			`the name of the object (web based on URL) was undeterminable: name must be provided`, nil},
		{"get missing deployment", "GET", deploymentsURL + "/gone/scale", "", 404,
			`deployments.apps "gone" not found`, map[string]any{"name": "gone", "group": "apps", "kind": "deployments"}},
		{"get missing replication controller", "GET", rcURL + "/gone/scale", "", 404,
			`replicationcontrollers/scale.autoscaling "gone" not found`, map[string]any{"name": "gone", "group": "autoscaling", "kind": "replicationcontrollers/scale"}},
	} {
		ct := "application/json"
		if c.method == "PATCH" {
			ct = "application/merge-patch+json"
		}
		code, _, b := call(t, srv, c.method, c.url, ct, "", c.body)
		var st struct {
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		}
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("%s: %v in %s", c.name, err, b)
		}
		if code != c.code || st.Message != c.message || !reflect.DeepEqual(st.Details, c.details) {
			t.Errorf("%s: %d %q %v\nwant %d %q %v", c.name, code, st.Message, st.Details, c.code, c.message, c.details)
		}
	}
	// Nothing was written; the object's own uid is no obstacle.
	for url, uid := range uids {
		code, _, b := call(t, srv, "GET", url+"/web", "", "", "")
		if code != 200 || !strings.Contains(string(b), `"replicas":3`) {
			t.Errorf("%s after refused writes: %d %s", url, code, b)
		}
		code, _, b = call(t, srv, "PATCH", url+"/web/scale", "application/merge-patch+json", "", `{"metadata":{"uid":"`+uid+`"},"spec":{"replicas":2}}`)
		if code != 200 || !strings.Contains(string(b), `"spec":{"replicas":2}`) {
			t.Errorf("%s: patch naming the object's uid: %d %s", url, code, b)
		}
	}
}
