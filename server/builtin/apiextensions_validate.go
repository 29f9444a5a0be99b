package builtin

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"platd/config"
	"platd/server/apierr"
	"platd/server/cel"
	"platd/server/jsonpath"
	"platd/server/jsonschema"
	"platd/server/registry"
	"platd/server/schema"
	"platd/server/validation"
)

// Upstream validates a CRD in its internal form, where a version's
// schema, subresources, printer columns and selectable fields move to the
// spec when every version has the same value (so a one-version CRD's
// schema errors read "spec.validation.openAPIV3Schema..."), and the
// conversion webhook's members sit on the conversion itself. crdSpec is
// that view of a v1 spec; its error paths are upstream's.
type crdSpec struct {
	spec     map[string]any
	versions []map[string]any
	// top holds the members that moved to the spec, by v1 version member
	// name; a member in top is absent from every version.
	top map[string]any
	// parsed are the versions' schemas that parse, once anySchema read
	// them.
	parsed []*jsonschema.Props
}

// versionSchema is the schema of a v1 CRD version in the catalog d was
// registered with, nil before registration.
func versionSchema(d *registry.Descriptor) *schema.Schema {
	if d.Schema == nil {
		return nil
	}
	f := d.Schema.Field("spec")
	if f == nil {
		return nil
	}
	if f = f.Schema.Field("versions"); f == nil {
		return nil
	}
	return f.Schema.Elem
}

// perVersionMembers are the version members upstream moves to the spec
// when they are the same in every version (there named subresources,
// validation, additionalPrinterColumns and selectableFields).
var perVersionMembers = []string{"subresources", "schema", "additionalPrinterColumns", "selectableFields"}

// newCRDSpec builds the view of obj's spec; vs is the schema of a
// version, which decides when two values are the same (nil compares them
// as plain JSON).
func newCRDSpec(obj registry.Object, vs *schema.Schema) *crdSpec {
	c := &crdSpec{spec: mapAt(obj, "spec"), top: map[string]any{}}
	c.versions = mapsOf(valueAt(obj, "spec", "versions"))
	if len(c.versions) == 0 {
		return c
	}
	for _, m := range perVersionMembers {
		same := true
		for _, v := range c.versions[1:] {
			if !sameMember(vs, v, c.versions[0], m) {
				same = false
				break
			}
		}
		if same {
			c.top[m] = c.versions[0][m]
		}
	}
	return c
}

// member returns a version's own value of a per-version member: nil when
// it moved to the spec.
func (c *crdSpec) member(v map[string]any, name string) any {
	if _, moved := c.top[name]; moved {
		return nil
	}
	return v[name]
}

// crdOptions are the rules upstream relaxes on update when the stored CRD
// already breaks them, so that a stored object stays writable.
type crdOptions struct {
	requireRecognizedConversionReviewVersion bool
	requireImmutableNames                    bool
	requireOpenAPISchema                     bool
	// allowInvalidCABundle skips the conversion webhook's CA bundle: on
	// create, before the CRD is established, and while the stored one is
	// invalid too.
	allowInvalidCABundle bool
	schema               jsonschema.SchemaOptions
}

func createOptions() crdOptions {
	o := crdOptions{
		requireRecognizedConversionReviewVersion: true,
		requireOpenAPISchema:                     true,
		allowInvalidCABundle:                     true,
		schema: jsonschema.SchemaOptions{
			RequireValidPropertyType: true, RequireAtomicSetType: true, RequireMapListKeysMapSetValidation: true,
		},
	}
	schemaChecks(&o.schema)
	return o
}

// schemaChecks sets the checks of a CRD schema that other packages own:
// defaults against their schema, and the compilation of validation rules
// with their cost limits.
func schemaChecks(o *jsonschema.SchemaOptions) {
	o.Defaults = jsonschema.ValidateDefaults
	o.Rules = func(root *jsonschema.Props, path string) apierr.FieldErrors {
		_, errs := cel.Compile(root, path)
		return errs
	}
}

