package builtin

import (
	"fmt"
	"net/url"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/jsonschema"
	"platd/server/registry"
)

// validateStoredVersions checks status.storedVersions against the
// versions: the storage version must be listed, and every listed version
// must still exist until a migration removes it.
func validateStoredVersions(obj registry.Object) apierr.FieldErrors {
	const p = "status.storedVersions"
	stored := listOf(valueAt(obj, "status", "storedVersions"))
	if len(stored) == 0 {
		return apierr.FieldErrors{apierr.Invalid(p, goSyntax("[]string(nil)"), "must have at least one stored version")}
	}
	var errs apierr.FieldErrors
	at := map[string]int{}
	for i, v := range stored {
		at[strOf(v)] = i
	}
	for _, v := range mapsOf(valueAt(obj, "spec", "versions")) {
		name := strOf(v["name"])
		_, ok := at[name]
		if boolOf(v["storage"]) && !ok {
			errs = append(errs, apierr.Invalid(p, goStrings("string", stored), "must have the storage version "+name))
		}
		delete(at, name)
	}
	// Upstream reports the rest in map order; here in list order.
	for i, v := range stored {
		name := strOf(v)
		if j, ok := at[name]; ok && j == i {
			errs = append(errs, apierr.Invalid(index(p, i), name, "must appear in spec.versions"))
		}
	}
	return errs
}

// validatePreserveUnknownFields refuses spec.preserveUnknownFields: true,
// unless the stored CRD already had it.
func validatePreserveUnknownFields(obj, old registry.Object) apierr.FieldErrors {
	if old != nil && boolOf(valueAt(old, "spec", "preserveUnknownFields")) {
		return nil
	}
	if boolOf(valueAt(obj, "spec", "preserveUnknownFields")) {
		return apierr.FieldErrors{apierr.Invalid("spec.preserveUnknownFields", true, "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead")}
	}
	return nil
}

// The states of a protected group's API approval annotation.
const (
	approvalMissing = iota
	approvalInvalid
	approvalBypassed
	approved
)

// validateAPIApproval requires the approval annotation on a CRD of one of
// the brand's own groups; an unchanged state is never refused, so that an
// old object stays writable.
func validateAPIApproval(b config.Brand, obj, old registry.Object) apierr.FieldErrors {
	group := str(obj, "spec", "group")
	protected := false
	for _, d := range []string{b.Domain, b.LongDomain} {
		if group == d || strings.HasSuffix(group, "."+d) {
			protected = true
		}
	}
	if !protected {
		return nil
	}
	key := b.APIApprovalAnnotation
	state, reason := apiApprovalState(b, str(obj, "metadata", "annotations", key))
	if old != nil {
		if oldState, _ := apiApprovalState(b, str(old, "metadata", "annotations", key)); oldState == state {
			return nil
		}
	}
	p := keyed("metadata.annotations", key)
	switch state {
	case approvalMissing:
		return apierr.FieldErrors{apierr.Required(p, reason)}
	case approvalInvalid:
		return apierr.FieldErrors{apierr.Invalid(p, str(obj, "metadata", "annotations", key), reason)}
	}
	return nil
}

func apiApprovalState(b config.Brand, v string) (int, string) {
	u, err := url.ParseRequestURI(v)
	switch {
	case v == "":
		return approvalMissing, fmt.Sprintf("protected groups must have approval annotation %q%s", b.APIApprovalAnnotation, b.APIApprovalReference)
	case strings.HasPrefix(v, "unapproved"):
		return approvalBypassed, fmt.Sprintf("not approved: %q", v)
	case err == nil && u.Host != "" && u.Scheme != "":
		return approved, "approved in " + v
	}
	return approvalInvalid, fmt.Sprintf("protected groups must have approval annotation %q with either a URL or a reason starting with \"unapproved\"%s", b.APIApprovalAnnotation, b.APIApprovalReference)
}

// NonStructuralSchema computes a CRD's NonStructuralSchema condition as
// upstream's controller does: ok is false when the condition does not
// apply (every schema is structural); otherwise status is "True" with
// reason "Violations" and the violations as message, or "Unknown" with
// reason "StructuralError" when a schema cannot be read as structural.
func NonStructuralSchema(crd registry.Object) (status, reason, message string, ok bool) {
	var errs apierr.FieldErrors
	if boolOf(valueAt(crd, "spec", "preserveUnknownFields")) {
		errs = append(errs, apierr.Invalid("spec.preserveUnknownFields", true, "must be false"))
	}
	for i, v := range mapsOf(valueAt(crd, "spec", "versions")) {
		raw := openAPISchemaOf(v["schema"])
		if raw == nil {
			continue
		}
		p, err := jsonschema.Parse(raw)
		if err != nil {
			return "Unknown", "StructuralError", fmt.Sprintf("failed to check validation schema for version %s: %v", strOf(v["name"]), err), true
		}
		if err := jsonschema.NotStructural(p); err != nil {
			return "Unknown", "StructuralError", fmt.Sprintf("failed to check validation schema for version %s: %v", strOf(v["name"]), err), true
		}
		errs = append(errs, jsonschema.Structural(p, index("spec.versions", i)+".schema.openAPIV3Schema")...)
	}
	if len(errs) == 0 {
		return "", "", "", false
	}
	return "True", "Violations", errs.Error(), true
}
