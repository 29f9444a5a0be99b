package jsonschema

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"platd/server/apierr"
	"platd/server/validation"
)

// The metadata of an embedded resource is checked as upstream does: it is
// decoded into the object metadata type (a member of the wrong JSON type
// fails that, with Go's decoding error), then validated like the metadata
// of any object, except that a missing name is fine and names are checked
// as path segments.

// Limits of the object metadata, as upstream.
const (
	totalAnnotationSizeLimit = 256 * 1024
	fieldManagerMaxLength    = 128
	subresourceMaxLength     = 256
)

// Go type names of the metadata members, as decoding errors print them.
const (
	goString      = "string"
	goInt64       = "int64"
	goBool        = "bool"
	goTime        = "v1.Time"
	goStringMap   = "map[string]string"
	goStringList  = "[]string"
	goOwnerRefs   = "[]v1.OwnerReference"
	goManagedList = "[]v1.ManagedFieldsEntry"
	goAny         = "any"
)

// metaFieldTypes are the members of the object metadata type.
var metaFieldTypes = map[string]string{
	"name":                       goString,
	"generateName":               goString,
	"namespace":                  goString,
	"selfLink":                   goString,
	"uid":                        "types.UID",
	"resourceVersion":            goString,
	"generation":                 goInt64,
	"creationTimestamp":          goTime,
	"deletionTimestamp":          goTime,
	"deletionGracePeriodSeconds": goInt64,
	"labels":                     goStringMap,
	"annotations":                goStringMap,
	"ownerReferences":            goOwnerRefs,
	"finalizers":                 goStringList,
	"managedFields":              goManagedList,
}

var ownerRefFieldTypes = map[string]string{
	"apiVersion":         goString,
	"kind":               goString,
	"name":               goString,
	"uid":                "types.UID",
	"controller":         goBool,
	"blockOwnerDeletion": goBool,
}

var managedFieldTypes = map[string]string{
	"manager":     goString,
	"operation":   "v1.ManagedFieldsOperationType",
	"apiVersion":  goString,
	"time":        goTime,
	"fieldsType":  goString,
	"fieldsV1":    goAny,
	"subresource": goString,
}

// jsonKind names a value's JSON type as Go's JSON decoder does in its
// errors.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case int64, float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

func typeError(kind, structName, field, goType string) string {
	return fmt.Sprintf("json: cannot unmarshal %s into Go struct field %s.%s of type %s", kind, structName, field, goType)
}

// memberDecodeError is the error decoding x into a member of Go type t
// gives, "" if none. structName and field name the member as Go's decoder
// does.
func memberDecodeError(x any, t, structName, field string) string {
	if x == nil || t == goAny {
		return ""
	}
	switch t {
	case goString, "types.UID", "v1.ManagedFieldsOperationType":
		if _, ok := x.(string); !ok {
			return typeError(jsonKind(x), structName, field, t)
		}
	case goBool:
		if _, ok := x.(bool); !ok {
			return typeError(jsonKind(x), structName, field, t)
		}
	case goTime:
		s, ok := x.(string)
		if !ok {
			// The time type decodes itself; its error has no member name.
			return fmt.Sprintf("json: cannot unmarshal %s into Go value of type string", jsonKind(x))
		}
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return err.Error()
		}
	case goInt64:
		switch n := x.(type) {
		case int64:
		case float64:
			return typeError("number "+strconv.FormatFloat(n, 'g', -1, 64), structName, field, t)
		default:
			return typeError(jsonKind(x), structName, field, t)
		}
	case goStringMap:
		m, ok := x.(map[string]any)
		if !ok {
			return typeError(jsonKind(x), structName, field, t)
		}
		for _, k := range sortedKeys(m) {
			if _, ok := m[k].(string); !ok && m[k] != nil {
				return typeError(jsonKind(m[k]), structName, field, goString)
			}
		}
	case goStringList:
		l, ok := x.([]any)
		if !ok {
			return typeError(jsonKind(x), structName, field, t)
		}
		for _, e := range l {
			if _, ok := e.(string); !ok && e != nil {
				return typeError(jsonKind(e), structName, field, goString)
			}
		}
	case goOwnerRefs, goManagedList:
		l, ok := x.([]any)
		if !ok {
			return typeError(jsonKind(x), structName, field, t)
		}
		elem, types := "OwnerReference", ownerRefFieldTypes
		if t == goManagedList {
			elem, types = "ManagedFieldsEntry", managedFieldTypes
		}
		for _, e := range l {
			m, ok := e.(map[string]any)
			if !ok {
				if e == nil {
					continue
				}
				return typeError(jsonKind(e), structName, field, "v1."+elem)
			}
			for _, k := range sortedKeys(m) {
				if et, known := types[k]; known {
					if msg := memberDecodeError(m[k], et, elem, field+"."+k); msg != "" {
						return msg
					}
				}
			}
		}
	}
	return ""
}

