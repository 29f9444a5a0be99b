package server_test

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// admissionWebhook is an admission webhook over TLS on 127.0.0.1 that
// records the reviews it is sent. Its answers follow the object's data:
// "deny" refuses with that message (and "code" as the status code),
// "warn" warns, "label" patches that label in when called at /mutate
// (v1beta1 answers without a patchType). Path /slow never answers
// before the call's deadline; /bad-uid answers with another uid.
type admissionWebhook struct {
	srv *httptest.Server
	mu  sync.Mutex
	// reviews are the reviews received, with the URL they came to.
	reviews []sentReview
	// scripts answer the reviews sent to their paths instead (script).
	scripts map[string]func(req map[string]any) map[string]any
}

type sentReview struct {
	url    string
	review map[string]any
}

func startAdmissionWebhook(t *testing.T) *admissionWebhook {
	t.Helper()
	aw := &admissionWebhook{}
	aw.srv = httptest.NewTLSServer(http.HandlerFunc(aw.serve))
	t.Cleanup(aw.srv.Close)
	return aw
}

func (aw *admissionWebhook) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var review map[string]any
	if err := json.Unmarshal(b, &review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	aw.mu.Lock()
	aw.reviews = append(aw.reviews, sentReview{url: r.URL.String(), review: review})
	aw.mu.Unlock()
	if r.URL.Path == "/slow" {
		<-r.Context().Done()
		return
	}
	req, _ := review["request"].(map[string]any)
	aw.mu.Lock()
	script := aw.scripts[r.URL.Path]
	aw.mu.Unlock()
	if script != nil {
		resp := map[string]any{"uid": req["uid"], "allowed": true}
		for k, v := range script(req) {
			resp[k] = v
		}
		if p, ok := resp["patch"].([]any); ok {
			b, _ := json.Marshal(p)
			resp["patch"], resp["patchType"] = base64.StdEncoding.EncodeToString(b), "JSONPatch"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": resp})
		return
	}
	uid := req["uid"]
	if r.URL.Path == "/bad-uid" {
		uid = "other"
	}
	resp := map[string]any{"uid": uid, "allowed": true}
	obj, _ := req["object"].(map[string]any)
	data, _ := obj["data"].(map[string]any)
	if msg, ok := data["deny"].(string); ok {
		status := map[string]any{"message": msg, "reason": "Forbidden"}
		if code, ok := data["code"].(string); ok {
			var n int
			_ = json.Unmarshal([]byte(code), &n)
			status["code"] = n
		}
		resp["allowed"], resp["status"] = false, status
	}
	if warn, ok := data["warn"].(string); ok {
		resp["warnings"] = []any{warn}
	}
	if label, ok := data["label"].(string); ok && r.URL.Path == "/mutate" {
		patch := `[{"op":"add","path":"/metadata/labels","value":{"` + label + `":"yes"}}]`
		if labels, _ := path(obj, "metadata.labels").(map[string]any); labels != nil {
			patch = `[{"op":"add","path":"/metadata/labels/` + label + `","value":"yes"}]`
		}
		resp["patch"] = base64.StdEncoding.EncodeToString([]byte(patch))
		if review["apiVersion"] != nil && !strings.HasSuffix(review["apiVersion"].(string), "/v1beta1") {
			resp["patchType"] = "JSONPatch"
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": resp})
}

// last is the last review received for an object of that name.
func (aw *admissionWebhook) last(name string) (sentReview, bool) {
	aw.mu.Lock()
	defer aw.mu.Unlock()
	for i := len(aw.reviews) - 1; i >= 0; i-- {
		r := aw.reviews[i]
		if path(r.review, "request.object.metadata.name") == name || path(r.review, "request.oldObject.metadata.name") == name {
			return r, true
		}
	}
	return sentReview{}, false
}

// script answers the reviews sent to path p with what answer returns
// for the review's request, over an allowing answer: "allowed",
// "status", "warnings", and "patch" as a list of JSON Patch operations.
func (aw *admissionWebhook) script(p string, answer func(req map[string]any) map[string]any) {
	aw.mu.Lock()
	defer aw.mu.Unlock()
	if aw.scripts == nil {
		aw.scripts = map[string]func(map[string]any) map[string]any{}
	}
	aw.scripts[p] = answer
}

// requests are the requests of the reviews sent to path p, in order.
func (aw *admissionWebhook) requests(p string) []map[string]any {
	aw.mu.Lock()
	defer aw.mu.Unlock()
	var out []map[string]any
	for _, r := range aw.reviews {
		if u, _ := url.Parse(r.url); u != nil && u.Path == p {
			req, _ := r.review["request"].(map[string]any)
			out = append(out, req)
		}
	}
	return out
}

// caBundle is the webhook's CA as a caBundle.
func (aw *admissionWebhook) caBundle() string {
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: aw.srv.Certificate().Raw}))
}

