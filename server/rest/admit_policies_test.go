package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"platd/security"
	"platd/server/admission"
	"platd/server/apierr"
)

// recordedPolicies records what the policy step is asked, and warns of
// every write.
type recordedPolicies struct {
	mu   sync.Mutex
	seen []string
}

func (p *recordedPolicies) Empty() bool { return false }

func (p *recordedPolicies) Validate(ctx context.Context, a *admission.Attributes) error {
	kind := a.Descriptor.Kind
	if a.Kind != nil {
		kind = a.Kind.Kind
	}
	line := strings.Join([]string{a.Operation, a.Descriptor.Resource, a.Subresource, kind, a.Namespace, a.Name, objKind(a.Object), objKind(a.OldObject)}, " ")
	if a.DryRun {
		line += " dry"
	}
	if a.User == nil {
		line += " no-user"
	}
	p.mu.Lock()
	p.seen = append(p.seen, line)
	p.mu.Unlock()
	security.AddWarning(ctx, "seen "+a.Operation)
	return nil
}

func objKind(o Object) string {
	k, _ := o["kind"].(string)
	return k
}

func (p *recordedPolicies) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.seen
	p.seen = nil
	return out
}

// TestPolicyAdmissionStep checks which writes pass the policy step and
// as what: creates, updates, patches, subresources (a scale as a Scale),
// deletes one by one, dry runs and the server's own writes, but not an
// eviction's deletion of its pod; the step's warnings are answered.
func TestPolicyAdmissionStep(t *testing.T) {
	t.Parallel()
	p := &recordedPolicies{}
	h, srv, _ := newTestHandler(t, Config{Policies: p})
	p.take()
	send := func(method, path, ctype, body string, code int) http.Header {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != code {
			t.Fatalf("%s %s: %d, want %d", method, path, res.StatusCode, code)
		}
		return res.Header
	}
	const js, merge = "application/json", "application/merge-patch+json"
	cms := "/api/v1/namespaces/default/configmaps"
	deps := "/apis/apps/v1/namespaces/default/deployments"
	dep := `{"metadata":{"name":"web"},"spec":{"replicas":1,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`
	tests := []struct {
		name string
		do   func()
		want []string
	}{
		{"create", func() {
			if w := send("POST", cms, js, `{"metadata":{"name":"a"}}`, 201).Values("Warning"); !reflect.DeepEqual(w, []string{`299 - "seen CREATE"`}) {
				t.Errorf("warnings %q", w)
			}
		}, []string{"CREATE configmaps  ConfigMap default a ConfigMap  no-user"}},
		{"generated name", func() { send("POST", cms, js, `{"metadata":{"generateName":"g-"}}`, 201) }, []string{"CREATE configmaps  ConfigMap default  ConfigMap  no-user"}},
		{"dry run", func() { send("POST", cms+"?dryRun=All", js, `{"metadata":{"name":"d"}}`, 201) }, []string{"CREATE configmaps  ConfigMap default d ConfigMap  dry no-user"}},
		{"update", func() { send("PUT", cms+"/a", js, `{"metadata":{"name":"a"},"data":{"x":"y"}}`, 200) }, []string{"UPDATE configmaps  ConfigMap default a ConfigMap ConfigMap no-user"}},
		{"patch", func() { send("PATCH", cms+"/a", merge, `{"data":{"x":"z"}}`, 200) }, []string{"UPDATE configmaps  ConfigMap default a ConfigMap ConfigMap no-user"}},
		{"delete", func() {
			if w := send("DELETE", cms+"/a", js, "", 200).Values("Warning"); !reflect.DeepEqual(w, []string{`299 - "seen DELETE"`}) {
				t.Errorf("warnings %q", w)
			}
		}, []string{"DELETE configmaps  ConfigMap default a  ConfigMap no-user"}},
		{"deployment", func() { send("POST", deps, js, dep, 201) }, []string{"CREATE deployments  Deployment default web Deployment  no-user"}},
		{"status", func() { send("PATCH", deps+"/web/status", merge, `{"status":{"replicas":1}}`, 200) }, []string{"UPDATE deployments status Deployment default web Deployment Deployment no-user"}},
		{"scale", func() {
			if w := send("PATCH", deps+"/web/scale", merge, `{"spec":{"replicas":3}}`, 200).Values("Warning"); !reflect.DeepEqual(w, []string{`299 - "seen UPDATE"`}) {
				t.Errorf("warnings %q", w)
			}
		}, []string{"UPDATE deployments scale Scale default web Scale Scale no-user"}},
		{"in-process", func() {
			if _, err := h.Create(context.Background(), h.reg.Lookup("", "v1", "configmaps"), Object{"metadata": map[string]any{"name": "own", "namespace": "other"}}); err != nil {
				t.Fatal(err)
			}
		}, []string{"CREATE configmaps  ConfigMap other own ConfigMap  no-user"}},
		{"binding", func() {
			send("POST", "/api/v1/namespaces/default/pods", js, `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, 201)
			p.take()
			if w := send("POST", "/api/v1/namespaces/default/pods/p/binding", js, `{"metadata":{"name":"p"},"target":{"name":"n1"}}`, 201).Values("Warning"); !reflect.DeepEqual(w, []string{`299 - "seen CREATE"`}) {
				t.Errorf("warnings %q", w)
			}
		}, []string{"CREATE pods binding Binding default p Binding  no-user"}},
		{"eviction, not its deletion of the pod", func() {
			send("POST", "/api/v1/namespaces/default/pods/p/eviction", js, `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"}}`, 201)
		}, []string{"CREATE pods eviction Eviction default p Eviction  no-user"}},
		{"delete collection", func() {
			send("POST", cms, js, `{"metadata":{"name":"b"}}`, 201)
			p.take()
			send("DELETE", cms, js, "", 200)
		}, nil},
	}
	for _, tt := range tests {
		tt.do()
		got := p.take()
		if tt.name == "delete collection" {
			// Each object left in the namespace is deleted on its own.
			if len(got) != 2 || !strings.HasPrefix(got[0], "DELETE configmaps  ConfigMap default ") || !strings.HasPrefix(got[1], "DELETE configmaps  ConfigMap default ") {
				t.Errorf("%s: %q", tt.name, got)
			}
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got  %q\n want %q", tt.name, got, tt.want)
		}
	}
}

// optionsPolicies records the options each write is admitted with.
type optionsPolicies struct {
	mu   sync.Mutex
	seen []map[string]any
}

func (p *optionsPolicies) Empty() bool { return false }

func (p *optionsPolicies) Validate(ctx context.Context, a *admission.Attributes) error {
	opts := map[string]any{"kind": a.OptionsKind}
	for k, v := range a.Options {
		opts[k] = v
	}
	p.mu.Lock()
	p.seen = append(p.seen, opts)
	p.mu.Unlock()
	return nil
}

// TestPolicyAdmissionOptions checks that the policy step sees the
// options object of each operation as the request gave it: a patch's
// as the create or update it makes (without force), a deletion's
// DeleteOptions from its body.
func TestPolicyAdmissionOptions(t *testing.T) {
	t.Parallel()
	p := &optionsPolicies{}
	_, srv, _ := newTestHandler(t, Config{Policies: p})
	p.mu.Lock()
	p.seen = nil
	p.mu.Unlock()
	cms := "/api/v1/namespaces/default/configmaps"
	tests := []struct {
		name, method, path, ctype, body string
		want                            map[string]any
	}{
		{"create", "POST", cms + "?fieldManager=me&fieldValidation=Strict", "application/json", `{"metadata":{"name":"a"}}`,
			map[string]any{"kind": "CreateOptions", "fieldManager": "me", "fieldValidation": "Strict"}},
		{"create, dry run", "POST", cms + "?dryRun=All", "application/json", `{"metadata":{"name":"b"}}`,
			map[string]any{"kind": "CreateOptions", "dryRun": []any{"All"}}},
		{"update", "PUT", cms + "/a?fieldManager=up", "application/json", `{"metadata":{"name":"a"},"data":{"x":"y"}}`,
			map[string]any{"kind": "UpdateOptions", "fieldManager": "up"}},
		{"patch", "PATCH", cms + "/a?fieldValidation=Ignore", "application/merge-patch+json", `{"data":{"x":"z"}}`,
			map[string]any{"kind": "UpdateOptions", "fieldValidation": "Ignore"}},
		{"apply creating", "PATCH", cms + "/c?fieldManager=ap&force=true", "application/apply-patch+yaml", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`,
			map[string]any{"kind": "CreateOptions", "fieldManager": "ap"}},
		{"delete", "DELETE", cms + "/a", "application/json", `{"propagationPolicy":"Foreground","gracePeriodSeconds":5,"preconditions":{"uid":"` + "%UID%" + `"}}`,
			map[string]any{"kind": "DeleteOptions", "propagationPolicy": "Foreground", "gracePeriodSeconds": int64(5), "preconditions": map[string]any{"uid": "%UID%"}}},
	}
	var uid string
	for _, tt := range tests {
		body := strings.ReplaceAll(tt.body, "%UID%", uid)
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(body))
		req.Header.Set("Content-Type", tt.ctype)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		_ = json.NewDecoder(res.Body).Decode(&obj)
		res.Body.Close()
		if res.StatusCode >= 300 {
			t.Fatalf("%s: %d %v", tt.name, res.StatusCode, obj)
		}
		if tt.name == "update" {
			uid, _ = obj["metadata"].(map[string]any)["uid"].(string)
		}
		p.mu.Lock()
		got := p.seen
		p.seen = nil
		p.mu.Unlock()
		want := tt.want
		if pc, ok := want["preconditions"].(map[string]any); ok {
			pc["uid"] = uid
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("%s: options %v, want %v", tt.name, got, want)
		}
	}
}

// connectPolicies records the connects it is asked about, and denies
// those of pod "denied".
type connectPolicies struct {
	mu   sync.Mutex
	seen []*admission.Attributes
}

func (p *connectPolicies) Empty() bool { return false }

func (p *connectPolicies) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.OpConnect {
		return nil
	}
	p.mu.Lock()
	p.seen = append(p.seen, a)
	p.mu.Unlock()
	security.AddWarning(ctx, "connect "+a.Subresource)
	if a.Name == "denied" {
		return apierr.NewForbidden("", "pods", a.Name, "denied by policy")
	}
	return nil
}

// TestPolicyAdmissionConnect checks that connects pass the policy step
// before anything else, as upstream's: operation CONNECT, the object
// the connect's options from the query (a proxy's path from the URL),
// no options object; a refusal is the answer, and a pod's log, which is
// no connect, is not admitted.
func TestPolicyAdmissionConnect(t *testing.T) {
	t.Parallel()
	p := &connectPolicies{}
	_, srv, _ := newTestHandler(t, Config{Policies: p})
	pods := "/api/v1/namespaces/default/pods"
	tests := []struct {
		name, method, path string
		code               int
		want               Object // nil: not admitted
		sub                string
	}{
		{"exec", "POST", pods + "/p/exec?command=ls&command=-l&stdout=true&stdin=0&tty=False&container=c", http.StatusNotFound,
			Object{"kind": "PodExecOptions", "apiVersion": "v1", "command": []any{"ls", "-l"}, "stdout": true, "stdin": false, "tty": false, "container": "c"}, "exec"},
		{"exec, one command", "GET", pods + "/p/exec?command=ls", http.StatusNotFound,
			Object{"kind": "PodExecOptions", "apiVersion": "v1", "command": []any{"ls"}}, "exec"},
		{"attach", "POST", pods + "/p/attach?stdin=1", http.StatusNotFound,
			Object{"kind": "PodAttachOptions", "apiVersion": "v1", "stdin": true}, "attach"},
		{"port forward", "POST", pods + "/p/portforward?ports=80,443&ports=8080", http.StatusNotFound,
			Object{"kind": "PodPortForwardOptions", "apiVersion": "v1", "ports": []any{int64(80), int64(443), int64(8080)}}, "portforward"},
		{"pod proxy", "GET", pods + "/https:p:443/proxy/a/b/", http.StatusNotFound,
			Object{"kind": "PodProxyOptions", "apiVersion": "v1", "path": "/a/b/"}, "proxy"},
		{"service proxy", "GET", "/api/v1/namespaces/default/services/web/proxy?path=/ignored", http.StatusNotFound,
			Object{"kind": "ServiceProxyOptions", "apiVersion": "v1"}, "proxy"},
		{"denied", "POST", pods + "/denied/exec?command=sh", http.StatusForbidden,
			Object{"kind": "PodExecOptions", "apiVersion": "v1", "command": []any{"sh"}}, "exec"},
		{"log", "GET", pods + "/p/log", http.StatusNotFound, nil, ""},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		p.mu.Lock()
		seen := p.seen
		p.seen = nil
		p.mu.Unlock()
		if res.StatusCode != tt.code {
			t.Errorf("%s: %d, want %d", tt.name, res.StatusCode, tt.code)
		}
		if tt.want == nil {
			if len(seen) != 0 {
				t.Errorf("%s: admitted %v", tt.name, seen[0])
			}
			continue
		}
		if len(seen) != 1 {
			t.Errorf("%s: admitted %d times", tt.name, len(seen))
			continue
		}
		a := seen[0]
		if !reflect.DeepEqual(a.Object, tt.want) || a.Subresource != tt.sub || a.Kind == nil || a.Kind.Kind != tt.want["kind"] ||
			a.OptionsKind != "" || a.Options != nil || a.OldObject != nil {
			t.Errorf("%s: admitted %s/%s as %v with %v, options %q %v", tt.name, a.Descriptor.Resource, a.Subresource, a.Kind, a.Object, a.OptionsKind, a.Options)
		}
		if w := res.Header.Values("Warning"); !reflect.DeepEqual(w, []string{`299 - "connect ` + tt.sub + `"`}) {
			t.Errorf("%s: warnings %q", tt.name, w)
		}
	}
}

// emptyPolicies has no policy bound: it must not be asked.
type emptyPolicies struct{ asked atomic.Int32 }

func (p *emptyPolicies) Empty() bool { return true }

func (p *emptyPolicies) Validate(ctx context.Context, a *admission.Attributes) error {
	p.asked.Add(1)
	return nil
}

// TestPolicyAdmissionSkippedWhenEmpty checks that without bound policies
// no write builds admission attributes for them.
func TestPolicyAdmissionSkippedWhenEmpty(t *testing.T) {
	t.Parallel()
	p := &emptyPolicies{}
	_, srv, _ := newTestHandler(t, Config{Policies: p})
	for _, req := range []struct{ method, path, body string }{
		{"POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"a"}}`},
		{"DELETE", "/api/v1/namespaces/default/configmaps/a", ""},
		{"POST", "/api/v1/namespaces/default/pods/p/exec?command=ls", ""},
	} {
		r, _ := http.NewRequest(req.method, srv.URL+req.path, strings.NewReader(req.body))
		r.Header.Set("Content-Type", "application/json")
		res, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	if n := p.asked.Load(); n != 0 {
		t.Errorf("asked %d times", n)
	}
}
