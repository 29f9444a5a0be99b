package builtin

import (
	"fmt"
	"strings"

	"platd/server/apierr"
	"platd/server/validation"
)

// Label selector operators.
const (
	selectorOpIn           = "In"
	selectorOpNotIn        = "NotIn"
	selectorOpExists       = "Exists"
	selectorOpDoesNotExist = "DoesNotExist"
)

// validateLabelName checks a label key.
func validateLabelName(k, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, msg := range validation.IsQualifiedName(k) {
		errs = append(errs, apierr.Invalid(path, k, msg))
	}
	return errs
}

// labelsValid reports whether validateLabels finds nothing wrong in labels.
func labelsValid(labels map[string]any) bool {
	for k, v := range labels {
		s, _ := v.(string)
		if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(s)) > 0 {
			return false
		}
	}
	return true
}

// validateLabels checks a label map; errors name the map, not the key, as
// upstream's do.
func validateLabels(labels map[string]any, path string) apierr.FieldErrors {
	if labelsValid(labels) {
		// The usual case: no errors, so no need to order the keys.
		return nil
	}
	var errs apierr.FieldErrors
	for _, k := range sortedKeys(labels) {
		errs = append(errs, validateLabelName(k, path)...)
		v, _ := labels[k].(string)
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, apierr.Invalid(path, v, msg))
		}
	}
	return errs
}

// validateLabelSelector checks a decoded LabelSelector; a nil one is
// valid. allowBadValues skips the label-value rule of matchExpressions,
// for updates of objects stored before that rule existed.
func validateLabelSelector(sel map[string]any, allowBadValues bool, path string) apierr.FieldErrors {
	if sel == nil {
		return nil
	}
	errs := validateLabels(mapAt(sel, "matchLabels"), path+".matchLabels")
	for i, e := range listAt(sel, "matchExpressions") {
		req, _ := e.(map[string]any)
		errs = append(errs, validateSelectorRequirement(req, allowBadValues, index(path+".matchExpressions", i))...)
	}
	return errs
}

func validateSelectorRequirement(req map[string]any, allowBadValues bool, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	values := listAt(req, "values")
	switch op := str(req, "operator"); op {
	case selectorOpIn, selectorOpNotIn:
		if len(values) == 0 {
			errs = append(errs, apierr.Required(path+".values", "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case selectorOpExists, selectorOpDoesNotExist:
		if len(values) > 0 {
			errs = append(errs, apierr.Forbidden(path+".values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	default:
		errs = append(errs, apierr.Invalid(path+".operator", op, "not a valid selector operator"))
	}
	errs = append(errs, validateLabelName(str(req, "key"), path+".key")...)
	if !allowBadValues {
		for i, v := range values {
			s, _ := v.(string)
			for _, msg := range validation.IsValidLabelValue(s) {
				errs = append(errs, apierr.Invalid(index(path+".values", i), s, msg))
			}
		}
	}
	return errs
}

// selectorHasBadValue reports whether a stored selector fails the strict
// rules, which lets its updates keep the values it already has.
func selectorHasBadValue(sel map[string]any) bool {
	return len(validateLabelSelector(sel, false, "")) > 0
}

// labelMapValue spells a label map as upstream prints one as a bad value
// (its Go map), keys sorted as fmt sorts them.
func labelMapValue(m map[string]any) goSyntax {
	if m == nil {
		return "map[string]string(nil)"
	}
	var b strings.Builder
	b.WriteString("map[string]string{")
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q:%q", k, strOf(m[k]))
	}
	b.WriteString("}")
	return goSyntax(b.String())
}

// labelSelectorValue spells a LabelSelector as upstream prints one as a bad
// value: its Go struct; null when absent.
func labelSelectorValue(sel map[string]any) any {
	if sel == nil {
		return nil
	}
	var b strings.Builder
	b.WriteString("v1.LabelSelector{MatchLabels:")
	b.WriteString(string(labelMapValue(mapOf(sel["matchLabels"]))))
	b.WriteString(", MatchExpressions:")
	exprs := mapsOf(sel["matchExpressions"])
	if listOf(sel["matchExpressions"]) == nil {
		b.WriteString("[]v1.LabelSelectorRequirement(nil)")
	} else {
		b.WriteString("[]v1.LabelSelectorRequirement{")
		for i, e := range exprs {
			if i > 0 {
				b.WriteString(", ")
			}
			values := "[]string(nil)"
			if l := listOf(e["values"]); l != nil {
				values = string(goStrings("string", l))
			}
			fmt.Fprintf(&b, "v1.LabelSelectorRequirement{Key:%q, Operator:%q, Values:%s}", strOf(e["key"]), strOf(e["operator"]), values)
		}
		b.WriteString("}")
	}
	b.WriteString("}")
	return goSyntax(b.String())
}
