package admission

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
)

// allowAll is a webhook server allowing everything; calls counts them.
func allowAll(t *testing.T, calls *atomic.Int32) (url, caBundle string) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var rv map[string]any
		_ = json.NewDecoder(r.Body).Decode(&rv)
		req, _ := rv["request"].(map[string]any)
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": rv["apiVersion"], "kind": "AdmissionReview",
			"response": map[string]any{"uid": req["uid"], "allowed": true}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL, base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
}

// TestWebhookDryRunSideEffects checks that a dry run reaches only
// webhooks without side effects (None, NoneOnDryRun); one with Some or
// Unknown refuses it, as upstream, without being called.
func TestWebhookDryRunSideEffects(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	url, ca := allowAll(t, &calls)
	reg := registry.New()
	reg.Add(configMaps)
	tests := []struct {
		sideEffects string
		dryRun      bool
		wantErr     string
		wantCalls   int32
	}{
		{"None", true, "", 1},
		{"NoneOnDryRun", true, "", 1},
		{"Some", true, `admission webhook "h.example.com" does not support dry run`, 0},
		{"Unknown", true, `admission webhook "h.example.com" does not support dry run`, 0},
		{"Some", false, "", 1},
	}
	for _, tt := range tests {
		calls.Store(0)
		w := NewWebhooks(reg, fakeLookup{}, nil, config.Brands["plat"])
		w.SetConfig(false, registry.Object{"metadata": map[string]any{"name": "c"}, "webhooks": []any{map[string]any{
			"name": "h.example.com", "clientConfig": map[string]any{"url": url, "caBundle": ca},
			"rules":       []any{map[string]any{"operations": []any{"*"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"}}},
			"sideEffects": tt.sideEffects, "admissionReviewVersions": []any{"v1"},
		}}})
		a := &Attributes{Descriptor: configMaps, Operation: OpCreate, Name: "c", Object: registry.Object{"metadata": map[string]any{"name": "c"}}, DryRun: tt.dryRun}
		err := w.Validate(context.Background(), a)
		got := ""
		if err != nil {
			got = err.Error()
			if apierr.Code(err) != http.StatusBadRequest {
				t.Errorf("%s: code %d", tt.sideEffects, apierr.Code(err))
			}
		}
		if got != tt.wantErr || calls.Load() != tt.wantCalls {
			t.Errorf("%s dryRun=%v: err %q, %d calls; want %q, %d", tt.sideEffects, tt.dryRun, got, calls.Load(), tt.wantErr, tt.wantCalls)
		}
	}
}

// TestRejection checks upstream's refusal of a denied request: at least
// code 400, status Failure, the message or else the reason after who
// denied it.
func TestRejection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		result *apierr.Status
		want   apierr.Status
	}{
		{nil, apierr.Status{Kind: "Status", APIVersion: "v1", Status: "Failure", Code: 400,
			Message: `admission webhook "w" denied the request without explanation`}},
		{&apierr.Status{Code: 200, Status: "Success", Reason: "Forbidden"}, apierr.Status{Kind: "Status", APIVersion: "v1", Status: "Failure", Code: 400,
			Reason: "Forbidden", Message: `admission webhook "w" denied the request: Forbidden`}},
		{&apierr.Status{Code: 422, Message: "bad", Details: &apierr.Details{Name: "x"}}, apierr.Status{Kind: "Status", APIVersion: "v1", Status: "Failure", Code: 422,
			Message: `admission webhook "w" denied the request: bad`, Details: &apierr.Details{Name: "x"}}},
	}
	for _, tt := range tests {
		if got := apierr.FromError(rejection("w", tt.result)).Status; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("rejection of %+v:\n got  %+v\n want %+v", tt.result, got, tt.want)
		}
	}
}

