package config

import (
	"fmt"
	"strings"
)

// KnownResource is one resource a server can serve, as its registry lists
// it: every resource of every group-version it has, served or not.
type KnownResource struct {
	GroupVersionResource
	// EnabledByDefault says whether it is served when --runtime-config does
	// not mention it.
	EnabledByDefault bool
}

// Stability is how settled an API version is, read from its name alone.
type Stability int

const (
	// StabilityOther is a version of none of the three forms below; only
	// api/all addresses it.
	StabilityOther Stability = iota
	// StabilityGA is v<N>, such as v1 or v2.
	StabilityGA
	// StabilityBeta is v<N>beta<M>, such as v1beta1.
	StabilityBeta
	// StabilityAlpha is v<N>alpha<M>, such as v1alpha1.
	StabilityAlpha
)

// VersionStability classifies a version name as the level keys see it.
func VersionStability(version string) Stability {
	rest, ok := cutDigits(version, "v")
	switch {
	case !ok:
		return StabilityOther
	case rest == "":
		return StabilityGA
	}
	if r, ok := cutDigits(rest, "beta"); ok && r == "" {
		return StabilityBeta
	}
	if r, ok := cutDigits(rest, "alpha"); ok && r == "" {
		return StabilityAlpha
	}
	return StabilityOther
}

// cutDigits removes prefix and the run of ASCII digits after it, which must
// not be empty, and returns what follows.
func cutDigits(s, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return s, false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	return rest[n:], n > 0
}

// levelMatches reports whether the level key at position i of levels
// addresses version.
func levelMatches(i int, version string) bool {
	switch levels[i] {
	case RuntimeConfigAll:
		return true
	case RuntimeConfigGA:
		return VersionStability(version) == StabilityGA
	case RuntimeConfigBeta:
		return VersionStability(version) == StabilityBeta
	default:
		return VersionStability(version) == StabilityAlpha
	}
}

// EnabledAPIs is the outcome of Resolve: which of the known resources are
// served. A group-version is served when at least one of its resources is.
// The zero value serves nothing. It is read-only and safe for concurrent use.
type EnabledAPIs struct {
	resources map[GroupVersionResource]bool
	versions  map[groupVersion]bool
}

// Resource reports whether r is served.
func (e EnabledAPIs) Resource(r GroupVersionResource) bool { return e.resources[r] }

// GroupVersion reports whether any resource of group/version is served.
func (e EnabledAPIs) GroupVersion(group, version string) bool {
	return e.versions[groupVersion{group, version}]
}

// Resolve decides which of known are served under rc. The rules, in the
// order they apply:
//
//  1. A group-version starts enabled when any of its resources is enabled by
//     default; a resource whose default differs from its group-version's
//     carries that difference as its own setting.
//  2. api/all, then api/ga, api/beta, api/alpha switch every group-version
//     of their level and drop the settings of those group-versions'
//     resources.
//  3. A <group>/<version> key switches that group-version and drops the
//     settings of its resources.
//  4. A <group>/<version>/<resource> key sets that resource. A resource's
//     own setting wins over its group-version's: enabling one resource of a
//     disabled group-version serves that group-version with only it.
//
// A key naming a group, group-version or resource that known does not have
// is an error wrapping ErrInvalid, naming every such key.
func (rc RuntimeConfig) Resolve(known []KnownResource) (EnabledAPIs, error) {
	groups := map[string]bool{}
	versionOn := map[groupVersion]bool{}
	defaults := map[GroupVersionResource]bool{}
	byVersion := map[groupVersion][]GroupVersionResource{}
	for _, k := range known {
		gv := k.groupVersion()
		groups[k.Group] = true
		versionOn[gv] = versionOn[gv] || k.EnabledByDefault
		if _, seen := defaults[k.GroupVersionResource]; !seen {
			byVersion[gv] = append(byVersion[gv], k.GroupVersionResource)
		}
		defaults[k.GroupVersionResource] = defaults[k.GroupVersionResource] || k.EnabledByDefault
	}
	if err := rc.checkKnown(groups, versionOn, defaults); err != nil {
		return EnabledAPIs{}, err
	}

	own := map[GroupVersionResource]bool{}
	for r, on := range defaults {
		if on != versionOn[r.groupVersion()] {
			own[r] = on
		}
	}
	setVersion := func(gv groupVersion, on bool) {
		versionOn[gv] = on
		for _, r := range byVersion[gv] {
			delete(own, r)
		}
	}
	for i, l := range rc.levels {
		if !l.set {
			continue
		}
		for gv := range versionOn {
			if levelMatches(i, gv.version) {
				setVersion(gv, l.enabled)
			}
		}
	}
	for _, v := range rc.versions {
		setVersion(v.gv, v.enabled)
	}
	for _, r := range rc.resources {
		own[r.gvr] = r.enabled
	}

	e := EnabledAPIs{resources: map[GroupVersionResource]bool{}, versions: map[groupVersion]bool{}}
	for r := range defaults {
		on, ok := own[r]
		if !ok {
			on = versionOn[r.groupVersion()]
		}
		if on {
			e.resources[r] = true
			e.versions[r.groupVersion()] = true
		}
	}
	return e, nil
}

// checkKnown reports every key that names something the server does not
// have: unknown groups first, in one message, then unknown group-versions
// and resources of known groups.
func (rc RuntimeConfig) checkKnown(groups map[string]bool, versions map[groupVersion]bool, resources map[GroupVersionResource]bool) error {
	var unknownGroups, problems []string
	seenGroup := map[string]bool{}
	check := func(entry string, gv groupVersion) bool {
		if !groups[gv.group] {
			if !seenGroup[gv.group] {
				seenGroup[gv.group] = true
				unknownGroups = append(unknownGroups, gv.group)
			}
			return false
		}
		if _, ok := versions[gv]; !ok {
			problems = append(problems, fmt.Sprintf("group version %s that has not been registered (entry %q)", gv, entry))
			return false
		}
		return true
	}
	for _, v := range rc.versions {
		check(v.entry, v.gv)
	}
	for _, r := range rc.resources {
		if check(r.entry, r.gvr.groupVersion()) {
			if _, ok := resources[r.gvr]; !ok {
				problems = append(problems, fmt.Sprintf("resource %q that has not been registered in group version %s (entry %q)", r.gvr.Resource, r.gvr.groupVersion(), r.entry))
			}
		}
	}
	if len(unknownGroups) > 0 {
		problems = append([]string{"unknown api groups " + strings.Join(unknownGroups, ",")}, problems...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: --runtime-config: %s", ErrInvalid, strings.Join(problems, "; "))
	}
	return nil
}
