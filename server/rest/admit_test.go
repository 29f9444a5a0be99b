package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
)

// TestAdmissionHooks: a type's Admit hook changes what creates and
// updates of the main resource store, dry runs and the server's own writes
// included, reading other objects through the lookup; its Denial is a 403
// naming the object as the request did; ValidateAdmission runs once the
// object is valid; subresource writes run neither.
func TestAdmissionHooks(t *testing.T) {
	t.Parallel()
	h, srv, _ := newTestHandler(t, Config{})
	ctx := context.Background()
	cms := h.reg.Lookup("", "v1", "configmaps")
	var validated atomic.Int32
	// Each config map copies the "v" of the config map "source", and says
	// whether it saw a stored object.
	cms.Strategy.Admit = func(_ context.Context, l registry.Lookup, obj, old Object) error {
		data, _ := obj["data"].(map[string]any)
		if data == nil {
			data = map[string]any{}
			obj["data"] = data
		}
		if data["deny"] != nil {
			return &registry.Denial{Reason: "denied"}
		}
		src, err := l.Get(cms, metaString(obj, "namespace"), "source")
		if apierr.ReasonOf(err) == apierr.ReasonNotFound {
			return nil
		}
		if err != nil {
			return err
		}
		data["copied"] = src["data"].(map[string]any)["v"]
		data["updated"] = strconv.FormatBool(old != nil)
		return nil
	}
	cms.Strategy.ValidateAdmission = func(_ context.Context, l registry.Lookup, obj, old Object) error {
		validated.Add(1)
		data, _ := obj["data"].(map[string]any)
		if data["veto"] != nil {
			return &registry.Denial{Reason: "vetoed, saw copied=" + data["copied"].(string)}
		}
		return nil
	}
	send := func(method, path, body string, code int) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		if res.StatusCode != code {
			t.Fatalf("%s %s: %d %v, want %d", method, path, res.StatusCode, out, code)
		}
		return out
	}
	data := func(o map[string]any) map[string]any { d, _ := o["data"].(map[string]any); return d }
	const cmPath = "/api/v1/namespaces/default/configmaps"

	send("POST", cmPath, `{"metadata":{"name":"source"},"data":{"v":"one"}}`, 201)
	send("POST", cmPath, `{"metadata":{"name":"a"}}`, 201)
	if got := data(send("GET", cmPath+"/a", "", 200)); got["copied"] != "one" || got["updated"] != "false" {
		t.Errorf("created: %v", got)
	}
	send("PUT", cmPath+"/source", `{"metadata":{"name":"source"},"data":{"v":"two"}}`, 200)
	send("PUT", cmPath+"/a", `{"metadata":{"name":"a"},"data":{"x":"y"}}`, 200)
	if got := data(send("GET", cmPath+"/a", "", 200)); got["copied"] != "two" || got["updated"] != "true" || got["x"] != "y" {
		t.Errorf("updated: %v", got)
	}
	// A dry run is admitted as the real write, and stores nothing.
	if got := data(send("POST", cmPath+"?dryRun=All", `{"metadata":{"name":"dry"}}`, 201)); got["copied"] != "two" {
		t.Errorf("dry run: %v", got)
	}
	send("GET", cmPath+"/dry", "", 404)
	// The server's own writes are admitted too.
	own, err := h.Create(ctx, cms, Object{"metadata": map[string]any{"name": "own", "namespace": "default"}})
	if err != nil || data(own)["copied"] != "two" {
		t.Errorf("in-process create: %v %v", own, err)
	}
	// A denial names the object as the request named it.
	st := send("POST", cmPath, `{"metadata":{"generateName":"gen-"},"data":{"deny":"1"}}`, 403)
	if st["message"] != `configmaps "gen-" is forbidden: denied` || st["reason"] != "Forbidden" ||
		st["details"].(map[string]any)["name"] != "gen-" {
		t.Errorf("denial: %v", st)
	}
	st = send("PUT", cmPath+"/a", `{"metadata":{"name":"a"},"data":{"deny":"1"}}`, 403)
	if st["message"] != `configmaps "a" is forbidden: denied` {
		t.Errorf("update denial: %v", st)
	}
	// ValidateAdmission sees the admitted object, after validation.
	st = send("POST", cmPath, `{"metadata":{"name":"v"},"data":{"veto":"1"}}`, 403)
	if st["message"] != `configmaps "v" is forbidden: vetoed, saw copied=two` {
		t.Errorf("veto: %v", st)
	}
	before := validated.Load()
	send("POST", cmPath, `{"metadata":{"name":"v","labels":{"bad label":"x"}},"data":{"veto":"1"}}`, 422)
	if validated.Load() != before {
		t.Error("ValidateAdmission ran on an invalid object")
	}
	send("GET", cmPath+"/v", "", 404)

	// A status write runs no admission.
	quotas := h.reg.Lookup("", "v1", "resourcequotas")
	var calls atomic.Int32
	quotas.Strategy.Admit = func(context.Context, registry.Lookup, Object, Object) error { calls.Add(1); return nil }
	quotas.Strategy.ValidateAdmission = quotas.Strategy.Admit
	const qPath = "/api/v1/namespaces/default/resourcequotas"
	q := send("POST", qPath, `{"metadata":{"name":"q"},"spec":{"hard":{"pods":"1"}}}`, 201)
	if calls.Load() != 2 {
		t.Fatalf("create ran %d hooks, want 2", calls.Load())
	}
	q["status"] = map[string]any{"hard": map[string]any{"pods": "1"}, "used": map[string]any{"pods": "0"}}
	body, _ := json.Marshal(q)
	send("PUT", qPath+"/q/status", string(body), 200)
	if calls.Load() != 2 {
		t.Errorf("status write ran %d hooks", calls.Load()-2)
	}
}

