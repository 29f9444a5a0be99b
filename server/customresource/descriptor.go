package customresource

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/cel"
	"platd/server/jsonschema"
	"platd/server/printers"
	"platd/server/registry"
	"platd/server/schema"
	"platd/server/webhookclient"
)

// Definition is the part of a CRD that decides how its resources are
// served, read from the stored object.
type Definition struct {
	Group                            string
	Plural, Singular, Kind, ListKind string
	ShortNames, Categories           []string
	Namespaced                       bool
	Versions                         []Version
	// Webhook is conversion strategy Webhook: objects are converted
	// between versions by the webhook WebhookClientConfig names, sent the
	// first of ReviewVersions the server knows.
	Webhook             bool
	WebhookClientConfig map[string]any
	ReviewVersions      []string
	// Revision is the CRD's own revision: custom resources stored
	// before it may lack its schema's defaults.
	Revision int64
}

// Version is one entry of spec.versions.
type Version struct {
	Name               string
	Served, Storage    bool
	Deprecated         bool
	DeprecationWarning *string
	Schema             *jsonschema.Props
	// Published is the schema as the CRD wrote it, in generic form.
	Published        map[string]any
	Status           bool
	Scale            *registry.ScalePaths
	Columns          []printers.Column
	SelectableFields []string
}

// Read extracts the definition from a decoded CRD, with the names its
// status accepted (spec.names when none are recorded yet).
func Read(crd registry.Object) (*Definition, error) {
	spec := mapAt(crd, "spec")
	names := mapAt(crd, "status", "acceptedNames")
	if str(names, "plural") == "" {
		names = mapAt(spec, "names")
	}
	def := &Definition{
		Group: str(spec, "group"), Namespaced: str(spec, "scope") == "Namespaced",
		Plural: str(names, "plural"), Singular: str(names, "singular"), Kind: str(names, "kind"), ListKind: str(names, "listKind"),
		ShortNames: registry.Strings(names["shortNames"]), Categories: registry.Strings(names["categories"]),
		Webhook: str(mapAt(spec, "conversion"), "strategy") == "Webhook",
	}
	if def.Webhook {
		wh := mapAt(spec, "conversion", "webhook")
		def.WebhookClientConfig = mapAt(wh, "clientConfig")
		def.ReviewVersions = registry.Strings(wh["conversionReviewVersions"])
	}
	if def.Singular == "" {
		def.Singular = strings.ToLower(def.Kind)
	}
	if def.ListKind == "" {
		def.ListKind = def.Kind + "List"
	}
	for i, v := range list(spec["versions"]) {
		vm, _ := v.(map[string]any)
		ver := Version{Name: str(vm, "name"), Served: vm["served"] == true, Storage: vm["storage"] == true, Deprecated: vm["deprecated"] == true}
		if w, ok := vm["deprecationWarning"].(string); ok {
			ver.DeprecationWarning = &w
		}
		if raw, ok := mapAt(vm, "schema")["openAPIV3Schema"]; ok {
			p, err := jsonschema.Parse(raw)
			if err != nil {
				return nil, fmt.Errorf("spec.versions[%d].schema: %w", i, err)
			}
			ver.Schema = p
			ver.Published, _ = raw.(map[string]any)
		}
		sub := mapAt(vm, "subresources")
		if _, ok := sub["status"]; ok {
			ver.Status = true
		}
		if sc, ok := sub["scale"].(map[string]any); ok {
			ver.Scale = &registry.ScalePaths{
				SpecReplicas:   strings.TrimPrefix(str(sc, "specReplicasPath"), "."),
				StatusReplicas: strings.TrimPrefix(str(sc, "statusReplicasPath"), "."),
				LabelSelector:  strings.TrimPrefix(str(sc, "labelSelectorPath"), "."),
			}
		}
		for _, c := range list(vm["additionalPrinterColumns"]) {
			cm, _ := c.(map[string]any)
			prio, _ := cm["priority"].(int64)
			ver.Columns = append(ver.Columns, printers.Column{Name: str(cm, "name"), Type: str(cm, "type"), Format: str(cm, "format"),
				Description: str(cm, "description"), JSONPath: str(cm, "jsonPath"), Priority: int(prio)})
		}
		for _, f := range list(vm["selectableFields"]) {
			ver.SelectableFields = append(ver.SelectableFields, strings.TrimPrefix(str(mapOf(f), "jsonPath"), "."))
		}
		def.Versions = append(def.Versions, ver)
	}
	return def, nil
}

