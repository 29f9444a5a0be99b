package registry

import (
	"slices"
	"testing"
)

func TestCompareVersions(t *testing.T) {
	t.Parallel()
	// Highest first, as upstream's kube-aware order lists them.
	want := []string{"v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2", "foo1", "foo10"}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, func(a, b string) int { return CompareVersions(b, a) })
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"v1", "v1", 0}, {"v1", "v2", -1}, {"v1beta1", "v1", -1}, {"v1alpha1", "v1beta1", -1},
		{"v01", "v1", -1}, {"v1beta0", "v1alpha1", -1}, {"x", "v1alpha1", -1},
	} {
		if got := CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestPriorityOrder(t *testing.T) {
	t.Parallel()
	r := New()
	for _, d := range []*Descriptor{
		{Group: "b.example", Version: "v1", Resource: "xs"},
		{Group: "", Version: "v1", Resource: "pods"},
		{Group: "a.example", Version: "v1beta1", Resource: "ys"},
		{Group: "a.example", Version: "v1", Resource: "ys"},
		{Group: "c.example", Version: "v1", Resource: "zs"},
		{Group: "a.example", Version: "v2alpha1", Resource: "ys"},
	} {
		r.Add(d)
	}
	// Without priorities: core first, then by name; versions newest
	// stable first.
	if got := r.Groups(); !slices.Equal(got, []string{"", "a.example", "b.example", "c.example"}) {
		t.Errorf("default group order %v", got)
	}
	if got := r.Versions("a.example"); !slices.Equal(got, []string{"v1", "v1beta1", "v2alpha1"}) {
		t.Errorf("default version order %v", got)
	}
	g0 := r.Generation()
	r.SetPriorities(func(g, v string) (Priority, bool) {
		switch g + "/" + v {
		case "c.example/v1":
			return Priority{Group: 2000, Version: 15}, true
		case "a.example/v1beta1":
			return Priority{Group: 1000, Version: 200}, true
		}
		return Priority{}, false
	})
	if r.Generation() == g0 {
		t.Error("setting priorities did not change the generation")
	}
	s := r.Snapshot()
	if !slices.Equal(s.Groups, []string{"", "c.example", "a.example", "b.example"}) {
		t.Errorf("group order %v", s.Groups)
	}
	if !slices.Equal(s.Versions[2], []string{"v1beta1", "v1", "v2alpha1"}) {
		t.Errorf("a.example versions %v", s.Versions[2])
	}
}
