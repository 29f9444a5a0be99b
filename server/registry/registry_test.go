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

func TestRetired(t *testing.T) {
	t.Parallel()
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	r := New()
	widget := func(v string) *Descriptor {
		return &Descriptor{Group: "example.com", Version: v, Resource: "widgets", Kind: "Widget"}
	}
	v1, v2 := widget("v1"), widget("v2")
	if !closed(r.Retired(v1)) {
		t.Error("an unserved descriptor is not retired")
	}
	r.Replace(nil, []*Descriptor{v1, v2})
	ch1, ch2 := r.Retired(v1), r.Retired(v2)
	if closed(ch1) || closed(ch2) || r.Retired(v1) != ch1 {
		t.Fatal("a served descriptor is retired, or gets a new channel")
	}

	// A successor of the same resource takes the channel; a descriptor
	// without one is retired.
	v1b := widget("v1")
	r.Succeed([]*Descriptor{v1, v2}, []*Descriptor{v1b})
	if closed(ch1) || r.Retired(v1b) != ch1 || !closed(ch2) {
		t.Errorf("after Succeed: v1 retired %v, carried %v, v2 retired %v", closed(ch1), r.Retired(v1b) == ch1, closed(ch2))
	}
	// Replacing, adding over and removing retire.
	v1c := widget("v1")
	r.Replace([]*Descriptor{v1b}, []*Descriptor{v1c})
	if !closed(ch1) {
		t.Error("a replaced descriptor is not retired")
	}
	ch := r.Retired(v1c)
	r.Add(widget("v1"))
	if !closed(ch) {
		t.Error("a descriptor added over is not retired")
	}
	last := r.Lookup("example.com", "v1", "widgets")
	ch = r.Retired(last)
	r.Replace([]*Descriptor{last}, nil)
	if !closed(ch) || !closed(r.Retired(last)) {
		t.Error("a removed descriptor is not retired")
	}
}

func TestChild(t *testing.T) {
	obj := Object{"a": map[string]any{"x": 1}, "b": "not a map"}
	if Child(obj, "a")["x"] != 1 {
		t.Error("existing map not returned")
	}
	Child(obj, "b")["y"] = 2
	Child(obj, "c")["z"] = 3
	if !reflect.DeepEqual(obj, Object{"a": map[string]any{"x": 1}, "b": map[string]any{"y": 2}, "c": map[string]any{"z": 3}}) {
		t.Errorf("got %v", obj)
	}
}

func TestStorageType(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"/configmaps/ns/cm":         "configmaps",
		"/configmaps/":              "configmaps",
		"/deployments.apps/ns/web":  "deployments.apps",
		"/namespaces/default":       "namespaces",
		"/claims/service-ip/10.0.0": "claims",
		"/":                         "",
		"":                          "",
		"configmaps/ns/cm":          "",
		"/configmaps":               "",
	} {
		if got := StorageType(key); got != want {
			t.Errorf("StorageType(%q) = %q, want %q", key, got, want)
		}
	}
}
