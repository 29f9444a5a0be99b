package jsonschema

import (
	"fmt"
	"math"
	"strings"

	"platd/server/apierr"
)

// ValidateStatusUpdate checks a write of the status subresource from old
// to obj against the CRD's root schema p (nil: none), as upstream's status
// strategy does after the object metadata checks: the status member alone
// against the schema's status property (without ratcheting, and only if
// obj has a status), the options' status checks (the scale's status
// count and selector), then set and map list uniqueness over the whole
// object if obj breaks it and old did not. Schema failures are reported
// under "status", with upstream's messages naming members relative to it
// ("replicas in body ..."). Embedded resources are not checked on this
// path, as upstream.
func ValidateStatusUpdate(p *Props, obj, old map[string]any, opts ...Option) apierr.FieldErrors {
	o := collect(opts)
	var errs apierr.FieldErrors
	if status, ok := obj["status"]; ok && p != nil {
		if sp, ok := p.property("status"); ok {
			errs = fieldErrors("status", walker{}.validateValue(sp, "", status, nil).errs)
		}
	}
	errs = append(errs, o.scaleErrors(obj, false)...)
	if p == nil {
		return errs
	}
	if e := validateListSetsAndMaps(p, "", obj); len(e) > 0 && len(validateListSetsAndMaps(p, "", old)) == 0 {
		errs = append(errs, e...)
	}
	return errs
}

// ValidateTypeMeta checks that a custom resource names its own kind and
// group/version, as upstream does before any other check (a failure here
// is the only one reported).
func ValidateTypeMeta(obj map[string]any, apiVersion, kind string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if k, _ := obj["kind"].(string); k != kind {
		errs = append(errs, apierr.Invalid("kind", k, "must be "+kind))
	}
	if v, _ := obj["apiVersion"].(string); v != apiVersion {
		errs = append(errs, apierr.Invalid("apiVersion", v, "must be "+apiVersion))
	}
	return errs
}

// ValidateScaleReplicas checks the replica count at a scale subresource's
// specReplicasPath or statusReplicasPath (".spec.replicas"): absent is
// fine, otherwise an integer from 0 to 2^31-1. Upstream checks the spec
// path on create and update, and the status path on those and on status
// writes.
func ValidateScaleReplicas(obj map[string]any, path string) apierr.FieldErrors {
	v, found, err := nestedValue(obj, path)
	if err != "" {
		return apierr.FieldErrors{apierr.Invalid(path, int64(0), err)}
	}
	if !found {
		return nil
	}
	n, ok := v.(int64)
	if !ok {
		return apierr.FieldErrors{apierr.Invalid(path, int64(0), fmt.Sprintf("%s accessor error: %v is of the type %T, expected int64", accessorPath(path), v, v))}
	}
	switch {
	case n < 0:
		return apierr.FieldErrors{apierr.Invalid(path, n, "should be a non-negative integer")}
	case n > math.MaxInt32:
		return apierr.FieldErrors{apierr.Invalid(path, n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32))}
	}
	return nil
}

// ValidateScaleSelector checks the value at a scale subresource's
// labelSelectorPath: absent or a string.
func ValidateScaleSelector(obj map[string]any, path string) apierr.FieldErrors {
	v, found, err := nestedValue(obj, path)
	if err != "" {
		return apierr.FieldErrors{apierr.Invalid(path, "", err)}
	}
	if _, ok := v.(string); !ok && found {
		return apierr.FieldErrors{apierr.Invalid(path, "", fmt.Sprintf("%s accessor error: %v is of the type %T, expected string", accessorPath(path), v, v))}
	}
	return nil
}

func accessorPath(path string) string { return "." + strings.TrimPrefix(path, ".") }

// nestedValue reads the value at a dotted path as upstream's accessor
// does: found is false when a member on the way is absent or null; a
// member that is not an object is an error.
func nestedValue(obj map[string]any, path string) (v any, found bool, err string) {
	fields := strings.Split(strings.TrimPrefix(path, "."), ".")
	var cur any = obj
	for i, f := range fields {
		if cur == nil {
			return nil, false, ""
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, fmt.Sprintf(".%s accessor error: %v is of the type %T, expected map[string]interface{}", strings.Join(fields[:i+1], "."), cur, cur)
		}
		if cur, ok = m[f]; !ok {
			return nil, false, ""
		}
	}
	return cur, true, ""
}
