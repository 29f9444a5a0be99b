package registry

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Priority orders served groups and versions the way their APIService
// objects do (spec §2.6): groups by Group (groupPriorityMinimum)
// descending, then by name; versions of a group by Version
// (versionPriority) descending, then newest first.
type Priority struct {
	Group, Version int
}

// defaultPriority is the APIService priority of a group-version with no
// other: what upstream gives the groups of custom resources.
var defaultPriority = Priority{Group: 1000, Version: 100}

// SetPriorities gives the registry the priority of each group-version;
// ok false falls back to the default. Snapshots order by it from then on.
func (r *Registry) SetPriorities(p func(group, version string) (Priority, bool)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.priority = p
	r.generation++
}

// PriorityOf returns the priority of a group-version.
func (r *Registry) PriorityOf(group, version string) Priority {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.priorityLocked(group, version)
}

func (r *Registry) priorityLocked(group, version string) Priority {
	if r.priority != nil {
		if p, ok := r.priority(group, version); ok {
			return p
		}
	}
	return defaultPriority
}

// orderLocked sorts the groups and each group's versions by priority.
func (r *Registry) orderLocked() ([]string, [][]string) {
	return OrderGroupVersions(r.groups, func(g string) []string { return r.versions[g] }, r.priorityLocked)
}

// OrderGroupVersions orders groups, and the versions of each, as
// discovery lists them: groups by the best group priority of their
// versions, then by name, the core group ("") first as it is served
// apart, under /api; versions by version priority, then newest first.
// The slices returned are new.
func OrderGroupVersions(groups []string, versions func(group string) []string, priority func(group, version string) Priority) ([]string, [][]string) {
	groupPri := func(g string) int {
		best := 0
		for _, v := range versions(g) {
			best = max(best, priority(g, v).Group)
		}
		return best
	}
	groups = slices.Clone(groups)
	slices.SortStableFunc(groups, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "":
			return -1
		case b == "":
			return 1
		}
		if c := cmp.Compare(groupPri(b), groupPri(a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	ordered := make([][]string, len(groups))
	for i, g := range groups {
		vs := slices.Clone(versions(g))
		slices.SortStableFunc(vs, func(a, b string) int {
			if c := cmp.Compare(priority(g, b).Version, priority(g, a).Version); c != 0 {
				return c
			}
			return CompareVersions(b, a)
		})
		ordered[i] = vs
	}
	return groups, ordered
}

// CompareVersions orders API version strings as upstream does: versions
// of the form v<major>[alpha|beta<minor>] are GA above beta above alpha,
// and higher numbers above lower; they sort above every other string,
// which sort by name. It returns -1, 0 or 1 as a is below, equal to or
// above b.
func CompareVersions(a, b string) int {
	pa, oka := parseVersion(a)
	pb, okb := parseVersion(b)
	switch {
	case oka && okb:
		if c := cmp.Compare(pa.level, pb.level); c != 0 {
			return c
		}
		if c := cmp.Compare(pa.major, pb.major); c != 0 {
			return c
		}
		return cmp.Compare(pa.minor, pb.minor)
	case oka:
		return 1
	case okb:
		return -1
	}
	// Other strings: the one that sorts first by name ranks higher.
	return strings.Compare(b, a)
}

type parsedVersion struct {
	level        int // 2 GA, 1 beta, 0 alpha
	major, minor int
}

func parseVersion(v string) (parsedVersion, bool) {
	rest, ok := strings.CutPrefix(v, "v")
	if !ok {
		return parsedVersion{}, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	major, err := strconv.Atoi(rest[:i])
	if err != nil || major == 0 || rest[0] == '0' {
		return parsedVersion{}, false
	}
	p := parsedVersion{level: 2, major: major}
	rest = rest[i:]
	if rest == "" {
		return p, true
	}
	switch {
	case strings.HasPrefix(rest, "alpha"):
		p.level, rest = 0, rest[len("alpha"):]
	case strings.HasPrefix(rest, "beta"):
		p.level, rest = 1, rest[len("beta"):]
	default:
		return parsedVersion{}, false
	}
	minor, err := strconv.Atoi(rest)
	if err != nil || minor == 0 || rest[0] == '0' {
		return parsedVersion{}, false
	}
	p.minor = minor
	return p, true
}