// hook is a webhook of the test server at p, on configmap creates and
// updates, without side effects.
func (aw *admissionWebhook) hook(name, p string, extra map[string]any) map[string]any {
	h := map[string]any{
		"name":         name,
		"clientConfig": map[string]any{"url": aw.srv.URL + p, "caBundle": aw.caBundle()},
		"rules": []any{map[string]any{
			"operations": []any{"CREATE", "UPDATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"},
		}},
		"sideEffects": "None", "admissionReviewVersions": []any{"v1"},
	}
	for k, v := range extra {
		h[k] = v
	}
	return h
}

// webhookConfig creates a webhook configuration of resource.
func (e *policyEnv) webhookConfig(resource, name string, hooks ...any) {
	e.t.Helper()
	e.do("POST", e.policyPath(resource), map[string]any{"metadata": map[string]any{"name": name}, "webhooks": hooks}).mustCode(e.t, 201)
}

// TestWebhookValidatingAllowDeny calls a validating webhook: a refusal
// is answered with the webhook's message and code after upstream's
// words and is not stored, warnings are answered, and the review sent
// carries the request (kind, resource, user, objects, options) and the
// call's timeout.
func TestWebhookValidatingAllowDeny(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	aw := startAdmissionWebhook(t)
	e.webhookConfig("validatingwebhookconfigurations", "checks", aw.hook("deny.example.com", "/validate", nil))
	cms := "/api/v1/namespaces/default/configmaps"
	const msg = `admission webhook "deny.example.com" denied the request: no debug here`
	e.untilCode("the webhook to deny", "POST", cms, cm("probe", map[string]string{"deny": "no debug here"}, nil), 400)
	st := e.do("POST", cms, cm("bad", map[string]string{"deny": "no debug here", "code": "403"}, nil)).mustCode(t, 403).mustMessage(t, msg).obj(t)
	if st["reason"] != "Forbidden" || st["status"] != "Failure" {
		t.Errorf("refusal %v", st)
	}
	e.do("GET", cms+"/bad", nil).mustCode(t, 404)

	r := e.do("POST", cms, cm("good", map[string]string{"warn": "careful"}, nil)).mustCode(t, 201)
	if got := r.header.Values("Warning"); !reflect.DeepEqual(got, []string{`299 - "careful"`}) {
		t.Errorf("warnings %q", got)
	}
	e.do("GET", cms+"/good", nil).mustCode(t, 200)
	sent, ok := aw.last("good")
	if !ok {
		t.Fatal("no review of the create")
	}
	if !strings.HasSuffix(sent.url, "/validate?timeout=10s") {
		t.Errorf("called at %s", sent.url)
	}
	rv := sent.review
	if rv["apiVersion"] != platBrand.Group("admission")+"/v1" || rv["kind"] != "AdmissionReview" {
		t.Errorf("review type %v %v", rv["apiVersion"], rv["kind"])
	}
	req := rv["request"].(map[string]any)
	if uid, _ := req["uid"].(string); uid == "" {
		t.Error("review without uid")
	}
	want := map[string]any{
		"kind":            map[string]any{"group": "", "version": "v1", "kind": "ConfigMap"},
		"resource":        map[string]any{"group": "", "version": "v1", "resource": "configmaps"},
		"requestKind":     map[string]any{"group": "", "version": "v1", "kind": "ConfigMap"},
		"requestResource": map[string]any{"group": "", "version": "v1", "resource": "configmaps"},
		"name":            "good", "namespace": "default", "operation": "CREATE", "dryRun": false, "oldObject": nil,
	}
	for k, v := range want {
		if !reflect.DeepEqual(req[k], v) {
			t.Errorf("request.%s = %v, want %v", k, req[k], v)
		}
	}
	if path(req, "object.data.warn") != "careful" || path(req, "object.kind") != "ConfigMap" {
		t.Errorf("request.object %v", req["object"])
	}
	if path(req, "options.kind") != "CreateOptions" || path(req, "userInfo.username") == nil {
		t.Errorf("request options %v, user %v", req["options"], req["userInfo"])
	}

	// An update is reviewed with the stored object as oldObject.
	e.do("PUT", cms+"/good", cm("good", map[string]string{"warn": "again"}, nil)).mustCode(t, 200)
	sent, _ = aw.last("good")
	if req := sent.review["request"].(map[string]any); req["operation"] != "UPDATE" || path(req, "oldObject.data.warn") != "careful" || path(req, "object.data.warn") != "again" {
		t.Errorf("update review %v", req)
	}
	e.do("PUT", cms+"/good", cm("good", map[string]string{"deny": "no"}, nil)).mustCode(t, 400)
	if got := path(e.do("GET", cms+"/good", nil).mustCode(t, 200).obj(t), "data.warn"); got != "again" {
		t.Errorf("data after a refused update: %v", got)
	}
}

