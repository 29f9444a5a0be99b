package jsonschema

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"platd/server/apierr"
	"platd/server/validation"
)

// Validate checks a custom resource, in its generic decoded form
// (map[string]any, []any, string, int64, float64, bool, nil), against its
// CRD's root schema p, as upstream's custom resource strategy does after
// the object metadata checks: the OpenAPI schema validation, then the
// apiVersion, kind and metadata of embedded resources, then the
// uniqueness of x-kubernetes-list-type set and map items. The root's
// metadata is checked against the schema like any member (a CRD may only
// constrain its name and generateName); its other rules are the caller's.
//
// Field paths and texts are upstream's: schema failures name members with
// dots and indexes ("spec.items[0].name", map values "spec.labels.key"),
// the later checks name map values by key ("spec.labels[key]").
// Validate does not modify obj and may be called concurrently.
func Validate(p *Props, obj map[string]any) apierr.FieldErrors {
	if p == nil {
		return nil
	}
	errs := fieldErrors("", validateValue(p, "", obj, nil).errs)
	errs = append(errs, validateEmbedded(p, "", obj)...)
	errs = append(errs, validateListSetsAndMaps(p, "", obj)...)
	return errs
}

// ValidateUpdate is Validate for an update from old to obj, as upstream's
// update strategy: the schema failures of values equal to their old
// values are dropped (ratcheting: members pair by name, map list items by
// key, other lists compare whole), and set and map lists are checked only
// if old passes that check. Embedded resources are checked as on create.
// Neither object is modified.
func ValidateUpdate(p *Props, obj, old map[string]any) apierr.FieldErrors {
	if p == nil {
		return nil
	}
	c := newCorrelation(obj, old, p)
	errs := fieldErrors("", validateValue(p, "", obj, c).errs)
	errs = append(errs, validateEmbedded(p, "", obj)...)
	if len(validateListSetsAndMaps(p, "", old)) == 0 {
		errs = append(errs, validateListSetsAndMaps(p, "", obj)...)
	}
	return errs
}

// childPath, keyPath and indexPath spell field paths as upstream's
// field.Path does.
func childPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func keyPath(path, key string) string { return path + "[" + key + "]" }

func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// validateEmbedded checks the apiVersion, kind and metadata of every value
// whose schema is an x-kubernetes-embedded-resource.
func validateEmbedded(p *Props, path string, v any) apierr.FieldErrors {
	if p == nil {
		return nil
	}
	var errs apierr.FieldErrors
	switch x := v.(type) {
	case map[string]any:
		if p.XEmbeddedResource {
			errs = append(errs, validateEmbeddedResource(path, x)...)
		}
		for _, k := range sortedKeys(x) {
			if sub, ok := p.Properties[k]; ok {
				errs = append(errs, validateEmbedded(&sub, childPath(path, k), x[k])...)
			} else if vs := p.ValueSchema(); vs != nil {
				errs = append(errs, validateEmbedded(vs, keyPath(path, k), x[k])...)
			}
		}
	case []any:
		for i, e := range x {
			errs = append(errs, validateEmbedded(p.ItemSchema(), indexPath(path, i), e)...)
		}
	}
	return errs
}

