package discovery

import (
	"slices"
	"strings"

	"platd/server/registry"
)

// The aggregated discovery kinds (apidiscovery v2 and v2beta1 share one
// shape). Field order is the wire order.

// groupDiscoveryList is the body of aggregated GET /api and /apis. Kind and
// APIVersion are left empty when the ETag is computed: the tag covers the
// content only, so v2 and v2beta1 answers carry the same one.
type groupDiscoveryList struct {
	Kind       string           `json:"kind,omitempty"`
	APIVersion string           `json:"apiVersion,omitempty"`
	Metadata   struct{}         `json:"metadata"`
	Items      []groupDiscovery `json:"items"`
}

type groupDiscovery struct {
	Metadata groupMeta          `json:"metadata"`
	Versions []versionDiscovery `json:"versions"`
}

// groupMeta is the ObjectMeta of a group item: the core group has no name,
// and creationTimestamp is always encoded, as null.
type groupMeta struct {
	Name              string    `json:"name,omitempty"`
	CreationTimestamp *struct{} `json:"creationTimestamp"`
}

type versionDiscovery struct {
	Version   string              `json:"version"`
	Resources []resourceDiscovery `json:"resources"`
	Freshness string              `json:"freshness"`
}

type resourceDiscovery struct {
	Resource         string                 `json:"resource"`
	ResponseKind     groupVersionKind       `json:"responseKind"`
	Scope            string                 `json:"scope"`
	SingularResource string                 `json:"singularResource"`
	Verbs            []string               `json:"verbs"`
	ShortNames       []string               `json:"shortNames,omitempty"`
	Categories       []string               `json:"categories,omitempty"`
	Subresources     []subresourceDiscovery `json:"subresources,omitempty"`
}

type subresourceDiscovery struct {
	Subresource   string             `json:"subresource"`
	ResponseKind  groupVersionKind   `json:"responseKind"`
	AcceptedTypes []groupVersionKind `json:"acceptedTypes,omitempty"`
	Verbs         []string           `json:"verbs"`
}

// groupVersionKind is a responseKind; group and version are empty when the
// kind is the resource's own group-version, unless the descriptor asks for
// them (custom resources).
type groupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// Wire constants of aggregated discovery.
const (
	kindGroupDiscoveryList = "APIGroupDiscoveryList"
	scopeNamespaced        = "Namespaced"
	scopeCluster           = "Cluster"
	// freshnessCurrent marks groups served by this process and
	// extension servers whose resources were read (freshnessStale).
	freshnessCurrent = "Current"
)

// groupEntry is one group with the versions it serves (preferred first) and
// each version's descriptors.
type groupEntry struct {
	name     string
	versions []string
	descs    map[string][]*registry.Descriptor
	// remote holds the versions extension servers serve.
	remote map[string]RemoteGroupVersion
}

// newGroupDiscoveryList builds the aggregated document of groups, without
// kind and apiVersion.
func newGroupDiscoveryList(groups []groupEntry) groupDiscoveryList {
	l := groupDiscoveryList{Items: make([]groupDiscovery, 0, len(groups))}
	for _, g := range groups {
		item := groupDiscovery{Metadata: groupMeta{Name: g.name}, Versions: []versionDiscovery{}}
		for _, v := range g.versions {
			vd := versionDiscovery{Version: v, Resources: []resourceDiscovery{}, Freshness: freshnessCurrent}
			if rv, ok := g.remote[v]; ok {
				if rv.Resources == nil {
					vd.Freshness = freshnessStale
				} else {
					vd.Resources = rv.Resources.list
				}
			}
			for _, d := range g.descs[v] {
				vd.Resources = append(vd.Resources, newResourceDiscovery(d))
			}
			item.Versions = append(item.Versions, vd)
		}
		l.Items = append(l.Items, item)
	}
	return l
}

func newResourceDiscovery(d *registry.Descriptor) resourceDiscovery {
	rd := resourceDiscovery{
		Resource:         d.Resource,
		ResponseKind:     responseKind(d),
		Scope:            scopeCluster,
		SingularResource: d.Singular,
		Verbs:            sortedVerbs(d, listedVerbs(d)),
		ShortNames:       d.ShortNames,
		Categories:       d.Categories,
	}
	if d.Namespaced {
		rd.Scope = scopeNamespaced
	}
	for _, sub := range d.Subresources {
		kind := subresourceKind(d, sub)
		if d.QualifiedResponseKinds && kind.Group == "" && kind.Version == "" {
			kind.Group, kind.Version = d.Group, d.Version
		}
		rd.Subresources = append(rd.Subresources, subresourceDiscovery{
			Subresource:  sub.Name,
			ResponseKind: kind,
			Verbs:        sortedVerbs(d, sub.Verbs),
		})
	}
	if !d.ListedAsGiven {
		slices.SortFunc(rd.Subresources, func(a, b subresourceDiscovery) int {
			return strings.Compare(a.Subresource, b.Subresource)
		})
	}
	return rd
}

// responseKind is the kind the resource answers with: with its group and
// version only when the descriptor asks for them.
func responseKind(d *registry.Descriptor) groupVersionKind {
	if d.QualifiedResponseKinds {
		return groupVersionKind{Group: d.Group, Version: d.Version, Kind: d.Kind}
	}
	return groupVersionKind{Kind: d.Kind}
}

// subresourceKind is the kind a subresource answers with: the resource's
// own unless the subresource names one, with its group and version only
// when they differ from the resource's (pods/binding answers with a
// Binding of core v1, deployments/scale with an autoscaling/v1 Scale).
func subresourceKind(d *registry.Descriptor, sub registry.Subresource) groupVersionKind {
	if sub.Kind == "" {
		return groupVersionKind{Kind: d.Kind}
	}
	gvk := groupVersionKind{Kind: sub.Kind}
	version := sub.Version
	if version == "" {
		version = d.Version
	}
	if sub.Group != d.Group || version != d.Version {
		gvk.Group, gvk.Version = sub.Group, version
	}
	return gvk
}
