package rest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

const podsURL = "/api/v1/namespaces/default/pods"

// decodeBody decodes a JSON answer.
func decodeBody(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return m
}

// TestBindPreconditions: a Binding's uid and resourceVersion are
// preconditions of the write, refused as upstream's storage refuses them
// and leaving the pod unbound; the matching ones bind it, through the
// pod's subresource and through the bindings resource alike.
func TestBindPreconditions(t *testing.T) {
	t.Parallel()
	h, srv, _ := newTestHandler(t, Config{})
	pods := h.reg.Lookup("", "v1", "pods")
	const other = "00000000-0000-0000-0000-000000000000"
	for i, c := range []struct {
		name string
		// binding builds the Binding's metadata from the pod's uid and
		// resourceVersion; wantMsg the refusal's AdditionalErrorMsg ("":
		// bound).
		binding func(uid, rv string) string
		wantMsg func(uid, rv string) string
		url     func(pod string) string
	}{
		{"stale resourceVersion",
			func(uid, rv string) string { return `"resourceVersion":"1"` },
			func(uid, rv string) string {
				return "Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: " + rv
			},
			func(pod string) string { return podsURL + "/" + pod + "/binding" }},
		{"another uid",
			func(uid, rv string) string { return `"uid":"` + other + `","resourceVersion":"` + rv + `"` },
			func(uid, rv string) string {
				return "Precondition failed: UID in precondition: " + other + ", UID in object meta: " + uid
			},
			func(pod string) string { return podsURL + "/" + pod + "/binding" }},
		{"stale resourceVersion through bindings",
			func(uid, rv string) string { return `"resourceVersion":"2"` },
			func(uid, rv string) string {
				return "Precondition failed: ResourceVersion in precondition: 2, ResourceVersion in object meta: " + rv
			},
			func(string) string { return "/api/v1/namespaces/default/bindings" }},
		{"matching", func(uid, rv string) string { return `"uid":"` + uid + `","resourceVersion":"` + rv + `"` }, nil,
			func(pod string) string { return podsURL + "/" + pod + "/binding" }},
	} {
		pod := fmt.Sprintf("p%d", i)
		code, _, b := call(t, srv, "POST", podsURL, "application/json", "", `{"metadata":{"name":"`+pod+`"},"spec":{"containers":[{"name":"c","image":"x"}]}}`)
		if code != 201 {
			t.Fatalf("%s: create: %d %s", c.name, code, b)
		}
		md := decodeBody(t, b)["metadata"].(map[string]any)
		uid, rv := md["uid"].(string), md["resourceVersion"].(string)
		body := `{"metadata":{"name":"` + pod + `",` + c.binding(uid, rv) + `},"target":{"name":"node-a"}}`
		code, _, b = call(t, srv, "POST", c.url(pod), "application/json", "", body)
		_, _, got := call(t, srv, "GET", podsURL+"/"+pod, "", "", "")
		node := decodeBody(t, got)["spec"].(map[string]any)["nodeName"]
		if c.wantMsg == nil {
			if code != 201 || node != "node-a" {
				t.Errorf("%s: %d %s, node %v", c.name, code, b, node)
			}
			continue
		}
		st := decodeBody(t, b)
		want := `Operation cannot be fulfilled on pods "` + pod + `": StorageError: invalid object, Code: 4, Key: ` + h.storedAt(pods.Key("default", pod)) +
			`, ResourceVersion: 0, AdditionalErrorMsg: ` + c.wantMsg(uid, rv)
		if code != 409 || st["reason"] != "Conflict" || st["message"] != want ||
			!reflect.DeepEqual(st["details"], map[string]any{"name": pod, "kind": "pods"}) {
			t.Errorf("%s: %d %v %q %v\nwant 409 Conflict %q", c.name, code, st["reason"], st["message"], st["details"], want)
		}
		if node != nil {
			t.Errorf("%s: refused binding bound the pod to %v", c.name, node)
		}
	}
}