func validateEmbeddedResource(path string, x map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if _, ok := x["apiVersion"]; !ok {
		errs = append(errs, apierr.Required(childPath(path, "apiVersion"), ""))
	}
	if _, ok := x["kind"]; !ok {
		errs = append(errs, apierr.Required(childPath(path, "kind"), ""))
	}
	for _, k := range sortedKeys(x) {
		v := x[k]
		switch k {
		case "apiVersion":
			f := childPath(path, k)
			s, ok := v.(string)
			switch {
			case !ok:
				errs = append(errs, apierr.Invalid(f, badValue(v), "must be a string"))
			case s == "":
				errs = append(errs, apierr.Required(f, ""))
			case s != "/" && strings.Count(s, "/") > 1:
				errs = append(errs, apierr.Invalid(f, s, "unexpected GroupVersion string: "+s))
			}
		case "kind":
			f := childPath(path, k)
			s, ok := v.(string)
			switch {
			case !ok:
				errs = append(errs, apierr.Invalid(f, badValue(v), "must be a string"))
			case s == "":
				errs = append(errs, apierr.Required(f, ""))
			default:
				if msgs := validation.IsDNS1035Label(strings.ToLower(s)); len(msgs) > 0 {
					errs = append(errs, apierr.Invalid(f, s, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
				}
			}
		case "metadata":
			errs = append(errs, validateEmbeddedMeta(childPath(path, k), v)...)
		}
	}
	return errs
}

// metaFieldTypes are the Go types of the ObjectMeta members an embedded
// resource's metadata is decoded into; a member of another JSON type
// fails that decoding.
var metaFieldTypes = map[string]string{
	"name":                       "string",
	"generateName":               "string",
	"namespace":                  "string",
	"selfLink":                   "string",
	"uid":                        "types.UID",
	"resourceVersion":            "string",
	"generation":                 "int64",
	"creationTimestamp":          "v1.Time",
	"deletionTimestamp":          "v1.Time",
	"deletionGracePeriodSeconds": "int64",
	"labels":                     "map[string]string",
	"annotations":                "map[string]string",
	"ownerReferences":            "[]v1.OwnerReference",
	"finalizers":                 "[]string",
	"managedFields":              "[]v1.ManagedFieldsEntry",
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

// metaDecodeError is the error decoding v into an ObjectMeta gives, "" if
// none: the first member, in the order Go's decoder meets them, whose JSON
// type does not fit.
func metaDecodeError(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return ""
		}
		return fmt.Sprintf("json: cannot unmarshal %s into Go value of type v1.ObjectMeta", jsonKind(v))
	}
	for _, k := range sortedKeys(m) {
		t, known := metaFieldTypes[k]
		x := m[k]
		if !known || x == nil {
			continue
		}
		field := "ObjectMeta." + k
		bad := ""
		switch t {
		case "string", "types.UID":
			if _, ok := x.(string); !ok {
				bad = jsonKind(x)
			}
		case "v1.Time":
			s, ok := x.(string)
			if !ok {
				return fmt.Sprintf("json: cannot unmarshal %s into Go struct field %s of type string", jsonKind(x), field)
			}
			if _, err := parseRFC3339(s); err != nil {
				return err.Error()
			}
		case "int64":
			switch n := x.(type) {
			case int64:
			case float64:
				return fmt.Sprintf("json: cannot unmarshal number %s into Go struct field %s of type int64", strconv.FormatFloat(n, 'g', -1, 64), field)
			default:
				bad = jsonKind(x)
			}
		case "map[string]string":
			mm, ok := x.(map[string]any)
			if !ok {
				bad = jsonKind(x)
				break
			}
			for _, kk := range sortedKeys(mm) {
				if _, ok := mm[kk].(string); !ok && mm[kk] != nil {
					return fmt.Sprintf("json: cannot unmarshal %s into Go struct field %s of type string", jsonKind(mm[kk]), field)
				}
			}
		case "[]string":
			l, ok := x.([]any)
			if !ok {
				bad = jsonKind(x)
				break
			}
			for _, e := range l {
				if _, ok := e.(string); !ok && e != nil {
					return fmt.Sprintf("json: cannot unmarshal %s into Go struct field %s of type string", jsonKind(e), field)
				}
			}
		default:
			if _, ok := x.([]any); !ok {
				bad = jsonKind(x)
			}
		}
		if bad != "" {
			return fmt.Sprintf("json: cannot unmarshal %s into Go struct field %s of type %s", bad, field, t)
		}
	}
	return ""
}

// totalAnnotationSizeLimit bounds the summed size of annotation keys and
// values, as upstream.
const totalAnnotationSizeLimit = 256 * 1024

// validateEmbeddedMeta checks an embedded resource's metadata as upstream's
// object metadata validation does, with a name required of none (upstream
// substitutes a placeholder name) and names checked as path segments.
func validateEmbeddedMeta(path string, v any) apierr.FieldErrors {
	if msg := metaDecodeError(v); msg != "" {
		return apierr.FieldErrors{apierr.Invalid(path, v, msg)}
	}
	m, _ := v.(map[string]any)
	var errs apierr.FieldErrors
	str := func(k string) string { s, _ := m[k].(string); return s }
	if gen := str("generateName"); gen != "" {
		for _, msg := range pathSegmentPrefix(gen) {
			errs = append(errs, apierr.Invalid(childPath(path, "generateName"), gen, msg))
		}
	}
	if name := str("name"); name != "" {
		for _, msg := range validation.IsPathSegment(name) {
			errs = append(errs, apierr.Invalid(childPath(path, "name"), name, msg))
		}
	}
	if ns := str("namespace"); ns != "" {
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
	if fins, ok := m["finalizers"].([]any); ok {
		f := childPath(path, "finalizers")
		orphan, foreground := false, false
		var all []string
		for i, e := range fins {
			s, _ := e.(string)
			all = append(all, s)
			for _, msg := range validation.IsQualifiedName(s) {
				errs = append(errs, apierr.Invalid(indexPath(f, i), s, msg))
			}
			orphan = orphan || s == "orphan"
			foreground = foreground || s == "foregroundDeletion"
		}
		if orphan && foreground {
			errs = append(errs, apierr.Invalid(f, all, "finalizer orphan and foregroundDeletion cannot be both set"))
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

// validateListSetsAndMaps checks that the items of x-kubernetes-list-type
// set lists are unique, and the keys of map lists.
func validateListSetsAndMaps(p *Props, path string, obj map[string]any) apierr.FieldErrors {
	if p == nil || obj == nil {
		return nil
	}
	var errs apierr.FieldErrors
	keys := sortedKeys(obj)
	if vs := p.ValueSchema(); vs != nil {
		for _, k := range keys {
			errs = append(errs, listSetsAndMapsIn(vs, keyPath(path, k), obj[k])...)
		}
	}
	if p.Properties != nil {
		for _, k := range keys {
			if sub, ok := p.Properties[k]; ok {
				errs = append(errs, listSetsAndMapsIn(&sub, childPath(path, k), obj[k])...)
			}
		}
	}
	return errs
}

func listSetsAndMapsIn(p *Props, path string, v any) apierr.FieldErrors {
	switch x := v.(type) {
	case []any:
		return validateListSetsAndMapsArray(p, path, x)
	case map[string]any:
		return validateListSetsAndMaps(p, path, x)
	}
	return nil
}

func validateListSetsAndMapsArray(p *Props, path string, l []any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if p.XListType != nil {
		switch *p.XListType {
		case "set":
			for _, i := range nonUnique(l) {
				errs = append(errs, apierr.Duplicate(indexPath(path, i), badValue(l[i])))
			}
		case "map":
			errs = append(errs, validateListMap(p, path, l)...)
		}
	}
	if item := p.ItemSchema(); item != nil {
		for i, e := range l {
			errs = append(errs, listSetsAndMapsIn(item, indexPath(path, i), e)...)
		}
	}
	return errs
}

// unspecifiedKey stands for a map-list item without its key: two such
// items collide, as upstream.
type unspecifiedKey struct{}

// nonUnique returns the index of the second occurrence of every value
// that occurs more than once; compound values compare by their JSON.
func nonUnique(l []any) []int {
	if len(l) <= 1 {
		return nil
	}
	scalars := map[any]int{}
	compounds := map[string]int{}
	var out []int
	for i, x := range l {
		var times int
		switch x.(type) {
		case map[string]any, []any:
			b, _ := json.Marshal(x)
			times = compounds[string(b)]
			compounds[string(b)]++
		default:
			times = scalars[x]
			scalars[x]++
		}
		if times == 1 {
			out = append(out, i)
		}
	}
	return out
}

func validateListMap(p *Props, path string, l []any) apierr.FieldErrors {
	for i, x := range l {
		if _, ok := x.(map[string]any); x != nil && !ok {
			return apierr.FieldErrors{apierr.Invalid(indexPath(path, i), x, "must be an object for an array of list-type map")}
		}
	}
	if len(l) <= 1 {
		return nil
	}
	var errs apierr.FieldErrors
	if len(p.XListMapKeys) == 1 {
		key := p.XListMapKeys[0]
		keys := make([]any, 0, len(l))
		for _, x := range l {
			m, _ := x.(map[string]any)
			k, ok := m[key]
			if !ok {
				keys = append(keys, unspecifiedKey{})
				continue
			}
			keys = append(keys, k)
		}
		for _, i := range nonUnique(keys) {
			if keys[i] == (unspecifiedKey{}) {
				errs = append(errs, apierr.Duplicate(indexPath(path, i), map[string]any{}))
			} else {
				errs = append(errs, apierr.Duplicate(indexPath(path, i), map[string]any{key: keys[i]}))
			}
		}
		return errs
	}
	keys := make([]any, 0, len(l))
	for _, x := range l {
		m, _ := x.(map[string]any)
		k := map[string]any{}
		for _, f := range p.XListMapKeys {
			if v, ok := m[f]; ok {
				k[f] = v
			}
		}
		keys = append(keys, k)
	}
	for _, i := range nonUnique(keys) {
		errs = append(errs, apierr.Duplicate(indexPath(path, i), keys[i]))
	}
	return errs
}

// parseRFC3339 parses a timestamp as the metadata's time type does.
func parseRFC3339(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }
