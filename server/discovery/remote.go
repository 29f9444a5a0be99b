package discovery

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"platd/server/registry"
)

// freshnessStale marks a group-version of an extension server whose
// resources could not be read.
const freshnessStale = "Stale"

// RemoteGroupVersion is a group-version an APIService hands to an
// extension API server. Discovery lists it with the served ones, ordered
// by Priority; its legacy resource list is the extension server's own
// (the request is proxied), its aggregated entry holds Resources.
type RemoteGroupVersion struct {
	Group, Version string
	Priority       registry.Priority
	// Resources are what the server's discovery document listed; nil
	// when it could not be read, which lists the version as stale,
	// without resources.
	Resources *RemoteResources
}

// RemoteResources are the resources of one group-version of an extension
// server in aggregated form. It is immutable.
type RemoteResources struct {
	list []resourceDiscovery
}

// ErrNotResourceList is a discovery body that is not an APIResourceList.
var ErrNotResourceList = errors.New("not an APIResourceList")

// ParseResourceList reads a legacy APIResourceList (JSON) and converts it
// to the aggregated form, as upstream's aggregator does for a server that
// does not serve aggregated discovery: resources in the order given, each
// subresource ("resource/sub") under its resource (one without its
// resource gets an empty one), subresources with the kind they name.
func ParseResourceList(body []byte) (*RemoteResources, error) {
	var l struct {
		Kind      string        `json:"kind"`
		Resources []apiResource `json:"resources"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, err
	}
	if l.Kind != kindAPIResourceList {
		return nil, ErrNotResourceList
	}
	out := &RemoteResources{list: []resourceDiscovery{}}
	parent := map[string]int{}
	scopeOf := func(r apiResource) string {
		if r.Namespaced {
			return scopeNamespaced
		}
		return scopeCluster
	}
	for _, r := range l.Resources {
		if strings.Contains(r.Name, "/") {
			continue
		}
		out.list = append(out.list, resourceDiscovery{
			Resource: r.Name, ResponseKind: groupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind},
			Scope: scopeOf(r), SingularResource: r.SingularName, Verbs: nonNil(r.Verbs),
			ShortNames: r.ShortNames, Categories: r.Categories,
		})
		parent[r.Name] = len(out.list) - 1
	}
	for _, r := range l.Resources {
		res, sub, ok := strings.Cut(r.Name, "/")
		if !ok {
			continue
		}
		i, found := parent[res]
		if !found {
			out.list = append(out.list, resourceDiscovery{Resource: res, Scope: scopeOf(r), Verbs: []string{}})
			i = len(out.list) - 1
			parent[res] = i
		}
		if out.list[i].Scope != scopeOf(r) {
			return nil, fmt.Errorf("parent %s (scope: %s) and subresource %s (scope: %s) scope do not match", res, out.list[i].Scope, sub, scopeOf(r))
		}
		sd := subresourceDiscovery{Subresource: sub, Verbs: nonNil(r.Verbs)}
		if r.Kind != "" {
			sd.ResponseKind = groupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
		}
		out.list[i].Subresources = append(out.list[i].Subresources, sd)
	}
	return out, nil
}

// Equal reports whether r and o list the same resources; nil equals
// only nil.
func (r *RemoteResources) Equal(o *RemoteResources) bool {
	if r == nil || o == nil {
		return r == o
	}
	return reflect.DeepEqual(r.list, o.list)
}

// remoteKey identifies a list of remote group-versions: equal keys,
// equal documents (Resources are immutable, so their address will do).
func remoteKey(remote []RemoteGroupVersion) string {
	var b strings.Builder
	for _, r := range remote {
		fmt.Fprintf(&b, "%s/%s/%d/%d/%p;", r.Group, r.Version, r.Priority.Group, r.Priority.Version, r.Resources)
	}
	return b.String()
}

// mergeRemote adds the remote group-versions the registry does not serve
// to its groups and versions, ordered as the registry orders: groups by
// their best group priority (the core group first), then by name;
// versions by version priority, then newest first. It returns the remote
// entries by group and version.
func mergeRemote(state registry.Snapshot, remote []RemoteGroupVersion, pri func(group, version string) registry.Priority) ([]string, [][]string, map[string]map[string]RemoteGroupVersion) {
	versions := map[string][]string{}
	for i, g := range state.Groups {
		versions[g] = slices.Clone(state.Versions[i])
	}
	byGV := map[string]map[string]RemoteGroupVersion{}
	for _, r := range remote {
		if r.Group == "" || slices.Contains(versions[r.Group], r.Version) {
			continue
		}
		if byGV[r.Group] == nil {
			byGV[r.Group] = map[string]RemoteGroupVersion{}
		}
		byGV[r.Group][r.Version] = r
		versions[r.Group] = append(versions[r.Group], r.Version)
	}
	priority := func(g, v string) registry.Priority {
		if r, ok := byGV[g][v]; ok {
			return r.Priority
		}
		return pri(g, v)
	}
	groups, ordered := registry.OrderGroupVersions(slices.Collect(maps.Keys(versions)), func(g string) []string { return versions[g] }, priority)
	return groups, ordered, byGV
}

// ErrNotAggregated is a discovery body that is not an
// APIGroupDiscoveryList.
var ErrNotAggregated = errors.New("not an APIGroupDiscoveryList")

// AggregatedAccept is the Accept header asking a server for its
// aggregated discovery document (v2, then v2beta1) under any of the
// discovery groups given, or else plain JSON.
func AggregatedAccept(discoveryGroups ...string) string {
	var b strings.Builder
	for _, g := range discoveryGroups {
		for _, v := range []string{aggregatedV2, aggregatedV2Beta1} {
			fmt.Fprintf(&b, "%s;%s=%s;%s=%s;%s=%s,", mediaJSON, paramGroup, g, paramVersion, v, paramAs, aggregatedAs)
		}
	}
	b.WriteString(mediaJSON)
	return b.String()
}

// ParseAggregatedGroupVersion reads an aggregated discovery document
// (JSON, apidiscovery v2 or v2beta1, which share one shape) and returns
// the resources it lists for group/version, as upstream's aggregator takes
// an extension server's document: a group-version the document does not
// list has no resources. A body of another kind is ErrNotAggregated.
func ParseAggregatedGroupVersion(body []byte, group, version string) (*RemoteResources, error) {
	var l struct {
		Kind  string           `json:"kind"`
		Items []groupDiscovery `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, err
	}
	if l.Kind != kindGroupDiscoveryList {
		return nil, ErrNotAggregated
	}
	out := &RemoteResources{list: []resourceDiscovery{}}
	for _, g := range l.Items {
		if g.Metadata.Name != group {
			continue
		}
		for _, v := range g.Versions {
			if v.Version != version {
				continue
			}
			for _, r := range v.Resources {
				r.Verbs = nonNil(r.Verbs)
				for i := range r.Subresources {
					r.Subresources[i].Verbs = nonNil(r.Subresources[i].Verbs)
				}
				out.list = append(out.list, r)
			}
			return out, nil
		}
	}
	return out, nil
}
