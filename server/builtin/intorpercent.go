package builtin

import (
	"fmt"
	"strconv"

	"platd/server/apierr"
)

const percentFmt = "[0-9]+%"

var percentRe = lazyRegexp("^" + percentFmt + "$")

var percentMsg = regexMessage("a valid percent string must be a numeric string followed by an ending '%'", percentFmt, "1%", "93%")

// negativeMsg is the detail of a negative count.
const negativeMsg = "must be greater than or equal to 0"

// intOrStringValue prints an int-or-string as a bad value the way upstream
// does: its Go struct.
func intOrStringValue(v any) goSyntax {
	if s, ok := v.(string); ok {
		return goSyntax(fmt.Sprintf("intstr.IntOrString{Type:1, IntVal:0, StrVal:%q}", s))
	}
	n, _ := intOf(v)
	return goSyntax(fmt.Sprintf("intstr.IntOrString{Type:0, IntVal:%d, StrVal:\"\"}", n))
}

// validateIntOrPercent checks a non-negative integer or a percentage
// string (such as a PodDisruptionBudget's minAvailable).
func validateIntOrPercent(v any, path string) apierr.FieldErrors {
	switch x := v.(type) {
	case string:
		if !percentRe().MatchString(x) {
			return apierr.FieldErrors{apierr.Invalid(path, intOrStringValue(v), percentMsg)}
		}
	default:
		n, ok := intOf(v)
		if !ok {
			return apierr.FieldErrors{apierr.Invalid(path, intOrStringValue(v), "must be an integer or percentage (e.g '5%')")}
		}
		if n < 0 {
			return apierr.FieldErrors{apierr.Invalid(path, n, negativeMsg)}
		}
	}
	return nil
}

// notOver100Percent refuses a valid percentage above 100%.
func notOver100Percent(v any, path string) apierr.FieldErrors {
	s, ok := v.(string)
	if !ok || !percentRe().MatchString(s) {
		return nil
	}
	if n, err := strconv.Atoi(s[:len(s)-1]); err == nil && n <= 100 {
		return nil
	}
	return apierr.FieldErrors{apierr.Invalid(path, intOrStringValue(v), "must not be greater than 100%")}
}
