package aggregator

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
)

// fakeObjects serves objects by descriptor resource and namespace/name.
type fakeObjects map[string]registry.Object

func (f fakeObjects) Get(d *registry.Descriptor, ns, name string) (registry.Object, error) {
	if o, ok := f[d.Resource+"/"+ns+"/"+name]; ok {
		return o, nil
	}
	return nil, apierr.NotFound("", d.Resource, name)
}

func (f fakeObjects) List(d *registry.Descriptor, _ string) ([]registry.Object, int64, error) {
	var out []registry.Object
	for k, o := range f {
		if strings.HasPrefix(k, d.Resource+"/") {
			out = append(out, o)
		}
	}
	return out, 0, nil
}

func newTestAggregator(objs fakeObjects) *Aggregator {
	return New(Config{Objects: objs, Services: &registry.Descriptor{Resource: "services"}, Endpoints: &registry.Descriptor{Resource: "endpoints"},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

func TestResolve(t *testing.T) {
	svc := func(kv ...any) registry.Object {
		spec := map[string]any{"ports": []any{map[string]any{"name": "https", "port": int64(443)}}}
		for i := 0; i+1 < len(kv); i += 2 {
			spec[kv[i].(string)] = kv[i+1]
		}
		return registry.Object{"spec": spec}
	}
	eps := func(ready, notReady string, portName string, port int64) registry.Object {
		subset := map[string]any{"ports": []any{map[string]any{"name": portName, "port": port}}}
		if ready != "" {
			subset["addresses"] = []any{map[string]any{"ip": ready}}
		}
		if notReady != "" {
			subset["notReadyAddresses"] = []any{map[string]any{"ip": notReady}}
		}
		return registry.Object{"subsets": []any{subset}}
	}
	tests := []struct {
		name      string
		objs      fakeObjects
		port      int64
		want, err string
	}{
		{"ready endpoint", fakeObjects{"services/ns/api": svc(), "endpoints/ns/api": eps("10.0.0.7", "", "https", 8443)}, 443, "https://10.0.0.7:8443", ""},
		{"IPv6 endpoint", fakeObjects{"services/ns/api": svc(), "endpoints/ns/api": eps("fd00::7", "", "https", 8443)}, 443, "https://[fd00::7]:8443", ""},
		{"node port", fakeObjects{"services/ns/api": svc("type", "NodePort"), "endpoints/ns/api": eps("10.0.0.7", "", "https", 8443)}, 443, "https://10.0.0.7:8443", ""},
		{"external name", fakeObjects{"services/ns/api": svc("type", "ExternalName", "externalName", "api.example.org")}, 8443, "https://api.example.org:8443", ""},
		{"no service", fakeObjects{}, 443, "", `service "api" not found`},
		{"no such port", fakeObjects{"services/ns/api": svc()}, 8443, "", `no service port 8443 found for service "api"`},
		{"no endpoints", fakeObjects{"services/ns/api": svc()}, 443, "", `endpoints "api" not found`},
		{"only not ready", fakeObjects{"services/ns/api": svc(), "endpoints/ns/api": eps("", "10.0.0.8", "https", 8443)}, 443, "", `no endpoints available for service "api"`},
		{"other port name", fakeObjects{"services/ns/api": svc(), "endpoints/ns/api": eps("10.0.0.7", "", "metrics", 8443)}, 443, "", `no endpoints available for service "api"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newTestAggregator(tt.objs).resolve("ns", "api", tt.port)
			var s string
			if got != nil {
				s = got.String()
			}
			if s != tt.want || (err == nil) != (tt.err == "") || err != nil && err.Error() != tt.err {
				t.Errorf("got %q, %v; want %q, %q", s, err, tt.want, tt.err)
			}
		})
	}
}

func TestSetUserHeaders(t *testing.T) {
	h := http.Header{"X-Remote-User": {"mallory"}, "X-Remote-Extra-Forged": {"x"}, "X-Remote-Group": {"system:masters"}, "Accept": {"application/json"}}
	u := &security.User{Name: "bob", UID: "u-1", Groups: []string{"a", "b"}, Extra: map[string][]string{"example.com/team": {"blue", "green"}}}
	setUserHeaders(h, u, false)
	want := "map[Accept:[application/json] X-Remote-Extra-Example.com%2fteam:[blue green] X-Remote-Group:[a b] X-Remote-User:[bob]]"
	if fmt.Sprint(h) != want {
		t.Errorf("headers %v\nwant %s", h, want)
	}
	setUserHeaders(h, u, true)
	if h.Get("X-Remote-Uid") != "u-1" {
		t.Errorf("uid header: %v", h)
	}
}

func TestEscapeExtraKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"scopes", "scopes"},
		{"example.com/team", "example.com%2Fteam"},
		{"100%", "100%25"},
		{"a b:c", "a%20b%3Ac"},
		{"ü", "%C3%BC"},
		{"!#$&'*+-.^_`|~", "!#$&'*+-.^_`|~"},
	}
	for _, tt := range tests {
		if got := escapeExtraKey(tt.in); got != tt.want {
			t.Errorf("escapeExtraKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzEscapeExtraKey: an escaped key is a header name the receiving
// server unescapes back to the key.
func FuzzEscapeExtraKey(f *testing.F) {
	for _, s := range []string{"scopes", "example.com/team", "100%", "a b", "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		esc := escapeExtraKey(key)
		for i := 0; i < len(esc); i++ {
			if !tokenByte(esc[i]) {
				t.Fatalf("escapeExtraKey(%q) = %q holds %q", key, esc, esc[i])
			}
		}
		if back, err := url.PathUnescape(esc); err != nil || back != key {
			t.Fatalf("unescaping %q: %q, %v; want %q", esc, back, err, key)
		}
	})
}

func TestAvailable(t *testing.T) {
	tests := []struct {
		conds []any
		want  bool
	}{
		{nil, false},
		{[]any{map[string]any{"type": "Available", "status": "True"}}, true},
		{[]any{map[string]any{"type": "Other", "status": "True"}, map[string]any{"type": "Available", "status": "False"}}, false},
		{[]any{map[string]any{"type": "Available", "status": "Unknown"}}, false},
	}
	for _, tt := range tests {
		if got := Available(registry.Object{"status": map[string]any{"conditions": tt.conds}}); got != tt.want {
			t.Errorf("Available(%v) = %v", tt.conds, got)
		}
	}
}

func TestStripCredentials(t *testing.T) {
	h := http.Header{"Authorization": {"Bearer x"}, "Impersonate-User": {"bob"}, "Impersonate-Extra-Scopes": {"a"}, "Accept": {"*/*"}}
	stripCredentials(h)
	if got := fmt.Sprint(h); got != "map[Accept:[*/*]]" || strings.Contains(got, "Bearer") {
		t.Errorf("after stripping: %v", h)
	}
}

// TestRemoteGroupVersionsReadsInBackground: discovery of an Available
// APIService whose resources were never read (no availability check ran
// here) reads them in the background, and Close ends such reads.
func TestRemoteGroupVersionsReadsInBackground(t *testing.T) {
	srv, caBundle := servingAs(t, http.HandlerFunc(serveDiscovery))
	objs := backedBy(srv, caBundle)
	a := newTestAggregator(objs)
	a.cfg.APIServices = &registry.Descriptor{Resource: "apiservices"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		gvs := a.RemoteGroupVersions()
		if len(gvs) != 1 {
			t.Fatalf("listed %v", gvs)
		}
		if gvs[0].Resources != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the resources were never read")
		}
		time.Sleep(5 * time.Millisecond)
	}
	a.Close()
	a.mu.Lock()
	a.lists = map[string]resourceList{}
	a.mu.Unlock()
	a.RemoteGroupVersions()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.reading) != 0 {
		t.Error("a read started after Close")
	}
}