// TestBindReplacesScheduledCondition: binding sets PodScheduled True as
// a whole new condition; the reason and message of an earlier refusal go.
func TestBindReplacesScheduledCondition(t *testing.T) {
	t.Parallel()
	_, srv, _ := newTestHandler(t, Config{})
	code, _, b := call(t, srv, "POST", podsURL, "application/json", "", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x"}]}}`)
	if code != 201 {
		t.Fatalf("create: %d %s", code, b)
	}
	pod := decodeBody(t, b)
	pod["status"].(map[string]any)["conditions"] = []any{map[string]any{
		"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes are available",
		"lastProbeTime": "2026-01-02T03:04:05Z", "lastTransitionTime": "2026-01-02T03:04:05Z",
	}}
	raw, _ := json.Marshal(pod)
	if code, _, b := call(t, srv, "PUT", podsURL+"/p/status", "application/json", "", string(raw)); code != 200 {
		t.Fatalf("status: %d %s", code, b)
	}
	if code, _, b := call(t, srv, "POST", podsURL+"/p/binding", "application/json", "", `{"metadata":{"name":"p"},"target":{"name":"node-a"}}`); code != 201 {
		t.Fatalf("bind: %d %s", code, b)
	}
	_, _, b = call(t, srv, "GET", podsURL+"/p", "", "", "")
	conds := decodeBody(t, b)["status"].(map[string]any)["conditions"].([]any)
	got := conds[0].(map[string]any)
	changed, _ := got["lastTransitionTime"].(string)
	delete(got, "lastTransitionTime")
	if len(conds) != 1 || changed == "" || changed == "2026-01-02T03:04:05Z" ||
		!reflect.DeepEqual(got, map[string]any{"type": "PodScheduled", "status": "True", "lastProbeTime": nil}) {
		t.Errorf("conditions after binding %v (transition %q)", conds, changed)
	}
}

// TestEvictionAcceptsV1beta1: an Eviction body may be of policy/v1beta1,
// as upstream's eviction subresource accepts it; other versions are not.
func TestEvictionAcceptsV1beta1(t *testing.T) {
	t.Parallel()
	_, srv, _ := newTestHandler(t, Config{})
	for _, c := range []struct {
		apiVersion string
		code       int
	}{{"policy/v1beta1", 201}, {"policy/v1", 201}, {"policy/v2", 400}} {
		code, _, b := call(t, srv, "POST", podsURL, "application/json", "", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x"}]}}`)
		if code != 201 {
			t.Fatalf("create: %d %s", code, b)
		}
		code, _, b = call(t, srv, "POST", podsURL+"/p/eviction", "application/json", "", `{"apiVersion":"`+c.apiVersion+`","kind":"Eviction","metadata":{"name":"p"}}`)
		gone, _, _ := call(t, srv, "GET", podsURL+"/p", "", "", "")
		if code != c.code || (gone == 404) != (c.code == 201) {
			t.Errorf("%s: eviction %d %s; pod read %d after", c.apiVersion, code, b, gone)
		}
		if gone != 404 {
			call(t, srv, "DELETE", podsURL+"/p", "", "", "")
		}
	}
}

// TestStaticPodEphemeralContainers: a static pod's mirror takes no
// ephemeral containers, refused as upstream words it.
func TestStaticPodEphemeralContainers(t *testing.T) {
	t.Parallel()
	h, srv, _ := newTestHandler(t, Config{})
	mirror := h.brand.Label("config.mirror")
	code, _, b := call(t, srv, "POST", podsURL, "application/json", "", `{"metadata":{"name":"static-n","annotations":{"`+mirror+`":"x"}},"spec":{"nodeName":"n","containers":[{"name":"c","image":"x"}]}}`)
	if code != 201 {
		t.Fatalf("create: %d %s", code, b)
	}
	pod := decodeBody(t, b)
	pod["spec"].(map[string]any)["ephemeralContainers"] = []any{map[string]any{"name": "debug", "image": "busybox", "terminationMessagePolicy": "File"}}
	raw, _ := json.Marshal(pod)
	code, _, b = call(t, srv, "PUT", podsURL+"/static-n/ephemeralcontainers", "application/json", "", string(raw))
	st := decodeBody(t, b)
	want := map[string]any{"name": "static-n", "kind": "Pod", "causes": []any{map[string]any{
		"reason": "FieldValueForbidden", "message": "Forbidden: static pods do not support ephemeral containers", "field": "[]"}}}
	if code != 422 || st["message"] != `Pod "static-n" is invalid: []: Forbidden: static pods do not support ephemeral containers` || !reflect.DeepEqual(st["details"], want) {
		t.Errorf("%d %s", code, b)
	}
	_, _, b = call(t, srv, "GET", podsURL+"/static-n", "", "", "")
	if _, ok := decodeBody(t, b)["spec"].(map[string]any)["ephemeralContainers"]; ok {
		t.Errorf("refused ephemeral containers stored: %s", b)
	}
}
