package rest

import (
	"testing"

	"platd/server/schema"
)

// TestVersionedStoredBytes checks where stored bytes name their version:
// right after the metadata (first when there is none), and that bytes
// without one name none.
func TestVersionedStoredBytes(t *testing.T) {
	t.Parallel()
	str := &schema.Schema{Type: schema.String}
	meta := &schema.Schema{Type: schema.Object, Fields: []*schema.Field{
		{Name: "name", Schema: str, OmitEmpty: true},
		{Name: "resourceVersion", Schema: str, OmitEmpty: true},
	}}
	s := &schema.Schema{Type: schema.Object, Fields: []*schema.Field{
		{Name: "apiVersion", Schema: str, OmitEmpty: true},
		{Name: "metadata", Schema: meta, OmitEmpty: true},
		{Name: "spec", Schema: str, OmitEmpty: true},
	}}
	s.Seal()
	tests := []struct {
		obj         Object
		placeholder bool
		want        string
	}{
		{Object{"apiVersion": "g/v0", "metadata": map[string]any{"name": "a"}, "spec": "x"}, true,
			`{"metadata":{"name":"a","resourceVersion":"0"},"apiVersion":"g/v1","spec":"x"}`},
		{Object{"metadata": map[string]any{"name": "a"}}, false, `{"metadata":{"name":"a"},"apiVersion":"g/v1"}`},
		{Object{"spec": "x"}, false, `{"apiVersion":"g/v1","spec":"x"}`},
		{Object{}, false, `{"apiVersion":"g/v1"}`},
	}
	for _, tt := range tests {
		got := encodeInVersion(s, tt.obj, "g/v1", tt.placeholder)
		if string(got) != tt.want {
			t.Errorf("encoded %s, want %s", got, tt.want)
		}
		if v := storedVersion(got); v != "g/v1" {
			t.Errorf("version of %s: %q", got, v)
		}
		dec, err := schema.DecodeStored(got, s)
		if err != nil || dec["apiVersion"] != "g/v1" {
			t.Errorf("decoding %s: %v %v", got, dec, err)
		}
	}
	for _, plain := range []string{`{"metadata":{"name":"a"},"spec":"x"}`, `{"spec":"x"}`, `{}`, ``, `{"metadata":{"name":"a"},"apiVersion":"g`} {
		if v := storedVersion([]byte(plain)); v != "" {
			t.Errorf("version of %s: %q, want none", plain, v)
		}
	}
}
