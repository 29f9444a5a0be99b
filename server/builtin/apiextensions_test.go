package builtin

import (
	"reflect"
	"strings"
	"testing"

	"platd/config"
	"platd/server/registry"
)

const dns1035Msg = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"

// crdObj is a valid CRD of one version with a schema; edit changes it.
func crdObj(edit func(obj, spec, version map[string]any)) registry.Object {
	version := map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": map[string]any{
		"type": "object", "properties": map[string]any{"spec": map[string]any{"type": "object", "properties": map[string]any{
			"replicas": map[string]any{"type": "integer"}}}}}}}
	spec := map[string]any{"group": "example.com", "scope": "Namespaced",
		"names":    map[string]any{"plural": "widgets", "kind": "Widget"},
		"versions": []any{version}}
	obj := registry.Object{"metadata": map[string]any{"name": "widgets.example.com"}, "spec": spec}
	if edit != nil {
		edit(obj, spec, version)
	}
	return obj
}

func TestCRDCreateDefaults(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "CustomResourceDefinition")
	got := mustCreate(t, d, crdObj(func(obj, _, _ map[string]any) {
		obj["status"] = map[string]any{"storedVersions": []any{"v9"}, "conditions": []any{map[string]any{"type": "Established", "status": "True"}}}
	}))
	names := mapAt(got, "spec", "names")
	if names["singular"] != "widget" || names["listKind"] != "WidgetList" {
		t.Errorf("names = %v", names)
	}
	if s := str(got, "spec", "conversion", "strategy"); s != "None" {
		t.Errorf("conversion = %v", valueAt(got, "spec", "conversion"))
	}
	if g := intAt(got, "metadata", "generation"); g != 1 {
		t.Errorf("generation = %d", g)
	}
	status := mapAt(got, "status")
	if !reflect.DeepEqual(status["storedVersions"], []any{"v1"}) || status["conditions"] != nil {
		t.Errorf("status = %v", status)
	}
	webhook := mustCreate(t, d, crdObj(func(_, spec, _ map[string]any) {
		spec["conversion"] = map[string]any{"strategy": "Webhook", "webhook": map[string]any{"conversionReviewVersions": []any{"v1"},
			"clientConfig": map[string]any{"service": map[string]any{"namespace": "ns", "name": "conv"}}}}
	}))
	if p := intAt(webhook, "spec", "conversion", "webhook", "clientConfig", "service", "port"); p != 443 {
		t.Errorf("webhook port = %d", p)
	}
}

