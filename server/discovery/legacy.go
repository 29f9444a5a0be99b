package discovery

import (
	"slices"
	"strings"

	"platd/server/registry"
)

// The legacy discovery kinds. Field order is the wire order.

// apiVersions is the body of GET /api. Core endpoints carry no apiVersion.
type apiVersions struct {
	Kind                       string                      `json:"kind"`
	Versions                   []string                    `json:"versions"`
	ServerAddressByClientCIDRs []serverAddressByClientCIDR `json:"serverAddressByClientCIDRs"`
}

type serverAddressByClientCIDR struct {
	ClientCIDR    string `json:"clientCIDR"`
	ServerAddress string `json:"serverAddress"`
}

// apiGroupList is the body of GET /apis.
type apiGroupList struct {
	Kind       string     `json:"kind"`
	APIVersion string     `json:"apiVersion"`
	Groups     []apiGroup `json:"groups"`
}

// apiGroup is the body of GET /apis/<group> and one entry of apiGroupList;
// Kind and APIVersion are empty (omitted) inside the list.
type apiGroup struct {
	Kind             string                     `json:"kind,omitempty"`
	APIVersion       string                     `json:"apiVersion,omitempty"`
	Name             string                     `json:"name"`
	Versions         []groupVersionForDiscovery `json:"versions"`
	PreferredVersion groupVersionForDiscovery   `json:"preferredVersion"`
}

type groupVersionForDiscovery struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

// apiResourceList is the body of GET /api/<v> and /apis/<group>/<v>; the
// core one omits apiVersion.
type apiResourceList struct {
	Kind         string        `json:"kind"`
	APIVersion   string        `json:"apiVersion,omitempty"`
	GroupVersion string        `json:"groupVersion"`
	Resources    []apiResource `json:"resources"`
}

type apiResource struct {
	Name               string   `json:"name"`
	SingularName       string   `json:"singularName"`
	Namespaced         bool     `json:"namespaced"`
	Group              string   `json:"group,omitempty"`
	Version            string   `json:"version,omitempty"`
	Kind               string   `json:"kind"`
	Verbs              []string `json:"verbs"`
	ShortNames         []string `json:"shortNames,omitempty"`
	Categories         []string `json:"categories,omitempty"`
	StorageVersionHash string   `json:"storageVersionHash,omitempty"`
}

// Wire constants of the legacy documents.
const (
	kindAPIVersions     = "APIVersions"
	kindAPIGroupList    = "APIGroupList"
	kindAPIGroup        = "APIGroup"
	kindAPIResourceList = "APIResourceList"
	// legacyAPIVersion is the apiVersion of group discovery kinds; it is
	// "v1" in every brand.
	legacyAPIVersion = "v1"
	// allClientsCIDR is the clientCIDR of the address every client is
	// told.
	allClientsCIDR = "0.0.0.0/0"
)

// newAPIVersions builds the /api body for a core group serving versions.
func newAPIVersions(versions []string, addresses []serverAddressByClientCIDR) apiVersions {
	return apiVersions{
		Kind:                       kindAPIVersions,
		Versions:                   nonNil(versions),
		ServerAddressByClientCIDRs: addresses,
	}
}

// newAPIGroup builds the discovery entry of one named group.
func newAPIGroup(name string, versions []string) apiGroup {
	g := apiGroup{Name: name, Versions: make([]groupVersionForDiscovery, 0, len(versions))}
	for _, v := range versions {
		g.Versions = append(g.Versions, groupVersionForDiscovery{GroupVersion: name + "/" + v, Version: v})
	}
	if len(g.Versions) > 0 {
		g.PreferredVersion = g.Versions[0]
	}
	return g
}

// newAPIResourceList lists descs (one group-version) and their
// subresources, sorted by name, as GET /api/<v> and /apis/<g>/<v> do; a
// custom resource's subresources follow it in the order given, as
// upstream lists them.
func newAPIResourceList(group, version string, descs []*registry.Descriptor) apiResourceList {
	l := apiResourceList{Kind: kindAPIResourceList, GroupVersion: version, Resources: []apiResource{}}
	if group != "" {
		l.APIVersion = legacyAPIVersion
		l.GroupVersion = group + "/" + version
	}
	for _, d := range descs {
		r := apiResource{
			Name:         d.Resource,
			SingularName: d.Singular,
			Namespaced:   d.Namespaced,
			Kind:         d.Kind,
			Verbs:        sortedVerbs(d, listedVerbs(d)),
			ShortNames:   d.ShortNames,
			Categories:   d.Categories,
		}
		r.StorageVersionHash = storageVersionHashOf(d)
		l.Resources = append(l.Resources, r)
		for _, sub := range d.Subresources {
			gvk := subresourceKind(d, sub)
			l.Resources = append(l.Resources, apiResource{
				Name:       d.Resource + "/" + sub.Name,
				Namespaced: d.Namespaced,
				Group:      gvk.Group,
				Version:    gvk.Version,
				Kind:       gvk.Kind,
				Verbs:      sortedVerbs(d, sub.Verbs),
			})
		}
	}
	given := len(descs) > 0 && descs[0].ListedAsGiven
	slices.SortStableFunc(l.Resources, func(a, b apiResource) int {
		if given {
			// Each resource, then its subresources as given.
			ra, _, _ := strings.Cut(a.Name, "/")
			rb, _, _ := strings.Cut(b.Name, "/")
			return strings.Compare(ra, rb)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return l
}

// listedVerbs are the verbs discovery lists for d's main resource.
func listedVerbs(d *registry.Descriptor) []string {
	if d.ListedVerbs != nil {
		return d.ListedVerbs
	}
	return d.Verbs
}

// sortedVerbs returns a copy of verbs, sorted unless d lists them as
// given, never nil (verbs is always encoded, as [] when empty).
func sortedVerbs(d *registry.Descriptor, verbs []string) []string {
	out := append(make([]string, 0, len(verbs)), verbs...)
	if !d.ListedAsGiven {
		slices.Sort(out)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