// TestWebhookFailurePolicy calls webhooks that cannot answer: a service
// (no cluster DNS reaches it) and a webhook slower than its timeout
// refuse the write under failurePolicy Fail with upstream's 500, and are
// passed over under Ignore; an invalid answer is a failure too.
func TestWebhookFailurePolicy(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	aw := startAdmissionWebhook(t)
	selected := func(label string) map[string]any {
		return map[string]any{"matchLabels": map[string]any{"case": label}}
	}
	service := map[string]any{"service": map[string]any{"namespace": "default", "name": "nowhere", "path": "/check"}, "caBundle": aw.caBundle()}
	e.webhookConfig("validatingwebhookconfigurations", "failures",
		aw.hook("probe.example.com", "/validate", map[string]any{"objectSelector": selected("probe")}),
		aw.hook("service-fail.example.com", "", map[string]any{"objectSelector": selected("service-fail"), "clientConfig": service, "timeoutSeconds": 1}),
		aw.hook("service-ignore.example.com", "", map[string]any{"objectSelector": selected("service-ignore"), "clientConfig": service, "timeoutSeconds": 1, "failurePolicy": "Ignore"}),
		aw.hook("slow-fail.example.com", "/slow", map[string]any{"objectSelector": selected("slow-fail"), "timeoutSeconds": 1}),
		aw.hook("slow-ignore.example.com", "/slow", map[string]any{"objectSelector": selected("slow-ignore"), "timeoutSeconds": 1, "failurePolicy": "Ignore"}),
		aw.hook("bad-uid.example.com", "/bad-uid", map[string]any{"objectSelector": selected("bad-uid")}),
	)
	cms := "/api/v1/namespaces/default/configmaps"
	e.untilCode("the configuration", "POST", cms, cm("probe", map[string]string{"deny": "probe"}, map[string]string{"case": "probe"}), 400)
	tests := []struct {
		label string
		code  int
		// prefix and suffix of the refusal's message
		prefix, suffix string
	}{
		{"service-fail", 500, `Internal error occurred: failed calling webhook "service-fail.example.com": failed to call webhook: Post "https://nowhere.default.svc:443/check?timeout=1s": `, ""},
		{"service-ignore", 201, "", ""},
		{"slow-fail", 500, `Internal error occurred: failed calling webhook "slow-fail.example.com": failed to call webhook: Post "` + aw.srv.URL + `/slow?timeout=1s": `, "context deadline exceeded"},
		{"slow-ignore", 201, "", ""},
		{"bad-uid", 500, `Internal error occurred: failed calling webhook "bad-uid.example.com": received invalid webhook response: expected response.uid=`, `, got "other"`},
	}
	for _, tt := range tests {
		r := e.do("POST", cms, cm(tt.label, map[string]string{"a": "b"}, map[string]string{"case": tt.label})).mustCode(t, tt.code)
		if tt.code == 201 {
			e.do("GET", cms+"/"+tt.label, nil).mustCode(t, 200)
			continue
		}
		msg, _ := r.obj(t)["message"].(string)
		if !strings.HasPrefix(msg, tt.prefix) || !strings.HasSuffix(msg, tt.suffix) {
			t.Errorf("%s: message %q", tt.label, msg)
		}
		if reason := r.obj(t)["reason"]; reason != "InternalError" {
			t.Errorf("%s: reason %v", tt.label, reason)
		}
		e.do("GET", cms+"/"+tt.label, nil).mustCode(t, 404)
	}
}

// TestWebhookSelectors checks that a webhook's namespaceSelector and
// objectSelector decide which writes it sees.
func TestWebhookSelectors(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	aw := startAdmissionWebhook(t)
	e.namespace("watched", map[string]any{"webhooks": "on"})
	e.namespace("quiet", nil)
	e.webhookConfig("validatingwebhookconfigurations", "selected", aw.hook("selected.example.com", "/validate", map[string]any{
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"webhooks": "on"}},
		"objectSelector":    map[string]any{"matchExpressions": []any{map[string]any{"key": "skip", "operator": "DoesNotExist"}}},
	}))
	deny := map[string]string{"deny": "selected"}
	e.untilCode("the webhook", "POST", "/api/v1/namespaces/watched/configmaps", cm("probe", deny, nil), 400)
	tests := []struct {
		ns     string
		labels map[string]string
		code   int
	}{
		{"watched", nil, 400},
		{"watched", map[string]string{"skip": "1"}, 201},
		{"quiet", nil, 201},
	}
	for i, tt := range tests {
		name := "c" + string(rune('0'+i))
		e.do("POST", "/api/v1/namespaces/"+tt.ns+"/configmaps", cm(name, deny, tt.labels)).mustCode(t, tt.code)
	}
}

