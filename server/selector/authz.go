package selector

import (
	"slices"

	"platd/security"
)

// Authorizers see a request's selectors in SubjectAccessReview's words:
// requirements with the operators In, NotIn, Exists and DoesNotExist.
const (
	authzIn           = "In"
	authzNotIn        = "NotIn"
	authzExists       = "Exists"
	authzDoesNotExist = "DoesNotExist"
)

// AuthzRequirements returns the field selector as authorizers see it:
// "=" and "==" as In, "!=" as NotIn, each with its one value; nil for the
// empty selector.
func (s Fields) AuthzRequirements() []security.SelectorRequirement {
	var out []security.SelectorRequirement
	for _, r := range s.reqs {
		op := authzIn
		if r.Op == NotEquals {
			op = authzNotIn
		}
		out = append(out, security.SelectorRequirement{Key: r.Field, Operator: op, Values: []string{r.Value}})
	}
	return out
}

// AuthzRequirements returns the label selector as authorizers see it:
// "=", "==" and "in" as In, "!=" and "notin" as NotIn, with sorted values.
// "gt" and "lt" have no counterpart and are left out: a requirement left
// out only widens what is asked, never narrows it.
func (s Labels) AuthzRequirements() []security.SelectorRequirement {
	var out []security.SelectorRequirement
	for _, r := range s.reqs {
		var op string
		switch r.Op {
		case Equals, DoubleEquals, In:
			op = authzIn
		case NotEquals, NotIn:
			op = authzNotIn
		case Exists:
			op = authzExists
		case DoesNotExist:
			op = authzDoesNotExist
		default:
			continue
		}
		var values []string
		if len(r.Values) > 0 {
			values = slices.Clone(r.Values)
			slices.Sort(values)
		}
		out = append(out, security.SelectorRequirement{Key: r.Key, Operator: op, Values: values})
	}
	return out
}
