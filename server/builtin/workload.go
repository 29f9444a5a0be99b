package builtin

import (
	"strconv"

	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/selector"
)

// Rules shared by the workload types (apps/v1, batch/v1 and replication
// controllers): the selector and its template, replica counts, and the
// scale subresource.

// selectorMismatch is the detail of a template its selector does not pick.
const selectorMismatch = "`selector` does not match template `labels`"

// restartAlways is the one restart policy of a long-running workload's pods.
const restartAlways = "Always"

// podSelector is a workload's selector of its pods, converted as upstream
// converts one: a missing selector selects nothing, an empty one
// everything.
type podSelector struct {
	s       selector.Labels
	nothing bool
}

// convertSelector converts a LabelSelector; ok is false when it does not
// convert (a bad operator, key or value).
func convertSelector(sel map[string]any) (podSelector, bool) {
	if sel == nil {
		return podSelector{nothing: true}, true
	}
	s, err := selector.FromLabelSelector(sel)
	if err != nil {
		return podSelector{}, false
	}
	return podSelector{s: s}, true
}

// convertSet converts a replication controller's selector, a label map;
// a missing or empty one selects everything.
func convertSet(set map[string]any) (podSelector, bool) {
	s, err := selector.FromSet(set)
	if err != nil {
		return podSelector{}, false
	}
	return podSelector{s: s}, true
}

func (p podSelector) empty() bool { return !p.nothing && p.s.Empty() }

func (p podSelector) matches(labels map[string]any) bool { return !p.nothing && p.s.MatchesAny(labels) }

// emptySelector reports whether a LabelSelector has no requirement at all.
func emptySelector(sel map[string]any) bool {
	return len(mapOf(sel["matchLabels"]))+len(listOf(sel["matchExpressions"])) == 0
}

// validateWorkloadSelector checks a required LabelSelector at
// spec.selector: present, valid, and not empty ("empty selector is invalid
// for <what>").
func validateWorkloadSelector(spec map[string]any, what string) apierr.FieldErrors {
	sel := mapOf(spec["selector"])
	if sel == nil {
		return apierr.FieldErrors{apierr.Required("spec.selector", "")}
	}
	errs := validateLabelSelector(sel, false, "spec.selector")
	if emptySelector(sel) {
		errs = append(errs, apierr.Invalid("spec.selector", labelSelectorValue(sel), "empty selector is invalid for "+what))
	}
	return errs
}

// templateLabels returns the labels of a pod template.
func templateLabels(tmpl map[string]any) map[string]any {
	return mapAt(tmpl, "metadata", "labels")
}

// validateReplicatedTemplate checks the pod template of a workload whose pods
// run forever (replica sets, deployments, replication controllers) at p:
// its selector picks the template, the template is a valid pod template,
// its pods restart Always and have no deadline. kind names the workload in
// the deadline's message. sharedDisks, for replication controllers of more
// than one replica, asks that GCE disks be mounted read-only, the only way
// several machines can mount one.
func (r podRules) validateReplicatedTemplate(tmpl map[string]any, sel podSelector, p fieldPath, kind string, sharedDisks bool) apierr.FieldErrors {
	if tmpl == nil {
		return apierr.FieldErrors{apierr.Required(p.String(), "")}
	}
	errs := templateSelected(tmpl, sel, p)
	errs = append(errs, r.validatePodTemplateSpec(tmpl, p)...)
	if sharedDisks {
		for i, vol := range mapsOf(mapAt(tmpl, "spec")["volumes"]) {
			if pd := mapOf(vol["gcePersistentDisk"]); pd != nil && !boolOf(pd["readOnly"]) {
				errs = append(errs, apierr.Invalid(p.child("spec", "volumes").index(i).child("gcePersistentDisk", "readOnly").String(), false,
					"must be true for replicated pods > 1; GCE PD can only be mounted on multiple machines if it is read-only"))
			}
		}
	}
	errs = append(errs, alwaysRestarts(tmpl, p, kind)...)
	return errs
}

// templateSelected refuses a template the selector does not pick; an
// empty selector picks any.
func templateSelected(tmpl map[string]any, sel podSelector, p fieldPath) apierr.FieldErrors {
	if sel.empty() || sel.matches(templateLabels(tmpl)) {
		return nil
	}
	return apierr.FieldErrors{apierr.Invalid(p.child("metadata", "labels").String(), labelMapValue(templateLabels(tmpl)), selectorMismatch)}
}