// StorageVersion is the version objects are stored in, nil when none is
// marked.
func (def *Definition) StorageVersion() *Version {
	for i := range def.Versions {
		if def.Versions[i].Storage {
			return &def.Versions[i]
		}
	}
	return nil
}

// Builder turns definitions into descriptors.
type Builder struct {
	// meta is the object metadata schema of every custom resource.
	meta *schema.Schema
	// standardFinalizers are the finalizer names that need no domain.
	standardFinalizers []string
	// reviewGroup is the API group of the ConversionReviews sent to
	// conversion webhooks.
	reviewGroup string
}

// NewBuilder returns a builder whose resources carry the object metadata
// described by meta; b names the standard finalizers.
func NewBuilder(meta *schema.Schema, b config.Brand) *Builder {
	return &Builder{meta: meta, standardFinalizers: []string{b.NamespaceFinalizer, "orphan", "foregroundDeletion"},
		reviewGroup: b.Group("apiextensions")}
}

// Descriptors returns one descriptor per served version; the storage
// version's comes first. A definition without a storage version serves
// nothing.
//
// Every served version converts to and from one stored form (which no
// request addresses) with one converter, under either strategy: objects
// are stored naming the version they were written in (the storage
// version's under None, which rewrites nothing else), so that whatever
// strategy and storage version the definition has when they are read,
// they are read as what they are.
func (b *Builder) Descriptors(def *Definition) ([]*registry.Descriptor, error) {
	sv := def.StorageVersion()
	if sv == nil {
		return nil, nil
	}
	st, schemas, err := b.storage(def, sv)
	if err != nil {
		return nil, err
	}
	order := []*Version{sv}
	for i := range def.Versions {
		if v := &def.Versions[i]; v != sv {
			order = append(order, v)
		}
	}
	var out []*registry.Descriptor
	for _, v := range order {
		if !v.Served {
			continue
		}
		d, err := b.descriptor(def, v)
		if err != nil {
			return nil, err
		}
		// The versions decode their own objects with their own schema.
		schemas[v.Name] = d.Schema
		stored := *st.Storage
		d.Storage = &stored
		out = append(out, d)
	}
	return out, nil
}

// StorageDescriptor returns the descriptor of the storage version whether
// it is served or not (nil when none is marked): the objects of a
// definition that serves nothing are still stored, and deleting the
// definition deletes them through it.
func (b *Builder) StorageDescriptor(def *Definition) (*registry.Descriptor, error) {
	sv := def.StorageVersion()
	if sv == nil {
		return nil, nil
	}
	st, _, err := b.storage(def, sv)
	return st, err
}

// storage is the stored form of a definition's objects, with the
// converter of its strategy, and the schemas that converter decodes each
// version's objects with, filled in for the unserved versions (the
// served ones get their descriptors'). The stored form converts like the
// served versions (to itself): whatever reads objects through it (the
// garbage collector, by key) reads each in its version.
func (b *Builder) storage(def *Definition, sv *Version) (*registry.Descriptor, map[string]*schema.Schema, error) {
	st, err := b.descriptor(def, sv)
	if err != nil {
		return nil, nil, err
	}
	schemas := map[string]*schema.Schema{sv.Name: st.Schema}
	for i := range def.Versions {
		// Objects written in a version no longer served are still read.
		if v := &def.Versions[i]; v != sv && !v.Served {
			s := structure(v.Schema, b.meta)
			s.Seal()
			schemas[v.Name] = s
		}
	}
	var cv registry.Converter = &noneConverter{schemas: schemas, storageVersion: st.GroupVersion()}
	if def.Webhook {
		cv = &webhookConverter{group: def.Group, kind: def.Kind, reviewGroup: b.reviewGroup, reviewVersions: def.ReviewVersions,
			client: webhookclient.New(def.WebhookClientConfig), schemas: schemas}
	}
	st.Storage = &registry.Storage{Descriptor: st, Converter: cv, NoVersionHash: !sv.Served}
	return st, schemas, nil
}