func TestCRDValidate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "CustomResourceDefinition")
	tests := []struct {
		name string
		edit func(obj, spec, version map[string]any)
		want []string
	}{
		{"valid", nil, nil},
		{"name", func(obj, _, _ map[string]any) { child(obj, "metadata")["name"] = "gadgets.example.com" },
			[]string{`metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group`}},
		{"group without a dot", func(obj, spec, _ map[string]any) {
			spec["group"] = "example"
			child(obj, "metadata")["name"] = "widgets.example"
		}, []string{`spec.group: Invalid value: "example": should be a domain with at least one dot`}},
		{"group missing, scope bad", func(obj, spec, _ map[string]any) {
			delete(spec, "group")
			spec["scope"] = "Global"
			child(obj, "metadata")["name"] = "widgets."
		}, []string{
			"spec.group: Required value",
			`spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"`,
		}},
		{"names", func(_, spec, _ map[string]any) {
			spec["names"] = map[string]any{"plural": "widgets", "singular": "Widget", "kind": "Wid_get", "listKind": "Wid_get",
				"shortNames": []any{"w", "W"}, "categories": []any{"all", "my_cat"}}
		}, []string{
			`spec.names.singular: Invalid value: "Widget": ` + dns1035Msg,
			`spec.names.kind: Invalid value: "Wid_get": may have mixed case, but should otherwise match: ` + dns1035Msg,
			`spec.names.listKind: Invalid value: "Wid_get": may have mixed case, but should otherwise match: ` + dns1035Msg,
			`spec.names.shortNames[1]: Invalid value: "W": ` + dns1035Msg,
			`spec.names.listKind: Invalid value: "Wid_get": kind and listKind may not be the same`,
			`spec.names.categories[1]: Invalid value: "my_cat": ` + dns1035Msg,
		}},
		{"no versions", func(_, spec, _ map[string]any) { spec["versions"] = []any{} }, []string{
			"spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{}: must have exactly one version marked as storage version",
			"status.storedVersions: Invalid value: []string(nil): must have at least one stored version",
		}},
		{"no storage version", func(_, _, version map[string]any) { version["storage"] = false }, []string{
			`spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:"v1", Served:true, Storage:false, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}}: must have exactly one version marked as storage version`,
			"status.storedVersions: Invalid value: []string(nil): must have at least one stored version",
		}},
		{"bad version name", func(_, _, version map[string]any) { version["name"] = "V1" }, []string{
			`spec.versions[0].name: Invalid value: "V1": ` + dns1035Msg,
			`spec.version: Invalid value: "V1": ` + dns1035Msg,
		}},
		{"duplicate versions", func(_, spec, version map[string]any) {
			second := copyObj(version)
			second["storage"] = false
			spec["versions"] = []any{version, second}
		}, []string{
			`spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:"v1", Served:true, Storage:true, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}, apiextensions.CustomResourceDefinitionVersion{Name:"v1", Served:true, Storage:false, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}}: must contain unique version names`,
		}},
		{"no schema", func(_, _, version map[string]any) { delete(version, "schema") }, []string{
			"spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required",
		}},
		{"schema errors at the spec", func(_, _, version map[string]any) {
			mapAt(version, "schema", "openAPIV3Schema", "properties", "spec", "properties")["size"] = map[string]any{}
		}, []string{
			"spec.validation.openAPIV3Schema.properties[spec].properties[size].type: Required value: must not be empty for specified object fields",
		}},
		{"schema errors per version", func(_, spec, version map[string]any) {
			second := copyObj(version)
			second["name"], second["storage"] = "v2", false
			mapAt(second, "schema", "openAPIV3Schema", "properties", "spec", "properties")["size"] = map[string]any{}
			spec["versions"] = []any{version, second}
		}, []string{
			"spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[size].type: Required value: must not be empty for specified object fields",
		}},
		{"preserveUnknownFields", func(_, spec, version map[string]any) {
			spec["preserveUnknownFields"] = true
			mapAt(version, "schema", "openAPIV3Schema", "properties", "spec", "properties", "replicas")["default"] = int64(1)
		}, []string{
			"spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema",
			"spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
		}},
		{"deprecation warning", func(_, _, version map[string]any) {
			version["deprecationWarning"] = "old"
		}, []string{`spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for deprecated versions`}},
		{"deprecation warning text", func(_, _, version map[string]any) {
			version["deprecated"], version["deprecationWarning"] = true, strings.Repeat("x", 257)+"\t"
		}, []string{
			`spec.versions[0].deprecationWarning: Invalid value: "` + strings.Repeat("x", 257) + `\t": must be <= 256 characters long`,
			`spec.versions[0].deprecationWarning: Invalid value: "` + strings.Repeat("x", 257) + `\t": must only contain printable UTF-8 characters; non-printable character found at index 257`,
		}},
		{"scale and columns", func(_, _, version map[string]any) {
			version["subresources"] = map[string]any{"status": map[string]any{}, "scale": map[string]any{
				"specReplicasPath": "spec.replicas", "statusReplicasPath": ".spec.replicas", "labelSelectorPath": ".metadata.labels"}}
			version["additionalPrinterColumns"] = []any{
				map[string]any{"name": "Replicas", "type": "int", "format": "long", "jsonPath": "spec.replicas"},
				map[string]any{"jsonPath": ""},
			}
		}, []string{
			"spec.subresources.scale.specReplicasPath: Invalid value: \"spec.replicas\": must be a simple json path starting with .",
			"spec.subresources.scale.statusReplicasPath: Invalid value: \".spec.replicas\": should be a json path under .status",
			"spec.subresources.scale.labelSelectorPath: Invalid value: \".metadata.labels\": should be a json path under either .spec or .status",
			"spec.additionalPrinterColumns[0].type: Invalid value: \"int\": must be one of boolean,date,integer,number,string",
			"spec.additionalPrinterColumns[0].format: Invalid value: \"long\": must be one of byte,date,date-time,double,float,int32,int64,password",
			"spec.additionalPrinterColumns[0].JSONPath: Invalid value: \"spec.replicas\": must be a simple json path starting with .",
			"spec.additionalPrinterColumns[1].name: Required value",
			"spec.additionalPrinterColumns[1].type: Required value: must be one of boolean,date,integer,number,string",
			"spec.additionalPrinterColumns[1].JSONPath: Required value",
		}},
		{"status at the root", func(_, _, version map[string]any) {
			version["subresources"] = map[string]any{"status": map[string]any{}}
			mapAt(version, "schema", "openAPIV3Schema")["type"] = "string"
		}, []string{
			`spec.validation.openAPIV3Schema.type: Invalid value: "string": only "object" is allowed as the type at the root of the schema if the status subresource is enabled`,
			`spec.validation.openAPIV3Schema.type: Invalid value: "string": must be object at the root`,
		}},
		{"selectable fields", func(_, _, version map[string]any) {
			version["selectableFields"] = []any{
				map[string]any{"jsonPath": ".spec.replicas"}, map[string]any{"jsonPath": ".spec.replicas"},
				map[string]any{"jsonPath": ".spec"}, map[string]any{"jsonPath": ".spec.nope"}, map[string]any{},
			}
		}, []string{
			`spec.selectableFields[1].jsonPath: Duplicate value: ".spec.replicas"`,
			`spec.selectableFields[2].jsonPath: Invalid value: ".spec": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.`,
			`spec.selectableFields[3].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field`,
			"spec.selectableFields[4].jsonPath: Required value",
		}},
		{"conversion none with webhook", func(_, spec, _ map[string]any) {
			spec["conversion"] = map[string]any{"strategy": "None", "webhook": map[string]any{"conversionReviewVersions": []any{"v1"}, "clientConfig": map[string]any{"url": "https://x"}}}
		}, []string{
			"spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
			"spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook",
		}},
		{"conversion webhook", func(_, spec, _ map[string]any) {
			spec["conversion"] = map[string]any{"strategy": "Webhook", "webhook": map[string]any{"conversionReviewVersions": []any{"v2", "v2"}}}
		}, []string{
			"spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
			`spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version`,
			`spec.conversion.conversionReviewVersions: Invalid value: []string{"v2", "v2"}: must include at least one of v1, v1beta1`,
		}},
		{"conversion webhook url", func(_, spec, _ map[string]any) {
			spec["conversion"] = map[string]any{"strategy": "Webhook", "webhook": map[string]any{"clientConfig": map[string]any{"url": "http://x"}}}
		}, []string{
			`spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
			"spec.conversion.conversionReviewVersions: Required value",
		}},
		{"default against its schema", func(_, _, version map[string]any) {
			mapAt(version, "schema", "openAPIV3Schema", "properties", "spec", "properties", "replicas")["default"] = "many"
		}, []string{`spec.validation.openAPIV3Schema.properties[spec].properties[replicas].default: Invalid value: "string":  in body must be of type integer: "string"`}},
		{"rule that does not compile", func(_, _, version map[string]any) {
			mapAt(version, "schema", "openAPIV3Schema", "properties", "spec")["x-kubernetes-validations"] = []any{map[string]any{"rule": "self.nope > 1"}}
		}, []string{"spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: " +
			`apiextensions.ValidationRule{Rule:"self.nope > 1", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: ` +
			"compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope > 1\n | ....^"}},
		{"conversion strategy", func(_, spec, _ map[string]any) {
			spec["conversion"] = map[string]any{"strategy": "Magic"}
		}, []string{`spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"`}},
	}
	for _, tt := range tests {
		_, errs := create(d, crdObj(tt.edit))
		checkErrs(t, tt.name, errs, tt.want)
	}
}

func TestCRDUpdate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "CustomResourceDefinition")
	old := mustCreate(t, d, crdObj(nil))
	child(old, "metadata")["resourceVersion"] = "5"

	// A spec change bumps the generation; status is kept from old.
	next := crdObj(func(obj, _, version map[string]any) {
		version["served"] = false
		obj["status"] = map[string]any{"storedVersions": []any{"v7"}}
	})
	got, errs := update(d, next, old, "")
	checkErrs(t, "served", errs, nil)
	if g := intAt(got, "metadata", "generation"); g != 2 {
		t.Errorf("generation after a spec change = %d", g)
	}
	if !reflect.DeepEqual(valueAt(got, "status", "storedVersions"), []any{"v1"}) {
		t.Errorf("status = %v", got["status"])
	}
	same, _ := update(d, crdObj(nil), old, "")
	if g := intAt(same, "metadata", "generation"); g != 1 {
		t.Errorf("generation without a spec change = %d", g)
	}

	// A new storage version joins storedVersions; the old one stays, so
	// removing it from versions is refused.
	v2 := crdObj(func(_, spec, version map[string]any) {
		second := copyObj(version)
		second["name"] = "v2"
		version["storage"] = false
		spec["versions"] = []any{version, second}
	})
	got, errs = update(d, v2, old, "")
	checkErrs(t, "v2", errs, nil)
	if !reflect.DeepEqual(valueAt(got, "status", "storedVersions"), []any{"v1", "v2"}) {
		t.Errorf("storedVersions = %v", valueAt(got, "status", "storedVersions"))
	}
	onlyV2 := crdObj(func(_, _, version map[string]any) { version["name"] = "v2" })
	_, errs = update(d, onlyV2, got, "")
	checkErrs(t, "v1 dropped", errs, []string{
		"status.storedVersions[0]: Invalid value: \"v1\": must appear in spec.versions",
	})

	// Group and plural never change; scope and kind not once established.
	moved := crdObj(func(obj, spec, _ map[string]any) {
		spec["group"], spec["scope"] = "example.org", "Cluster"
		mapAt(spec, "names")["plural"], mapAt(spec, "names")["kind"] = "gizmos", "Gizmo"
		child(obj, "metadata")["name"] = "gizmos.example.org"
	})
	_, errs = update(d, moved, old, "")
	checkErrs(t, "moved", errs, []string{
		`spec.group: Invalid value: "example.org": field is immutable`,
		`spec.names.plural: Invalid value: "gizmos": field is immutable`,
	})
	established := copyObj(old)
	established["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "Established", "status": "True"}}
	_, errs = update(d, moved, established, "")
	checkErrs(t, "moved established", errs, []string{
		`spec.scope: Invalid value: "Cluster": field is immutable`,
		`spec.names.kind: Invalid value: "Gizmo": field is immutable`,
		`spec.group: Invalid value: "example.org": field is immutable`,
		`spec.names.plural: Invalid value: "gizmos": field is immutable`,
	})

	// Once established, a conversion webhook's CA bundle must hold a
	// certificate (before, any bundle is accepted).
	webhook := func(obj, spec, _ map[string]any) {
		spec["conversion"] = map[string]any{"strategy": "Webhook", "webhook": map[string]any{"conversionReviewVersions": []any{"v1"},
			"clientConfig": map[string]any{"url": "https://conv.example.com", "caBundle": b64("not pem")}}}
	}
	_, errs = update(d, crdObj(webhook), old, "")
	checkErrs(t, "bundle before established", errs, nil)
	_, errs = update(d, crdObj(webhook), established, "")
	checkErrs(t, "bundle once established", errs, []string{
		"spec.conversion.webhookClientConfig.caBundle: Invalid value: []byte{0x6e, 0x6f, 0x74, 0x20, 0x70, 0x65, 0x6d}: data does not contain any valid RSA or ECDSA certificates",
	})

	// A status write keeps spec, and checks the accepted names only.
	status := copyObj(old)
	status["spec"] = map[string]any{"group": "ignored"}
	status["status"] = map[string]any{"acceptedNames": map[string]any{"plural": "Widgets", "kind": "Widget"}, "storedVersions": []any{}}
	got, errs = update(d, status, old, "status")
	checkErrs(t, "status", errs, []string{`status.acceptedNames.plural: Invalid value: "Widgets": ` + dns1035Msg})
	noVersions := copyObj(old)
	noVersions["status"] = map[string]any{"storedVersions": []any{}}
	d.Strategy.Default(noVersions)
	if sv, _ := update(d, noVersions, old, "status"); !reflect.DeepEqual(valueAt(sv, "status", "storedVersions"), []any{"v1"}) {
		t.Errorf("storedVersions left out of a status write = %v", valueAt(sv, "status", "storedVersions"))
	}
	if str(got, "spec", "group") != "example.com" || intAt(got, "metadata", "generation") != 1 {
		t.Errorf("status write changed spec or generation: %v", got)
	}
}

func TestCRDAPIApproval(t *testing.T) {
	t.Parallel()
	for _, name := range config.BrandNames() {
		b := config.Brands[name]
		d := typeDescriptor(t, "CustomResourceDefinition")
		validate := validateCRDWith(b, d)
		obj := func(annotation string) registry.Object {
			o, _ := create(d, crdObj(func(obj, spec, _ map[string]any) {
				spec["group"] = "things." + b.LongDomain
				child(obj, "metadata")["name"] = "widgets.things." + b.LongDomain
				if annotation != "" {
					child(obj, "metadata")["annotations"] = map[string]any{b.APIApprovalAnnotation: annotation}
				}
			}))
			return o
		}
		p := "metadata.annotations[" + b.APIApprovalAnnotation + "]"
		checkErrs(t, name+" missing", validate(obj("")), []string{
			p + `: Required value: protected groups must have approval annotation "` + b.APIApprovalAnnotation + `"` + b.APIApprovalReference,
		})
		checkErrs(t, name+" invalid", validate(obj("yes")), []string{
			p + `: Invalid value: "yes": protected groups must have approval annotation "` + b.APIApprovalAnnotation + `" with either a URL or a reason starting with "unapproved"` + b.APIApprovalReference,
		})
		checkErrs(t, name+" url", validate(obj("https://example.com/pr/1")), nil)
		checkErrs(t, name+" unapproved", validate(obj("unapproved, testing")), nil)
	}
}

func TestCRDNonStructuralSchema(t *testing.T) {
	t.Parallel()
	if _, _, _, ok := NonStructuralSchema(crdObj(nil)); ok {
		t.Error("a structural CRD got the condition")
	}
	obj := crdObj(func(_, spec, version map[string]any) {
		spec["preserveUnknownFields"] = true
		mapAt(version, "schema", "openAPIV3Schema", "properties")["a"] = map[string]any{}
	})
	status, reason, msg, ok := NonStructuralSchema(obj)
	want := "[spec.preserveUnknownFields: Invalid value: true: must be false, spec.versions[0].schema.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields]"
	if !ok || status != "True" || reason != "Violations" || msg != want {
		t.Errorf("got %q %q %q %v", status, reason, msg, ok)
	}
	obj = crdObj(func(_, _, version map[string]any) { mapAt(version, "schema", "openAPIV3Schema")["$ref"] = "#/x" })
	if status, reason, msg, _ := NonStructuralSchema(obj); status != "Unknown" || reason != "StructuralError" ||
		msg != "failed to check validation schema for version v1: OpenAPIV3Schema '$ref' is not supported" {
		t.Errorf("got %q %q %q", status, reason, msg)
	}
}

// FuzzCRDWrite feeds decoded CRDs through every step a write runs and
// requires that none panics, whatever the shape of the object.
func FuzzCRDWrite(f *testing.F) {
	for _, s := range []string{
		`{"metadata":{"name":"a.b.c"},"spec":{"group":"b.c","scope":"Cluster","names":{"plural":"a","kind":"A","listKind":"A"},"versions":[
			{"name":"v1","storage":true,"served":true,"schema":{"openAPIV3Schema":{"type":"object","items":[{}],"properties":{"m":{"x-kubernetes-list-type":"map"}}}},
			 "subresources":{"status":{},"scale":{"specReplicasPath":".","labelSelectorPath":""}},"additionalPrinterColumns":[{}],"selectableFields":[{"jsonPath":"['"}]},
			{"name":"v1","deprecated":true,"deprecationWarning":""}],
			"conversion":{"strategy":"Webhook","webhook":{"clientConfig":{"url":"%zz","service":{}},"conversionReviewVersions":["","v1",""]}}},
			"status":{"storedVersions":["v0"],"conditions":[{"type":"Established","status":"True"}]}}`,
		`{"spec":{"preserveUnknownFields":true,"versions":[{"schema":{"openAPIV3Schema":{"default":null,"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]}]}}},{"schema":{}}]}}`,
	} {
		f.Add([]byte(s))
	}
	catalog := testCatalog(f, brand)
	d := apiExtensionsV1(brand)[0]
	d.Schema = catalog.ByGVK(d.Group, d.Version, d.Kind)
	f.Fuzz(func(t *testing.T, data []byte) {
		if obj := runWriteHooks(t, d, d.Schema, data); obj != nil {
			NonStructuralSchema(obj)
		}
	})
}
