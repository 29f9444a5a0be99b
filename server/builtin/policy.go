package builtin

import (
	"fmt"
	"strings"

	"platd/server/apierr"
	"platd/server/registry"
)

// policyGroup has no domain, as upstream's.
const policyGroup = "policy"

func policyV1() []*registry.Descriptor {
	return []*registry.Descriptor{podDisruptionBudgets()}
}

// unhealthyPodEvictionPolicies are the accepted values, sorted.
var unhealthyPodEvictionPolicies = []string{"AlwaysAllow", "IfHealthyBudget"}

// podDisruptionBudgets: the spec is checked on every write, status only
// through the status subresource; a spec change bumps the generation the
// disruption controller reports against.
func podDisruptionBudgets() *registry.Descriptor {
	d := groupType(policyGroup, "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true, "pdb")
	d.Subresources = []registry.Subresource{{Name: "status", Verbs: statusVerbs, Keep: keepSpec}}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		resetStatus(obj)
		startGeneration(obj)
	}
	d.Strategy.PrepareForUpdate = bumpGenerationOnSpec(d)
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return validatePDBSpec(mapAt(obj, "spec"), false)
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		errs := validatePDBSpec(mapAt(obj, "spec"), selectorHasBadValue(mapAt(old, "spec", "selector")))
		return append(errs, validatePDBStatus(mapAt(obj, "status"))...)
	}
	return d
}

func validatePDBSpec(spec map[string]any, allowBadSelectorValues bool) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if present(spec, "minAvailable") && present(spec, "maxUnavailable") {
		errs = append(errs, apierr.Invalid("spec", pdbSpecValue(spec), "minAvailable and maxUnavailable cannot be both set"))
	}
	for _, f := range []string{"minAvailable", "maxUnavailable"} {
		if v := spec[f]; v != nil {
			errs = append(errs, validateIntOrPercent(v, "spec."+f)...)
			errs = append(errs, notOver100Percent(v, "spec."+f)...)
		}
	}
	errs = append(errs, validateLabelSelector(mapAt(spec, "selector"), allowBadSelectorValues, "spec.selector")...)
	if present(spec, "unhealthyPodEvictionPolicy") {
		if p := str(spec, "unhealthyPodEvictionPolicy"); p != "AlwaysAllow" && p != "IfHealthyBudget" {
			errs = append(errs, apierr.NotSupported("spec.unhealthyPodEvictionPolicy", p, unhealthyPodEvictionPolicies))
		}
	}
	return errs
}

// validatePDBStatus checks what the disruption controller writes: its
// conditions and counts that cannot be negative.
func validatePDBStatus(status map[string]any) apierr.FieldErrors {
	errs := validateConditions(listAt(status, "conditions"), "status.conditions")
	for _, f := range []string{"disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"} {
		if n := intAt(status, f); n < 0 {
			errs = append(errs, apierr.Invalid("status."+f, n, negativeMsg))
		}
	}
	return errs
}

// pdbSpecValue spells a spec as the bad value of the both-set error. Its
// pointer members print by value: upstream prints their addresses, which
// carry no meaning for a client.
func pdbSpecValue(spec map[string]any) goSyntax {
	ptr := func(f string) string {
		if v := spec[f]; v != nil {
			return "&" + string(intOrStringValue(v))
		}
		return "(*intstr.IntOrString)(nil)"
	}
	var parts []string
	parts = append(parts, "MinAvailable:"+ptr("minAvailable"))
	sel := "(*v1.LabelSelector)(nil)"
	if present(spec, "selector") {
		sel = "&v1.LabelSelector{...}"
	}
	parts = append(parts, "Selector:"+sel, "MaxUnavailable:"+ptr("maxUnavailable"))
	policy := "(*policy.UnhealthyPodEvictionPolicyType)(nil)"
	if present(spec, "unhealthyPodEvictionPolicy") {
		policy = fmt.Sprintf("&%q", str(spec, "unhealthyPodEvictionPolicy"))
	}
	parts = append(parts, "UnhealthyPodEvictionPolicy:"+policy)
	return goSyntax("policy.PodDisruptionBudgetSpec{" + strings.Join(parts, ", ") + "}")
}