func (b *Builder) descriptor(def *Definition, v *Version) (*registry.Descriptor, error) {
	s := structure(v.Schema, b.meta)
	s.Published = published(v.Published)
	s.Seal()
	d := &registry.Descriptor{
		Group: def.Group, Version: v.Name, Kind: def.Kind, ListKind: def.ListKind,
		Resource: def.Plural, Singular: def.Singular, Namespaced: def.Namespaced,
		ShortNames: def.ShortNames, Categories: def.Categories,
		Verbs: registry.ObjectVerbs(), Schema: s, NameRule: registry.NameSubdomain,
		UpdateRequiresResourceVersion: true,
		FieldLabels:                   registry.FieldLabels{Refusal: registry.FieldLabelNotSupported},
		AnyFinalizerNames:             true,
		NoStrategicMergePatch:         true,
		ListItemsTyped:                true,
		QualifiedResponseKinds:        true,
		// Listed in upstream's order, not sorted: the verbs, then the
		// status and scale subresources.
		ListedVerbs:   []string{registry.VerbDelete, registry.VerbDeleteCollection, registry.VerbGet, registry.VerbList, registry.VerbPatch, registry.VerbCreate, registry.VerbUpdate, registry.VerbWatch},
		ListedAsGiven: true,
	}
	if v.Deprecated {
		if v.DeprecationWarning != nil {
			d.Deprecation = *v.DeprecationWarning
		} else {
			d.Deprecation = fmt.Sprintf("%s/%s %s is deprecated", def.Group, v.Name, def.Kind)
		}
	}
	if v.Status {
		d.Subresources = append(d.Subresources, registry.Subresource{Name: "status", Verbs: []string{registry.VerbGet, registry.VerbPatch, registry.VerbUpdate}})
	}
	if v.Scale != nil {
		d.Subresources = append(d.Subresources, registry.Subresource{Name: "scale", Verbs: []string{registry.VerbGet, registry.VerbPatch, registry.VerbUpdate},
			Group: "autoscaling", Version: "v1", Kind: "Scale", Serve: registry.ServeScale, Scale: v.Scale,
			Table: printers.CustomResourceScaleTable(v.Scale)})
	}
	if len(v.SelectableFields) > 0 {
		d.FieldSelectors = map[string]registry.FieldSelector{}
		for _, f := range v.SelectableFields {
			path := strings.Split(f, ".")
			d.FieldSelectors[f] = registry.FieldSelector{Get: func(obj registry.Object) string { return selectable(obj, path) }, Reads: [][]string{path}}
		}
	}
	// Objects stored before the CRD last changed may hold what the
	// schema no longer declares, or lack its defaults.
	d.CurrentSince = def.Revision
	rules, errs := cel.Compile(v.Schema, "")
	if len(errs) > 0 {
		return nil, fmt.Errorf("version %s: compiling validation rules: %w", v.Name, errs)
	}
	// A column whose path does not parse ends the Table there, as
	// upstream serves it; CRD validation refuses such paths.
	d.Table, _ = printers.CustomResourceTable(v.Columns)
	status := v.Status
	d.Strategy = registry.Strategy{
		PrepareForCreate: func(obj registry.Object) { registry.Child(obj, "metadata")["generation"] = int64(1) },
		PrepareForUpdate: func(obj, old registry.Object, sub string) { prepareForUpdate(obj, old, sub, status) },
	}
	d.Strategy.Warnings = finalizerWarnings(b.standardFinalizers)
	p := v.Schema
	var opts []jsonschema.Option
	if sc := v.Scale; sc != nil {
		// The paths are kept without the leading "." upstream names
		// failures with.
		selector := ""
		if sc.LabelSelector != "" {
			selector = "." + sc.LabelSelector
		}
		opts = append(opts, jsonschema.WithScale("."+sc.SpecReplicas, "."+sc.StatusReplicas, selector))
	}
	if p != nil || len(opts) > 0 {
		d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
			return withRules(jsonschema.Validate(p, obj, opts...), rules, obj, nil)
		}
		d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
			return withRules(jsonschema.ValidateUpdate(p, obj, old, opts...), rules, obj, old)
		}
		for i := range d.Subresources {
			if d.Subresources[i].Name == "status" {
				// A status write is checked against the status schema
				// alone, without ratcheting, as upstream.
				d.Subresources[i].Validate = func(obj, old registry.Object) apierr.FieldErrors {
					return withRules(jsonschema.ValidateStatusUpdate(p, obj, old, opts...), rules, obj, old)
				}
			}
		}
	}
	return d, nil
}

