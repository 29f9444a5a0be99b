package jsonschema

import "platd/server/apierr"

// ValidateDefaults checks every default of a CRD's root schema p, as
// upstream does when a CRD is written: a default must contain no member
// pruning would drop ("must not have unknown fields"), embedded resources
// in it must have a valid apiVersion, kind and metadata, and it must
// validate against the schema of its node. path is the field path of p,
// e.g. "spec.versions[0].schema.openAPIV3Schema"; defaults are reported at
// "<path>.properties[spec].properties[x].default", in upstream's order:
// the pruning check, then the first apiVersion, kind or metadata that does
// not decode, else the embedded resource checks, else the schema's. A
// default inside an embedded resource's apiVersion, kind or metadata is
// only checked against its own schema. Defaults under
// additionalProperties are not followed (the structural checks forbid
// them). The root is treated as an embedded resource, as upstream.
func ValidateDefaults(p *Props, path string) apierr.FieldErrors {
	if p == nil {
		return nil
	}
	root := *p
	root.XEmbeddedResource = true
	return validateDefaults(&root, path, false)
}

// metaFields are the members an embedded resource keeps whatever its
// schema says.
func metaField(k string) bool { return k == "apiVersion" || k == "kind" || k == "metadata" }

// validateDefaults walks properties and items; insideMeta is true under an
// embedded resource's apiVersion, kind or metadata.
func validateDefaults(p *Props, path string, insideMeta bool) apierr.FieldErrors {
	if p.XEmbeddedResource {
		insideMeta = false
	}
	var errs apierr.FieldErrors
	if p.Default != nil {
		v, err := p.Default.Value()
		dpath := path + ".default"
		switch {
		case err != nil:
			errs = append(errs, apierr.Invalid(dpath, string(p.Default.Raw), "must be valid JSON"))
		case v == nil:
		case insideMeta:
			// Upstream checks such a default inside a surrounding object;
			// the value's own schema is what a default there can break.
			errs = append(errs, fieldErrors(dpath, walker{asWritten: true}.validateValue(p, "", v, nil).errs)...)
		default:
			if wouldPrune(v, p) {
				errs = append(errs, apierr.Invalid(dpath, v, "must not have unknown fields"))
			}
			if err := coerceError(p, dpath, v); err != nil {
				errs = append(errs, err)
			} else if e := validateEmbedded(p, dpath, v); len(e) > 0 {
				errs = append(errs, e...)
			} else {
				errs = append(errs, fieldErrors(dpath, walker{asWritten: true}.validateValue(p, "", v, nil).errs)...)
			}
		}
	}
	if item := p.ItemSchema(); item != nil {
		errs = append(errs, validateDefaults(item, path+".items", insideMeta)...)
	}
	names, subs := p.propertyList()
	for i, k := range names {
		errs = append(errs, validateDefaults(subs[i], path+".properties["+k+"]", insideMeta || p.XEmbeddedResource && metaField(k))...)
	}
	return errs
}

// wouldPrune reports whether pruning v with p drops anything: a member no
// property, additionalProperties or x-kubernetes-preserve-unknown-fields
// allows. An embedded resource keeps its apiVersion, kind and metadata.
func wouldPrune(v any, p *Props) bool {
	if p != nil && p.PreservesUnknown() {
		return wouldPruneKept(v, p)
	}
	switch x := v.(type) {
	case map[string]any:
		if p == nil {
			return len(x) > 0
		}
		for k, e := range x {
			if p.XEmbeddedResource && metaField(k) {
				continue
			}
			if sub, ok := p.property(k); ok {
				if wouldPrune(e, sub) {
					return true
				}
			} else if p.AdditionalProperties != nil {
				if wouldPrune(e, p.ValueSchema()) {
					return true
				}
			} else {
				return true
			}
		}
	case []any:
		var item *Props
		if p != nil {
			item = p.ItemSchema()
		}
		for _, e := range x {
			if wouldPrune(e, item) {
				return true
			}
		}
	}
	return false
}

// wouldPruneKept is wouldPrune under x-kubernetes-preserve-unknown-fields:
// unknown members stay, known ones are pruned by their schemas.
func wouldPruneKept(v any, p *Props) bool {
	if p == nil {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if p.XEmbeddedResource && metaField(k) {
				continue
			}
			if sub, ok := p.property(k); ok {
				if wouldPrune(e, sub) {
					return true
				}
			} else if p.AdditionalProperties != nil {
				if wouldPrune(e, p.ValueSchema()) {
					return true
				}
			}
		}
	case []any:
		for _, e := range x {
			if wouldPruneKept(e, p.ItemSchema()) {
				return true
			}
		}
	}
	return false
}
