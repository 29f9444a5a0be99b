package builtin

import (
	"fmt"
	"slices"
	"strconv"
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
		switch {
		case action == "":
			errs = append(errs, apierr.Required(rp.child("action").String(), fmt.Sprintf("valid values: %q", podFailureActions)))
		case action == podFailureActionFailIndex:
			if !present(spec, "backoffLimitPerIndex") {
				errs = append(errs, apierr.Invalid(rp.child("action").String(), action, "requires the backoffLimitPerIndex to be set"))
			}
		case !slices.Contains(podFailureActions, action):
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
	if op == "" {
		errs = append(errs, apierr.Required(p.child("operator").String(), fmt.Sprintf("valid values: %q", onExitCodesOps)))
	} else if !slices.Contains(onExitCodesOps, op) {
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

// Limits of a job's success policy, as upstream's.
const (
	maxSuccessPolicyRules     = 20
	maxSucceededIndexesLength = 64 * 1024
)

// validateSuccessPolicy checks the rules of an indexed job's
// spec.successPolicy at p.
func validateSuccessPolicy(spec, policy map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	rulesPath := p.child("rules")
	rules := mapsOf(policy["rules"])
	if len(rules) == 0 {
		errs = append(errs, apierr.Required(rulesPath.String(), "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(rules) > maxSuccessPolicyRules {
		errs = append(errs, tooMany(rulesPath.String(), len(rules), maxSuccessPolicyRules))
	}
	completions := intAt(spec, "completions")
	for i, rule := range rules {
		rp := rulesPath.index(i)
		indexes, hasIndexes := rule["succeededIndexes"].(string)
		if !hasIndexes && !present(rule, "succeededCount") {
			errs = append(errs, apierr.Required(rp.String(), "at least one of succeededCount or succeededIndexes must be specified"))
		}
		var total int64
		if hasIndexes {
			ip := rp.child("succeededIndexes").String()
			if len(indexes) > maxSucceededIndexesLength {
				errs = append(errs, apierr.TooLong(ip, maxSucceededIndexesLength))
			}
			var err error
			if total, err = countIndexes(indexes, completions); err != nil {
				errs = append(errs, apierr.Invalid(ip, indexes, "error parsing succeededIndexes: "+err.Error()))
			}
		}
		if present(rule, "succeededCount") {
			cp := rp.child("succeededCount")
			n := intAt(rule, "succeededCount")
			errs = append(errs, validateNonNegative(rule, "succeededCount", rp)...)
			if n > completions {
				errs = append(errs, apierr.Invalid(cp.String(), n, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
			}
			if hasIndexes && n > total {
				errs = append(errs, apierr.Invalid(cp.String(), n, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
			}
		}
	}
	return errs
}

// successPolicyValue spells a success policy as upstream prints its Go
// struct; pointer members print by value.
func successPolicyValue(policy map[string]any) goSyntax {
	rules := mapsOf(policy["rules"])
	if listOf(policy["rules"]) == nil {
		return "batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule(nil)}"
	}
	parts := make([]string, len(rules))
	for i, r := range rules {
		idx, count := "(*string)(nil)", "(*int32)(nil)"
		if s, ok := r["succeededIndexes"].(string); ok {
			idx = fmt.Sprintf("&%q", s)
		}
		if present(r, "succeededCount") {
			count = fmt.Sprintf("&%d", intAt(r, "succeededCount"))
		}
		parts[i] = "batch.SuccessPolicyRule{SucceededIndexes:" + idx + ", SucceededCount:" + count + "}"
	}
	return goSyntax("batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule{" + strings.Join(parts, ", ") + "}}")
}

// countIndexes parses an index list such as "1,3-5,7" of a job of the
// given completions and returns how many indexes it names. Intervals must
// increase and stay below completions.
func countIndexes(s string, completions int64) (int64, error) {
	if s == "" {
		return 0, nil
	}
	var total int64
	last := int64(-1)
	for i, interval := range strings.Split(s, ",") {
		x, y, err := parseIndexInterval(interval, completions)
		if err != nil {
			return 0, err
		}
		if i > 0 && last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", last, x)
		}
		total += y - x + 1
		last = y
	}
	return total, nil
}

// parseIndexInterval parses "x" or "x-y" of an index list.
func parseIndexInterval(s string, completions int64) (int64, int64, error) {
	limits := strings.Split(s, "-")
	if len(limits) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", s)
	}
	x, err := strconv.Atoi(limits[0])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[0])
	}
	if int64(x) >= completions {
		return 0, 0, fmt.Errorf("too large index: %q", limits[0])
	}
	if len(limits) == 1 {
		return int64(x), int64(x), nil
	}
	y, err := strconv.Atoi(limits[1])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[1])
	}
	if int64(y) >= completions {
		return 0, 0, fmt.Errorf("too large index: %q", limits[1])
	}
	if x >= y {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
	}
	return int64(x), int64(y), nil
}
