package server_test

import (
	"crypto/tls"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"platd/config"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	e := start(t)
	unauthorized := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n"
	for _, c := range []struct {
		name  string
		token string
		code  int
	}{
		{"bad token", "not-a-valid-token", 401},
		{"no credential, anonymous off", "", 401},
		{"static token", aliceToken, 200},
	} {
		r := e.send(req{method: "GET", path: "/api/v1/namespaces/default/configmaps", token: c.token})
		if r.code != c.code {
			t.Errorf("%s: status %d, want %d", c.name, r.code, c.code)
		}
		if c.code == 401 && string(r.body) != unauthorized {
			t.Errorf("%s: body %s", c.name, r.body)
		}
		if c.code == 401 && r.header.Get("WWW-Authenticate") != "" {
			t.Errorf("%s: WWW-Authenticate set", c.name)
		}
	}
	// The admin client certificate of the generated kubeconfig.
	cert, err := tls.LoadX509KeyPair(filepath.Join(e.opts.CertDir, "admin.crt"), filepath.Join(e.opts.CertDir, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	tr := e.client.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.Certificates = []tls.Certificate{cert}
	res, err := (&http.Client{Transport: tr}).Get(e.srv.URL() + "/api/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("client certificate: status %d", res.StatusCode)
	}
}

func TestAuthorizationAlwaysDeny(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) {
		o.AuthorizationModes = []string{config.ModeAlwaysDeny}
		o.AnonymousAuth = true
	})
	// system:masters is allowed whatever the chain says.
	e.do("GET", "/api/v1/namespaces/default/configmaps", nil).mustCode(t, 200)
	cases := []struct {
		token, method, path, msg string
	}{
		{aliceToken, "GET", "/api/v1/namespaces/default/configmaps", `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default": Everything is forbidden.`},
		{aliceToken, "GET", "/api/v1/namespaces/default/configmaps/x", `configmaps "x" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "default": Everything is forbidden.`},
		{aliceToken, "GET", "/api/v1/namespaces", `namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope: Everything is forbidden.`},
		{"", "GET", "/version", `forbidden: User "system:anonymous" cannot get path "/version": Everything is forbidden.`},
	}
	for _, c := range cases {
		r := e.send(req{method: c.method, path: c.path, token: c.token}).mustCode(t, 403)
		st := r.obj(t)
		if st["message"] != c.msg || st["reason"] != "Forbidden" {
			t.Errorf("%s %s:\n got %v\nwant %s", c.method, c.path, st["message"], c.msg)
		}
		if r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff header", c.path)
		}
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	e := start(t)
	for _, c := range []struct {
		path, body string
		code       int
	}{
		{"/livez", "ok", 200},
		{"/healthz", "ok", 200},
		{"/readyz", "ok", 200},
		{"/readyz/etcd", "ok", 200},
		{"/readyz/storage", "404 page not found\n", 404},
		{"/livez/ping", "ok", 200},
		{"/livez/nonexistent", "404 page not found\n", 404},
	} {
		r := e.do("GET", c.path, nil)
		if r.code != c.code || string(r.body) != c.body {
			t.Errorf("%s: %d %q", c.path, r.code, r.body)
		}
	}
	v := e.do("GET", "/readyz?verbose", nil).mustCode(t, 200)
	body := string(v.body)
	for _, line := range []string{"[+]ping ok\n", "[+]etcd ok\n", "[+]shutdown ok\n", "readyz check passed\n"} {
		if !strings.Contains(body, line) {
			t.Errorf("readyz?verbose lacks %q:\n%s", line, body)
		}
	}
	if !strings.HasSuffix(body, "[+]shutdown ok\nreadyz check passed\n") {
		t.Errorf("shutdown is not the last check:\n%s", body)
	}
	if v.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("content type %q", v.header.Get("Content-Type"))
	}
	x := e.do("GET", "/livez?verbose&exclude=etcd&exclude=nonexistent", nil).mustCode(t, 200)
	if !strings.Contains(string(x.body), "[+]etcd excluded: ok\n") || !strings.Contains(string(x.body), `warn: some health checks cannot be excluded: no matches for "nonexistent"`) {
		t.Errorf("exclude: %s", x.body)
	}
}

func TestDiscoveryAndOpenAPI(t *testing.T) {
	t.Parallel()
	e := start(t)
	api := e.do("GET", "/api", nil).mustCode(t, 200).obj(t)
	if api["kind"] != "APIVersions" || path(api, "versions") == nil {
		t.Errorf("/api: %v", api)
	}
	v1 := e.do("GET", "/api/v1", nil).mustCode(t, 200).obj(t)
	found := map[string]map[string]any{}
	for _, r := range v1["resources"].([]any) {
		m := r.(map[string]any)
		found[m["name"].(string)] = m
	}
	for _, want := range []string{"configmaps", "secrets", "namespaces", "namespaces/status", "namespaces/finalize", "serviceaccounts", "limitranges", "events"} {
		if found[want] == nil {
			t.Errorf("/api/v1 lacks %s", want)
		}
	}
	if cmRes := found["configmaps"]; cmRes != nil {
		if cmRes["storageVersionHash"] != "qFsyl6wFWjQ=" || cmRes["kind"] != "ConfigMap" || cmRes["namespaced"] != true {
			t.Errorf("configmaps entry: %v", cmRes)
		}
	}
	e.do("GET", "/apis/nosuch.example.com/v1/things", nil).mustCode(t, 404)
	ver := e.do("GET", "/version", nil).mustCode(t, 200).obj(t)
	if gv, _ := ver["gitVersion"].(string); !strings.HasPrefix(gv, "v1.32.") || ver["major"] != "1" || ver["minor"] != "32" {
		t.Errorf("/version: %v", ver)
	}
	idx := e.do("GET", "/openapi/v3", nil).mustCode(t, 200).obj(t)
	url, _ := path(idx, "paths.api/v1.serverRelativeURL").(string)
	if url == "" {
		p, _ := idx["paths"].(map[string]any)
		if e, ok := p["api/v1"].(map[string]any); ok {
			url, _ = e["serverRelativeURL"].(string)
		}
	}
	if !strings.HasPrefix(url, "/openapi/v3/api/v1?hash=") {
		t.Fatalf("openapi index: %v", idx)
	}
	doc := e.do("GET", url, nil).mustCode(t, 200)
	if doc.header.Get("Cache-Control") != "public, immutable" {
		t.Errorf("openapi cache control %q", doc.header.Get("Cache-Control"))
	}
	// kubectl's validation looks for a PATCH operation with the kind's GVK
	// and a fieldValidation parameter.
	ops := doc.obj(t)["paths"].(map[string]any)["/api/v1/namespaces/{namespace}/configmaps/{name}"].(map[string]any)
	patch := ops["patch"].(map[string]any)
	gvk := patch["x-kubernetes-group-version-kind"].(map[string]any)
	if gvk["kind"] != "ConfigMap" || gvk["version"] != "v1" || gvk["group"] != "" {
		t.Errorf("patch gvk %v", gvk)
	}
	hasFV := false
	for _, p := range patch["parameters"].([]any) {
		if p.(map[string]any)["name"] == "fieldValidation" {
			hasFV = true
		}
	}
	if !hasFV {
		t.Error("PATCH operation lacks the fieldValidation parameter")
	}
}
