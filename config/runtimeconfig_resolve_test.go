package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// testKnown is a registry with every shape the rules care about: GA, beta
// and alpha versions, a beta version whose resources are on by default, a
// group-version whose resources differ in their defaults, and a branded
// group.
func testKnown(b Brand) []KnownResource {
	on := func(g, v, r string) KnownResource { return KnownResource{GroupVersionResource{g, v, r}, true} }
	off := func(g, v, r string) KnownResource { return KnownResource{GroupVersionResource{g, v, r}, false} }
	return []KnownResource{
		on("", "v1", "pods"),
		on("", "v1", "configmaps"),
		on("apps", "v1", "deployments"),
		on("apps", "v1", "replicasets"),
		on("batch", "v1", "jobs"),
		on(b.Group("events"), "v1", "events"),
		on("flowcontrol", "v1beta3", "flowschemas"),
		off("storage", "v1beta1", "csistoragecapacities"),
		off("resource", "v1alpha3", "deviceclasses"),
		on("mixed", "v1", "a"),
		off("mixed", "v1", "b"),
	}
}

// defaults is what testKnown serves when nothing is switched.
var defaults = []string{"/v1/configmaps", "/v1/pods", "apps/v1/deployments", "apps/v1/replicasets", "batch/v1/jobs", "events/v1/events", "flowcontrol/v1beta3/flowschemas", "mixed/v1/a"}

func TestResolve(t *testing.T) {
	t.Parallel()
	b, err := LookupBrand("plat")
	if err != nil {
		t.Fatal(err)
	}
	known := testKnown(b)
	ga := []string{"/v1/configmaps", "/v1/pods", "apps/v1/deployments", "apps/v1/replicasets", "batch/v1/jobs", "events/v1/events", "mixed/v1/a"}
	without := func(drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(defaults), func(s string) bool { return slices.Contains(drop, s) })
	}
	with := func(add ...string) []string {
		return slices.Sorted(slices.Values(append(slices.Clone(defaults), add...)))
	}
	cases := []struct {
		name   string
		values []string
		want   []string
	}{
		{"defaults", nil, defaults},
		{"group-version off", []string{"apps/v1=false"}, without("apps/v1/deployments", "apps/v1/replicasets")},
		{"resource off", []string{"apps/v1/deployments=false"}, without("apps/v1/deployments")},
		{"branded group", []string{b.Group("events") + "/v1=false"}, without("events/v1/events")},
		{"beta on", []string{"api/beta=true"}, with("storage/v1beta1/csistoragecapacities")},
		{"beta off", []string{"api/beta=false"}, without("flowcontrol/v1beta3/flowschemas")},
		{"alpha on", []string{"api/alpha=true"}, with("resource/v1alpha3/deviceclasses")},
		{"ga off", []string{"api/ga=false"}, []string{"flowcontrol/v1beta3/flowschemas"}},
		{"all off but one group-version", []string{"api/all=false,apps/v1=true"}, []string{"apps/v1/deployments", "apps/v1/replicasets"}},

		// Levels apply all, ga, beta, alpha in that order, whatever the
		// order written.
		{"all on then ga off", []string{"api/all=true,api/ga=false"}, []string{"flowcontrol/v1beta3/flowschemas", "resource/v1alpha3/deviceclasses", "storage/v1beta1/csistoragecapacities"}},
		{"ga off then all on", []string{"api/ga=false,api/all=true"}, []string{"flowcontrol/v1beta3/flowschemas", "resource/v1alpha3/deviceclasses", "storage/v1beta1/csistoragecapacities"}},
		{"all off then ga on", []string{"api/ga=true,api/all=false"}, append(slices.Clone(ga), "mixed/v1/b")},
		{"all off then beta on", []string{"api/beta=true,api/all=false"}, []string{"flowcontrol/v1beta3/flowschemas", "storage/v1beta1/csistoragecapacities"}},

		// A group-version key beats a level key; a resource key beats both.
		{"group-version over level", []string{"apps/v1=true,api/all=false"}, []string{"apps/v1/deployments", "apps/v1/replicasets"}},
		{"group-version off over level on", []string{"flowcontrol/v1beta3=false,api/beta=true"}, []string{"/v1/configmaps", "/v1/pods", "apps/v1/deployments", "apps/v1/replicasets", "batch/v1/jobs", "events/v1/events", "mixed/v1/a", "storage/v1beta1/csistoragecapacities"}},
		{"resource over group-version", []string{"apps/v1/deployments=false,apps/v1=true"}, without("apps/v1/deployments")},
		{"one resource of a disabled group-version", []string{"apps/v1=false,apps/v1/deployments"}, without("apps/v1/replicasets")},
		{"one resource when all is off", []string{"api/all=false,/v1/configmaps=true"}, []string{"/v1/configmaps"}},
		{"one resource of a version off by default", []string{"storage/v1beta1/csistoragecapacities=true"}, with("storage/v1beta1/csistoragecapacities")},

		// Default differences between resources of one group-version last
		// until the group-version or its level is switched.
		{"mixed defaults kept by another level", []string{"api/alpha=false"}, defaults},
		{"group-version key drops resource defaults", []string{"mixed/v1=true"}, with("mixed/v1/b")},
		{"level key drops resource defaults", []string{"api/ga=true"}, with("mixed/v1/b")},
		{"level off drops them too", []string{"api/ga=false,mixed/v1/b"}, []string{"flowcontrol/v1beta3/flowschemas", "mixed/v1/b"}},
		{"resource key on a mixed version", []string{"mixed/v1/b=true"}, with("mixed/v1/b")},

		// The core group.
		{"core v1 off", []string{"v1=false"}, without("/v1/configmaps", "/v1/pods")},
		{"core api/v1 off", []string{"api/v1=false"}, without("/v1/configmaps", "/v1/pods")},
		{"core api/v1/pods is all of v1", []string{"api/v1/pods=false"}, without("/v1/configmaps", "/v1/pods")},
		{"core v1/pods is all of v1", []string{"v1/pods=false"}, without("/v1/configmaps", "/v1/pods")},
		{"core resource", []string{"/v1/pods=false"}, without("/v1/pods")},
		{"later core spelling wins", []string{"api/v1=false", "v1=true"}, defaults},
	}
	for _, c := range cases {
		rc, err := ParseRuntimeConfig(c.values)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		e, err := rc.Resolve(known)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var got []string
		for _, k := range known {
			if e.Resource(k.GroupVersionResource) {
				got = append(got, unbranded(b, k.GroupVersionResource))
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("%s: served %q, want %q", c.name, got, want)
		}
		for _, k := range known {
			served := false
			for _, o := range known {
				if o.Group == k.Group && o.Version == k.Version && e.Resource(o.GroupVersionResource) {
					served = true
				}
			}
			if e.GroupVersion(k.Group, k.Version) != served {
				t.Errorf("%s: GroupVersion(%q, %q) = %v, want %v", c.name, k.Group, k.Version, !served, served)
			}
		}
	}
}

