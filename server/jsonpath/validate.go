package jsonpath

import "platd/server/apierr"

// ValidateSimplePath is upstream's check of the paths a
// CustomResourceDefinition writes in JSONPath form (printer columns, and
// the scale subresource's replica and selector paths): a path such as
// ".spec.replicas", which must start with a dot. It does not parse the
// path: upstream accepts one that does not parse and prints the Table
// without that column. field is the path of the value in the CRD.
func ValidateSimplePath(s, field string) apierr.FieldErrors {
	switch {
	case s == "":
		return apierr.FieldErrors{apierr.Invalid(field, s, "must not be empty")}
	case s[0] != '.':
		return apierr.FieldErrors{apierr.Invalid(field, s, "must be a simple json path starting with .")}
	}
	return nil
}
