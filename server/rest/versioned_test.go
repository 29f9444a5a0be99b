package rest

import (
	"context"
	"errors"
	"testing"

	"platd/server/registry"
	"platd/server/schema"
)

// TestVersionedStoredBytes checks where stored bytes name their version:
// in their last member, and that bytes without one name none.
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
			`{"metadata":{"name":"a","resourceVersion":"0"},"spec":"x","apiVersion":"g/v1"}`},
		{Object{"metadata": map[string]any{"name": "a"}}, false, `{"metadata":{"name":"a"},"apiVersion":"g/v1"}`},
		{Object{"spec": "x"}, false, `{"spec":"x","apiVersion":"g/v1"}`},
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
	for _, plain := range []string{`{"metadata":{"name":"a"},"spec":"x"}`, `{"spec":"x"}`, `{}`, ``, `{"metadata":{"name":"a"},"apiVersion":"g`,
		// A nested apiVersion, the object's last string, an escaped quote.
		`{"spec":{"ref":{"apiVersion":"g/v1"}}}`, `{"spec":{"a":1,"apiVersion":"g/v1"},"z":"y"}`, `{"z":"apiVersion"}`,
		`{"z":"a\"apiVersion\":\"g/v1"}`, `{"z":"a\"}`} {
		if v := storedVersion([]byte(plain)); v != "" {
			t.Errorf("version of %s: %q, want none", plain, v)
		}
	}
}

// TestServedAsStored checks the bytes of a converted type served without
// decoding: those in the version served, with the version member cut,
// and never the stored bytes themselves.
func TestServedAsStored(t *testing.T) {
	t.Parallel()
	st := &registry.Descriptor{Group: "g", Version: "v1", Kind: "K"}
	st.Storage = &registry.Storage{Descriptor: st, Converter: noConverter{}}
	v2 := &registry.Descriptor{Group: "g", Version: "v2", Kind: "K", Storage: st.Storage}
	// Bytes that name no version are of the version Unversioned names.
	old := &registry.Storage{Descriptor: st, Converter: noConverter{}, Unversioned: "v2"}
	stOld := &registry.Descriptor{Group: "g", Version: "v1", Kind: "K", Storage: old}
	v2Old := &registry.Descriptor{Group: "g", Version: "v2", Kind: "K", Storage: old}
	tests := []struct {
		d            *registry.Descriptor
		stored, want string
	}{
		{st, `{"metadata":{"name":"a"},"spec":"x","apiVersion":"g/v1"}`, `{"metadata":{"name":"a"},"spec":"x"}`},
		{st, `{"spec":"x","apiVersion":"g/v1"}`, `{"spec":"x"}`},
		{st, `{"apiVersion":"g/v1"}`, `{}`},
		{st, `{"metadata":{"name":"a"},"spec":"x"}`, `{"metadata":{"name":"a"},"spec":"x"}`},
		{st, `{"metadata":{"name":"a"},"spec":"x","apiVersion":"g/v2"}`, ""},
		{v2, `{"metadata":{"name":"a"},"spec":"x","apiVersion":"g/v2"}`, `{"metadata":{"name":"a"},"spec":"x"}`},
		{v2, `{"metadata":{"name":"a"},"spec":"x"}`, ""},
		{stOld, `{"metadata":{"name":"a"},"spec":"x"}`, ""},
		{stOld, `{"metadata":{"name":"a"},"spec":"x","apiVersion":"g/v1"}`, `{"metadata":{"name":"a"},"spec":"x"}`},
		{v2Old, `{"metadata":{"name":"a"},"spec":"x"}`, `{"metadata":{"name":"a"},"spec":"x"}`},
	}
	for _, tt := range tests {
		stored := []byte(tt.stored)
		got, ok := servedAsStored(nil, tt.d, stored)
		if ok != (tt.want != "") || ok && string(got) != tt.want {
			t.Errorf("%s as %s: %s %v, want %q", tt.stored, tt.d.GroupVersion(), got, ok, tt.want)
		}
		if ok && len(got) > 0 && &got[0] == &stored[0] {
			t.Errorf("%s served as the stored bytes themselves", tt.stored)
		}
	}
}

// noConverter stands for a converter that is never called.
type noConverter struct{}

func (noConverter) Schema(string) *schema.Schema { return nil }
func (noConverter) Convert(context.Context, registry.Object, string) (registry.Object, error) {
	return nil, errors.New("no conversion expected")
}
func (noConverter) ConvertList(context.Context, []registry.Object, string) ([]registry.Object, error) {
	return nil, errors.New("no conversion expected")
}

// TestStoredIn checks the version stored bytes are read in: the one they
// name, else the one the type's Storage.Unversioned names, else the
// stored form's.
func TestStoredIn(t *testing.T) {
	t.Parallel()
	st := &registry.Descriptor{Group: "g", Version: "v2", Kind: "K"}
	st.Storage = &registry.Storage{Descriptor: st, Converter: noConverter{}}
	old := &registry.Descriptor{Group: "g", Version: "v2", Kind: "K",
		Storage: &registry.Storage{Descriptor: st, Converter: noConverter{}, Unversioned: "v1"}}
	for _, tt := range []struct {
		d            *registry.Descriptor
		stored, want string
	}{
		{st, `{"metadata":{"name":"a"},"apiVersion":"g/v3"}`, "g/v3"},
		{st, `{"metadata":{"name":"a"}}`, "g/v2"},
		{old, `{"metadata":{"name":"a"},"apiVersion":"g/v3"}`, "g/v3"},
		{old, `{"metadata":{"name":"a"}}`, "g/v1"},
	} {
		if got := storedIn(tt.d, []byte(tt.stored)); got != tt.want {
			t.Errorf("%s: in %s, want %s", tt.stored, got, tt.want)
		}
	}
}
