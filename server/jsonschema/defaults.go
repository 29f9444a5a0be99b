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
// placed in an otherwise empty resource whose metadata must then be valid
// ("must result in valid metadata: ..."), then checked against its own
// schema. Defaults under additionalProperties are not followed (the
// structural checks forbid them). The root is treated as an embedded
// resource, as upstream.
func ValidateDefaults(p *Props, path string) apierr.FieldErrors {
	return defaultsChecker{pruned: true}.check(p, path)
}

// ValidateDefaultsUnpruned is ValidateDefaults without the pruning check:
// upstream drops that check on a CRD update when the old CRD already had
// a default with unknown fields (see HasUnprunedDefaults).
func ValidateDefaultsUnpruned(p *Props, path string) apierr.FieldErrors {
	return defaultsChecker{}.check(p, path)
}

// defaultsChecker says which checks defaults get.
type defaultsChecker struct {
	pruned bool // defaults must have no unknown fields
}

func (d defaultsChecker) check(p *Props, path string) apierr.FieldErrors {
	if p == nil {
		return nil
	}
	root := *p
	root.XEmbeddedResource = true
	return d.validateDefaults(&root, path, nil)
}

// HasUnprunedDefaults reports whether a default of the schema holds
// something pruning would drop: a member its schema does not allow, or
// in an embedded resource's metadata a member the object metadata does
// not have or of the wrong type. Upstream stops requiring pruned defaults
// on updates of a CRD whose stored schemas have one.
func HasUnprunedDefaults(p *Props) bool {
	if p == nil {
		return false
	}
	root := *p
	root.XEmbeddedResource = true
	return hasUnprunedDefaults(&root, nil)
}

func hasUnprunedDefaults(p *Props, meta *metaScope) bool {
	if p.XEmbeddedResource {
		meta = nil
	}
	if p.Default != nil {
		if v, err := p.Default.Value(); err == nil && v != nil {
			if meta != nil {
				if m, ok := meta.surround(v)["metadata"]; ok && metaCoercionChanges(m) {
					return true
				}
			} else if wouldPrune(v, p) || embeddedMetaChanges(p, v) {
				return true
			}
		}
	}
	if vs := p.ValueSchema(); vs != nil && hasUnprunedDefaults(vs, meta.then(metaStep{key: "*"})) {
		return true
	}
	if item := p.ItemSchema(); item != nil && hasUnprunedDefaults(item, meta.then(metaStep{item: true})) {
		return true
	}
	names, subs := p.propertyList()
	for i, k := range names {
		sub := meta.then(metaStep{key: k})
		if p.XEmbeddedResource && metaField(k) {
			sub = &metaScope{root: p, steps: []metaStep{{key: k}}}
		}
		if hasUnprunedDefaults(subs[i], sub) {
			return true
		}
	}
	return false
}

// embeddedMetaChanges reports whether an embedded resource in v changes
// when its type and metadata are decoded, dropping what does not fit.
func embeddedMetaChanges(p *Props, v any) bool {
	if p == nil {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		if p.XEmbeddedResource {
			if m, ok := x["metadata"]; ok && metaCoercionChanges(m) {
				return true
			}
			for _, k := range []string{"apiVersion", "kind"} {
				if v, ok := x[k]; ok {
					if _, isString := v.(string); !isString {
						return true
					}
				}
			}
		}
		for k, e := range x {
			if sub, ok := p.property(k); ok {
				if embeddedMetaChanges(sub, e) {
					return true
				}
			} else if embeddedMetaChanges(p.ValueSchema(), e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if embeddedMetaChanges(p.ItemSchema(), e) {
				return true
			}
		}
	}
	return false
}

// metaCoercionChanges reports whether decoding m into the object metadata
// type, dropping what does not fit, changes it: an unknown member, a
// member of the wrong type, a null creation time.
func metaCoercionChanges(m any) bool {
	mm, ok := m.(map[string]any)
	if !ok {
		return m != nil
	}
	for k, v := range mm {
		t, known := metaFieldTypes[k]
		if !known || memberDecodeError(v, t, "ObjectMeta", k) != "" || k == "creationTimestamp" && v == nil {
			return true
		}
		var fields map[string]string
		switch t {
		case goOwnerRefs:
			fields = ownerRefFieldTypes
		case goManagedList:
			fields = managedFieldTypes
		default:
			continue
		}
		l, _ := v.([]any)
		for _, e := range l {
			em, _ := e.(map[string]any)
			for ek := range em {
				if _, ok := fields[ek]; !ok {
					return true
				}
			}
		}
	}
	return false
}

// metaFields are the members an embedded resource keeps whatever its
// schema says.
func metaField(k string) bool { return k == "apiVersion" || k == "kind" || k == "metadata" }

// metaScope is where a default inside an embedded resource's apiVersion,
// kind or metadata sits: the resource's schema and the steps from it to
// the default.
type metaScope struct {
	root  *Props
	steps []metaStep
}

// metaStep is a member name, or an item of a list.
type metaStep struct {
	key  string
	item bool
}

func (m *metaScope) then(s metaStep) *metaScope {
	if m == nil {
		return nil
	}
	return &metaScope{root: m.root, steps: append(append([]metaStep(nil), m.steps...), s)}
}

// surround places v where the default sits, in a resource of upstream's
// placeholder type.
func (m *metaScope) surround(v any) map[string]any {
	x := v
	for i := len(m.steps) - 1; i >= 0; i-- {
		if m.steps[i].item {
			x = []any{x}
		} else {
			x = map[string]any{m.steps[i].key: x}
		}
	}
	obj, _ := x.(map[string]any)
	if obj == nil {
		obj = map[string]any{}
	}
	if _, ok := obj["kind"]; !ok {
		obj["kind"] = "Validation"
	}
	if _, ok := obj["apiVersion"]; !ok {
		obj["apiVersion"] = "validation/v1"
	}
	return obj
}

// validateDefaults walks properties and items; meta is set under an
// embedded resource's apiVersion, kind or metadata.
func (d defaultsChecker) validateDefaults(p *Props, path string, meta *metaScope) apierr.FieldErrors {
	var scope *Props
	if p.XEmbeddedResource {
		meta, scope = nil, p
	}
	var errs apierr.FieldErrors
	if p.Default != nil {
		v, err := p.Default.Value()
		dpath := path + ".default"
		switch {
		case err != nil:
			errs = append(errs, apierr.Invalid(dpath, string(p.Default.Raw), "must be valid JSON"))
		case v == nil:
		case meta != nil:
			obj := meta.surround(v)
			if err := coerceError(meta.root, "", obj); err != nil {
				errs = append(errs, apierr.Invalid(dpath, v, "must result in valid metadata: "+err.Error()))
			} else if e := validateEmbedded(meta.root, "", obj); len(e) > 0 {
				errs = append(errs, apierr.Invalid(dpath, v, "must result in valid metadata: "+e.Error()))
			} else {
				errs = append(errs, fieldErrors(dpath, walker{asWritten: true}.validateValue(p, "", v, nil).errs)...)
			}
		default:
			if d.pruned && wouldPrune(v, p) {
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
		errs = append(errs, d.validateDefaults(item, path+".items", meta.then(metaStep{item: true}))...)
	}
	names, subs := p.propertyList()
	for i, k := range names {
		sub := meta.then(metaStep{key: k})
		if scope != nil && metaField(k) {
			sub = &metaScope{root: scope, steps: []metaStep{{key: k}}}
		}
		errs = append(errs, d.validateDefaults(subs[i], path+".properties["+k+"]", sub)...)
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
