package discovery

import (
	"encoding/json"

	"platd/config"
	"platd/server/registry"
)

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
	state        registry.Snapshot
	coreVersions []string
	groupList    []byte
	groups       map[string][]byte
	// resourceLists is keyed by group and then version.
	resourceLists map[string]map[string][]byte
	aggregatedAPI aggregatedDoc
	aggregatedAll aggregatedDoc
	// remoteKey identifies the remote group-versions it was built with.
	remoteKey string
}

func buildSnapshot(state registry.Snapshot, b config.Brand, remote []RemoteGroupVersion, pri func(group, version string) registry.Priority) *snapshot {
	byGV := state.ByGroupVersion()
	remoteByGV := map[string]map[string]RemoteGroupVersion{}
	if len(remote) > 0 {
		state.Groups, state.Versions, remoteByGV = mergeRemote(state, remote, pri)
	}
	s := &snapshot{
		state:         state,
		groups:        map[string][]byte{},
		resourceLists: map[string]map[string][]byte{},
	}
	list := apiGroupList{Kind: kindAPIGroupList, APIVersion: legacyAPIVersion, Groups: []apiGroup{}}
	var core []groupEntry
	var named []groupEntry
	for i, g := range state.Groups {
		versions := state.Versions[i]
		entry := groupEntry{name: g, versions: versions, descs: byGV[g], remote: remoteByGV[g]}
		s.resourceLists[g] = map[string][]byte{}
		for _, v := range versions {
			if _, ok := entry.remote[v]; ok {
				continue // the extension server lists it
			}
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