// alwaysRestarts refuses a template of a long-running workload whose pods
// would stop: another restart policy, or an active deadline.
func alwaysRestarts(tmpl map[string]any, p fieldPath, kind string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	spec := mapOf(tmpl["spec"])
	if rp := strOf(spec["restartPolicy"]); rp != restartAlways {
		errs = append(errs, apierr.NotSupported(p.child("spec", "restartPolicy").String(), rp, []string{restartAlways}))
	}
	if present(spec, "activeDeadlineSeconds") {
		errs = append(errs, apierr.Forbidden(p.child("spec", "activeDeadlineSeconds").String(), "activeDeadlineSeconds in "+kind+" is not Supported"))
	}
	return errs
}

// nonNegative checks the named integer members of m under p.
func nonNegative(m map[string]any, p fieldPath, keys ...string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, k := range keys {
		errs = append(errs, validateNonNegative(m, k, p)...)
	}
	return errs
}

// notAbove refuses status counts above a bound ("cannot be greater than
// status.replicas"), in the order given.
func notAbove(status map[string]any, bound, msg string, keys ...string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	limit := intAt(status, bound)
	for _, k := range keys {
		if n := intAt(status, k); n > limit {
			errs = append(errs, apierr.Invalid("status."+k, n, msg))
		}
	}
	return errs
}

// notDecremented refuses a status.collisionCount below the stored one.
func notDecremented(obj, old registry.Object) apierr.FieldErrors {
	oldCount, had := intOf(valueAt(old, "status", "collisionCount"))
	if !had {
		return nil
	}
	n, _ := intOf(valueAt(obj, "status", "collisionCount"))
	if n < oldCount {
		return apierr.FieldErrors{apierr.Invalid("status.collisionCount", n, "cannot be decremented")}
	}
	return nil
}

// immutableSelector refuses a change of spec.selector, as apps/v1 does.
func immutableSelector(obj, old registry.Object) apierr.FieldErrors {
	sel, oldSel := mapAt(obj, "spec", "selector"), mapAt(old, "spec", "selector")
	if semanticEqual(normalSelector(sel), normalSelector(oldSel)) {
		return nil
	}
	return apierr.FieldErrors{apierr.Invalid("spec.selector", labelSelectorValue(sel), fieldImmutable)}
}

// normalSelector drops the empty members of a selector, which upstream's
// semantic equality does not tell from absent ones.
func normalSelector(sel map[string]any) map[string]any {
	if sel == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range sel {
		if !isEmptyValue(v) {
			out[k] = v
		}
	}
	return out
}

// defaultTemplate applies the pod template defaults to a workload's
// template at tmpl (spec.template, spec.jobTemplate.spec.template).
func defaultTemplate(tmpl map[string]any) {
	if tmpl != nil {
		defaultPodSpec(child(tmpl, "spec"))
	}
}

// dropTemplateFields drops the pod fields of disabled features from a
// template, keeping those the stored template (nil on create) uses.
func dropTemplateFields(tmpl, old map[string]any) {
	dropDisabledPodSpecFields(mapOf(tmpl["spec"]), mapOf(old["spec"]))
}

// scaleOf is the scale subresource of a workload: its replicas at
// spec.replicas and status.replicas, its pods' selector at spec.selector;
// a Scale naming another object's uid is refused.
func scaleOf(selectorIsSet bool) registry.Subresource {
	return registry.Subresource{
		Name: "scale", Verbs: statusVerbs, Serve: registry.ServeScale,
		Group: "autoscaling", Version: "v1", Kind: "Scale",
		Scale: &registry.ScalePaths{
			SpecReplicas: "spec.replicas", StatusReplicas: "status.replicas",
			LabelSelector: "spec.selector", SelectorIsSet: selectorIsSet, CheckUID: true,
		},
	}
}

// intField returns a FieldSelectors entry reading an integer at path,
// printed in decimal (0 when absent).
func intField(path ...string) registry.FieldSelector {
	return registry.FieldSelector{Get: func(o registry.Object) string { return strconv.FormatInt(intAt(o, path...), 10) }, Reads: [][]string{path}}
}