// TestValidateAdmissionWarnings: what a ValidateAdmission hook warns of is
// answered as Warning headers on creates, updates and patches, also when
// the hook refuses the write.
func TestValidateAdmissionWarnings(t *testing.T) {
	t.Parallel()
	h, srv, _ := newTestHandler(t, Config{})
	cms := h.reg.Lookup("", "v1", "configmaps")
	cms.Strategy.ValidateAdmission = func(ctx context.Context, _ registry.Lookup, obj, _ Object) error {
		data, _ := obj["data"].(map[string]any)
		if w, ok := data["warn"].(string); ok {
			security.AddWarning(ctx, w)
		}
		if data["deny"] != nil {
			return &registry.Denial{Reason: "denied"}
		}
		return nil
	}
	const cmPath = "/api/v1/namespaces/default/configmaps"
	for _, tc := range []struct {
		method, path, contentType, body string
		code                            int
		warnings                        []string
	}{
		{"POST", cmPath, "application/json", `{"metadata":{"name":"a"},"data":{"warn":"careful \"a\""}}`, 201, []string{`299 - "careful \"a\""`}},
		{"POST", cmPath, "application/json", `{"metadata":{"name":"b"},"data":{"warn":"refused","deny":"1"}}`, 403, []string{`299 - "refused"`}},
		{"POST", cmPath, "application/json", `{"metadata":{"name":"c"}}`, 201, nil},
		{"PUT", cmPath + "/a", "application/json", `{"metadata":{"name":"a"},"data":{"warn":"put"}}`, 200, []string{`299 - "put"`}},
		{"PATCH", cmPath + "/c", "application/merge-patch+json", `{"data":{"warn":"patched"}}`, 200, []string{`299 - "patched"`}},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", tc.contentType)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.code || !slices.Equal(res.Header.Values("Warning"), tc.warnings) {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, res.StatusCode, res.Header.Values("Warning"), tc.code, tc.warnings)
		}
	}
}

// TestAdmissionDenials: a hook's Denials are answered as upstream answers
// an aggregate of Forbidden errors, a 500 without reason whose message
// joins each refusal naming the object.
func TestAdmissionDenials(t *testing.T) {
	t.Parallel()
	h, srv, _ := newTestHandler(t, Config{})
	cms := h.reg.Lookup("", "v1", "configmaps")
	cms.Strategy.ValidateAdmission = func(_ context.Context, _ registry.Lookup, obj, _ Object) error {
		var reasons []string
		for _, k := range []string{"a", "b", "c"} {
			if r, ok := obj["data"].(map[string]any)[k].(string); ok {
				reasons = append(reasons, r)
			}
		}
		return &registry.Denials{Reasons: reasons}
	}
	const cmPath = "/api/v1/namespaces/default/configmaps"
	for _, tc := range []struct {
		name, data, want string
	}{
		{"one", `{"a":"first"}`, `configmaps "one" is forbidden: first`},
		{"two", `{"a":"first","b":"second"}`, `[configmaps "two" is forbidden: first, configmaps "two" is forbidden: second]`},
		{"same", `{"a":"first","b":"first","c":"third"}`, `[configmaps "same" is forbidden: first, configmaps "same" is forbidden: third]`},
	} {
		res, err := srv.Client().Post(srv.URL+cmPath, "application/json",
			strings.NewReader(`{"metadata":{"name":"`+tc.name+`"},"data":`+tc.data+`}`))
		if err != nil {
			t.Fatal(err)
		}
		var st map[string]any
		_ = json.NewDecoder(res.Body).Decode(&st)
		res.Body.Close()
		if res.StatusCode != 500 || st["code"] != float64(500) || st["reason"] != nil || st["message"] != tc.want || st["details"] != nil {
			t.Errorf("%s: %d %v, want 500 without reason and %q", tc.name, res.StatusCode, st, tc.want)
		}
		if got, err := h.Get(cms, "default", tc.name); err == nil {
			t.Errorf("%s: stored %v", tc.name, got)
		}
	}
}