// metaDecodeError is the error decoding v into the object metadata type
// gives, "" if none: the first member, in name order, whose JSON type does
// not fit (Go's decoder reports the first in document order).
func metaDecodeError(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return ""
		}
		return fmt.Sprintf("json: cannot unmarshal %s into Go value of type v1.ObjectMeta", jsonKind(v))
	}
	for _, k := range sortedKeys(m) {
		if t, known := metaFieldTypes[k]; known {
			if msg := memberDecodeError(m[k], t, "ObjectMeta", k); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// goRepr is a value printed in Go syntax, as upstream prints structs.
type goRepr = apierr.GoSyntax

func mstr(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func boolPtrRepr(m map[string]any, k string) string {
	if b, ok := m[k].(bool); ok {
		return "(*bool)(" + strconv.FormatBool(b) + ")"
	}
	return "(*bool)(nil)"
}

// ownerRefRepr prints an owner reference as Go syntax; set pointer members
// show their value where upstream shows an address.
func ownerRefRepr(m map[string]any) string {
	return fmt.Sprintf("v1.OwnerReference{APIVersion:%q, Kind:%q, Name:%q, UID:%q, Controller:%s, BlockOwnerDeletion:%s}",
		mstr(m, "apiVersion"), mstr(m, "kind"), mstr(m, "name"), mstr(m, "uid"),
		boolPtrRepr(m, "controller"), boolPtrRepr(m, "blockOwnerDeletion"))
}

// groupVersion splits an apiVersion as upstream: an unparsable one
// leaves group and version empty.
func groupVersion(apiVersion string) (group, version string) {
	if apiVersion == "" || apiVersion == "/" {
		return "", ""
	}
	switch strings.Count(apiVersion, "/") {
	case 0:
		return "", apiVersion
	case 1:
		g, v, _ := strings.Cut(apiVersion, "/")
		return g, v
	}
	return "", ""
}

// validateEmbeddedMeta checks an embedded resource's metadata.
func validateEmbeddedMeta(path string, v any) apierr.FieldErrors {
	if msg := metaDecodeError(v); msg != "" {
		return apierr.FieldErrors{apierr.Invalid(path, v, msg)}
	}
	m, _ := v.(map[string]any)
	var errs apierr.FieldErrors
	if gen := mstr(m, "generateName"); gen != "" {
		for _, msg := range pathSegmentPrefix(gen) {
			errs = append(errs, apierr.Invalid(childPath(path, "generateName"), gen, msg))
		}
	}
	if name := mstr(m, "name"); name != "" {
		for _, msg := range validation.IsPathSegment(name) {
			errs = append(errs, apierr.Invalid(childPath(path, "name"), name, msg))
		}
	}
	if ns := mstr(m, "namespace"); ns != "" {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, apierr.Invalid(childPath(path, "namespace"), ns, msg))
		}
	}
	if g, ok := m["generation"].(int64); ok && g < 0 {
		errs = append(errs, apierr.Invalid(childPath(path, "generation"), g, "must be greater than or equal to 0"))
	}
	if labels, ok := m["labels"].(map[string]any); ok {
		f := childPath(path, "labels")
		for _, k := range sortedKeys(labels) {
			for _, msg := range validation.IsQualifiedName(k) {
				errs = append(errs, apierr.Invalid(f, k, msg))
			}
			s, _ := labels[k].(string)
			for _, msg := range validation.IsValidLabelValue(s) {
				errs = append(errs, apierr.Invalid(f, s, msg))
			}
		}
	}
	if ann, ok := m["annotations"].(map[string]any); ok {
		f := childPath(path, "annotations")
		total := 0
		for _, k := range sortedKeys(ann) {
			for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
				errs = append(errs, apierr.Invalid(f, k, msg))
			}
			s, _ := ann[k].(string)
			total += len(k) + len(s)
		}
		if total > totalAnnotationSizeLimit {
			errs = append(errs, tooLong(f, totalAnnotationSizeLimit))
		}
	}
	if refs, ok := m["ownerReferences"].([]any); ok {
		errs = append(errs, ValidateOwnerReferences(childPath(path, "ownerReferences"), refs)...)
	}
	if fins, ok := m["finalizers"].([]any); ok {
		f := childPath(path, "finalizers")
		orphan, foreground := false, false
		all := make([]string, 0, len(fins))
		for _, e := range fins {
			s, _ := e.(string)
			all = append(all, s)
			for _, msg := range validation.IsQualifiedName(s) {
				errs = append(errs, apierr.Invalid(f, s, msg))
			}
			orphan = orphan || s == "orphan"
			foreground = foreground || s == "foregroundDeletion"
		}
		if orphan && foreground {
			errs = append(errs, apierr.Invalid(f, all, "finalizer orphan and foregroundDeletion cannot be both set"))
		}
	}
	if entries, ok := m["managedFields"].([]any); ok {
		errs = append(errs, validateManagedFields(childPath(path, "managedFields"), entries)...)
	}
	return errs
}

