package discovery

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"platd/server/registry"
)

// TestLegacyGolden compares legacy discovery bodies byte for byte with the
// upstream captures (trimmed to the fixture resources where the capture
// lists more).
func TestLegacyGolden(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "kubernetes")
	tests := []struct {
		path string
		want func(t *testing.T) []byte
	}{
		{"/api", func(t *testing.T) []byte { _, b := goldenCapture(t, "api.resp"); return b }},
		{"/api/v1", func(t *testing.T) []byte { return readTestdata(t, "api-v1-subset.json") }},
		{"/apis/" + mustBrand(t, "kubernetes").Group("rbac.authorization"), func(t *testing.T) []byte { _, b := goldenCapture(t, "apis-rbac.resp"); return b }},
		{"/apis/" + mustBrand(t, "kubernetes").Group("rbac.authorization") + "/v1", func(t *testing.T) []byte { _, b := goldenCapture(t, "apis-rbac-v1.resp"); return b }},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			w := get(h, tc.path, map[string]string{"Accept": "application/json"})
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if want := tc.want(t); !bytes.Equal(w.Body.Bytes(), want) {
				t.Errorf("body differs from golden\n got: %s\nwant: %s", w.Body, want)
			}
		})
	}
}

func TestAPIsListsNamedGroupsInPriorityOrder(t *testing.T) {
	t.Parallel()
	for _, brand := range []string{"plat", "kubernetes"} {
		t.Run(brand, func(t *testing.T) {
			t.Parallel()
			h, reg := newTestHandler(t, brand)
			reg.Add(&registry.Descriptor{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Verbs: allVerbs})
			reg.Add(&registry.Descriptor{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler", Resource: "horizontalpodautoscalers", Verbs: allVerbs})
			reg.Add(&registry.Descriptor{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler", Resource: "horizontalpodautoscalers", Verbs: allVerbs})
			rbac := mustBrand(t, brand).Group("rbac.authorization")
			// As the APIService priorities of upstream: apps above
			// autoscaling above rbac; autoscaling/v2 above v1.
			pri := map[string]registry.Priority{
				"apps/v1": {Group: 17800, Version: 15}, "autoscaling/v2": {Group: 17500, Version: 30},
				"autoscaling/v1": {Group: 17500, Version: 15}, rbac + "/v1": {Group: 17000, Version: 15},
			}
			reg.SetPriorities(func(g, v string) (registry.Priority, bool) { p, ok := pri[g+"/"+v]; return p, ok })
			w := get(h, "/apis", map[string]string{"User-Agent": "kubectl"})
			var got apiGroupList
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, g := range got.Groups {
				names = append(names, g.Name)
			}
			want := []string{"apps", "autoscaling", rbac}
			if got.Kind != "APIGroupList" || got.APIVersion != "v1" || !equalStrings(names, want) {
				t.Fatalf("got %s %s %v, want %v", got.Kind, got.APIVersion, names, want)
			}
			as := got.Groups[1]
			if as.PreferredVersion.Version != "v2" || len(as.Versions) != 2 || as.Versions[1].GroupVersion != "autoscaling/v1" {
				t.Errorf("autoscaling versions %+v preferred %+v", as.Versions, as.PreferredVersion)
			}
			if bytes.Contains(w.Body.Bytes(), []byte("\n  ")) || !bytes.HasSuffix(w.Body.Bytes(), []byte("}\n")) {
				t.Errorf("non-curl client should get compact JSON with a newline: %q", w.Body)
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "plat")
	rbac := mustBrand(t, "plat").Group("rbac.authorization")
	for _, p := range []string{"/apis/foo.example", "/apis/foo.example/v1", "/apis/" + rbac + "/v9", "/api/v2", "/apis/" + rbac + "/v1/extra", "/nothing"} {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			w := get(h, p, nil)
			if w.Code != http.StatusNotFound || w.Body.String() != "404 page not found\n" {
				t.Errorf("got %d %q", w.Code, w.Body)
			}
		})
	}
}

func TestNegotiation(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "plat")
	tests := []struct {
		name, accept string
		code         int
		contentType  string
	}{
		{"empty", "", 200, "application/json"},
		{"wildcard", "*/*", 200, "application/json"},
		{"yaml", "application/yaml", 200, "application/yaml"},
		{"protobuf", h.brand.ProtobufMediaType, 200, h.brand.ProtobufMediaType},
		{"another brand's protobuf", mustBrand(t, "kubernetes").ProtobufMediaType, 406, "application/json"},
		{"unacceptable", "application/xml", 406, "application/json"},
		{"foreign conversion skipped", "application/json;as=Table;v=v1;g=x", 406, "application/json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := get(h, "/api/v1", map[string]string{"Accept": tc.accept})
			if w.Code != tc.code || w.Header().Get("Content-Type") != tc.contentType {
				t.Fatalf("got %d %q: %s", w.Code, w.Header().Get("Content-Type"), w.Body)
			}
			switch tc.code {
			case 406:
				var st struct{ Reason, Message string }
				if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Reason != "NotAcceptable" ||
					st.Message != "only the following media types are accepted: application/json, application/yaml, "+h.brand.ProtobufMediaType {
					t.Errorf("406 body %s", w.Body)
				}
			case 200:
				if !bytes.Contains(w.Body.Bytes(), []byte("configmaps")) {
					t.Errorf("body lacks configmaps: %s", w.Body)
				}
			}
		})
	}
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "plat")
	r, _ := http.NewRequest(http.MethodPost, "/api", nil)
	w := newRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusMethodNotAllowed || !bytes.Contains(w.Body.Bytes(), []byte(`"reason": "MethodNotAllowed"`)) {
		t.Errorf("got %d %s", w.Code, w.Body)
	}
}

func TestRegistryChangeIsServed(t *testing.T) {
	t.Parallel()
	h, reg := newTestHandler(t, "plat")
	before := get(h, "/apis", nil).Body.String()
	if bytes.Contains([]byte(before), []byte("stable.example.com")) {
		t.Fatal("group present before it was added")
	}
	reg.Add(&registry.Descriptor{Group: "stable.example.com", Version: "v1", Kind: "CronTab", ListKind: "CronTabList", Resource: "crontabs", Singular: "crontab", Namespaced: true, Verbs: allVerbs})
	after := get(h, "/apis", nil).Body.String()
	if !bytes.Contains([]byte(after), []byte(`"groupVersion": "stable.example.com/v1"`)) {
		t.Errorf("added group missing: %s", after)
	}
	if w := get(h, "/apis/stable.example.com/v1", nil); w.Code != 200 || !bytes.Contains(w.Body.Bytes(), []byte(`"name": "crontabs"`)) {
		t.Errorf("resource list of added group: %d %s", w.Code, w.Body)
	}
}

func TestStorageVersionHash(t *testing.T) {
	t.Parallel()
	plat, kube := mustBrand(t, "plat"), mustBrand(t, "kubernetes")
	tests := []struct{ group, kind, want string }{
		{"", "ConfigMap", "qFsyl6wFWjQ="},
		{"", "Namespace", "Q3oi5N2YM8M="},
		{"", "Secret", "S6u1pOWzb84="},
		{"", "ServiceAccount", "pbx9ZvyFpBE="},
		{"", "LimitRange", "EBKMFVe6cwo="},
		{"", "Event", "r2yiGXH7wu8="},
		{kube.Group("rbac.authorization"), "Role", "7FuwZcIIItM="},
		{plat.Group("rbac.authorization"), "Role", "23WB0esUncY="},
	}
	for _, tc := range tests {
		if got := storageVersionHash(tc.group, "v1", tc.kind); got != tc.want {
			t.Errorf("%s/v1/%s: got %s want %s", tc.group, tc.kind, got, tc.want)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestStorageVersionHashNamesStorageForm checks that a resource is listed
// with the hash of the form its objects are stored in, whatever version
// serves it, as upstream lists the events group's events (stored as core
// events), autoscaling/v1 HPAs (stored as v2) and every version of a
// custom resource.
func TestStorageVersionHashNamesStorageForm(t *testing.T) {
	t.Parallel()
	events := mustBrand(t, "kubernetes").Group("events")
	coreEvent := &registry.Descriptor{Version: "v1", Kind: "Event", Resource: "events", Verbs: allVerbs}
	hpaV2 := &registry.Descriptor{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler", Resource: "horizontalpodautoscalers", Verbs: allVerbs}
	crV1 := &registry.Descriptor{Group: "example.com", Version: "v1", Kind: "Gadget", Resource: "gadgets", Verbs: allVerbs}
	tests := []struct {
		name string
		d    *registry.Descriptor
		want string
	}{
		{"own form", coreEvent, "r2yiGXH7wu8="},
		{"stored as another group's kind", &registry.Descriptor{Group: events, Version: "v1", Kind: "Event", Resource: "events", Verbs: allVerbs,
			Storage: &registry.Storage{Descriptor: coreEvent}}, "r2yiGXH7wu8="},
		{"storage version", hpaV2, "qwQve8ut294="},
		{"stored as another version", &registry.Descriptor{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler", Resource: "horizontalpodautoscalers", Verbs: allVerbs,
			Storage: &registry.Storage{Descriptor: hpaV2}}, "qwQve8ut294="},
		{"custom resource version", &registry.Descriptor{Group: "example.com", Version: "v2", Kind: "Gadget", Resource: "gadgets", Verbs: allVerbs,
			Storage: &registry.Storage{Descriptor: crV1}}, storageVersionHash("example.com", "v1", "Gadget")},
		{"unserved storage version", &registry.Descriptor{Group: "example.com", Version: "v2", Kind: "Gadget", Resource: "gadgets", Verbs: allVerbs,
			Storage: &registry.Storage{Descriptor: crV1, NoVersionHash: true}}, ""},
		{"not stored", &registry.Descriptor{Version: "v1", Kind: "Binding", Resource: "bindings", Verbs: []string{"create"}, Serve: registry.ServeBind}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newAPIResourceList(tc.d.Group, tc.d.Version, []*registry.Descriptor{tc.d})
			if got := l.Resources[0].StorageVersionHash; got != tc.want {
				t.Errorf("storageVersionHash %q, want %q", got, tc.want)
			}
		})
	}
}

// TestListedVerbs checks that both discovery forms list a descriptor's
// ListedVerbs in place of its Verbs, as upstream lists a terminating
// CRD's resources with delete, deletecollection, get, list and watch.
func TestListedVerbs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		listed []string
		want   []string
	}{
		{"served verbs", nil, allVerbs},
		{"terminating", []string{"watch", "delete", "deletecollection", "get", "list"}, []string{"delete", "deletecollection", "get", "list", "watch"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := &registry.Descriptor{Group: "example.com", Version: "v1", Kind: "Gadget", Resource: "gadgets", Singular: "gadget", Namespaced: true,
				Verbs: allVerbs, ListedVerbs: tc.listed, Subresources: []registry.Subresource{{Name: "status", Verbs: []string{"get", "patch", "update"}}}}
			legacy := newAPIResourceList(d.Group, d.Version, []*registry.Descriptor{d}).Resources
			if !equalStrings(legacy[0].Verbs, tc.want) {
				t.Errorf("legacy verbs %v, want %v", legacy[0].Verbs, tc.want)
			}
			if !equalStrings(legacy[1].Verbs, []string{"get", "patch", "update"}) {
				t.Errorf("legacy status verbs %v", legacy[1].Verbs)
			}
			agg := newResourceDiscovery(d)
			if !equalStrings(agg.Verbs, tc.want) {
				t.Errorf("aggregated verbs %v, want %v", agg.Verbs, tc.want)
			}
			if !equalStrings(agg.Subresources[0].Verbs, []string{"get", "patch", "update"}) {
				t.Errorf("aggregated status verbs %v", agg.Subresources[0].Verbs)
			}
		})
	}
}

// TestServerAddressByClientCIDRs checks the addresses /api reports, as
// upstream: the advertised address to every client, and the API
// Service's address as well to a client whose address (the first of
// X-Forwarded-For, X-Real-Ip and the connection's) is in the service
// range.
func TestServerAddressByClientCIDRs(t *testing.T) {
	t.Parallel()
	b := mustBrand(t, "plat")
	reg := registry.New()
	for _, d := range coreDescriptors() {
		reg.Add(d)
	}
	advertised := New(reg, b, Options{ServerAddress: "192.0.2.10:6443",
		ServiceCIDR: netip.MustParsePrefix("10.0.0.0/24"), ServiceAddress: "10.0.0.1:443"})
	everyone := `{"clientCIDR":"0.0.0.0/0","serverAddress":"192.0.2.10:6443"}`
	service := `{"clientCIDR":"10.0.0.0/24","serverAddress":"10.0.0.1:443"}`
	tests := []struct {
		name       string
		h          *Handler
		remote     string
		hdr        map[string]string
		wantListed string
	}{
		{"outside the service range", advertised, "192.0.2.99:50000", nil, everyone},
		{"in the service range", advertised, "10.0.0.7:50000", nil, everyone + "," + service},
		{"IPv4-mapped peer in the range", advertised, "[::ffff:10.0.0.7]:50000", nil, everyone + "," + service},
		{"forwarded from the range", advertised, "192.0.2.99:50000", map[string]string{"X-Forwarded-For": "bogus, 10.0.0.8, 192.0.2.1"}, everyone + "," + service},
		{"forwarded from outside", advertised, "10.0.0.7:50000", map[string]string{"X-Forwarded-For": "192.0.2.1"}, everyone},
		{"real IP in the range", advertised, "192.0.2.99:50000", map[string]string{"X-Real-Ip": "10.0.0.9"}, everyone + "," + service},
		{"no address advertised", New(reg, b, Options{}), "10.0.0.7:50000", nil, `{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1:6443"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodGet, "/api", nil)
			r.Host = "127.0.0.1:6443"
			r.RemoteAddr = tc.remote
			for k, v := range tc.hdr {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			tc.h.ServeHTTP(w, r)
			want := `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[` + tc.wantListed + "]}\n"
			if w.Code != http.StatusOK || w.Body.String() != want {
				t.Errorf("got %d %s\nwant %s", w.Code, w.Body, want)
			}
		})
	}
}
