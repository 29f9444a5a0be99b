package server_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"platd/config"
)

// notYetServed are the parts of a v1.32 server's discovery that later
// capabilities add; none today. Until added they are absent, not stubbed.
func notYetServed(config.Brand) (groups []string, subresources map[string]string) {
	return nil, map[string]string{}
}

// upstreamDiscovery reads a captured aggregated discovery document of a
// v1.32 server and removes what platd does not serve yet.
func upstreamDiscovery(t *testing.T, b config.Brand, file string) []any {
	t.Helper()
	absentGroups, absentSubresources := notYetServed(b)
	raw, err := os.ReadFile("testdata/upstream/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Items []any `json:"items"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var items []any
	for _, g := range doc.Items {
		if name, _ := at(g, "metadata", "name").(string); slices.Contains(absentGroups, name) {
			continue
		}
		for _, v := range at(g, "versions").([]any) {
			for _, r := range at(v, "resources").([]any) {
				rm := r.(map[string]any)
				drop, ok := absentSubresources[rm["resource"].(string)]
				if !ok {
					continue
				}
				var kept []any
				for _, s := range rm["subresources"].([]any) {
					if at(s, "subresource") != drop {
						kept = append(kept, s)
					}
				}
				if kept == nil {
					delete(rm, "subresources")
				} else {
					rm["subresources"] = kept
				}
			}
		}
		items = append(items, g)
	}
	return items
}

// TestDiscoveryMatchesUpstream compares platd's aggregated discovery, in
// the kubernetes brand, with a v1.32 server's: every group, version and
// resource with its verbs, scope, names, categories and subresources, in
// upstream's order.
func TestDiscoveryMatchesUpstream(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"))
	b, _ := config.LookupBrand("kubernetes")
	accept := "application/json;g=" + b.DiscoveryGroup() + ";v=v2;as=APIGroupDiscoveryList"
	for _, c := range []struct{ path, file string }{
		{"/apis", "aggregated-apis.json"},
		{"/api", "aggregated-api.json"},
	} {
		got := e.do("GET", c.path, nil, "Accept", accept).mustCode(t, 200).obj(t)
		want := upstreamDiscovery(t, b, c.file)
		var gotNames, wantNames []string
		served := map[string]any{}
		for _, g := range got["items"].([]any) {
			name, _ := at(g, "metadata", "name").(string)
			gotNames = append(gotNames, name)
			served[name] = g
		}
		for _, g := range want {
			name, _ := at(g, "metadata", "name").(string)
			wantNames = append(wantNames, name)
			if !reflect.DeepEqual(served[name], g) {
				gj, _ := json.Marshal(served[name])
				wj, _ := json.Marshal(g)
				t.Errorf("%s: group %q:\n got  %s\n want %s", c.path, name, gj, wj)
			}
		}
		if !slices.Equal(gotNames, wantNames) {
			t.Errorf("%s: groups in order %q, want %q", c.path, gotNames, wantNames)
		}
	}
}

// legacyResource returns the entry of resource in the legacy list of a
// group-version.
func legacyResource(t *testing.T, e *env, groupVersionPath, resource string) map[string]any {
	t.Helper()
	for _, r := range e.do("GET", groupVersionPath, nil).mustCode(t, 200).obj(t)["resources"].([]any) {
		if at(r, "name") == resource {
			return r.(map[string]any)
		}
	}
	t.Fatalf("%s lists no %s", groupVersionPath, resource)
	return nil
}

// TestStorageVersionHashIsOfStorageVersion checks that every version of a
// resource is listed with the hash of the group, version and kind its
// objects are stored as, as upstream: events of the events group are
// stored as core events, autoscaling/v1 HPAs as v2, and a custom
// resource's versions as its storage version, whose change changes them.
func TestStorageVersionHashIsOfStorageVersion(t *testing.T) {
	t.Parallel()
	hash := func(group, version, kind string) string {
		sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
		return base64.StdEncoding.EncodeToString(sum[:8])
	}
	e, _ := startGadgets(t, "hash.example.com")
	for _, c := range []struct{ path, resource, want string }{
		{"/api/v1", "events", "r2yiGXH7wu8="},
		{"/apis/" + platBrand.Group("events") + "/v1", "events", "r2yiGXH7wu8="},
		{"/apis/autoscaling/v2", "horizontalpodautoscalers", "qwQve8ut294="},
		{"/apis/autoscaling/v1", "horizontalpodautoscalers", "qwQve8ut294="},
		{"/apis/hash.example.com/v1", "gadgets", hash("hash.example.com", "v1", "Gadget")},
		{"/apis/hash.example.com/v2", "gadgets", hash("hash.example.com", "v1", "Gadget")},
	} {
		if got := legacyResource(t, e, c.path, c.resource)["storageVersionHash"]; got != c.want {
			t.Errorf("%s %s: storageVersionHash %v, want %s", c.path, c.resource, got, c.want)
		}
	}

	// v2 becomes the storage version.
	crd := e.do("GET", crdPath+"/gadgets.hash.example.com", nil).mustCode(t, 200).obj(t)
	for _, v := range at(crd, "spec", "versions").([]any) {
		v.(map[string]any)["storage"] = at(v, "name") == "v2"
	}
	e.do("PUT", crdPath+"/gadgets.hash.example.com", crd).mustCode(t, 200)
	want := hash("hash.example.com", "v2", "Gadget")
	for _, version := range []string{"v1", "v2"} {
		eventually(t, version+" listed with the new storage version's hash", func() bool {
			return legacyResource(t, e, "/apis/hash.example.com/"+version, "gadgets")["storageVersionHash"] == want
		})
	}

	// While the storage version is not served, no hash is listed.
	crd = e.do("GET", crdPath+"/gadgets.hash.example.com", nil).mustCode(t, 200).obj(t)
	for _, v := range at(crd, "spec", "versions").([]any) {
		v.(map[string]any)["served"] = at(v, "name") == "v1"
	}
	e.do("PUT", crdPath+"/gadgets.hash.example.com", crd).mustCode(t, 200)
	eventually(t, "v2 unserved", func() bool { return e.do("GET", "/apis/hash.example.com/v2", nil).code == 404 })
	if r := legacyResource(t, e, "/apis/hash.example.com/v1", "gadgets"); r["storageVersionHash"] != nil {
		t.Errorf("listed with storageVersionHash %v while the storage version is not served", r["storageVersionHash"])
	}
}

// aggregatedResource returns the entry of resource in the aggregated
// discovery of /apis for group and version.
func aggregatedResource(t *testing.T, e *env, group, version, resource string) map[string]any {
	t.Helper()
	accept := "application/json;g=" + platBrand.DiscoveryGroup() + ";v=v2;as=APIGroupDiscoveryList"
	doc := e.do("GET", "/apis", nil, "Accept", accept).mustCode(t, 200).obj(t)
	for _, g := range doc["items"].([]any) {
		if at(g, "metadata", "name") != group {
			continue
		}
		for _, v := range at(g, "versions").([]any) {
			if at(v, "version") != version {
				continue
			}
			for _, r := range at(v, "resources").([]any) {
				if at(r, "resource") == resource {
					return r.(map[string]any)
				}
			}
		}
	}
	t.Fatalf("aggregated discovery lists no %s in %s/%s", resource, group, version)
	return nil
}

// TestCustomResourceAggregatedResponseKinds checks that aggregated
// discovery names the group and version of a custom resource's response
// kinds in every version it serves, as upstream: its own kind for the
// resource and its status, autoscaling/v1 Scale for its scale.
func TestCustomResourceAggregatedResponseKinds(t *testing.T) {
	t.Parallel()
	e, _ := startGadgets(t, "kinds.example.com")
	for _, version := range []string{"v1", "v2"} {
		r := aggregatedResource(t, e, "kinds.example.com", version, "gadgets")
		own := map[string]any{"group": "kinds.example.com", "version": version, "kind": "Gadget"}
		if got := r["responseKind"]; !reflect.DeepEqual(got, own) {
			t.Errorf("%s responseKind %v, want %v", version, got, own)
		}
		// Upstream lists the status subresource before the scale one, and
		// the verbs in its own order, not sorted.
		want := []any{
			map[string]any{"subresource": "status", "responseKind": own, "verbs": []any{"get", "patch", "update"}},
			map[string]any{"subresource": "scale", "responseKind": map[string]any{"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": []any{"get", "patch", "update"}},
		}
		if got := r["subresources"]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s subresources %v, want %v", version, got, want)
		}
		verbs := []any{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
		if got := r["verbs"]; !reflect.DeepEqual(got, verbs) {
			t.Errorf("%s verbs %v, want %v", version, got, verbs)
		}
	}
	// The group-version's list too: the resource, its status, its scale.
	list := e.do("GET", "/apis/kinds.example.com/v1", nil).mustCode(t, 200).obj(t)
	var names []string
	for _, r := range list["resources"].([]any) {
		names = append(names, at(r, "name").(string))
		if at(r, "name") == "gadgets" && !reflect.DeepEqual(at(r, "verbs"), []any{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}) {
			t.Errorf("listed verbs %v", at(r, "verbs"))
		}
	}
	if strings.Join(names, ",") != "gadgets,gadgets/status,gadgets/scale" {
		t.Errorf("listed resources %v", names)
	}
}

// TestAPIReportsAdvertisedAddress checks that /api tells every client the
// advertised address with the serving port, whatever Host it asked for,
// and a client in the service range the API Service's address as well,
// as upstream.
func TestAPIReportsAdvertisedAddress(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.AdvertiseAddress = "192.0.2.10" })
	_, port, _ := strings.Cut(e.addr(), ":")
	everyone := map[string]any{"clientCIDR": "0.0.0.0/0", "serverAddress": "192.0.2.10:" + port}
	tests := []struct {
		name   string
		header []string
		want   []any
	}{
		{"outside the service range", nil, []any{everyone}},
		{"in the service range", []string{"X-Forwarded-For", "10.0.0.9"},
			[]any{everyone, map[string]any{"clientCIDR": "10.0.0.0/24", "serverAddress": "10.0.0.1:443"}}},
	}
	for _, tc := range tests {
		got := e.do("GET", "/api", nil, tc.header...).mustCode(t, 200).obj(t)["serverAddressByClientCIDRs"]
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: serverAddressByClientCIDRs %v, want %v", tc.name, got, tc.want)
		}
	}
}