func updateOptions(old registry.Object, vs *schema.Schema) crdOptions {
	oc := newCRDSpec(old, vs)
	o := crdOptions{
		requireRecognizedConversionReviewVersion: recognizedReviewVersionOrNone(listAt(old, "spec", "conversion", "webhook", "conversionReviewVersions")),
		requireImmutableNames:                    crdEstablished(old),
		requireOpenAPISchema:                     oc.allVersionsHaveSchema(),
	}
	if !o.requireImmutableNames {
		o.allowInvalidCABundle = true
	} else if bundle := str(old, "spec", "conversion", "webhook", "clientConfig", "caBundle"); bundle != "" {
		o.allowInvalidCABundle = caBundleProblem(decodeBytes(bundle)) != ""
	}
	o.schema.RequireValidPropertyType = !oc.anySchema(jsonschema.HasInvalidType)
	o.schema.RequireAtomicSetType = !oc.anySchema(jsonschema.HasNonAtomicSetItems)
	o.schema.RequireMapListKeysMapSetValidation = !oc.anySchema(jsonschema.HasInvalidMapListKeys)
	schemaChecks(&o.schema)
	return o
}

// crdEstablished reports whether a CRD's Established condition is True.
func crdEstablished(obj registry.Object) bool {
	for _, c := range mapsOf(valueAt(obj, "status", "conditions")) {
		if str(c, "type") == "Established" {
			return str(c, "status") == "True"
		}
	}
	return false
}

// openAPISchemaOf returns the openAPIV3Schema of a schema member, nil
// when there is none.
func openAPISchemaOf(v any) any {
	m, _ := v.(map[string]any)
	return m["openAPIV3Schema"]
}

func (c *crdSpec) allVersionsHaveSchema() bool {
	if openAPISchemaOf(c.top["schema"]) != nil {
		return true
	}
	for _, v := range c.versions {
		if openAPISchemaOf(v["schema"]) == nil {
			return false
		}
	}
	return true
}

// anySchema reports whether any schema of the CRD satisfies pred. The
// schemas are parsed once, on first use.
func (c *crdSpec) anySchema(pred func(*jsonschema.Props) bool) bool {
	if c.parsed == nil {
		c.parsed = []*jsonschema.Props{}
		for _, v := range c.versions {
			if s := openAPISchemaOf(v["schema"]); s != nil {
				if p, err := jsonschema.Parse(s); err == nil {
					c.parsed = append(c.parsed, p)
				}
			}
		}
	}
	return slices.ContainsFunc(c.parsed, pred)
}

// preserveUnknownFields is spec.preserveUnknownFields, false when absent.
func (c *crdSpec) preserveUnknownFields() bool { return boolOf(c.spec["preserveUnknownFields"]) }

func validateCRDWith(b config.Brand, d *registry.Descriptor) func(obj registry.Object) apierr.FieldErrors {
	return func(obj registry.Object) apierr.FieldErrors {
		errs := validateCRDName(obj)
		c := newCRDSpec(obj, versionSchema(d))
		errs = append(errs, c.validate(createOptions())...)
		errs = append(errs, validateCRDStatus(obj)...)
		errs = append(errs, validateStoredVersions(obj)...)
		errs = append(errs, validateAPIApproval(b, obj, nil)...)
		return append(errs, validatePreserveUnknownFields(obj, nil)...)
	}
}

func validateCRDUpdateWith(b config.Brand, d *registry.Descriptor) func(obj, old registry.Object) apierr.FieldErrors {
	return func(obj, old registry.Object) apierr.FieldErrors {
		vs := versionSchema(d)
		o := updateOptions(old, vs)
		c := newCRDSpec(obj, vs)
		errs := c.validate(o)
		if o.requireImmutableNames {
			errs = append(errs, immutableString(obj, old, "spec.scope", "spec", "scope")...)
			errs = append(errs, immutableString(obj, old, "spec.names.kind", "spec", "names", "kind")...)
		}
		errs = append(errs, immutableString(obj, old, "spec.group", "spec", "group")...)
		errs = append(errs, immutableString(obj, old, "spec.names.plural", "spec", "names", "plural")...)
		errs = append(errs, validateCRDStatus(obj)...)
		errs = append(errs, validateStoredVersions(obj)...)
		errs = append(errs, validateAPIApproval(b, obj, old)...)
		return append(errs, validatePreserveUnknownFields(obj, old)...)
	}
}

func immutableString(obj, old registry.Object, p string, path ...string) apierr.FieldErrors {
	if nv := str(obj, path...); nv != str(old, path...) {
		return apierr.FieldErrors{apierr.Invalid(p, nv, msgImmutable)}
	}
	return nil
}