// unbranded spells r as group/version/resource with the brand's domain cut
// off, so that tables need not spell it.
func unbranded(b Brand, r GroupVersionResource) string {
	g, _ := b.Unbrand(r.Group)
	return g + "/" + r.Version + "/" + r.Resource
}

func TestResolveUnknown(t *testing.T) {
	t.Parallel()
	b, err := LookupBrand("plat")
	if err != nil {
		t.Fatal(err)
	}
	other, err := LookupBrand("kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		values []string
		want   string
	}{
		{[]string{"foo/v1=true"}, "unknown api groups foo"},
		{[]string{"foo/v1,bar/v1/things=false,foo/v2"}, "unknown api groups foo,bar"},
		{[]string{other.Group("events") + "/v1=false"}, "unknown api groups " + other.Group("events")},
		{[]string{"api/v1beta3=false"}, "unknown api groups api"},
		{[]string{"apps/v2=true"}, `group version apps/v2 that has not been registered (entry "apps/v2=true")`},
		{[]string{"/v2=true"}, "group version v2 that has not been registered"},
		{[]string{"apps/v1/foos=false"}, `resource "foos" that has not been registered in group version apps/v1 (entry "apps/v1/foos=false")`},
		{[]string{"/v1/nodes"}, `resource "nodes" that has not been registered in group version v1`},
		{[]string{"apps/v1/=true"}, `resource "" that has not been registered in group version apps/v1`},
		{[]string{"apps/v9,foo/v1"}, "unknown api groups foo; group version apps/v9 that has not been registered"},
	}
	for _, c := range cases {
		rc, err := ParseRuntimeConfig(c.values)
		if err != nil {
			t.Errorf("%q: %v", c.values, err)
			continue
		}
		_, err = rc.Resolve(testKnown(b))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "--runtime-config: "+c.want) {
			t.Errorf("%q: error %v, want %q", c.values, err, c.want)
		}
	}
}

func TestVersionStability(t *testing.T) {
	t.Parallel()
	cases := map[string]Stability{
		"v1": StabilityGA, "v2": StabilityGA, "v10": StabilityGA, "v01": StabilityGA,
		"v1beta1": StabilityBeta, "v2beta3": StabilityBeta,
		"v1alpha1": StabilityAlpha, "v1alpha3": StabilityAlpha,
		"": StabilityOther, "v": StabilityOther, "V1": StabilityOther, "1": StabilityOther,
		"v1beta": StabilityOther, "vbeta1": StabilityOther, "v1beta1x": StabilityOther,
		"v1alpha": StabilityOther, "v1gamma1": StabilityOther, "v1beta1alpha1": StabilityOther, "v１": StabilityOther,
	}
	for v, want := range cases {
		if got := VersionStability(v); got != want {
			t.Errorf("%q: %v, want %v", v, got, want)
		}
	}
}
