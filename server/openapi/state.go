package openapi

import (
	"slices"

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

// captureState reads the registry; it costs one sort of the descriptors,
// far less than rebuilding and hashing the documents.
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

// resources returns the descriptors of one group-version, sorted by
// resource.
func (s registryState) resources(group, version string) []*registry.Descriptor {
	var out []*registry.Descriptor
	for _, d := range s.descs {
		if d.Group == group && d.Version == version {
			out = append(out, d)
		}
	}
	return out
}
