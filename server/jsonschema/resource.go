package jsonschema

import (
	"encoding/json"
	"strconv"
	"strings"

	"platd/server/apierr"
	"platd/server/validation"
)

// Option adds a check of a custom resource write that its schema cannot
// say.
type Option func(*options)

type options struct {
	scale *scalePaths
}

type scalePaths struct{ spec, status, selector string }

// WithScale checks the replica counts and selector a scale subresource
// reads, at the paths its CRD writes (".spec.replicas"; selector "" when
// none), right after the schema as upstream: the spec count on create and
// update, the status count and selector on those and on status writes.
func WithScale(specReplicasPath, statusReplicasPath, labelSelectorPath string) Option {
	return func(o *options) { o.scale = &scalePaths{specReplicasPath, statusReplicasPath, labelSelectorPath} }
}

func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// scaleErrors checks the scale paths; withSpec includes the spec count.
func (o options) scaleErrors(obj map[string]any, withSpec bool) apierr.FieldErrors {
	if o.scale == nil {
		return nil
	}
	var errs apierr.FieldErrors
	if withSpec {
		errs = append(errs, ValidateScaleReplicas(obj, o.scale.spec)...)
	}
	errs = append(errs, ValidateScaleReplicas(obj, o.scale.status)...)
	if o.scale.selector != "" {
		errs = append(errs, ValidateScaleSelector(obj, o.scale.selector)...)
	}
	return errs
}

// Validate checks a custom resource, in its generic decoded form
// (map[string]any, []any, string, int64, float64, bool, nil), against its
// CRD's root schema p (nil: none), as upstream's custom resource strategy
// does after the object metadata checks: the OpenAPI schema validation,
// the options' checks, the apiVersion, kind and metadata of embedded
// resources, then the uniqueness of x-kubernetes-list-type set and map
// items. The root's metadata is checked against the schema like any
// member (a CRD may only constrain its name and generateName); its other
// rules are the caller's, as are the validation rules (see BlocksRules).
//
// Field paths and texts are upstream's: schema failures name members with
// dots and indexes ("spec.items[0].name", map values "spec.labels.key"),
// the later checks name map values by key ("spec.labels[key]").
// Validate does not modify obj and may be called concurrently.
func Validate(p *Props, obj map[string]any, opts ...Option) apierr.FieldErrors {
	o := collect(opts)
	if p == nil {
		return o.scaleErrors(obj, true)
	}
	errs := fieldErrors("", walker{}.validateValue(p, "", obj, nil).errs)
	errs = append(errs, o.scaleErrors(obj, true)...)
	if p.mayHaveEmbedded() {
		errs = append(errs, validateEmbedded(p, "", obj)...)
	}
	if p.mayHaveLists() {
		errs = append(errs, validateListSetsAndMaps(p, "", obj)...)
	}
	return errs
}

// ValidateUpdate is Validate for an update from old to obj, as upstream's
// update strategy: the schema failures of values equal to their old
// values are dropped (ratcheting: members pair by name, map list items by
// key, other lists compare whole), and set and map lists are checked only
// if old passes that check. Embedded resources are checked as on create.
// Neither object is modified.
func ValidateUpdate(p *Props, obj, old map[string]any, opts ...Option) apierr.FieldErrors {
	o := collect(opts)
	if p == nil {
		return o.scaleErrors(obj, true)
	}
	c := newCorrelation(obj, old, p)
	errs := fieldErrors("", walker{}.validateValue(p, "", obj, c).errs)
	errs = append(errs, o.scaleErrors(obj, true)...)
	if p.mayHaveEmbedded() {
		errs = append(errs, validateEmbedded(p, "", obj)...)
	}
	if p.mayHaveLists() && len(validateListSetsAndMaps(p, "", old)) == 0 {
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
			if sub, ok := p.property(k); ok {
				errs = append(errs, validateEmbedded(sub, childPath(path, k), x[k])...)
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
		errs = append(errs, apierr.Required(childPath(path, "apiVersion"), "must not be empty"))
	}
	if _, ok := x["kind"]; !ok {
		errs = append(errs, apierr.Required(childPath(path, "kind"), "must not be empty"))
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
				errs = append(errs, apierr.Invalid(f, s, "must not be empty"))
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
				errs = append(errs, apierr.Invalid(f, s, "must not be empty"))
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
			if sub, ok := p.property(k); ok {
				errs = append(errs, listSetsAndMapsIn(sub, childPath(path, k), obj[k])...)
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
