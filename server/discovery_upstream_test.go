package server_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
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
