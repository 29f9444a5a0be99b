package rest

import (
	"fmt"
	"slices"
	"strings"

	"platd/server/apierr"
	"platd/server/jsonschema"
	"platd/server/registry"
	"platd/server/validation"
	"platd/uuid"
)

// totalAnnotationSizeLimit bounds the summed size of annotation keys and
// values, as upstream.
const totalAnnotationSizeLimit = 256 * 1024

// checkNamespace refuses an object of a namespaced type that names a
// namespace other than the request's; an object naming none takes the
// request's.
func checkNamespace(s *scope, obj Object) error {
	if ns := metaString(obj, "namespace"); s.d.Namespaced && ns != "" && ns != s.ns {
		return apierr.BadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// nameMismatch is the 400 of a written object whose name is not the one
// the request's path names.
func nameMismatch(s *scope, name string) error {
	return apierr.BadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", name, s.name))
}

// nameUndeterminable is upstream's answer to a PUT whose body names no
// object.
func nameUndeterminable(s *scope) error {
	return apierr.BadRequest(fmt.Sprintf("the name of the object (%s based on URL) was undeterminable: name must be provided", s.name))
}

// Garbage-collection finalizers every resource accepts.
const (
	finalizerOrphan     = "orphan"
	finalizerForeground = "foregroundDeletion"
)

// validateName checks a name against a rule; prefix mode tolerates the
// trailing "-" of a generateName.
func validateName(rule registry.NameRule, name string, prefix bool) []string {
	if prefix && strings.HasSuffix(name, "-") {
		name = name[:len(name)-1]
		if name == "" {
			return nil
		}
	}
	switch rule {
	case registry.NameLabel:
		return validation.IsDNS1123Label(name)
	case registry.NamePathSegment:
		return validation.IsPathSegment(name)
	case registry.NameDNS1035:
		return validation.IsDNS1035Label(name)
	}
	return validation.IsDNS1123Subdomain(name)
}

// validateObjectMeta checks metadata common to every type, of an object
// created or, with update, replaced.
func (h *Handler) validateObjectMeta(d *registry.Descriptor, obj Object, update bool) apierr.FieldErrors {
	var errs apierr.FieldErrors
	rule := d.NameRule
	if update && d.NameRuleCreateOnly {
		rule = registry.NamePathSegment
	}
	m := meta(obj, true)
	name, _ := m["name"].(string)
	gen, _ := m["generateName"].(string)
	if gen != "" {
		for _, msg := range validateName(rule, gen, true) {
			errs = append(errs, apierr.Invalid("metadata.generateName", gen, msg))
		}
	}
	switch {
	case name == "" && gen == "":
		errs = append(errs, apierr.Required("metadata.name", "name or generateName is required"))
	case name != "":
		for _, msg := range validateName(rule, name, false) {
			errs = append(errs, apierr.Invalid("metadata.name", name, msg))
		}
	}
	ns, _ := m["namespace"].(string)
	if d.Namespaced {
		if ns == "" {
			errs = append(errs, apierr.Required("metadata.namespace", ""))
		} else {
			for _, msg := range validation.IsDNS1123Label(ns) {
				errs = append(errs, apierr.Invalid("metadata.namespace", ns, msg))
			}
		}
	} else if ns != "" {
		errs = append(errs, apierr.Forbidden("metadata.namespace", "not allowed on this type"))
	}
	for k, v := range stringMap(m, "labels") {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, apierr.Invalid("metadata.labels", k, msg))
		}
		s, _ := v.(string)
		for _, msg := range validation.IsValidLabelValue(s) {
			errs = append(errs, apierr.Invalid("metadata.labels", s, msg))
		}
	}
	total := 0
	for k, v := range stringMap(m, "annotations") {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, apierr.Invalid("metadata.annotations", k, msg))
		}
		s, _ := v.(string)
		total += len(k) + len(s)
	}
	if total > totalAnnotationSizeLimit {
		errs = append(errs, &apierr.FieldError{Type: apierr.FieldTooLong, Field: "metadata.annotations",
			Detail: fmt.Sprintf("may not be more than %d bytes", totalAnnotationSizeLimit)})
	}
	refs, _ := m["ownerReferences"].([]any)
	errs = append(errs, jsonschema.ValidateOwnerReferences("metadata.ownerReferences", refs)...)
	fins := finalizers(obj)
	for i, f := range fins {
		errs = append(errs, h.validateFinalizer(d, fmt.Sprintf("metadata.finalizers[%d]", i), f)...)
	}
	if slices.Contains(fins, finalizerOrphan) && slices.Contains(fins, finalizerForeground) {
		errs = append(errs, apierr.Invalid("metadata.finalizers", fins, fmt.Sprintf("finalizer %s and %s cannot be both set", finalizerOrphan, finalizerForeground)))
	}
	return errs
}

