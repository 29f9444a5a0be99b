package discovery

import (
	"encoding/json"
	"slices"

	"platd/config"
	"platd/server/registry"
)

// registryState is what the documents are derived from. Two states are
// equal when the registry served the same descriptors (by identity) in the
// same group and version order, so a replaced descriptor is noticed too.
type registryState struct {
	groups   []string
	versions [][]string
	descs    []*registry.Descriptor
}

// captureState reads the registry. Reading it costs one sort of the
// descriptors, far less than rebuilding and hashing the documents.
func captureState(reg *registry.Registry) registryState {
	s := registryState{groups: reg.Groups(), descs: reg.All()}
	s.versions = make([][]string, len(s.groups))
	for i, g := range s.groups {
		s.versions[i] = reg.Versions(g)
	}
	return s
}

func (s registryState) equal(o registryState) bool {
	if !slices.Equal(s.groups, o.groups) || !slices.Equal(s.descs, o.descs) {
		return false
	}
	return slices.EqualFunc(s.versions, o.versions, slices.Equal)
}

// byGroupVersion splits the descriptors per group and version, each list
// sorted by resource (All's order).
func (s registryState) byGroupVersion() map[string]map[string][]*registry.Descriptor {
	out := map[string]map[string][]*registry.Descriptor{}
	for _, d := range s.descs {
		if out[d.Group] == nil {
			out[d.Group] = map[string][]*registry.Descriptor{}
		}
		out[d.Group][d.Version] = append(out[d.Group][d.Version], d)
	}
	return out
}

// aggregatedDoc is one aggregated discovery document ready to serve.
type aggregatedDoc struct {
	// etag covers the document without kind and apiVersion.
	etag string
	// bodies holds the compact JSON per apidiscovery version.
	bodies map[string][]byte
}

// snapshot holds every discovery document of one registry state as
// compact JSON. It is immutable once built.
type snapshot struct {
	state        registryState
	coreVersions []string
	groupList    []byte
	groups       map[string][]byte
	// resourceLists is keyed by group and then version.
	resourceLists map[string]map[string][]byte
	aggregatedAPI aggregatedDoc
	aggregatedAll aggregatedDoc
}

func buildSnapshot(state registryState, b config.Brand) *snapshot {
	byGV := state.byGroupVersion()
	s := &snapshot{
		state:         state,
		groups:        map[string][]byte{},
		resourceLists: map[string]map[string][]byte{},
	}
	list := apiGroupList{Kind: kindAPIGroupList, APIVersion: legacyAPIVersion, Groups: []apiGroup{}}
	var core []groupEntry
	var named []groupEntry
	for i, g := range state.groups {
		versions := state.versions[i]
		entry := groupEntry{name: g, versions: versions, descs: byGV[g]}
		s.resourceLists[g] = map[string][]byte{}
		for _, v := range versions {
			s.resourceLists[g][v] = mustMarshal(newAPIResourceList(g, v, byGV[g][v]))
		}
		if g == "" {
			s.coreVersions = versions
			core = append(core, entry)
			continue
		}
		named = append(named, entry)
		ag := newAPIGroup(g, versions)
		list.Groups = append(list.Groups, ag)
		ag.Kind, ag.APIVersion = kindAPIGroup, legacyAPIVersion
		s.groups[g] = mustMarshal(ag)
	}
	s.groupList = mustMarshal(list)
	s.aggregatedAPI = newAggregatedDoc(newGroupDiscoveryList(core), b)
	s.aggregatedAll = newAggregatedDoc(newGroupDiscoveryList(named), b)
	return s
}

func newAggregatedDoc(l groupDiscoveryList, b config.Brand) aggregatedDoc {
	doc := aggregatedDoc{etag: etagOf(mustMarshal(l)), bodies: map[string][]byte{}}
	l.Kind = kindGroupDiscoveryList
	for _, v := range []string{aggregatedV2, aggregatedV2Beta1} {
		l.APIVersion = b.DiscoveryGroup() + "/" + v
		doc.bodies[v] = mustMarshal(l)
	}
	return doc
}

// mustMarshal encodes a discovery value. The values are plain structs of
// strings, slices and bools, which encoding/json cannot fail on.
func mustMarshal(v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		panic("discovery: encoding a discovery document: " + err.Error())
	}
	return out
}