// TestWebhookReinvocation checks upstream's reinvocation: a webhook with
// reinvocationPolicy IfNeeded is called again, once, when a webhook
// after it changed the object; with Never it is called once.
func TestWebhookReinvocation(t *testing.T) {
	t.Parallel()
	var noopCalls, patchCalls atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rv map[string]any
		_ = json.NewDecoder(r.Body).Decode(&rv)
		req, _ := rv["request"].(map[string]any)
		resp := map[string]any{"uid": req["uid"], "allowed": true}
		if r.URL.Path == "/patch" {
			patchCalls.Add(1)
			resp["patchType"] = "JSONPatch"
			resp["patch"] = base64.StdEncoding.EncodeToString([]byte(`[{"op":"add","path":"/metadata/labels","value":{"p":"1"}}]`))
		} else {
			noopCalls.Add(1)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": rv["apiVersion"], "kind": "AdmissionReview", "response": resp})
	}))
	t.Cleanup(srv.Close)
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	reg := registry.New()
	reg.Add(configMaps)
	hook := func(name, path, reinvocation string) map[string]any {
		return map[string]any{
			"name": name, "clientConfig": map[string]any{"url": srv.URL + path, "caBundle": ca},
			"rules":       []any{map[string]any{"operations": []any{"*"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"}}},
			"sideEffects": "None", "admissionReviewVersions": []any{"v1"}, "reinvocationPolicy": reinvocation,
		}
	}
	for _, tt := range []struct {
		policy    string
		wantCalls int32
	}{{"IfNeeded", 2}, {"Never", 1}} {
		noopCalls.Store(0)
		patchCalls.Store(0)
		w := NewWebhooks(reg, fakeLookup{}, nil, config.Brands["plat"])
		w.SetConfig(true, registry.Object{"metadata": map[string]any{"name": "c"}, "webhooks": []any{hook("noop.example.com", "/noop", tt.policy), hook("patch.example.com", "/patch", "Never")}})
		obj := registry.Object{"kind": "ConfigMap", "apiVersion": "v1", "metadata": map[string]any{"name": "c"}}
		out, err := w.Mutate(context.Background(), &Attributes{Descriptor: configMaps, Operation: OpCreate, Name: "c", Object: obj})
		if err != nil {
			t.Fatal(err)
		}
		if got := out["metadata"].(map[string]any)["labels"]; !reflect.DeepEqual(got, map[string]any{"p": "1"}) {
			t.Errorf("%s: labels %v", tt.policy, got)
		}
		if _, ok := obj["metadata"].(map[string]any)["labels"]; ok {
			t.Errorf("%s: the given object was changed", tt.policy)
		}
		if noopCalls.Load() != tt.wantCalls || patchCalls.Load() != 1 {
			t.Errorf("%s: noop called %d times (want %d), patch %d", tt.policy, noopCalls.Load(), tt.wantCalls, patchCalls.Load())
		}
	}
}

// TestWebhooksCloseIdle checks that CloseIdle closes the connections the
// webhook clients keep open between calls, so that a stopped server
// leaves none behind.
func TestWebhooksCloseIdle(t *testing.T) {
	t.Parallel()
	closed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rv map[string]any
		_ = json.NewDecoder(r.Body).Decode(&rv)
		req, _ := rv["request"].(map[string]any)
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": rv["apiVersion"], "kind": "AdmissionReview",
			"response": map[string]any{"uid": req["uid"], "allowed": true}})
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			select {
			case closed <- struct{}{}:
			default:
			}
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	reg := registry.New()
	reg.Add(configMaps)
	w := NewWebhooks(reg, fakeLookup{}, nil, config.Brands["plat"])
	w.SetConfig(false, registry.Object{"metadata": map[string]any{"name": "c"}, "webhooks": []any{map[string]any{
		"name": "h.example.com", "clientConfig": map[string]any{"url": srv.URL, "caBundle": ca},
		"rules":       []any{map[string]any{"operations": []any{"*"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"}}},
		"sideEffects": "None", "admissionReviewVersions": []any{"v1"},
	}}})
	a := &Attributes{Descriptor: configMaps, Operation: OpCreate, Name: "c", Object: registry.Object{"metadata": map[string]any{"name": "c"}}}
	if err := w.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
		t.Fatal("the connection closed before CloseIdle")
	default:
	}
	w.CloseIdle()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("CloseIdle left the webhook's connection open")
	}
}
