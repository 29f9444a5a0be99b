package jsonschema

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"platd/server/apierr"
)

// This file holds the rules a CRD's schema must follow, in upstream's
// words and at upstream's paths: the OpenAPI subset CRDs accept, and the
// structural-schema rules that make pruning, defaulting and server-side
// apply well defined (every field typed, value validations in allOf,
// anyOf, oneOf and not only restricting what the schema declares, the
// x-kubernetes-* extensions only where they mean something, metadata at
// the root restricted to name and generateName).

// SchemaOptions select the rules that upstream relaxes on update when the
// stored CRD already breaks them.
type SchemaOptions struct {
	// StatusSubresource restricts the root to the keywords that survive
	// moving status validation into properties[status].
	StatusSubresource bool
	// RequireValidPropertyType refuses a type outside OpenAPI's six.
	RequireValidPropertyType bool
	// RequireAtomicSetType requires the items of a set list to be atomic.
	RequireAtomicSetType bool
	// RequireMapListKeysMapSetValidation requires the keys of a map list to
	// be required or defaulted and not nullable, and set and map items not
	// nullable.
	RequireMapListKeysMapSetValidation bool
	// Defaults, when set, checks every default against its schema; it is
	// called only for a structural schema, with the root and its path.
	Defaults func(root *Props, path string) apierr.FieldErrors
	// Rules, when set, compiles every x-kubernetes-validations rule of
	// the schema rooted at root (path is the root's). It is called only
	// when the schema broke no other rule: upstream compiles the rules of
	// every node whose subtree is otherwise valid, so where both kinds of
	// error occur it reports more than this.
	Rules func(root *Props, path string) apierr.FieldErrors
}

// openAPITypes are the types a schema node may have, sorted.
var openAPITypes = []string{"array", "boolean", "integer", "number", "object", "string"}

// validationReasons are the reasons an x-kubernetes-validations rule may
// give, sorted.
var validationReasons = []string{"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"}

// ValidateCRDSchema checks a CRD's openAPIV3Schema found at path ("spec.
// validation.openAPIV3Schema"), in upstream's order: the root's own
// restrictions, then the structural rules (and, when they hold, the
// defaults), then the OpenAPI subset node by node. CEL rules are not
// compiled here.
func ValidateCRDSchema(p *Props, path string, o SchemaOptions) apierr.FieldErrors {
	if p == nil {
		return nil
	}
	var errs apierr.FieldErrors
	if o.StatusSubresource {
		errs = append(errs, statusRootErrors(p, path)...)
	}
	if p.Nullable {
		errs = append(errs, apierr.Forbidden(path+".nullable", "nullable cannot be true at the root"))
	}
	// A schema that cannot be read as structural is not checked for the
	// structural rules; why it cannot is said only when nothing else is
	// wrong, as the OpenAPI rules below name the same keywords.
	initErr := notStructural(p)
	compile := false
	if initErr == nil {
		if se := structuralErrors(p, path); len(se) > 0 {
			errs = append(errs, se...)
		} else if o.Defaults == nil {
			compile = true
		} else if de := o.Defaults(p, path); len(de) > 0 {
			errs = append(errs, de...)
		} else {
			compile = true
		}
	}
	v := &nodeRules{allowDefaults: true}
	errs = append(errs, v.check(p, path, true, o)...)
	if len(errs) == 0 && compile && o.Rules != nil {
		errs = append(errs, o.Rules(p, path)...)
	}
	if len(errs) == 0 && initErr != nil {
		errs = append(errs, apierr.Invalid(path, "", initErr.Error()))
	}
	return errs
}

// Structural checks that p is a structural schema, as the
// NonStructuralSchema condition reports it: the errors sorted by their
// text.
func Structural(p *Props, path string) apierr.FieldErrors {
	if p == nil {
		return nil
	}
	if err := notStructural(p); err != nil {
		return apierr.FieldErrors{apierr.Invalid(path, "", err.Error())}
	}
	return structuralErrors(p, path)
}

// NotStructural returns why p cannot be read as a structural schema at
// all, nil when it can.
func NotStructural(p *Props) error { return notStructural(p) }

