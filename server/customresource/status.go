package customresource

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"platd/server/registry"
)

// Condition types and the finalizer of a CRD's status, as upstream.
const (
	CondNamesAccepted = "NamesAccepted"
	CondEstablished   = "Established"
	CondTerminating   = "Terminating"
)

// conflict names a clash of a definition's names with a resource the
// registry serves in its group that is not the CRD's own (owned), as
// upstream's naming controller finds one: the plural, singular and short
// names may not be any other resource's plural, singular or short name,
// and the kind and list kind not any other's kind or list kind. Upstream
// checks them in that order and reports the last clash. reason is ""
// when there is none.
func conflict(def *Definition, reg *registry.Registry, owned func(*registry.Descriptor) bool) (reason, msg string) {
	resources, kinds := map[string]bool{}, map[string]bool{}
	for _, v := range reg.Versions(def.Group) {
		for _, d := range reg.Resources(def.Group, v) {
			if owned(d) {
				continue
			}
			resources[d.Resource], resources[d.Singular] = true, true
			for _, n := range d.ShortNames {
				resources[n] = true
			}
			kinds[d.Kind], kinds[d.ListKind] = true, true
		}
	}
	delete(resources, "")
	delete(kinds, "")
	inUse := func(name string) string { return fmt.Sprintf("%q is already in use", name) }
	if resources[def.Plural] {
		reason, msg = "PluralConflict", inUse(def.Plural)
	}
	if resources[def.Singular] {
		reason, msg = "SingularConflict", inUse(def.Singular)
	}
	var taken []string
	for _, n := range def.ShortNames {
		if resources[n] {
			taken = append(taken, inUse(n))
		}
	}
	switch len(taken) {
	case 0:
	case 1:
		reason, msg = "ShortNamesConflict", taken[0]
	default:
		reason, msg = "ShortNamesConflict", "["+strings.Join(taken, ", ")+"]"
	}
	if kinds[def.Kind] {
		reason, msg = "KindConflict", inUse(def.Kind)
	}
	if kinds[def.ListKind] {
		reason, msg = "ListKindConflict", inUse(def.ListKind)
	}
	return reason, msg
}

// Accept sets a CRD's acceptedNames and its NamesAccepted and
// Established conditions, as upstream's naming and establishing
// controllers would before anyone could see the CRD: its names are
// accepted unless they clash, and a CRD whose names were accepted once
// stays established. now stamps changed conditions.
func Accept(crd registry.Object, reg *registry.Registry, owned func(*registry.Descriptor) bool, now time.Time) {
	spec := mapAt(crd, "spec")
	names := mapAt(spec, "names")
	def := &Definition{Group: str(spec, "group"), Plural: str(names, "plural"), Singular: str(names, "singular"),
		Kind: str(names, "kind"), ListKind: str(names, "listKind"), ShortNames: registry.Strings(names["shortNames"])}
	if def.ListKind == "" {
		def.ListKind = def.Kind + "List"
	}
	status := registry.Child(crd, "status")
	reason, msg := conflict(def, reg, owned)
	if reason == "" {
		accepted := map[string]any{}
		for k, v := range names {
			accepted[k] = v
		}
		if _, ok := accepted["listKind"]; !ok && def.Kind != "" {
			accepted["listKind"] = def.ListKind
		}
		status["acceptedNames"] = accepted
		SetCondition(status, CondNamesAccepted, "True", "NoConflicts", "no conflicts found", now)
		if !hasCondition(status, CondEstablished, "True") {
			SetCondition(status, CondEstablished, "True", "InitialNamesAccepted", "the initial names have been accepted", now)
		}
		return
	}
	if _, ok := status["acceptedNames"]; !ok {
		status["acceptedNames"] = map[string]any{"plural": "", "kind": ""}
	}
	SetCondition(status, CondNamesAccepted, "False", reason, msg, now)
	if !hasCondition(status, CondEstablished, "True") {
		SetCondition(status, CondEstablished, "False", "NotAccepted", "not all names are accepted", now)
	}
}

// Established reports whether a CRD's Established condition is true:
// only then are its resources served.
func Established(crd registry.Object) bool {
	return hasCondition(mapAt(crd, "status"), CondEstablished, "True")
}

func hasCondition(status map[string]any, typ, want string) bool {
	for _, c := range list(status["conditions"]) {
		cm := mapOf(c)
		if str(cm, "type") == typ {
			return str(cm, "status") == want
		}
	}
	return false
}

// SetCondition sets one condition of a status, keeping its
// lastTransitionTime when its status does not change.
func SetCondition(status map[string]any, typ, value, reason, msg string, now time.Time) {
	conds := list(status["conditions"])
	next := map[string]any{"type": typ, "status": value, "reason": reason, "message": msg,
		"lastTransitionTime": now.UTC().Format(time.RFC3339)}
	for i, c := range conds {
		cm := mapOf(c)
		if str(cm, "type") != typ {
			continue
		}
		if str(cm, "status") == value {
			next["lastTransitionTime"] = cm["lastTransitionTime"]
		}
		out := slices.Clone(conds)
		out[i] = next
		status["conditions"] = out
		return
	}
	status["conditions"] = append(slices.Clone(conds), next)
}