// validateCRDStatusUpdate checks a write of the status subresource: only
// the accepted names (metadata is checked by every write).
func validateCRDStatusUpdate(obj, _ registry.Object) apierr.FieldErrors {
	return validateCRDStatus(obj)
}

func validateCRDStatus(obj registry.Object) apierr.FieldErrors {
	return validateCRDNames(mapAt(obj, "status", "acceptedNames"), "status.acceptedNames")
}

// validateCRDName checks that the name is <plural>.<group>, beside the
// DNS subdomain rule every write checks.
func validateCRDName(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	want := str(obj, "spec", "names", "plural") + "." + str(obj, "spec", "group")
	const msg = `must be spec.names.plural+"."+spec.group`
	if gen := str(obj, "metadata", "generateName"); gen != "" && gen != want {
		errs = append(errs, apierr.Invalid("metadata.generateName", gen, msg))
	}
	if name := str(obj, "metadata", "name"); name != "" && name != want {
		errs = append(errs, apierr.Invalid("metadata.name", name, msg))
	}
	return errs
}

func (c *crdSpec) validate(o crdOptions) apierr.FieldErrors {
	var errs apierr.FieldErrors
	spec := c.spec
	switch group := strOf(spec["group"]); {
	case group == "":
		errs = append(errs, apierr.Required("spec.group", ""))
	case len(validation.IsDNS1123Subdomain(group)) > 0:
		errs = append(errs, apierr.Invalid("spec.group", group, strings.Join(validation.IsDNS1123Subdomain(group), ",")))
	case !strings.Contains(group, "."):
		errs = append(errs, apierr.Invalid("spec.group", group, "should be a domain with at least one dot"))
	}
	errs = append(errs, enumString("spec.scope", strOf(spec["scope"]), "Cluster", "Namespaced")...)

	topSchema := openAPISchemaOf(c.top["schema"])
	switch {
	case topSchema != nil:
	case o.requireOpenAPISchema:
		for i, v := range c.versions {
			if openAPISchemaOf(v["schema"]) == nil {
				errs = append(errs, apierr.Required(index("spec.versions", i)+".schema.openAPIV3Schema", "schemas are required"))
			}
		}
	case !c.preserveUnknownFields():
		for i, v := range c.versions {
			if boolOf(v["served"]) && openAPISchemaOf(v["schema"]) == nil {
				errs = append(errs, apierr.Required(index("spec.versions", i)+".schema.openAPIV3Schema", "because otherwise all fields are pruned"))
			}
		}
	}
	if c.preserveUnknownFields() && c.anySchema(jsonschema.HasDefault) {
		errs = append(errs, apierr.Invalid("spec.preserveUnknownFields", true, "must be false in order to use defaults in the schema"))
	}

	storage, unique, seen := 0, true, map[string]bool{}
	for i, v := range c.versions {
		name := strOf(v["name"])
		if boolOf(v["storage"]) {
			storage++
		}
		if seen[name] {
			unique = false
		}
		seen[name] = true
		p := index("spec.versions", i)
		if msgs := isDNS1035Label(name); len(msgs) > 0 {
			errs = append(errs, apierr.Invalid(p+".name", name, strings.Join(msgs, ",")))
		}
		errs = append(errs, c.validateVersion(v, p, o)...)
	}
	if !unique {
		errs = append(errs, apierr.Invalid("spec.versions", c.goVersions(), "must contain unique version names"))
	}
	if storage != 1 {
		errs = append(errs, apierr.Invalid("spec.versions", c.goVersions(), "must have exactly one version marked as storage version"))
	}
	// The internal spec.version is the first version's name.
	if len(c.versions) > 0 {
		if first := strOf(c.versions[0]["name"]); first != "" {
			if msgs := isDNS1035Label(first); len(msgs) > 0 {
				errs = append(errs, apierr.Invalid("spec.version", first, strings.Join(msgs, ",")))
			}
		}
	}

	names := mapOf(spec["names"])
	for _, n := range []string{"plural", "singular", "kind", "listKind"} {
		if strOf(names[n]) == "" {
			errs = append(errs, apierr.Required("spec.names."+n, ""))
		}
	}
	errs = append(errs, validateCRDNames(names, "spec.names")...)

	errs = append(errs, c.validateSchema(c.top["schema"], c.anyStatus(), o, "spec.validation")...)
	errs = append(errs, validateCRDSubresources(mapOf(c.top["subresources"]), "spec.subresources")...)
	for i, col := range mapsOf(c.top["additionalPrinterColumns"]) {
		errs = append(errs, validateColumn(col, index("spec.additionalPrinterColumns", i))...)
	}
	if fields := listOf(c.top["selectableFields"]); len(fields) > 0 {
		if c.top["schema"] == nil {
			errs = append(errs, apierr.Invalid("spec.selectableFields", "", "selectableFields may only be set when validations.schema is included"))
		} else {
			errs = append(errs, validateSelectableFields(fields, topSchema, "spec.selectableFields")...)
		}
	}

	conv := mapOf(spec["conversion"])
	if s := strOf(conv["strategy"]); conv != nil && s != conversionNone && c.preserveUnknownFields() {
		errs = append(errs, apierr.Invalid("spec.conversion.strategy", s, "must be None if spec.preserveUnknownFields is true"))
	}
	return append(errs, validateConversion(conv, o)...)
}

// anyStatus reports whether any version has a status subresource.
func (c *crdSpec) anyStatus() bool {
	if hasStatus(c.top["subresources"]) {
		return true
	}
	for _, v := range c.versions {
		if hasStatus(v["subresources"]) {
			return true
		}
	}
	return false
}

func hasStatus(subresources any) bool { return mapOf(subresources)["status"] != nil }

func (c *crdSpec) validateVersion(v map[string]any, p string, o crdOptions) apierr.FieldErrors {
	var errs apierr.FieldErrors
	warning, hasWarning := v["deprecationWarning"].(string)
	for _, msg := range deprecationWarningErrors(boolOf(v["deprecated"]), warning, hasWarning) {
		errs = append(errs, apierr.Invalid(p+".deprecationWarning", warning, msg))
	}
	subresources := c.top["subresources"]
	if _, moved := c.top["subresources"]; !moved {
		subresources = v["subresources"]
	}
	schema := c.member(v, "schema")
	errs = append(errs, c.validateSchema(schema, hasStatus(subresources), o, p+".schema")...)
	errs = append(errs, validateCRDSubresources(mapOf(c.member(v, "subresources")), p+".subresources")...)
	for i, col := range mapsOf(c.member(v, "additionalPrinterColumns")) {
		errs = append(errs, validateColumn(col, index(p+".additionalPrinterColumns", i))...)
	}
	if fields := listOf(c.member(v, "selectableFields")); len(fields) > 0 {
		if openAPISchemaOf(schema) == nil {
			errs = append(errs, apierr.Invalid(p+".selectableFields", "", "selectableFields may only be set when version.schema.openAPIV3Schema is not included"))
		} else {
			errs = append(errs, validateSelectableFields(fields, openAPISchemaOf(schema), p+".selectableFields")...)
		}
	}
	return errs
}

// Bounds of a version's deprecation warning.
const maxDeprecationWarning = 256

func deprecationWarningErrors(deprecated bool, w string, set bool) []string {
	if !deprecated && set {
		return []string{"can only be set for deprecated versions"}
	}
	if !set {
		return nil
	}
	var msgs []string
	if len(w) > maxDeprecationWarning {
		msgs = append(msgs, "must be <= 256 characters long")
	}
	if w == "" {
		msgs = append(msgs, "must not be an empty string")
	}
	for i, r := range w {
		if !unicode.IsPrint(r) {
			msgs = append(msgs, fmt.Sprintf("must only contain printable UTF-8 characters; non-printable character found at index %d", i))
			break
		}
		if unicode.IsControl(r) {
			msgs = append(msgs, fmt.Sprintf("must only contain printable UTF-8 characters; control character found at index %d", i))
			break
		}
	}
	if !utf8.ValidString(w) {
		msgs = append(msgs, "must only contain printable UTF-8 characters")
	}
	return msgs
}

// validateSchema checks a schema member (CustomResourceValidation) at p.
func (c *crdSpec) validateSchema(v any, status bool, o crdOptions, p string) apierr.FieldErrors {
	raw := openAPISchemaOf(v)
	if raw == nil {
		return nil
	}
	props, err := jsonschema.Parse(raw)
	if err != nil {
		return apierr.FieldErrors{apierr.Invalid(p+".openAPIV3Schema", "", err.Error())}
	}
	opts := o.schema
	opts.StatusSubresource = status
	return jsonschema.ValidateCRDSchema(props, p+".openAPIV3Schema", opts)
}