// rootFieldOrder lists the keywords of a schema node in upstream's field
// order, with whether the root may hold them when status is a
// subresource.
var rootFieldOrder = []struct {
	name    string
	allowed bool
	set     func(p *Props) bool
}{
	{"ID", false, func(p *Props) bool { return p.ID != "" }},
	{"Schema", false, func(p *Props) bool { return p.Schema != "" }},
	{"Ref", false, func(p *Props) bool { return p.Ref != nil }},
	{"Description", true, nil},
	{"Type", true, nil},
	{"Nullable", false, func(p *Props) bool { return p.Nullable }},
	{"Format", true, nil},
	{"Title", true, nil},
	{"Default", false, func(p *Props) bool { return p.Default != nil }},
	{"Enum", false, func(p *Props) bool { return p.Enum != nil }},
	{"MaxProperties", false, func(p *Props) bool { return p.MaxProperties != nil }},
	{"MinProperties", false, func(p *Props) bool { return p.MinProperties != nil }},
	{"AllOf", false, func(p *Props) bool { return p.AllOf != nil }},
	{"OneOf", false, func(p *Props) bool { return p.OneOf != nil }},
	{"AnyOf", false, func(p *Props) bool { return p.AnyOf != nil }},
	{"Not", false, func(p *Props) bool { return p.Not != nil }},
	{"AdditionalProperties", false, func(p *Props) bool { return p.AdditionalProperties != nil }},
	{"PatternProperties", false, func(p *Props) bool { return p.PatternProperties != nil }},
	{"Dependencies", false, func(p *Props) bool { return p.Dependencies != nil }},
	{"AdditionalItems", false, func(p *Props) bool { return p.AdditionalItems != nil }},
	{"Definitions", false, func(p *Props) bool { return p.Definitions != nil }},
	{"XEmbeddedResource", false, func(p *Props) bool { return p.XEmbeddedResource }},
	{"XIntOrString", false, func(p *Props) bool { return p.XIntOrString }},
	{"XListMapKeys", false, func(p *Props) bool { return p.XListMapKeys != nil }},
	{"XListType", false, func(p *Props) bool { return p.XListType != nil }},
	{"XMapType", false, func(p *Props) bool { return p.XMapType != nil }},
}

// rootAllowedWithStatus is upstream's list of the keywords the root may
// hold when status is a subresource, as its message prints it.
const rootAllowedWithStatus = "[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]"

// statusRootErrors is the first keyword the root may not hold with a
// status subresource, in upstream's field order.
func statusRootErrors(p *Props, path string) apierr.FieldErrors {
	for _, f := range rootFieldOrder {
		if f.name == "Type" {
			if p.Type != "" && p.Type != "object" {
				return apierr.FieldErrors{apierr.Invalid(path+".type", p.Type, `only "object" is allowed as the type at the root of the schema if the status subresource is enabled`)}
			}
			continue
		}
		if f.allowed || !f.set(p) {
			continue
		}
		// Upstream prints its internal struct here; the schema's JSON
		// stands in for it.
		raw, _ := json.Marshal(p)
		return apierr.FieldErrors{apierr.Invalid(path, string(raw), "only "+rootAllowedWithStatus+" fields are allowed at the root of the schema if the status subresource is enabled")}
	}
	return nil
}

// nodeRules carries what the OpenAPI rules of a node depend on from its
// ancestors.
type nodeRules struct {
	allowDefaults bool
	// forbidReason ends the refusal of a default where none may be.
	forbidReason string
	// insideMeta is set within the schema of an object's metadata, kind or
	// apiVersion.
	insideMeta bool
}

func (v *nodeRules) withForbiddenDefaults(reason string) *nodeRules {
	c := *v
	c.allowDefaults, c.forbidReason = false, reason
	return &c
}

func (v *nodeRules) withInsideMeta() *nodeRules {
	c := *v
	c.insideMeta = true
	return &c
}

// metaFields are the members of an object that the server owns.
var metaFields = []string{"metadata", "kind", "apiVersion"}

