package registry

import (
	"reflect"
	"slices"
	"testing"
)

func TestRegistry(t *testing.T) {
	t.Parallel()
	r := New()
	g0 := r.Generation()
	cm := &Descriptor{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Verbs: []string{VerbGet, VerbList}}
	ns := &Descriptor{Version: "v1", Resource: "namespaces", Kind: "Namespace"}
	role := &Descriptor{Group: "rbac.example.com", Version: "v1", Resource: "roles", Kind: "Role"}
	r.Add(cm)
	r.Add(role)
	r.Add(ns)
	if r.Generation() == g0 {
		t.Error("generation did not change")
	}
	if r.Lookup("", "v1", "configmaps") != cm || r.Lookup("", "v1", "nope") != nil || r.Lookup("rbac.example.com", "v1", "roles") != role {
		t.Error("lookup")
	}
	if !r.HasGroupVersion("", "v1") || r.HasGroupVersion("", "v2") {
		t.Error("HasGroupVersion")
	}
	if got := r.Groups(); !reflect.DeepEqual(got, []string{"", "rbac.example.com"}) {
		t.Errorf("groups %q", got)
	}
	s := r.Snapshot()
	if s.Generation != r.Generation() || len(s.Descriptors) != 3 || s.Descriptors[0] != cm || s.Descriptors[1] != ns {
		t.Errorf("snapshot %+v", s)
	}
	if got := s.Resources("", "v1"); len(got) != 2 || got[0] != cm {
		t.Errorf("resources %v", got)
	}
	if got := s.ByGroupVersion()["rbac.example.com"]["v1"]; len(got) != 1 || got[0] != role {
		t.Errorf("by group version %v", got)
	}
	before := r.Generation()
	r.Add(&Descriptor{Version: "v1", Resource: "configmaps", Kind: "ConfigMap"})
	if r.Generation() == before || r.Lookup("", "v1", "configmaps") == cm {
		t.Error("replacing a descriptor was not noticed")
	}
	if !cm.HasVerb(VerbList) || cm.HasVerb(VerbWatch) || cm.GroupResource() != "configmaps" || role.GroupResource() != "roles.rbac.example.com" || role.GroupKind() != "Role.rbac.example.com" {
		t.Error("descriptor helpers")
	}
	if got := Strings([]any{"a", 1, "b"}); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("Strings %q", got)
	}
}

func TestClaimKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []Claim{{"serviceips", "10.0.0.1"}, {"serviceips", "fd00::1"}, {"servicenodeports", "30000"}} {
		got, ok := ClaimOfKey(ClaimKey(c))
		if !ok || got != c {
			t.Errorf("%v: %v %v", c, got, ok)
		}
	}
	for _, k := range []string{"/configmaps/default/x", "/claims/x", "/claims//1", "/claims/x/"} {
		if c, ok := ClaimOfKey(k); ok {
			t.Errorf("%s read as claim %v", k, c)
		}
	}
}

// Replace swaps one definition's resources in one change, and a group
// that loses its last resource is no longer served.
func TestReplace(t *testing.T) {
	r := New()
	r.Add(&Descriptor{Group: "", Version: "v1", Resource: "pods", Kind: "Pod"})
	v1 := &Descriptor{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget"}
	v2 := &Descriptor{Group: "example.com", Version: "v2", Resource: "widgets", Kind: "Widget", Storage: &Storage{Descriptor: v1}}
	gen := r.Generation()
	r.Replace(nil, []*Descriptor{v1, v2})
	if r.Generation() != gen+1 {
		t.Errorf("generation %d, want %d", r.Generation(), gen+1)
	}
	if got := r.Versions("example.com"); len(got) != 2 {
		t.Errorf("versions %v", got)
	}
	if d, _, name := r.ByKey("/widgets.example.com/w1"); d != v1 || name != "w1" {
		t.Errorf("ByKey = %v %q", d, name)
	}
	v2b := &Descriptor{Group: "example.com", Version: "v2", Resource: "widgets", Kind: "Widget"}
	r.Replace([]*Descriptor{v1, v2}, []*Descriptor{v2b})
	if r.Lookup("example.com", "v1", "widgets") != nil || r.Lookup("example.com", "v2", "widgets") != v2b {
		t.Error("v1 still served or v2 not replaced")
	}
	if got := r.Versions("example.com"); len(got) != 1 || got[0] != "v2" {
		t.Errorf("versions after replace %v", got)
	}
	r.Replace([]*Descriptor{v2b}, nil)
	if r.HasGroupVersion("example.com", "v2") || slices.Contains(r.Groups(), "example.com") {
		t.Errorf("group still served: %v", r.Groups())
	}
	if d, _, _ := r.ByKey("/widgets.example.com/w1"); d != nil {
		t.Error("key still resolves")
	}
	// Removing a descriptor that was already replaced changes nothing.
	r.Add(v1)
	r.Replace([]*Descriptor{v2b}, nil)
	if r.Lookup("example.com", "v1", "widgets") != v1 {
		t.Error("unrelated descriptor removed")
	}
}
