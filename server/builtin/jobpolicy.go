package builtin

import (
	"fmt"
	"slices"
	"strings"

	"platd/server/apierr"
)

// Limits of a job's pod failure policy, as upstream's.
const (
	maxPodFailurePolicyRules   = 20
	maxOnExitCodesValues       = 255
	maxOnPodConditionsPatterns = 20
	maxManagedByLength         = 63
	podFailureActionFailIndex  = "FailIndex"
	onExitCodesIn              = "In"
)

// Accepted values, sorted as upstream lists them.
var (
	podFailureActions   = []string{"Count", "FailIndex", "FailJob", "Ignore"}
	onExitCodesOps      = []string{"In", "NotIn"}
	conditionStatusList = []string{"False", "True", "Unknown"}
)

// validatePodFailurePolicy checks the rules of spec.podFailurePolicy at p.
func validatePodFailurePolicy(spec, policy map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	rulesPath := p.child("rules")
	rules := mapsOf(policy["rules"])
	if len(rules) > maxPodFailurePolicyRules {
		errs = append(errs, tooMany(rulesPath.String(), len(rules), maxPodFailurePolicyRules))
	}
	containers := map[string]bool{}
	for _, kind := range []string{"containers", "initContainers"} {
		for _, c := range mapsOf(mapAt(spec, "template", "spec")[kind]) {
			containers[strOf(c["name"])] = true
		}
	}
	for i, rule := range rules {
		rp := rulesPath.index(i)
		action := strOf(rule["action"])
		if action == podFailureActionFailIndex && !present(spec, "backoffLimitPerIndex") {
			errs = append(errs, apierr.Invalid(rp.child("action").String(), action, "requires the backoffLimitPerIndex to be set"))
		}
		if !slices.Contains(podFailureActions, action) {
			errs = append(errs, apierr.NotSupported(rp.child("action").String(), action, podFailureActions))
		}
		onExit := mapOf(rule["onExitCodes"])
		conds := mapsOf(rule["onPodConditions"])
		if onExit != nil {
			errs = append(errs, validateOnExitCodes(onExit, rp.child("onExitCodes"), containers)...)
		}
		if len(conds) > 0 {
			errs = append(errs, validateOnPodConditions(conds, rp.child("onPodConditions"))...)
		}
		switch {
		case onExit != nil && len(conds) > 0:
			errs = append(errs, apierr.Invalid(rp.String(), apierr.OmitValue, "specifying both OnExitCodes and OnPodConditions is not supported"))
		case onExit == nil && len(conds) == 0:
			errs = append(errs, apierr.Invalid(rp.String(), apierr.OmitValue, "specifying one of OnExitCodes and OnPodConditions is required"))
		}
	}
	return errs
}

func validateOnExitCodes(req map[string]any, p fieldPath, containers map[string]bool) apierr.FieldErrors {
	var errs apierr.FieldErrors
	op := strOf(req["operator"])
	if !slices.Contains(onExitCodesOps, op) {
		errs = append(errs, apierr.NotSupported(p.child("operator").String(), op, onExitCodesOps))
	}
	if name, ok := req["containerName"].(string); ok && !containers[name] {
		errs = append(errs, apierr.Invalid(p.child("containerName").String(), name, "must be one of the container or initContainer names in the pod template"))
	}
	values := listOf(req["values"])
	vp := p.child("values")
	switch {
	case len(values) == 0:
		errs = append(errs, apierr.Invalid(vp.String(), int32sValue(req["values"]), "at least one value is required"))
	case len(values) > maxOnExitCodesValues:
		errs = append(errs, tooMany(vp.String(), len(values), maxOnExitCodesValues))
	}
	seen := map[int64]bool{}
	ordered := true
	for j, v := range values {
		n, _ := intOf(v)
		if op == onExitCodesIn && n == 0 {
			errs = append(errs, apierr.Invalid(vp.index(j).String(), n, "must not be 0 for the In operator"))
		}
		if seen[n] {
			errs = append(errs, apierr.Duplicate(vp.index(j).String(), n))
		}
		seen[n] = true
		if prev, _ := intOf(valueAtIndex(values, j-1)); j > 0 && prev > n {
			ordered = false
		}
	}
	if !ordered {
		errs = append(errs, apierr.Invalid(vp.String(), int32sValue(req["values"]), "must be ordered"))
	}
	return errs
}

func validateOnPodConditions(conds []map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if len(conds) > maxOnPodConditionsPatterns {
		errs = append(errs, tooMany(p.String(), len(conds), maxOnPodConditionsPatterns))
	}
	for j, c := range conds {
		cp := p.index(j)
		errs = append(errs, qualifiedName(strOf(c["type"]), cp.child("type"))...)
		switch st := strOf(c["status"]); {
		case st == "":
			errs = append(errs, apierr.Required(cp.child("status").String(), fmt.Sprintf("valid values: %q", conditionStatusList)))
		case !slices.Contains(conditionStatusList, st):
			errs = append(errs, apierr.NotSupported(cp.child("status").String(), st, conditionStatusList))
		}
	}
	return errs
}

// validateManagedBy checks the controller a job names as its manager.
func validateManagedBy(v string, p fieldPath) apierr.FieldErrors {
	errs := isDomainPrefixedPath(p.String(), v)
	if len(v) > maxManagedByLength {
		errs = append(errs, apierr.TooLong(p.String(), maxManagedByLength))
	}
	return errs
}

// int32sValue spells exit codes as upstream prints its []int32.
func int32sValue(v any) goSyntax {
	l, ok := v.([]any)
	if !ok {
		return "[]int32(nil)"
	}
	parts := make([]string, len(l))
	for i, x := range l {
		n, _ := intOf(x)
		parts[i] = fmt.Sprint(n)
	}
	return goSyntax("[]int32{" + strings.Join(parts, ", ") + "}")
}

func valueAtIndex(l []any, i int) any {
	if i < 0 || i >= len(l) {
		return nil
	}
	return l[i]
}