func validateCRDNames(names map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, n := range []string{"plural", "singular"} {
		if v := strOf(names[n]); v != "" {
			if msgs := isDNS1035Label(v); len(msgs) > 0 {
				errs = append(errs, apierr.Invalid(p+"."+n, v, strings.Join(msgs, ",")))
			}
		}
	}
	kind, listKind := strOf(names["kind"]), strOf(names["listKind"])
	for _, k := range []struct{ name, v string }{{"kind", kind}, {"listKind", listKind}} {
		if k.v == "" {
			continue
		}
		if msgs := isDNS1035Label(strings.ToLower(k.v)); len(msgs) > 0 {
			errs = append(errs, apierr.Invalid(p+"."+k.name, k.v, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
		}
	}
	for i, s := range listOf(names["shortNames"]) {
		if msgs := isDNS1035Label(strOf(s)); len(msgs) > 0 {
			errs = append(errs, apierr.Invalid(index(p+".shortNames", i), strOf(s), strings.Join(msgs, ",")))
		}
	}
	if kind != "" && kind == listKind {
		errs = append(errs, apierr.Invalid(p+".listKind", listKind, "kind and listKind may not be the same"))
	}
	for i, s := range listOf(names["categories"]) {
		if msgs := isDNS1035Label(strOf(s)); len(msgs) > 0 {
			errs = append(errs, apierr.Invalid(index(p+".categories", i), strOf(s), strings.Join(msgs, ",")))
		}
	}
	return errs
}

// enumString checks a required member against its accepted values.
func enumString(p, v string, accepted ...string) apierr.FieldErrors {
	switch {
	case v == "":
		return apierr.FieldErrors{apierr.Required(p, "")}
	case slices.Contains(accepted, v):
		return nil
	}
	return apierr.FieldErrors{apierr.NotSupported(p, v, accepted)}
}

func validateCRDSubresources(sub map[string]any, p string) apierr.FieldErrors {
	scale := mapOf(sub["scale"])
	if scale == nil {
		return nil
	}
	var errs apierr.FieldErrors
	for _, r := range []struct{ name, prefix, msg string }{
		{"specReplicasPath", ".spec.", "should be a json path under .spec"},
		{"statusReplicasPath", ".status.", "should be a json path under .status"},
	} {
		fp := p + ".scale." + r.name
		v := strOf(scale[r.name])
		if v == "" {
			errs = append(errs, apierr.Required(fp, ""))
			continue
		}
		if e := jsonpath.ValidateSimplePath(v, fp); len(e) > 0 {
			errs = append(errs, e...)
		} else if !strings.HasPrefix(v, r.prefix) {
			errs = append(errs, apierr.Invalid(fp, v, r.msg))
		}
	}
	if sel := strOf(scale["labelSelectorPath"]); sel != "" {
		fp := p + ".scale.labelSelectorPath"
		if e := jsonpath.ValidateSimplePath(sel, fp); len(e) > 0 {
			errs = append(errs, e...)
		} else if !strings.HasPrefix(sel, ".spec.") && !strings.HasPrefix(sel, ".status.") {
			errs = append(errs, apierr.Invalid(fp, sel, "should be a json path under either .spec or .status"))
		}
	}
	return errs
}

// The values a printer column's type and format take, sorted as upstream
// lists them.
var (
	columnTypes   = []string{"boolean", "date", "integer", "number", "string"}
	columnFormats = []string{"byte", "date", "date-time", "double", "float", "int32", "int64", "password"}
)

func validateColumn(col map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if strOf(col["name"]) == "" {
		errs = append(errs, apierr.Required(p+".name", ""))
	}
	typesMsg := "must be one of " + strings.Join(columnTypes, ",")
	switch t := strOf(col["type"]); {
	case t == "":
		errs = append(errs, apierr.Required(p+".type", typesMsg))
	case !slices.Contains(columnTypes, t):
		errs = append(errs, apierr.Invalid(p+".type", t, typesMsg))
	}
	if f := strOf(col["format"]); f != "" && !slices.Contains(columnFormats, f) {
		errs = append(errs, apierr.Invalid(p+".format", f, "must be one of "+strings.Join(columnFormats, ",")))
	}
	// The path is upstream's Go field name here, not the JSON one.
	if jp := strOf(col["jsonPath"]); jp == "" {
		errs = append(errs, apierr.Required(p+".JSONPath", ""))
	} else {
		errs = append(errs, jsonpath.ValidateSimplePath(jp, p+".JSONPath")...)
	}
	return errs
}

// maxSelectableFields bounds the selectable fields of a version.
const maxSelectableFields = 8

// validateSelectableFields checks the fields custom resources may be
// selected by: paths into the schema (not into metadata) to a string,
// boolean or integer field, each once.
func validateSelectableFields(fields []any, rawSchema any, p string) apierr.FieldErrors {
	root, err := jsonschema.Parse(rawSchema)
	if err != nil {
		return nil
	}
	var errs apierr.FieldErrors
	seen := map[string]bool{}
	for i, f := range fields {
		fp := index(p, i) + ".jsonPath"
		jp := strOf(mapOf(f)["jsonPath"])
		if jp == "" {
			errs = append(errs, apierr.Required(fp, ""))
			continue
		}
		key, target, err := jsonschema.ValidFieldPath(jp, root, false)
		if err != nil {
			errs = append(errs, apierr.Invalid(fp, jp, "is an invalid path: "+err.Error()))
			continue
		}
		if first, _, _ := strings.Cut(key, "."); first == "metadata" || strings.HasPrefix(key, "metadata[") {
			errs = append(errs, apierr.Invalid(fp, jp, "must not point to fields in metadata"))
		}
		if target.Type != "string" && target.Type != "boolean" && target.Type != "integer" {
			errs = append(errs, apierr.Invalid(fp, jp, "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."))
		}
		if seen[key] {
			errs = append(errs, apierr.Duplicate(fp, jp))
		}
		seen[key] = true
	}
	if len(seen) > maxSelectableFields {
		errs = append(errs, tooMany(p, len(seen), maxSelectableFields))
	}
	return errs
}

// goVersions spells the versions as upstream prints its internal
// []CustomResourceDefinitionVersion in an error. A set pointer prints as
// an address there; a fixed one stands in for it.
func (c *crdSpec) goVersions() goSyntax {
	const addr = "(0xc000000000)"
	var b strings.Builder
	b.WriteString("[]apiextensions.CustomResourceDefinitionVersion{")
	for i, v := range c.versions {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "apiextensions.CustomResourceDefinitionVersion{Name:%q, Served:%t, Storage:%t, Deprecated:%t, ",
			strOf(v["name"]), boolOf(v["served"]), boolOf(v["storage"]), boolOf(v["deprecated"]))
		ptr := func(typ string, set bool) string {
			if set {
				return "(*" + typ + ")" + addr
			}
			return "(*" + typ + ")(nil)"
		}
		_, warned := v["deprecationWarning"].(string)
		fmt.Fprintf(&b, "DeprecationWarning:%s, Schema:%s, Subresources:%s, ", ptr("string", warned),
			ptr("apiextensions.CustomResourceValidation", c.member(v, "schema") != nil),
			ptr("apiextensions.CustomResourceSubresources", c.member(v, "subresources") != nil))
		b.WriteString("AdditionalPrinterColumns:" + goColumns(c.member(v, "additionalPrinterColumns")))
		b.WriteString(", SelectableFields:" + goSelectable(c.member(v, "selectableFields")) + "}")
	}
	b.WriteString("}")
	return goSyntax(b.String())
}

func goColumns(v any) string {
	if listOf(v) == nil {
		return "[]apiextensions.CustomResourceColumnDefinition(nil)"
	}
	cols := mapsOf(v)
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = fmt.Sprintf("apiextensions.CustomResourceColumnDefinition{Name:%q, Type:%q, Format:%q, Description:%q, Priority:%d, JSONPath:%q}",
			strOf(c["name"]), strOf(c["type"]), strOf(c["format"]), strOf(c["description"]), intAt(c, "priority"), strOf(c["jsonPath"]))
	}
	return "[]apiextensions.CustomResourceColumnDefinition{" + strings.Join(parts, ", ") + "}"
}

func goSelectable(v any) string {
	if listOf(v) == nil {
		return "[]apiextensions.SelectableField(nil)"
	}
	fields := mapsOf(v)
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = fmt.Sprintf("apiextensions.SelectableField{JSONPath:%q}", strOf(f["jsonPath"]))
	}
	return "[]apiextensions.SelectableField{" + strings.Join(parts, ", ") + "}"
}
