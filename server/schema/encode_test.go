package schema

import (
	"encoding/json"
	"math"
	"platd/codec"
	"testing"
)

func TestEncodeEmission(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	tests := []struct {
		name   string
		schema string
		obj    map[string]any
		want   string
	}{
		{"absent struct metadata renders creationTimestamp null", kn("@R@.api.core.v1.ConfigMap"),
			map[string]any{"kind": "ConfigMap", "apiVersion": "v1"},
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"creationTimestamp":null}}`},
		{"pointer false is kept, empty omitempty map dropped", kn("@R@.api.core.v1.ConfigMap"),
			map[string]any{"immutable": false, "data": map[string]any{}, "metadata": map[string]any{"name": ""}},
			`{"metadata":{"creationTimestamp":null},"immutable":false}`},
		{"required list absent is null", kn("@R@.api.rbac.v1.Role"),
			map[string]any{"kind": "Role", "apiVersion": "rbac.authorization.example/v1", "metadata": map[string]any{"name": "r"}},
			`{"kind":"Role","apiVersion":"rbac.authorization.example/v1","metadata":{"name":"r","creationTimestamp":null},"rules":null}`},
		{"core event timestamps", kn("@R@.api.core.v1.Event"),
			map[string]any{"metadata": map[string]any{"name": "e"}},
			`{"metadata":{"name":"e","creationTimestamp":null},"involvedObject":{},"source":{},"firstTimestamp":null,"lastTimestamp":null,"eventTime":null,"reportingComponent":"","reportingInstance":""}`},
		{"secret order", kn("@R@.api.core.v1.Secret"),
			map[string]any{"type": "Opaque", "stringData": map[string]any{"b": "2"}, "data": map[string]any{"a": "YQ=="}, "immutable": true, "metadata": map[string]any{"name": "s"}},
			`{"metadata":{"name":"s","creationTimestamp":null},"immutable":true,"data":{"a":"YQ=="},"stringData":{"b":"2"},"type":"Opaque"}`},
		{"quantities and times canonical", kn("@R@.api.core.v1.LimitRange"),
			map[string]any{"metadata": map[string]any{"creationTimestamp": "2024-01-02T03:04:05.5+02:00"},
				"spec": map[string]any{"limits": []any{map[string]any{"type": "Container", "max": map[string]any{"memory": "1024Mi", "cpu": "0.1"}}}}},
			`{"metadata":{"creationTimestamp":"2024-01-02T01:04:05Z"},"spec":{"limits":[{"type":"Container","max":{"cpu":"100m","memory":"1Gi"}}]}}`},
		{"status with details", kn("@R@.apimachinery.pkg.apis.meta.v1.Status"),
			map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": int64(404), "details": map[string]any{"name": "x", "kind": "configmaps"}},
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","details":{"name":"x","kind":"configmaps"},"code":404}`},
		{"html-safe escaping", kn("@R@.api.core.v1.ConfigMap"),
			map[string]any{"data": map[string]any{"k": "<a&b>\u2028\u2029\x01\t\"\\\b\f" + string([]byte{0xff}) + "é"}},
			`{"metadata":{"creationTimestamp":null},"data":{"k":"\u003ca\u0026b\u003e\u2028\u2029\u0001\t\"\\\b\f\ufffdé"}}`},
		{"unknown members pruned", kn("@R@.api.core.v1.ConfigMap"),
			map[string]any{"spec": map[string]any{}, "data": map[string]any{"z": "1", "a": "2"}},
			`{"metadata":{"creationTimestamp":null},"data":{"a":"2","z":"1"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := c.Schema(tt.schema)
			if s == nil {
				t.Fatalf("no schema %s", tt.schema)
			}
			if got := string(Encode(nil, tt.obj, s)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestEncodeFloatLikeEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0, 1, -1, 0.1, 1e-7, 1.5e-9, 1e20, 1e21, 123456789.125, -2.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := codec.AppendJSONFloat(nil, f); string(got) != string(want) {
			t.Errorf("%v: got %s want %s", f, got, want)
		}
	}
}

func TestEncodeStringLikeEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "<>&", "\u2028x\u2029", "\x00\x1f\x7f", "\xed\xa0\x80", "日本", "a\xffb", "\"\\/"} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := codec.AppendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("%q: got %s want %s", s, got, want)
		}
	}
}

// TestDecodeCanonicalisesLimitRange feeds the upstream request body of the
// golden LimitRange capture and expects the stored spelling upstream showed.
func TestDecodeCanonicalisesLimitRange(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	s := c.ByGVK("", "v1", "LimitRange")
	in := `{"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr1"}, "spec": {"limits": [{"type": "Container", "default": {"cpu": "1", "memory": "1Gi"}, "defaultRequest": {"cpu": "500m", "memory": "512Mi"}, "max": {"cpu": "2000m", "memory": "1024Mi"}, "min": {"cpu": "0.1", "memory": "1e6"}, "maxLimitRequestRatio": {"cpu": "10"}}]}}`
	d, err := Decode([]byte(in), s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"LimitRange","apiVersion":"v1","metadata":{"name":"lr1","creationTimestamp":null},"spec":{"limits":[{"type":"Container","max":{"cpu":"2","memory":"1Gi"},"min":{"cpu":"100m","memory":"1e6"},"default":{"cpu":"1","memory":"1Gi"},"defaultRequest":{"cpu":"500m","memory":"512Mi"},"maxLimitRequestRatio":{"cpu":"10"}}]}}`
	if got := string(Encode(nil, d.Object, s)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// Encode counts the members it has found by field; a field name twice in
// one schema would miscount.
func TestCatalogFieldNamesAreUnique(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "plat")
	for name, s := range c.byName {
		seen := map[string]bool{}
		for _, f := range s.Fields {
			if seen[f.Name] {
				t.Errorf("%s: field %q twice", name, f.Name)
			}
			seen[f.Name] = true
		}
	}
}