// validateFinalizer checks one finalizer name.
func (h *Handler) validateFinalizer(d *registry.Descriptor, field, f string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, msg := range validation.IsQualifiedName(f) {
		errs = append(errs, apierr.Invalid(field, f, msg))
	}
	if len(errs) == 0 && !d.AnyFinalizerNames && !strings.Contains(f, "/") {
		switch f {
		case h.brand.NamespaceFinalizer, finalizerOrphan, finalizerForeground:
		default:
			errs = append(errs, apierr.Invalid(field, f, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}

// validateObjectMetaUpdate checks what may not change on update. A
// changed creationTimestamp is not refused: the stored one is kept, as
// upstream ignores the change.
func validateObjectMetaUpdate(obj, old Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if nv, ov := meta(obj, false)["uid"], meta(old, false)["uid"]; nv != nil && nv != ov {
		errs = append(errs, apierr.Invalid("metadata.uid", nv, "field is immutable"))
	}
	if metaString(old, "deletionTimestamp") != "" {
		oldF := map[string]bool{}
		for _, f := range finalizers(old) {
			oldF[f] = true
		}
		for _, f := range finalizers(obj) {
			if !oldF[f] {
				errs = append(errs, apierr.Forbidden("metadata.finalizers", "no new finalizers can be added if the object is being deleted, found new finalizers "+fmt.Sprintf("[]string{%q}", f)))
				break
			}
		}
	}
	return errs
}

// systemMetaFields are the metadata members only the server writes.
// managedFields is not among them: a write may set or reset it, and track
// decides what is kept.
var systemMetaFields = []string{"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "generation"}

// placeInNamespace sets a written object's namespace to the request's,
// and removes it from an object of a cluster-scoped type.
func placeInNamespace(s *scope, obj Object) {
	m := meta(obj, true)
	if s.d.Namespaced {
		m["namespace"] = s.ns
	} else {
		delete(m, "namespace")
	}
}

// wipeSystemMeta removes the system metadata of a new object: what its
// client sent, before admission, and what admission set, before the
// object is prepared (upstream's handler and storage both clear them).
func wipeSystemMeta(obj Object) {
	m := meta(obj, true)
	for _, f := range systemMetaFields {
		delete(m, f)
	}
}

// prepareCreateMeta fills the system metadata of a new object.
func (h *Handler) prepareCreateMeta(s *scope, obj Object) {
	wipeSystemMeta(obj)
	m := meta(obj, true)
	delete(m, "resourceVersion")
	placeInNamespace(s, obj)
	m["uid"] = uuid.New()
	m["creationTimestamp"] = timestamp(h.now())
}

// carryUpdateMeta copies the system metadata of the stored object into the
// new state of an update.
func carryUpdateMeta(obj, old Object) {
	m, om := meta(obj, true), meta(old, false)
	for _, f := range systemMetaFields {
		if v, ok := om[f]; ok {
			m[f] = v
		} else {
			delete(m, f)
		}
	}
	if ns, ok := om["namespace"]; ok {
		m["namespace"] = ns
	}
}