// ValidateOwnerReferences checks owner references at field f as upstream:
// each names a version, kind, name and uid and is not an Event, and one at
// most is the controller; upstream reports them all at the list's path,
// unindexed.
func ValidateOwnerReferences(f string, refs []any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	firstController := ""
	reprs := make([]string, 0, len(refs))
	for _, e := range refs {
		m, _ := e.(map[string]any)
		reprs = append(reprs, ownerRefRepr(m))
	}
	for _, e := range refs {
		m, _ := e.(map[string]any)
		apiVersion, kind := mstr(m, "apiVersion"), mstr(m, "kind")
		group, version := groupVersion(apiVersion)
		if version == "" {
			errs = append(errs, apierr.Invalid(childPath(f, "apiVersion"), apiVersion, "version must not be empty"))
		}
		if kind == "" {
			errs = append(errs, apierr.Invalid(childPath(f, "kind"), kind, "kind must not be empty"))
		}
		if mstr(m, "name") == "" {
			errs = append(errs, apierr.Invalid(childPath(f, "name"), "", "name must not be empty"))
		}
		if mstr(m, "uid") == "" {
			errs = append(errs, apierr.Invalid(childPath(f, "uid"), goRepr(`""`), "uid must not be empty"))
		}
		if group == "" && version == "v1" && kind == "Event" {
			errs = append(errs, apierr.Invalid(f, goRepr(ownerRefRepr(m)), "/v1, Kind=Event is disallowed from being an owner"))
		}
		if c, _ := m["controller"].(bool); c {
			name := kind + "/" + mstr(m, "name")
			if firstController != "" {
				errs = append(errs, apierr.Invalid(f, goRepr("[]v1.OwnerReference{"+strings.Join(reprs, ", ")+"}"),
					fmt.Sprintf("Only one reference can have Controller set to true. Found \"true\" in references for %v and %v", firstController, name)))
			} else {
				firstController = name
			}
		}
	}
	return errs
}

func validateManagedFields(f string, entries []any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for i, e := range entries {
		m, _ := e.(map[string]any)
		p := indexPath(f, i)
		switch op := mstr(m, "operation"); op {
		case "Apply", "Update":
		default:
			errs = append(errs, apierr.Invalid(childPath(p, "operation"), op, "must be `Apply` or `Update`"))
		}
		if ft := mstr(m, "fieldsType"); ft != "" && ft != "FieldsV1" {
			errs = append(errs, apierr.Invalid(childPath(p, "fieldsType"), ft, "must be `FieldsV1`"))
		}
		manager := mstr(m, "manager")
		if len(manager) > fieldManagerMaxLength {
			errs = append(errs, tooLong(childPath(p, "manager"), fieldManagerMaxLength))
		}
		for j, r := range manager {
			if !unicode.IsPrint(r) {
				errs = append(errs, apierr.Invalid(childPath(p, "manager"), manager, fmt.Sprintf("invalid character %#U (at position %d)", r, j)))
			}
		}
		if len(mstr(m, "subresource")) > subresourceMaxLength {
			errs = append(errs, tooLong(childPath(p, "subresource"), subresourceMaxLength))
		}
	}
	return errs
}

// pathSegmentPrefix is the check of a generateName used as a path
// segment: only the characters a segment may not contain.
func pathSegmentPrefix(v string) []string {
	var errs []string
	for _, c := range []string{"/", "%"} {
		if strings.Contains(v, c) {
			errs = append(errs, fmt.Sprintf("may not contain '%s'", c))
		}
	}
	return errs
}

// coerceError is the first failure decoding the apiVersion, kind and
// metadata of the embedded resources in v, as upstream reports before it
// validates a default: nil if they all decode.
func coerceError(p *Props, path string, v any) *apierr.FieldError {
	if p == nil {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			e := x[k]
			if p.XEmbeddedResource {
				switch k {
				case "apiVersion", "kind":
					if _, ok := e.(string); !ok {
						return apierr.Invalid(childPath(path, k), badValue(e), "must be a string")
					}
				case "metadata":
					if msg := metaDecodeError(e); msg != "" {
						return apierr.Invalid(childPath(path, k), e, msg)
					}
				}
			}
			if sub, ok := p.property(k); ok {
				if err := coerceError(sub, childPath(path, k), e); err != nil {
					return err
				}
			} else if p.AdditionalProperties != nil {
				if err := coerceError(p.ValueSchema(), keyPath(path, k), e); err != nil {
					return err
				}
			}
		}
	case []any:
		for i, e := range x {
			if err := coerceError(p.ItemSchema(), indexPath(path, i), e); err != nil {
				return err
			}
		}
	}
	return nil
}