// own checks the keywords of the node itself that CRD schemas refuse.
func (v *nodeRules) own(p *Props, path string, o SchemaOptions) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if o.RequireValidPropertyType && p.Type != "" && !slices.Contains(openAPITypes, p.Type) {
		errs = append(errs, apierr.NotSupported(path+".type", p.Type, openAPITypes))
	}
	if p.Default != nil && !v.allowDefaults {
		detail := "must not be set"
		if v.forbidReason != "" {
			detail += " " + v.forbidReason
		}
		errs = append(errs, apierr.Forbidden(path+".default", detail))
	}
	if p.ID != "" {
		errs = append(errs, apierr.Forbidden(path+".id", "id is not supported"))
	}
	if p.AdditionalItems != nil {
		errs = append(errs, apierr.Forbidden(path+".additionalItems", "additionalItems is not supported"))
	}
	if len(p.PatternProperties) != 0 {
		errs = append(errs, apierr.Forbidden(path+".patternProperties", "patternProperties is not supported"))
	}
	if len(p.Definitions) != 0 {
		errs = append(errs, apierr.Forbidden(path+".definitions", "definitions is not supported"))
	}
	if p.Dependencies != nil {
		errs = append(errs, apierr.Forbidden(path+".dependencies", "dependencies is not supported"))
	}
	if p.Ref != nil {
		errs = append(errs, apierr.Forbidden(path+".$ref", "$ref is not supported"))
	}
	if p.Type == "null" {
		errs = append(errs, apierr.Forbidden(path+".type", "type cannot be set to null, use nullable as an alternative"))
	}
	if p.Items != nil && len(p.Items.JSONSchemas) != 0 {
		errs = append(errs, apierr.Forbidden(path+".items", "items must be a schema object and not an array"))
	}
	if v.insideMeta && p.XEmbeddedResource {
		errs = append(errs, apierr.Forbidden(path+".x-kubernetes-embedded-resource", "must not be used inside of resource meta"))
	}
	return errs
}