// withRules adds the validation rules' verdict to the schema's, unless
// the schema found a value of the wrong type, outside its enum, missing
// though required, or over a limit: rules would then read what they were
// not written for, and upstream says so instead. A schema without rules
// adds nothing, as upstream has no rule validator then.
func withRules(errs apierr.FieldErrors, rules *cel.Validator, obj, old registry.Object) apierr.FieldErrors {
	if !rules.HasRules() {
		return errs
	}
	if jsonschema.BlocksRules(errs) {
		return append(errs, jsonschema.RulesNotChecked())
	}
	// The runtime cost budget bounds the rules; no request context
	// reaches the validation hooks.
	return append(errs, rules.Validate(context.Background(), obj, old)...)
}

// published is the OpenAPI definition of a version's objects: its schema
// as written, with apiVersion and kind declared (the documents reference
// the object metadata themselves).
func published(raw map[string]any) map[string]any {
	out := map[string]any{"type": "object"}
	if raw == nil {
		out["x-kubernetes-preserve-unknown-fields"] = true
	}
	for k, v := range raw {
		out[k] = v
	}
	props := map[string]any{}
	for k, v := range mapOf(out["properties"]) {
		props[k] = v
	}
	props["apiVersion"] = map[string]any{"type": "string"}
	props["kind"] = map[string]any{"type": "string"}
	out["properties"] = props
	return out
}

// finalizerWarnings warns of finalizer names that are not qualified by a
// domain and path, as upstream warns of them on custom resources instead
// of refusing them.
func finalizerWarnings(standard []string) func(obj, old registry.Object) []string {
	return func(obj, _ registry.Object) []string {
		var out []string
		for _, f := range registry.Strings(mapAt(obj, "metadata")["finalizers"]) {
			if !strings.Contains(f, "/") && !slices.Contains(standard, f) {
				out = append(out, fmt.Sprintf("metadata.finalizers: %q: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers", f))
			}
		}
		return out
	}
}

// prepareForUpdate keeps the status of a main-resource write when status
// is a subresource, and counts a change of anything but metadata (and
// such a status) as a new generation.
func prepareForUpdate(obj, old registry.Object, sub string, status bool) {
	if status && sub == "" {
		if st, ok := old["status"]; ok {
			obj["status"] = st
		} else {
			delete(obj, "status")
		}
	}
	gen, _ := mapAt(old, "metadata")["generation"].(int64)
	m := registry.Child(obj, "metadata")
	m["generation"] = gen
	if sub == "" && contentChanged(obj, old, status) {
		m["generation"] = gen + 1
	}
}

// contentChanged compares everything but apiVersion, kind, metadata and,
// when it is a subresource, status.
func contentChanged(obj, old registry.Object, status bool) bool {
	skip := func(k string) bool {
		return k == "apiVersion" || k == "kind" || k == "metadata" || status && k == "status"
	}
	n := 0
	for k, v := range obj {
		if skip(k) {
			continue
		}
		n++
		if ov, ok := old[k]; !ok || !reflect.DeepEqual(v, ov) {
			return true
		}
	}
	for k := range old {
		if !skip(k) {
			n--
		}
	}
	return n != 0
}

// selectable renders the value at path as a field selector compares it.
func selectable(obj registry.Object, path []string) string {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	switch x := cur.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

func mapOf(v any) map[string]any { m, _ := v.(map[string]any); return m }

func mapAt(obj map[string]any, path ...string) map[string]any {
	cur := obj
	for _, p := range path {
		cur = mapOf(cur[p])
	}
	return cur
}

func str(m map[string]any, key string) string { s, _ := m[key].(string); return s }

func list(v any) []any { l, _ := v.([]any); return l }
