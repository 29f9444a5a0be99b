package discovery

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"platd/codec"
	"platd/server/protobuf"
	"platd/server/schema"
)

// TestProtobufDocuments: each document in protobuf is the envelope of
// its JSON form's kind and apiVersion around the message of the kind's
// schema, which reads back as the JSON form.
func TestProtobufDocuments(t *testing.T) {
	t.Parallel()
	h, _ := newTestHandler(t, "plat")
	cat, err := schema.Load(h.brand)
	if err != nil {
		t.Fatal(err)
	}
	b := h.brand
	pb := b.ProtobufMediaType
	agg := ";g=" + b.DiscoveryGroup() + ";v=%s;as=APIGroupDiscoveryList"
	meta := schema.ReverseDomain(b.Domain) + ".apimachinery.pkg.apis.meta.v1."
	disc := schema.ReverseDomain(b.Domain) + ".api.apidiscovery."
	rbac := "/apis/" + b.Group("rbac.authorization")
	for _, tc := range []struct {
		path, params, schema string
		kind, apiVersion     string
	}{
		{"/api", "", meta + "APIVersions", "APIVersions", ""},
		{"/api/v1", "", meta + "APIResourceList", "APIResourceList", ""},
		{"/apis", "", meta + "APIGroupList", "APIGroupList", "v1"},
		{rbac, "", meta + "APIGroup", "APIGroup", "v1"},
		{rbac + "/v1", "", meta + "APIResourceList", "APIResourceList", "v1"},
		{"/apis", fmt.Sprintf(agg, "v2"), disc + "v2.APIGroupDiscoveryList", "APIGroupDiscoveryList", b.DiscoveryGroup() + "/v2"},
		{"/api", fmt.Sprintf(agg, "v2beta1"), disc + "v2beta1.APIGroupDiscoveryList", "APIGroupDiscoveryList", b.DiscoveryGroup() + "/v2beta1"},
	} {
		name := tc.path + tc.params
		w := get(h, tc.path, map[string]string{"Accept": pb + tc.params})
		if w.Code != 200 || w.Header().Get("Content-Type") != pb+tc.params {
			t.Errorf("%s: %d %q %s", name, w.Code, w.Header().Get("Content-Type"), w.Body)
			continue
		}
		apiVersion, kind, raw, err := codec.UnwrapProtobuf(w.Body.Bytes())
		if err != nil || kind != tc.kind || apiVersion != tc.apiVersion {
			t.Errorf("%s: envelope %q %q %v", name, apiVersion, kind, err)
			continue
		}
		s := cat.Schema(tc.schema)
		if s == nil {
			t.Fatalf("%s: no schema %s", name, tc.schema)
		}
		got, err := protobuf.Unmarshal(raw, s)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var want map[string]any
		if err := json.Unmarshal(get(h, tc.path, map[string]string{"Accept": "application/json" + tc.params}).Body.Bytes(), &want); err != nil {
			t.Fatal(err)
		}
		delete(want, "kind")
		delete(want, "apiVersion")
		// The message has no null and does not tell an empty string
		// from none: compare without either.
		g, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		var gotJSON, wantJSON any
		_ = json.Unmarshal(g, &gotJSON)
		_ = json.Unmarshal(wj, &wantJSON)
		if !reflect.DeepEqual(withoutEmpty(gotJSON), withoutEmpty(wantJSON)) {
			t.Errorf("%s: protobuf reads back as\n %s\nwant\n %s", name, g, wj)
		}
	}
}

// withoutEmpty drops the members of v (at any depth) that are null or
// the empty string.
func withoutEmpty(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e == nil || e == "" {
				continue
			}
			out[k] = withoutEmpty(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutEmpty(e)
		}
		return out
	}
	return v
}
