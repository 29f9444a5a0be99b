package server_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// A 1 MB object goes through the large-object paths: the body decoded in
// place, an unchanged update told without copies, the response written
// in parts. What a client reads must be exactly what a small object gets.
func TestLargeObjectRoundTrip(t *testing.T) {
	t.Parallel()
	e := start(t)
	const path = "/api/v1/namespaces/default/configmaps"
	// Escapes and non-ASCII text inside the value must survive both ways.
	value := func(tag string) string {
		return tag + `"quoted" \ back, tab	é ` + strings.Repeat("x", 1<<20-100)
	}
	body := func(v, rv string) []byte {
		m := map[string]any{"name": "big", "labels": map[string]string{"size": "large"}}
		if rv != "" {
			m["resourceVersion"] = rv
		}
		b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": m, "data": map[string]string{"v": v}})
		return b
	}
	// check asserts a response is the whole ConfigMap holding v, newline
	// ended, with its Content-Length if it has one, and returns its
	// resourceVersion.
	check := func(what string, r *resp, code int, v string) string {
		t.Helper()
		r.mustCode(t, code)
		if !bytes.HasPrefix(r.body, []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"big","namespace":"default",`)) {
			t.Fatalf("%s: body starts %.120s", what, r.body)
		}
		if !bytes.HasSuffix(r.body, []byte("}\n")) || bytes.Count(r.body, []byte("\n")) != 1 {
			t.Errorf("%s: body does not end in one newline: %q", what, r.body[len(r.body)-20:])
		}
		if cl := r.header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(r.body)) {
			t.Errorf("%s: Content-Length %s, body %d bytes", what, cl, len(r.body))
		}
		var cm struct {
			Metadata struct {
				ResourceVersion string            `json:"resourceVersion"`
				Labels          map[string]string `json:"labels"`
			} `json:"metadata"`
			Data map[string]string `json:"data"`
		}
		if err := json.Unmarshal(r.body, &cm); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if cm.Data["v"] != v || cm.Metadata.Labels["size"] != "large" {
			t.Errorf("%s: value of %d bytes starting %.40q, labels %v; want %d bytes starting %.40q", what, len(cm.Data["v"]), cm.Data["v"], cm.Metadata.Labels, len(v), v)
		}
		return cm.Metadata.ResourceVersion
	}
	v1 := value("first ")
	rv1 := check("create", e.do("POST", path, body(v1, "")), http.StatusCreated, v1)
	if got := check("get", e.do("GET", path+"/big", nil), http.StatusOK, v1); got != rv1 {
		t.Errorf("get: resourceVersion %s, want %s", got, rv1)
	}
	// An update that changes nothing writes nothing: the same version.
	if got := check("unchanged update", e.do("PUT", path+"/big", body(v1, rv1)), http.StatusOK, v1); got != rv1 {
		t.Errorf("unchanged update: resourceVersion %s, want %s", got, rv1)
	}
	v2 := value("second ")
	rv2 := check("update", e.do("PUT", path+"/big", body(v2, rv1)), http.StatusOK, v2)
	if rv2 == rv1 {
		t.Errorf("update kept resourceVersion %s", rv1)
	}
	identity := e.do("GET", path+"/big", nil, "Accept-Encoding", "identity")
	// Over HTTP/2 a body this long has no content-length, as upstream's.
	if check("get after update", identity, http.StatusOK, v2) != rv2 || identity.header.Get("Content-Length") != "" {
		t.Errorf("get after update: resourceVersion or Content-Length wrong: %v", identity.header)
	}
	// A stale resourceVersion still conflicts.
	e.do("PUT", path+"/big", body(v1, rv1)).mustCode(t, http.StatusConflict)

	// The same bytes over HTTP/1.1 and compressed.
	rq, err := http.NewRequest(http.MethodGet, e.srv.URL()+path+"/big", nil)
	if err != nil {
		t.Fatal(err)
	}
	rq.Header.Set("Authorization", "Bearer "+adminToken)
	rq.Header.Set("Accept-Encoding", "gzip")
	for name, c := range map[string]*http.Client{"http/1.1": e.http1Client(), "http/2": e.client} {
		res, err := c.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if raw, err = io.ReadAll(zr); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if !bytes.Equal(raw, identity.body) {
			t.Errorf("%s gzip: %d bytes differ from the identity response's %d", name, len(raw), len(identity.body))
		}
	}
	// Asked for YAML or pretty JSON, the object is rendered as before.
	pretty := e.do("GET", path+"/big?pretty=true", nil)
	if pretty.mustCode(t, http.StatusOK); !bytes.HasPrefix(pretty.body, []byte("{\n  \"kind\": \"ConfigMap\"")) {
		t.Errorf("pretty: body starts %.60q", pretty.body)
	}
}
