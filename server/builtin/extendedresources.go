package builtin

import (
	"context"
	"slices"

	"platd/server/registry"
)

// admitExtendedResourceTolerations is ExtendedResourceToleration's step:
// a pod written whose containers or init containers request an extended
// resource tolerates the NoSchedule taint of that resource's name, the
// taint that keeps other pods off the nodes offering it. The tolerations
// are added in the order of the resources' names, each replacing the
// pod's tolerations of the same key, operator, value and effect, or
// nothing when the pod has it already as it would be added.
func (r podRules) admitExtendedResourceTolerations(_ context.Context, _ registry.Lookup, obj, _ registry.Object) error {
	spec := mapOf(obj["spec"])
	var names []string
	for _, kind := range []string{"containers", "initContainers"} {
		for _, c := range mapsOf(spec[kind]) {
			for name := range mapOf(mapOf(c["resources"])["requests"]) {
				if r.res.isExtended(name) && !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
	}
	slices.Sort(names)
	for _, name := range names {
		addOrUpdateToleration(spec, map[string]any{"key": name, "operator": tolerationOpExists, "effect": taintNoSchedule})
	}
	return nil
}

// addOrUpdateToleration puts tol among the tolerations of spec, as
// upstream's helper does: every toleration of the same key, operator,
// value and effect is replaced by tol (tol is appended when none is),
// unless one of them equals tol, which leaves the list as it was.
func addOrUpdateToleration(spec map[string]any, tol map[string]any) {
	var out []any
	updated := false
	for _, t := range mapsOf(spec["tolerations"]) {
		if !tolerationsMatch(t, tol) {
			out = append(out, t)
			continue
		}
		if sameToleration(t, tol) {
			return
		}
		out = append(out, tol)
		updated = true
	}
	if !updated {
		out = append(out, tol)
	}
	spec["tolerations"] = out
}

// tolerationsMatch reports whether two tolerations have the same key,
// operator, value and effect; their tolerationSeconds may differ.
func tolerationsMatch(a, b map[string]any) bool {
	for _, f := range []string{"key", "operator", "value", "effect"} {
		if strOf(a[f]) != strOf(b[f]) {
			return false
		}
	}
	return true
}
