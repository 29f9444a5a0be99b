package jsonschema

import (
	"encoding/json"
	"fmt"
	"strings"

	"platd/server/apierr"
)

// noField is the field of a failure that names no member (anyOf, oneOf,
// allOf, not, dependencies): upstream reports it on a nil field path,
// which prints as "<nil>".
const noField = "<nil>"

// fieldErrors converts the validator's failures into field errors with
// the types and texts upstream's custom resource validation gives them.
func fieldErrors(prefix string, fs []*failure) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, f := range fs {
		field := prefix
		if f.code == codeComposite {
			if field == "" {
				field = noField
			}
			errs = append(errs, apierr.Invalid(field, "", f.msg))
			continue
		}
		if name := strings.TrimPrefix(f.name, "."); f.name != "" && f.name != "." {
			field = joinField(prefix, name)
		}
		if field == "" {
			field = noField
		}
		value := f.value
		if value == nil {
			value = ""
		}
		switch f.code {
		case codeRequired:
			errs = append(errs, apierr.Required(field, ""))
		case codeEnum:
			errs = append(errs, apierr.NotSupported(field, badValue(f.value), enumStrings(f.values)))
		case codeTooLong:
			errs = append(errs, tooLong(field, f.valid))
		case codeMaxItems, codeTooManyProperties:
			errs = append(errs, tooMany(field, f.value, f.valid))
		case codeInvalidType:
			errs = append(errs, apierr.TypeInvalid(field, value, f.msg))
		default:
			errs = append(errs, apierr.Invalid(field, value, f.msg))
		}
	}
	return errs
}

// badValue is a value as upstream prints it in an error, where nil reads
// as the string "null".
func badValue(v any) any {
	if v == nil {
		return "null"
	}
	return v
}

func joinField(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// enumStrings renders accepted values as upstream lists them: strings as
// they are, anything else as JSON.
func enumStrings(vals []any) []string {
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		if s, ok := v.(string); ok {
			out = append(out, s)
			continue
		}
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	return out
}

// tooLong is upstream's "Too long" error for a limit in characters (which
// upstream words as bytes).
func tooLong(field string, max int64) *apierr.FieldError {
	detail := "value is too long"
	if max >= 0 {
		detail = fmt.Sprintf("may not be more than %d bytes", max)
	}
	return &apierr.FieldError{Type: apierr.FieldTooLong, Field: field, Detail: detail}
}

// tooMany is upstream's "Too many" error: the count and the limit.
func tooMany(field string, actual any, max int64) *apierr.FieldError {
	n, _ := actual.(int64)
	return &apierr.FieldError{Type: apierr.FieldTooMany, Field: field, Value: int(n),
		Detail: fmt.Sprintf("must have at most %d items", max)}
}

// BlocksRules reports whether errs, every failure found so far for a
// custom resource write (metadata, schema, scale, embedded resources and
// lists), keep upstream from evaluating the x-kubernetes-validations
// rules: a value of the wrong type, outside its enum, missing though
// required, or over its length or count limit.
func BlocksRules(errs apierr.FieldErrors) bool {
	for _, e := range errs {
		switch e.Type {
		case apierr.FieldNotSupported, apierr.FieldRequired, apierr.FieldTooLong, apierr.FieldTooMany, apierr.FieldTypeInvalid:
			return true
		}
	}
	return false
}

// RulesNotChecked is the failure upstream reports instead of evaluating
// the validation rules when BlocksRules.
func RulesNotChecked() *apierr.FieldError {
	return apierr.Invalid(noField, "null", "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
}
