package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"platd/bolt"
	"platd/config"
	"platd/server/apierr"
	"platd/server/builtin"
	"platd/server/registry"
	"platd/server/schema"
)

// answerHandler serves the built-in types plus a made-up answered
// resource (echoes) and an answered subresource of config maps (reply),
// which answers with a Scale naming its parent.
func answerHandler(t *testing.T) (*Handler, *bolt.DB) {
	br, _ := config.LookupBrand("plat")
	cat, err := schema.Load(br)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	if err := builtin.Register(reg, cat, br); err != nil {
		t.Fatal(err)
	}
	cm := *reg.Lookup("", "v1", "configmaps")
	cm.Subresources = append(cm.Subresources, registry.Subresource{
		Name: "reply", Verbs: []string{registry.VerbCreate}, Group: "autoscaling", Version: "v1", Kind: "Scale",
		Serve: registry.ServeAnswer,
		Answer: func(_ context.Context, req registry.AnswerRequest) (registry.Object, error) {
			m := req.Object["metadata"].(map[string]any)
			m["name"] = metaString(req.Parent, "name") + "/" + req.Name
			if req.DryRun {
				m["labels"] = map[string]any{"dry": "run"}
			}
			return req.Object, nil
		},
	})
	reg.Add(&cm)
	// The echo resource answers with a new Scale whose name is the caller.
	reg.Add(&registry.Descriptor{
		Group: "autoscaling", Version: "v1", Kind: "Scale", Resource: "echoes", Verbs: []string{registry.VerbCreate},
		Schema: cat.ByGVK("autoscaling", "v1", "Scale"), Serve: registry.ServeAnswer,
		Answer: func(_ context.Context, req registry.AnswerRequest) (registry.Object, error) {
			if metaString(req.Object, "name") == "bad" {
				return nil, apierr.BadRequest("bad name")
			}
			return registry.Object{"metadata": map[string]any{"name": req.Who.Name}}, nil
		},
	})
	db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{Stamp: Stamp, NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return New(Config{Store: db, Registry: reg, Brand: br, Kinds: cat.ByGVK}), db
}

func TestServeAnswer(t *testing.T) {
	t.Parallel()
	h, db := answerHandler(t)
	cm := h.reg.Lookup("", "v1", "configmaps")
	if _, err := db.Create(context.Background(), cm.Key("ns", "web"), []byte(`{"metadata":{"name":"web","namespace":"ns","resourceVersion":""}}`)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, body string
		code             int
		want             []string
		warning          string
	}{
		{name: "resource", path: "/apis/autoscaling/v1/echoes", body: `{"spec":{"replicas":2}}`, code: 201,
			want: []string{`"kind":"Scale"`, `"apiVersion":"autoscaling/v1"`, `"metadata":{"creationTimestamp":null}`}},
		{name: "hook error", path: "/apis/autoscaling/v1/echoes", body: `{"metadata":{"name":"bad"}}`, code: 400, want: []string{`"message":"bad name"`}},
		{name: "strict", path: "/apis/autoscaling/v1/echoes?fieldValidation=Strict", body: `{"spec":{},"bogus":1}`, code: 400,
			want: []string{`Scale in version \"v1\" cannot be handled as a Scale: strict decoding error: unknown field \"bogus\"`}},
		{name: "warn", path: "/apis/autoscaling/v1/echoes", body: `{"spec":{},"bogus":1}`, code: 201, warning: `unknown field \"bogus\"`},
		{name: "wrong kind", path: "/apis/autoscaling/v1/echoes", body: `{"kind":"Pod","apiVersion":"v1"}`, code: 400},
		{name: "get refused", path: "/apis/autoscaling/v1/echoes/x", code: 405},
		{name: "subresource", path: "/api/v1/namespaces/ns/configmaps/web/reply", body: `{"spec":{"replicas":3}}`, code: 201,
			want: []string{`"name":"web/web"`, `"replicas":3`, `"manager":"test"`, `"subresource":"reply"`, `"f:replicas":{}`}},
		{name: "subresource dry run", path: "/api/v1/namespaces/ns/configmaps/web/reply?dryRun=All", body: `{}`, code: 201,
			want: []string{`"labels":{"dry":"run"}`}},
		{name: "missing parent", path: "/api/v1/namespaces/ns/configmaps/nope/reply", body: `{}`, code: 404,
			want: []string{`"message":"configmaps \"nope\" not found"`}},
		{name: "bad dryRun", path: "/api/v1/namespaces/ns/configmaps/web/reply?dryRun=Some", body: `{}`, code: 422},
	} {
		method := http.MethodPost
		if c.body == "" {
			method = http.MethodGet
		}
		r := httptest.NewRequest(method, c.path, strings.NewReader(c.body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("User-Agent", "test/1.0")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		body := w.Body.String()
		if w.Code != c.code {
			t.Errorf("%s: code %d, want %d: %s", c.name, w.Code, c.code, body)
			continue
		}
		if !json.Valid([]byte(body)) {
			t.Errorf("%s: body is not JSON: %s", c.name, body)
		}
		compact := compactJSON(body)
		for _, s := range c.want {
			if !strings.Contains(compact, s) {
				t.Errorf("%s: body lacks %s: %s", c.name, s, compact)
			}
		}
		if c.warning != "" && !strings.Contains(w.Header().Get("Warning"), c.warning) {
			t.Errorf("%s: warning %q, want %s", c.name, w.Header().Get("Warning"), c.warning)
		}
	}
}

func compactJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
