// Package quota holds upstream's ResourceQuota facts: what objects of each
// type use of the resources a quota limits (the evaluators), which
// quotas a write is charged to, and how a quota's usage is summed.
package quota

import (
	"slices"
	"strings"

	"platd/server/schema"
)

// List is an amount per resource name. Lists are values: the functions
// here return new lists and never change their arguments.
type List map[string]schema.Amount

// ListOf reads a resource list as objects hold it (hard, used, requests);
// amounts that are no quantity are left out.
func ListOf(m map[string]any) List {
	out := make(List, len(m))
	for k, v := range m {
		if q, ok := schema.AmountOf(v); ok {
			out[k] = q
		}
	}
	return out
}

// listOfStrings reads what an evaluator's Usage returns.
func listOfStrings(m map[string]string) List {
	out := make(List, len(m))
	for k, v := range m {
		if q, ok := schema.AmountOf(v); ok {
			out[k] = q
		}
	}
	return out
}

// Strings spells each amount, as an evaluator's Usage returns them.
func (l List) Strings() map[string]string {
	out := make(map[string]string, len(l))
	for k, q := range l {
		out[k] = q.String()
	}
	return out
}

// Object spells each amount as an object holds it (a quota's status).
func (l List) Object() map[string]any {
	out := make(map[string]any, len(l))
	for k, q := range l {
		out[k] = q.String()
	}
	return out
}

// Names returns the resource names, sorted.
func (l List) Names() []string {
	names := make([]string, 0, len(l))
	for k := range l {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// Add returns the sum of l and o, name by name.
func (l List) Add(o List) List {
	out := make(List, len(l)+len(o))
	for k, q := range l {
		out[k] = q
	}
	for k, q := range o {
		if have, ok := out[k]; ok {
			out[k] = have.Add(q)
		} else {
			out[k] = q
		}
	}
	return out
}

// SubtractNonNegative returns l-o name by name, an amount that would be
// negative being zero; names only in o are left out.
func (l List) SubtractNonNegative(o List) List {
	out := make(List, len(l))
	for k, q := range l {
		if other, ok := o[k]; ok {
			q = q.Sub(other)
			if q.Sign() < 0 {
				q = schema.Amount{}
			}
		}
		out[k] = q
	}
	return out
}

// Mask returns the amounts of l whose names are in names.
func (l List) Mask(names []string) List {
	out := make(List, len(names))
	for _, k := range names {
		if q, ok := l[k]; ok {
			out[k] = q
		}
	}
	return out
}

// RemoveZeros returns the amounts of l that are not zero.
func (l List) RemoveZeros() List {
	out := make(List, len(l))
	for k, q := range l {
		if q.Sign() != 0 {
			out[k] = q
		}
	}
	return out
}

// Negative returns the names whose amount is below zero, sorted.
func (l List) Negative() []string {
	var names []string
	for _, k := range l.Names() {
		if l[k].Sign() < 0 {
			names = append(names, k)
		}
	}
	return names
}

// Equal reports whether l and o hold the same names with equal amounts.
func (l List) Equal(o List) bool {
	if len(l) != len(o) {
		return false
	}
	for k, q := range l {
		other, ok := o[k]
		if !ok || q.Cmp(other) != 0 {
			return false
		}
	}
	return true
}

// Exceeding returns the names whose amount in l is above limit's, sorted;
// a name limit lacks is not limited.
func (l List) Exceeding(limit List) []string {
	var names []string
	for _, k := range l.Names() {
		if max, ok := limit[k]; ok && l[k].Cmp(max) > 0 {
			names = append(names, k)
		}
	}
	return names
}

// String prints l as upstream's quota messages do: name=amount, sorted by
// name, comma separated.
func (l List) String() string {
	parts := make([]string, 0, len(l))
	for _, k := range l.Names() {
		parts = append(parts, k+"="+l[k].String())
	}
	return strings.Join(parts, ",")
}

// intersect returns the names of a that are in b, in a's order.
func intersect(a, b []string) []string {
	var out []string
	for _, n := range a {
		if slices.Contains(b, n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
