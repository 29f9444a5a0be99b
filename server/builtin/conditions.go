package builtin

import (
	"platd/server/apierr"
)

// Limits of a condition's free text, as upstream: a reason is a short
// CamelCase word, a message a human sentence or two.
const (
	conditionReasonMax  = 1 * 1024
	conditionMessageMax = 32 * 1024
)

const conditionReasonFmt = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"

var conditionReasonRe = lazyRegexp("^" + conditionReasonFmt + "$")

var conditionReasonMsg = regexMessage("a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
	conditionReasonFmt, "my_name", "MY_NAME", "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB")

// conditionStatuses are the values a condition status takes, sorted.
var conditionStatuses = []string{"False", "True", "Unknown"}

// validateConditions checks a list of standard conditions: one per type,
// each with a qualified type, a known status, a transition time and a
// reason.
func validateConditions(conds []any, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	seen := map[string]bool{}
	for i, c := range conds {
		cond, _ := c.(map[string]any)
		p := index(path, i)
		t := str(cond, "type")
		if seen[t] {
			errs = append(errs, apierr.Duplicate(p+".type", t))
		}
		seen[t] = true
		errs = append(errs, validateLabelName(t, p+".type")...)
		switch status := str(cond, "status"); status {
		case "True", "False", "Unknown":
		default:
			errs = append(errs, apierr.NotSupported(p+".status", status, conditionStatuses))
		}
		if g := intAt(cond, "observedGeneration"); g < 0 {
			errs = append(errs, apierr.Invalid(p+".observedGeneration", g, "must be greater than or equal to zero"))
		}
		if str(cond, "lastTransitionTime") == "" {
			errs = append(errs, apierr.Required(p+".lastTransitionTime", "must be set"))
		}
		reason := str(cond, "reason")
		if reason == "" {
			errs = append(errs, apierr.Required(p+".reason", "must be set"))
		} else {
			if !conditionReasonRe().MatchString(reason) {
				errs = append(errs, apierr.Invalid(p+".reason", reason, conditionReasonMsg))
			}
			if len(reason) > conditionReasonMax {
				errs = append(errs, apierr.TooLong(p+".reason", conditionReasonMax))
			}
		}
		if len(str(cond, "message")) > conditionMessageMax {
			errs = append(errs, apierr.TooLong(p+".message", conditionMessageMax))
		}
	}
	return errs
}
