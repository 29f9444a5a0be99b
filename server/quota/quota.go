package quota

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"platd/server/registry"
	"platd/server/schema"
)

// Quota is a ResourceQuota as admission and the controller read it.
type Quota struct {
	Name string
	// Object is the quota as it was read; Charge does not change it.
	Object registry.Object
	// SpecHard is spec.hard; Hard and Used are status.hard and
	// status.used, what admission checks against.
	SpecHard, Hard, Used List
	// UsedSet reports whether status.used is present.
	UsedSet bool
	// Scopes are spec.scopes (as Exists requirements) and then the match
	// expressions of spec.scopeSelector.
	Scopes []registry.ScopeRequirement
}

// Read reads a ResourceQuota object.
func Read(obj registry.Object) Quota {
	q := Quota{
		Name:     str(at(obj, "metadata"), "name"),
		Object:   obj,
		SpecHard: ListOf(at(obj, "spec", "hard")),
		Hard:     ListOf(at(obj, "status", "hard")),
		Used:     ListOf(at(obj, "status", "used")),
	}
	_, q.UsedSet = at(obj, "status")["used"].(map[string]any)
	spec := at(obj, "spec")
	for _, s := range stringsOf(spec["scopes"]) {
		q.Scopes = append(q.Scopes, registry.ScopeRequirement{ScopeName: s, Operator: "Exists"})
	}
	for _, e := range mapsOf(at(spec, "scopeSelector")["matchExpressions"]) {
		q.Scopes = append(q.Scopes, registry.ScopeRequirement{ScopeName: str(e, "scopeName"), Operator: str(e, "operator"), Values: stringsOf(e["values"])})
	}
	return q
}

// inScope reports whether obj falls in every scope of the quota.
func inScope(ev registry.QuotaEvaluator, scopes []registry.ScopeRequirement, obj registry.Object) bool {
	for _, s := range scopes {
		if !ev.MatchesScope(s, obj) {
			return false
		}
	}
	return true
}

// matches reports whether a write of obj is charged to q: q limits (in
// its status) a resource the type's usage carries, and obj is in its
// scopes.
func matches(ev registry.QuotaEvaluator, q Quota, obj registry.Object) bool {
	return len(ev.MatchingResources(q.Hard.Names())) > 0 && inScope(ev, q.Scopes, obj)
}

// Charge checks a write of obj (old is its stored state on an update, nil
// on a create) against the quotas of its namespace and returns the new
// status.used of each quota the write changes, by index into quotas.
// An error is a refusal, worded as upstream's quota admission words it
// (without the object's name, which the caller adds).
func Charge(ev registry.QuotaEvaluator, quotas []Quota, obj, old registry.Object, now time.Time) (map[int]List, error) {
	var charged []int
	for i, q := range quotas {
		if !matches(ev, q, obj) {
			continue
		}
		limited := ev.MatchingResources(q.Hard.Names())
		if why := ev.Constraints(limited, obj); why != "" {
			return nil, fmt.Errorf("failed quota: %s: %s", q.Name, why)
		}
		if !usageKnown(q, limited) {
			// Upstream names every limited resource, not only those
			// without usage.
			names := slices.Clone(limited)
			slices.Sort(names)
			return nil, fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, strings.Join(names, ","))
		}
		charged = append(charged, i)
	}
	if len(charged) == 0 {
		return nil, nil
	}
	usage := listOfStrings(ev.Usage(obj, now))
	if negative := usage.Negative(); len(negative) > 0 {
		return nil, fmt.Errorf("quota usage is negative for resource(s): %s", strings.Join(negative, ","))
	}
	var oldUsage List
	if old != nil {
		oldUsage = listOfStrings(ev.Usage(old, now))
	}
	out := map[int]List{}
	for _, i := range charged {
		q := quotas[i]
		delta := usage
		// An update is charged the growth in usage, when the quota
		// covered the object before too.
		if old != nil && matches(ev, q, old) {
			delta = usage.SubtractNonNegative(oldUsage)
		}
		requested := delta.RemoveZeros().Mask(q.Hard.Names())
		if len(requested) == 0 {
			continue
		}
		used := q.Used.Add(requested)
		if over := used.Mask(requested.Names()).Exceeding(q.Hard); len(over) > 0 {
			return nil, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
				q.Name, requested.Mask(over), q.Used.Mask(over), q.Hard.Mask(over))
		}
		out[i] = used
	}
	return out, nil
}

// usageKnown reports whether q's status records the usage of each
// resource of limited it limits.
func usageKnown(q Quota, limited []string) bool {
	for name := range q.Hard {
		if _, ok := q.Used[name]; !ok && slices.Contains(limited, name) {
			return false
		}
	}
	return true
}

// Usage returns what obj uses by ev's measure.
func Usage(ev registry.QuotaEvaluator, obj registry.Object, now time.Time) List {
	return listOfStrings(ev.Usage(obj, now))
}

// Type is one resource whose objects a quota's usage is summed over.
type Type struct {
	Evaluator registry.QuotaEvaluator
	// Objects returns the type's objects in the quota's namespace.
	Objects func() ([]registry.Object, error)
}

// Status returns the status a quota should have: hard is spec.hard, and
// used is the usage of the limited resources summed over the objects of
// types, in the quota's scopes; a limited resource no type measures keeps
// the amount recorded before, as upstream's controller keeps it.
func Status(q Quota, types []Type, now time.Time) (hard, used List, err error) {
	names := q.SpecHard.Names()
	counted := List{}
	for _, t := range types {
		matched := t.Evaluator.MatchingResources(names)
		if len(matched) == 0 {
			continue
		}
		objs, err := t.Objects()
		if err != nil {
			return nil, nil, err
		}
		sum := List{}
		for _, name := range matched {
			sum[name] = schema.Amount{}
		}
		for _, obj := range objs {
			if inScope(t.Evaluator, q.Scopes, obj) {
				sum = sum.Add(listOfStrings(t.Evaluator.Usage(obj, now)))
			}
		}
		counted = counted.Add(sum.Mask(matched))
	}
	used = q.Used.Add(nil)
	for name, amount := range counted {
		used[name] = amount
	}
	return q.SpecHard, used.Mask(names), nil
}