// TestWebhookReviewVersions checks that a webhook is sent the first
// AdmissionReview version it accepts that the server knows, and that its
// answer in that version counts.
func TestWebhookReviewVersions(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	aw := startAdmissionWebhook(t)
	e.webhookConfig("validatingwebhookconfigurations", "versions",
		aw.hook("beta.example.com", "/validate", map[string]any{"admissionReviewVersions": []any{"v1beta1", "v1"},
			"objectSelector": map[string]any{"matchLabels": map[string]any{"v": "beta"}}}),
		aw.hook("v1.example.com", "/validate", map[string]any{"admissionReviewVersions": []any{"v1", "v1beta1"},
			"objectSelector": map[string]any{"matchLabels": map[string]any{"v": "one"}}}))
	cms := "/api/v1/namespaces/default/configmaps"
	for _, tt := range []struct{ label, name, version string }{{"beta", "beta.example.com", "v1beta1"}, {"one", "v1.example.com", "v1"}} {
		e.untilCode("the webhook", "POST", cms, cm("c-"+tt.label, map[string]string{"deny": "x"}, map[string]string{"v": tt.label}), 400).
			mustMessage(t, `admission webhook "`+tt.name+`" denied the request: x`)
		sent, _ := aw.last("c-" + tt.label)
		if got := sent.review["apiVersion"]; got != platBrand.Group("admission")+"/"+tt.version {
			t.Errorf("%s: sent %v", tt.name, got)
		}
		if path(sent.review, "request.dryRun") != true {
			t.Errorf("%s: dryRun %v", tt.name, path(sent.review, "request.dryRun"))
		}
	}
}

// TestWebhookMutating calls mutating webhooks before validation: a
// webhook's JSONPatch (in a v1 or a v1beta1 answer) is in the stored
// object and the answer, the validating webhooks see the mutated object,
// and a mutating webhook's refusal refuses the write.
func TestWebhookMutating(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	aw := startAdmissionWebhook(t)
	e.webhookConfig("mutatingwebhookconfigurations", "labels",
		aw.hook("label.example.com", "/mutate", map[string]any{"objectSelector": map[string]any{"matchLabels": map[string]any{"review": "v1"}}}),
		aw.hook("label-beta.example.com", "/mutate", map[string]any{"admissionReviewVersions": []any{"v1beta1"},
			"objectSelector": map[string]any{"matchLabels": map[string]any{"review": "v1beta1"}}}))
	e.webhookConfig("validatingwebhookconfigurations", "after", aw.hook("check.example.com", "/check", map[string]any{
		"objectSelector": map[string]any{"matchLabels": map[string]any{"checked": "yes"}}}))
	cms := "/api/v1/namespaces/default/configmaps"
	for _, version := range []string{"v1", "v1beta1"} {
		eventually(t, "the "+version+" webhook to label", func() bool {
			r := e.do("POST", cms+"?dryRun=All", cm("probe", map[string]string{"label": "probed"}, map[string]string{"review": version}))
			return r.code == 201 && path(r.obj(t), "metadata.labels.probed") == "yes"
		})
	}
	// The validating webhook is in effect once it refuses.
	e.untilCode("the validating webhook", "POST", cms, cm("probe", map[string]string{"deny": "x"}, map[string]string{"checked": "yes"}), 400).
		mustMessage(t, `admission webhook "check.example.com" denied the request: x`)

	for _, version := range []string{"v1", "v1beta1"} {
		name := "labelled-" + version
		created := e.do("POST", cms, cm(name, map[string]string{"label": "checked"}, map[string]string{"review": version})).mustCode(t, 201).obj(t)
		want := map[string]any{"review": version, "checked": "yes"}
		if got := path(created, "metadata.labels"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: created labels %v, want %v", version, got, want)
		}
		if got := path(e.do("GET", cms+"/"+name, nil).mustCode(t, 200).obj(t), "metadata.labels"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: stored labels %v, want %v", version, got, want)
		}
		sent, _ := aw.last(name)
		if !strings.Contains(sent.url, "/check") || path(sent.review, "request.object.metadata.labels.checked") != "yes" {
			t.Errorf("%s: last review at %s of %v", version, sent.url, path(sent.review, "request.object.metadata.labels"))
		}
	}
	e.do("POST", cms, cm("refused", map[string]string{"deny": "not here"}, map[string]string{"review": "v1"})).mustCode(t, 400).
		mustMessage(t, `admission webhook "label.example.com" denied the request: not here`)
	e.do("GET", cms+"/refused", nil).mustCode(t, 404)
}