// check applies the OpenAPI rules to p and everything below it.
func (v *nodeRules) check(p *Props, path string, root bool, o SchemaOptions) apierr.FieldErrors {
	if p == nil {
		return nil
	}
	errs := v.own(p, path, o)
	if p.UniqueItems {
		errs = append(errs, apierr.Forbidden(path+".uniqueItems", "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
	}
	if ap := p.AdditionalProperties; ap != nil {
		if len(p.Properties) != 0 && (!ap.Allows || ap.Schema != nil) {
			errs = append(errs, apierr.Forbidden(path+".additionalProperties", "additionalProperties and properties are mutual exclusive"))
		}
		sub := v
		if v.insideMeta {
			sub = v.withForbiddenDefaults("inside additionalProperties applying to object metadata")
		}
		errs = append(errs, sub.check(ap.Schema, path+".additionalProperties", false, o)...)
	}
	for _, k := range sortedNames(p.Properties) {
		sub := v
		if (root || p.XEmbeddedResource) && slices.Contains(metaFields, k) {
			sub = sub.withInsideMeta()
			if root {
				sub = sub.withForbiddenDefaults("in top-level " + k)
			}
		}
		prop := p.Properties[k]
		errs = append(errs, sub.check(&prop, path+".properties["+k+"]", false, o)...)
	}
	errs = append(errs, v.check(p.Not, path+".not", false, o)...)
	for _, l := range []struct {
		name string
		list []Props
	}{{"allOf", p.AllOf}, {"oneOf", p.OneOf}, {"anyOf", p.AnyOf}} {
		for i := range l.list {
			errs = append(errs, v.check(&l.list[i], fmt.Sprintf("%s.%s[%d]", path, l.name, i), false, o)...)
		}
	}
	for _, k := range sortedNames(p.Definitions) {
		d := p.Definitions[k]
		errs = append(errs, v.check(&d, path+".definitions["+k+"]", false, o)...)
	}
	if p.Items != nil {
		errs = append(errs, v.check(p.Items.Schema, path+".items", false, o)...)
		for i := range p.Items.JSONSchemas {
			errs = append(errs, v.check(&p.Items.JSONSchemas[i], fmt.Sprintf("%s.items[%d]", path, i), false, o)...)
		}
	}
	for _, k := range sortedNames(p.Dependencies) {
		errs = append(errs, v.check(p.Dependencies[k].Schema, path+".dependencies["+k+"]", false, o)...)
	}
	errs = append(errs, extensionErrors(p, path, o)...)
	if o.RequireMapListKeysMapSetValidation {
		errs = append(errs, mapListKeysErrors(p, path)...)
	}
	return append(errs, validationRuleErrors(p, path)...)
}

// extensionErrors checks where the list and map extensions are set.
func extensionErrors(p *Props, path string, o SchemaOptions) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if p.XPreserveUnknownFields != nil && !*p.XPreserveUnknownFields {
		errs = append(errs, apierr.Invalid(path+".x-kubernetes-preserve-unknown-fields", false, "must be true or undefined"))
	}
	if p.XMapType != nil && p.Type != "object" {
		errs = append(errs, typeMust(p, path, "must be object if x-kubernetes-map-type is specified"))
	}
	if p.XMapType != nil && *p.XMapType != "atomic" && *p.XMapType != "granular" {
		errs = append(errs, apierr.NotSupported(path+".x-kubernetes-map-type", *p.XMapType, []string{"atomic", "granular"}))
	}
	items := p.ItemSchema()
	switch {
	case p.XListType != nil && p.Type != "array":
		errs = append(errs, typeMust(p, path, "must be array if x-kubernetes-list-type is specified"))
	case o.RequireAtomicSetType && p.ListType() == "set" && items != nil:
		const msg = "must be atomic as item of a list with x-kubernetes-list-type=set"
		switch items.Type {
		case "array":
			if items.ListType() != "atomic" {
				errs = append(errs, apierr.Invalid(path+".items.x-kubernetes-list-type", items.XListType, msg))
			}
		case "object":
			if items.MapType() != "atomic" {
				// Upstream reports the items' list type here.
				errs = append(errs, apierr.Invalid(path+".items.x-kubernetes-map-type", items.XListType, msg))
			}
		}
	}
	if p.XListType != nil && !slices.Contains([]string{"atomic", "set", "map"}, *p.XListType) {
		errs = append(errs, apierr.NotSupported(path+".x-kubernetes-list-type", *p.XListType, []string{"atomic", "set", "map"}))
	}
	if len(p.XListMapKeys) > 0 {
		const msg = "must be map if x-kubernetes-list-map-keys is non-empty"
		if p.XListType == nil {
			errs = append(errs, apierr.Required(path+".x-kubernetes-list-type", msg))
		} else if *p.XListType != "map" {
			errs = append(errs, apierr.Invalid(path+".x-kubernetes-list-type", *p.XListType, msg))
		}
	}
	if p.XListType == nil || *p.XListType != "map" {
		return errs
	}
	if len(p.XListMapKeys) == 0 {
		errs = append(errs, apierr.Required(path+".x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map"))
	}
	if p.Items == nil {
		return append(errs, apierr.Required(path+".items", "must have a schema if x-kubernetes-list-type is map"))
	}
	if items == nil {
		raw, _ := json.Marshal(p.Items)
		return append(errs, apierr.Invalid(path+".items", string(raw), "must only have a single schema if x-kubernetes-list-type is map"))
	}
	if items.Type != "object" {
		return append(errs, apierr.Invalid(path+".items.type", items.Type, "must be object if parent array's x-kubernetes-list-type is map"))
	}
	seen := map[string]bool{}
	for _, k := range p.XListMapKeys {
		if s, ok := items.Properties[k]; !ok {
			errs = append(errs, apierr.Invalid(path+".x-kubernetes-list-map-keys", p.XListMapKeys, "entries must all be names of item properties"))
		} else if s.Type == "array" || s.Type == "object" {
			// Upstream reports the items' type here.
			errs = append(errs, apierr.Invalid(path+".items.properties["+k+"].type", items.Type, "must be a scalar type if parent array's x-kubernetes-list-type is map"))
		}
		if seen[k] {
			errs = append(errs, apierr.Invalid(path+".x-kubernetes-list-map-keys", p.XListMapKeys, "must not contain duplicate entries"))
		}
		seen[k] = true
	}
	return errs
}

// typeMust is the error of a node whose type an extension requires.
func typeMust(p *Props, path, msg string) *apierr.FieldError {
	if p.Type == "" {
		return apierr.Required(path+".type", msg)
	}
	return apierr.Invalid(path+".type", p.Type, msg)
}

// mapListKeysErrors: the items of a set or map list are never null, and
// a map list's keys are always present.
func mapListKeysErrors(p *Props, path string) apierr.FieldErrors {
	items := p.ItemSchema()
	if items == nil || p.XListType == nil || (*p.XListType != "set" && *p.XListType != "map") {
		return nil
	}
	var errs apierr.FieldErrors
	if items.Nullable {
		errs = append(errs, apierr.Forbidden(path+".items.nullable", "cannot be nullable when x-kubernetes-list-type is "+*p.XListType))
	}
	if *p.XListType != "map" {
		return errs
	}
	for _, k := range p.XListMapKeys {
		key, ok := items.Properties[k]
		if !ok {
			continue
		}
		if !slices.Contains(items.Required, k) && key.Default == nil {
			errs = append(errs, apierr.Required(path+".items.properties["+k+"].default", "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"))
		}
		if key.Nullable {
			errs = append(errs, apierr.Forbidden(path+".items.properties["+k+"].nullable", "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))
		}
	}
	return errs
}

var newlines = lazyRegexp(`[\n\r]+`)

// validationRuleErrors checks the x-kubernetes-validations entries
// without compiling them: what must be set, and where line breaks may not
// be, and that fieldPath names a field. Compiling the rules is the CEL
// package's.
func validationRuleErrors(p *Props, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for i, r := range p.XValidations {
		rp := fmt.Sprintf("%s.x-kubernetes-validations[%d]", path, i)
		rule, msg := strings.TrimSpace(r.Rule), strings.TrimSpace(r.Message)
		switch {
		case rule == "":
			errs = append(errs, apierr.Required(rp+".rule", "rule is not specified"))
		case r.Message != "" && msg == "":
			errs = append(errs, apierr.Invalid(rp+".message", r.Message, "message must be non-empty if specified"))
		case newlines().MatchString(msg):
			errs = append(errs, apierr.Invalid(rp+".message", r.Message, "message must not contain line breaks"))
		case newlines().MatchString(rule) && msg == "":
			errs = append(errs, apierr.Required(rp+".message", "message must be specified if rule contains line breaks"))
		}
		if r.MessageExpression != "" && strings.TrimSpace(r.MessageExpression) == "" {
			errs = append(errs, apierr.Required(rp+".messageExpression", "messageExpression must be non-empty if specified"))
		}
		if r.Reason != nil && !slices.Contains(validationReasons, *r.Reason) {
			errs = append(errs, apierr.NotSupported(rp+".reason", *r.Reason, validationReasons))
		}
		if r.FieldPath != "" && strings.TrimSpace(r.FieldPath) == "" {
			errs = append(errs, apierr.Invalid(rp+".fieldPath", r.FieldPath, "fieldPath must be non-empty if specified"))
		}
		if newlines().MatchString(r.FieldPath) {
			errs = append(errs, apierr.Invalid(rp+".fieldPath", r.FieldPath, "fieldPath must not contain line breaks"))
		}
		// The path is resolved from the node the rule is on; a node that
		// is not structural is not judged here.
		if r.FieldPath != "" && notStructural(p) == nil {
			if _, _, err := ValidFieldPath(r.FieldPath, p, true); err != nil {
				errs = append(errs, apierr.Invalid(rp+".fieldPath", r.FieldPath, "fieldPath must be a valid path"))
			}
		}
	}
	return errs
}

// notStructural returns why p cannot be read as a structural schema at
// all: a keyword structural schemas have no place for, anywhere in the
// tree that the structural form keeps.
func notStructural(p *Props) error {
	if p == nil {
		return nil
	}
	switch {
	case p.ID != "":
		return fmt.Errorf("OpenAPIV3Schema 'id' is not supported")
	case p.Schema != "":
		return fmt.Errorf("OpenAPIV3Schema 'schema' is not supported")
	case p.Ref != nil && *p.Ref != "":
		return fmt.Errorf("OpenAPIV3Schema '$ref' is not supported")
	case len(p.PatternProperties) > 0:
		return fmt.Errorf("OpenAPIV3Schema 'patternProperties' is not supported")
	case len(p.Dependencies) > 0:
		return fmt.Errorf("OpenAPIV3Schema 'dependencies' is not supported")
	case p.AdditionalItems != nil:
		return fmt.Errorf("OpenAPIV3Schema 'additionalItems' is not supported")
	case len(p.Definitions) > 0:
		return fmt.Errorf("OpenAPIV3Schema 'definitions' is not supported")
	}
	if err := notStructural(p.Not); err != nil {
		return err
	}
	for _, l := range [][]Props{p.AllOf, p.AnyOf, p.OneOf} {
		for i := range l {
			if err := notStructural(&l[i]); err != nil {
				return err
			}
		}
	}
	if err := notStructural(p.ValueSchema()); err != nil {
		return err
	}
	if p.XPreserveUnknownFields != nil && !*p.XPreserveUnknownFields {
		return fmt.Errorf("internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined")
	}
	if p.Items != nil {
		if len(p.Items.JSONSchemas) > 0 {
			return fmt.Errorf("OpenAPIV3Schema 'items' must be a schema, but is an array")
		}
		if err := notStructural(p.Items.Schema); err != nil {
			return err
		}
	}
	for _, k := range sortedNames(p.Properties) {
		prop := p.Properties[k]
		if err := notStructural(&prop); err != nil {
			return err
		}
	}
	return nil
}

// level is where a node sits: the root, an array's items, or an object's
// member (properties or additionalProperties).
type level int

const (
	rootLevel level = iota
	itemLevel
	fieldLevel
)

// structuralErrors checks the structural rules of a schema notStructural
// accepts, sorted by their text as upstream sorts them.
func structuralErrors(p *Props, path string) apierr.FieldErrors {
	errs := invariants(p, rootLevel, path)
	errs = append(errs, completeness(p, p, path, path)...)
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errs
}

// invariants checks one node of the structural part of the schema and the
// nodes below it.
func invariants(s *Props, lvl level, path string) apierr.FieldErrors {
	if s == nil {
		return nil
	}
	var errs apierr.FieldErrors
	if s.Type == "array" && s.ItemSchema() == nil {
		errs = append(errs, apierr.Required(path+".items", "must be specified"))
	}
	errs = append(errs, invariants(s.ItemSchema(), itemLevel, path+".items")...)
	for _, k := range sortedNames(s.Properties) {
		prop := s.Properties[k]
		errs = append(errs, invariants(&prop, fieldLevel, path+".properties["+k+"]")...)
	}
	if s.AdditionalProperties != nil {
		if lvl == rootLevel {
			errs = append(errs, apierr.Forbidden(path+".additionalProperties", "must not be used at the root"))
		}
		errs = append(errs, invariants(s.ValueSchema(), fieldLevel, path+".additionalProperties")...)
	}
	if s.XIntOrString && s.PreservesUnknown() {
		errs = append(errs, apierr.Invalid(path+".x-kubernetes-preserve-unknown-fields", true, "must be false if x-kubernetes-int-or-string is true"))
	}
	if s.XIntOrString && s.XEmbeddedResource {
		errs = append(errs, apierr.Invalid(path+".x-kubernetes-embedded-resource", true, "must be false if x-kubernetes-int-or-string is true"))
	}
	errs = append(errs, valueValidation(s, intOrStringAnyOf(s.AnyOf), len(s.AllOf) > 0 && intOrStringAnyOf(s.AllOf[0].AnyOf), path)...)

	checkMetadata := lvl == rootLevel || s.XEmbeddedResource
	switch {
	case s.XEmbeddedResource && s.Type != "object":
		errs = append(errs, typeMust(s, path, "must be object if x-kubernetes-embedded-resource is true"))
	case s.Type == "" && !s.XIntOrString && !s.PreservesUnknown():
		switch lvl {
		case rootLevel:
			errs = append(errs, apierr.Required(path+".type", "must not be empty at the root"))
		case itemLevel:
			errs = append(errs, apierr.Required(path+".type", "must not be empty for specified array items"))
		default:
			errs = append(errs, apierr.Required(path+".type", "must not be empty for specified object fields"))
		}
	}
	if s.XEmbeddedResource && s.AdditionalProperties != nil {
		errs = append(errs, apierr.Forbidden(path+".additionalProperties", "must not be used if x-kubernetes-embedded-resource is set"))
	}
	if lvl == rootLevel && s.Type != "" && s.Type != "object" {
		errs = append(errs, apierr.Invalid(path+".type", s.Type, "must be object at the root"))
	}
	for _, k := range []string{"kind", "apiVersion"} {
		if f, ok := s.Properties[k]; ok && checkMetadata && f.Type != "string" {
			errs = append(errs, apierr.Invalid(path+".properties["+k+"].type", f.Type, "must be string"))
		}
	}
	if m, ok := s.Properties["metadata"]; ok {
		mp := path + ".properties[metadata]"
		if checkMetadata && m.Type != "object" {
			errs = append(errs, apierr.Invalid(mp+".type", m.Type, "must be object"))
		}
		if lvl == rootLevel && restrictsMoreThanNames(&m) {
			errs = append(errs, apierr.Forbidden(mp, "must not specify anything other than name and generateName, but metadata is implicitly specified"))
		}
	}
	if s.XEmbeddedResource && !s.PreservesUnknown() && len(s.Properties) == 0 {
		errs = append(errs, apierr.Required(path+".properties", "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"))
	}
	return errs
}

// restrictsMoreThanNames reports whether the root's metadata schema says
// anything beyond its type, its default and the schemas of name and
// generateName: the server owns the rest of metadata.
func restrictsMoreThanNames(m *Props) bool {
	props := len(m.Properties)
	_, name := m.Properties["name"]
	_, gen := m.Properties["generateName"]
	if name {
		props--
	}
	if gen {
		props--
	}
	if props > 0 {
		return true
	}
	return m.Description != "" || m.Title != "" || m.Nullable || m.AdditionalProperties != nil ||
		m.PreservesUnknown() || m.XEmbeddedResource || m.XIntOrString || m.XListMapKeys != nil ||
		m.XListType != nil || m.XMapType != nil || m.XValidations != nil || m.ItemSchema() != nil ||
		hasValueValidation(m)
}

// hasValueValidation reports whether a node restricts values beyond its
// structure.
func hasValueValidation(p *Props) bool {
	return p.Format != "" || p.Maximum != nil || p.ExclusiveMaximum || p.Minimum != nil || p.ExclusiveMinimum ||
		p.MaxLength != nil || p.MinLength != nil || p.Pattern != "" || p.MaxItems != nil || p.MinItems != nil ||
		p.UniqueItems || p.MultipleOf != nil || len(p.Enum) > 0 || p.MaxProperties != nil || p.MinProperties != nil ||
		p.Required != nil || len(p.AllOf) > 0 || len(p.OneOf) > 0 || len(p.AnyOf) > 0 || p.Not != nil
}

// intOrStringAnyOf reports whether l is exactly anyOf [integer, string],
// the form int-or-string fields are declared with.
func intOrStringAnyOf(l []Props) bool {
	return len(l) == 2 && sameProps(l[0], Props{Type: "integer"}) && sameProps(l[1], Props{Type: "string"})
}

// valueValidation checks the junctors of a node (anyOf, allOf, oneOf,
// not) and its pattern.
func valueValidation(p *Props, skipAnyOf, skipFirstAllOfAnyOf bool, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if !skipAnyOf {
		for i := range p.AnyOf {
			errs = append(errs, nested(&p.AnyOf[i], false, fmt.Sprintf("%s.anyOf[%d]", path, i))...)
		}
	}
	for i := range p.AllOf {
		errs = append(errs, nested(&p.AllOf[i], skipFirstAllOfAnyOf && i == 0, fmt.Sprintf("%s.allOf[%d]", path, i))...)
	}
	for i := range p.OneOf {
		errs = append(errs, nested(&p.OneOf[i], false, fmt.Sprintf("%s.oneOf[%d]", path, i))...)
	}
	errs = append(errs, nested(p.Not, false, path+".not")...)
	if p.Pattern != "" {
		if _, err := regexp.Compile(p.Pattern); err != nil {
			errs = append(errs, apierr.Invalid(path+".pattern", p.Pattern, fmt.Sprintf("must be a valid regular expression, but isn't: %v", err)))
		}
	}
	return errs
}

// nested checks a schema inside a junctor: it may only restrict values,
// never declare structure, types or extensions.
func nested(v *Props, skipAnyOf bool, path string) apierr.FieldErrors {
	if v == nil {
		return nil
	}
	errs := valueValidation(v, skipAnyOf, false, path)
	errs = append(errs, nested(v.ItemSchema(), false, path+".items")...)
	for _, k := range sortedNames(v.Properties) {
		prop := v.Properties[k]
		errs = append(errs, nested(&prop, false, path+".properties["+k+"]")...)
	}
	forbid := func(member, msg string) { errs = append(errs, apierr.Forbidden(path+"."+member, msg)) }
	if v.Type != "" {
		forbid("type", "must be empty to be structural")
	}
	// additionalProperties: false says nothing the structure does not.
	if ap := v.AdditionalProperties; ap != nil && (ap.Allows || ap.Schema != nil) {
		forbid("additionalProperties", "must be undefined to be structural")
	}
	if v.Default != nil {
		forbid("default", "must be undefined to be structural")
	}
	if v.Title != "" {
		forbid("title", "must be empty to be structural")
	}
	if v.Description != "" {
		forbid("description", "must be empty to be structural")
	}
	if v.Nullable {
		forbid("nullable", "must be false to be structural")
	}
	if v.PreservesUnknown() {
		forbid("x-kubernetes-preserve-unknown-fields", "must be false to be structural")
	}
	if v.XEmbeddedResource {
		forbid("x-kubernetes-embedded-resource", "must be false to be structural")
	}
	if v.XIntOrString {
		forbid("x-kubernetes-int-or-string", "must be false to be structural")
	}
	if len(v.XListMapKeys) > 0 {
		forbid("x-kubernetes-list-map-keys", "must be empty to be structural")
	}
	if v.XListType != nil {
		forbid("x-kubernetes-list-type", "must be undefined to be structural")
	}
	if v.XMapType != nil {
		forbid("x-kubernetes-map-type", "must be undefined to be structural")
	}
	if len(v.XValidations) > 0 {
		forbid("x-kubernetes-validations", "must be empty to be structural")
	}
	if _, ok := v.Properties["metadata"]; ok {
		forbid("properties[metadata]", "must not be specified in a nested context")
	}
	return errs
}

// completeness checks that what the root's junctors speak of (items,
// properties) is declared in the structural schema s as well. Upstream
// checks the root's junctors only.
func completeness(v, s *Props, sPath, vPath string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	errs = append(errs, nestedCompleteness(v.Not, s, sPath, vPath+".not")...)
	for _, l := range []struct {
		name string
		list []Props
	}{{"allOf", v.AllOf}, {"anyOf", v.AnyOf}, {"oneOf", v.OneOf}} {
		for i := range l.list {
			errs = append(errs, nestedCompleteness(&l.list[i], s, sPath, fmt.Sprintf("%s.%s[%d]", vPath, l.name, i))...)
		}
	}
	return errs
}

func nestedCompleteness(v, s *Props, sPath, vPath string) apierr.FieldErrors {
	if v == nil {
		return nil
	}
	if s == nil {
		return apierr.FieldErrors{apierr.Required(sPath, "because it is defined in "+vPath)}
	}
	errs := completeness(v, s, sPath, vPath)
	if vi := v.ItemSchema(); vi != nil {
		errs = append(errs, nestedCompleteness(vi, s.ItemSchema(), sPath+".items", vPath+".items")...)
	}
	for _, k := range sortedNames(v.Properties) {
		vf := v.Properties[k]
		sf, ok := s.Properties[k]
		if !ok {
			errs = append(errs, apierr.Required(sPath+".properties["+k+"]", "because it is defined in "+vPath+".properties["+k+"]"))
			continue
		}
		errs = append(errs, nestedCompleteness(&vf, &sf, sPath+".properties["+k+"]", vPath+".properties["+k+"]")...)
	}
	return errs
}

// sortedNames are the keys of m in order, for a stable error order.
func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
