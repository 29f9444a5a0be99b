package quota

import (
	"time"

	"platd/server/registry"
)

// CountName is the resource name a quota counts a resource's objects by:
// count/<resource> for the core group, count/<resource>.<group> else.
func CountName(group, resource string) string {
	if group == "" {
		return "count/" + resource
	}
	return "count/" + resource + "." + group
}

// counter charges one of each name per object, whatever its state:
// upstream's object count evaluator.
type counter struct{ names []string }

// Count returns the evaluator that counts a resource's objects by its
// count/ name and by alias too when it is given (a legacy name such as
// "configmaps"), charged on create only.
func Count(group, resource, alias string) registry.QuotaEvaluator {
	c := counter{names: []string{CountName(group, resource)}}
	if alias != "" {
		c.names = append(c.names, alias)
	}
	return c
}

func (c counter) MatchingResources(names []string) []string { return intersect(names, c.names) }

func (c counter) Usage(registry.Object, time.Time) map[string]string {
	out := make(map[string]string, len(c.names))
	for _, n := range c.names {
		out[n] = "1"
	}
	return out
}

func (counter) MatchesScope(registry.ScopeRequirement, registry.Object) bool { return false }
func (counter) Constraints([]string, registry.Object) string                 { return "" }
func (counter) ChargesUpdates() bool                                         { return false }

// ignored is the evaluator of a resource quota never charges.
type ignored struct{}

// Ignored returns the evaluator of resources upstream never charges to a
// quota (events): it matches no resource name.
func Ignored() registry.QuotaEvaluator { return ignored{} }

func (ignored) MatchingResources([]string) []string                          { return nil }
func (ignored) Usage(registry.Object, time.Time) map[string]string           { return nil }
func (ignored) MatchesScope(registry.ScopeRequirement, registry.Object) bool { return false }
func (ignored) Constraints([]string, registry.Object) string                 { return "" }
func (ignored) ChargesUpdates() bool                                         { return false }

// For returns the evaluator of d's objects: its own, else the count of
// its objects by their count/ name.
func For(d *registry.Descriptor) registry.QuotaEvaluator {
	if d.Quota != nil {
		return d.Quota
	}
	return Count(d.Group, d.Resource, "")
}
