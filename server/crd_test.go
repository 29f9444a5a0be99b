package server_test

import (
	"reflect"
	"testing"
	"time"

	"platd/config"
)

// widgetCRD is a valid CustomResourceDefinition of one served version.
func widgetCRD() map[string]any {
	return map[string]any{
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "kind": "Widget", "shortNames": []any{"wd"}},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object", "properties": map[string]any{
						"size": map[string]any{"type": "integer", "default": 1}}}}}}}},
		},
		"status": map[string]any{"storedVersions": []any{"v0"}, "acceptedNames": map[string]any{"plural": "x", "kind": "X"}},
	}
}

// TestCRDCreateStoresDefaults creates a CRD and reads back what upstream
// stores: the names derived from the kind, the conversion strategy, the
// first generation, and a status holding only the storage version (the
// request's status is dropped). Conditions and accepted names are the
// establishing controller's and are not looked at here.
func TestCRDCreateStoresDefaults(t *testing.T) {
	t.Parallel()
	e := start(t)
	p := groupPath(platBrand.Group("apiextensions"), "v1", "", "customresourcedefinitions")
	created := e.do("POST", p, widgetCRD()).mustCode(t, 201).obj(t)
	got := e.do("GET", p+"/widgets.example.com", nil).mustCode(t, 200).obj(t)
	for _, obj := range []map[string]any{created, got} {
		for _, c := range []fieldCheck{
			{[]any{"kind"}, "CustomResourceDefinition"},
			{[]any{"apiVersion"}, platBrand.Group("apiextensions") + "/v1"},
			{[]any{"metadata", "generation"}, 1.0},
			{[]any{"spec", "names", "singular"}, "widget"},
			{[]any{"spec", "names", "listKind"}, "WidgetList"},
			{[]any{"spec", "conversion"}, map[string]any{"strategy": "None"}},
			{[]any{"spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "size", "default"}, 1.0},
			{[]any{"status", "storedVersions"}, []any{"v1"}},
		} {
			if v := at(obj, c.path...); !reflect.DeepEqual(v, c.want) {
				t.Errorf("%v = %#v, want %#v", c.path, v, c.want)
			}
		}
		if at(obj, "status", "acceptedNames", "plural") == "x" {
			t.Error("the request's status was stored")
		}
	}

	// An update names the version it replaces; a change of spec bumps the
	// generation; the main resource does not write status.
	delete(got["metadata"].(map[string]any), "resourceVersion")
	e.do("PUT", p+"/widgets.example.com", got).mustCode(t, 422).
		mustMessage(t, `CustomResourceDefinition.`+platBrand.Group("apiextensions")+` "widgets.example.com" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update`)
	upd := putLatest(t, e, p+"/widgets.example.com", "", func(cur map[string]any) {
		at(cur, "spec", "names").(map[string]any)["categories"] = []any{"all"}
		cur["status"].(map[string]any)["storedVersions"] = []any{"v1", "v9"}
	}).mustCode(t, 200).obj(t)
	if g := at(upd, "metadata", "generation"); g != 2.0 {
		t.Errorf("generation after a spec change = %v", g)
	}
	if sv := at(upd, "status", "storedVersions"); !reflect.DeepEqual(sv, []any{"v1"}) {
		t.Errorf("storedVersions after a main-resource write = %v", sv)
	}

	// The status subresource keeps spec and checks the accepted names.
	putLatest(t, e, p+"/widgets.example.com", "/status", func(cur map[string]any) {
		cur["spec"].(map[string]any)["scope"] = "Cluster"
		cur["status"].(map[string]any)["acceptedNames"] = map[string]any{"plural": "Widgets", "kind": "Widget"}
	}).mustCode(t, 422).
		mustMessage(t, `CustomResourceDefinition.`+platBrand.Group("apiextensions")+` "widgets.example.com" is invalid: status.acceptedNames.plural: Invalid value: "Widgets": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`)
	st := putLatest(t, e, p+"/widgets.example.com", "/status", func(cur map[string]any) {
		cur["spec"].(map[string]any)["scope"] = "Cluster"
		cur["status"].(map[string]any)["acceptedNames"] = map[string]any{"plural": "widgets", "kind": "Widget"}
	}).mustCode(t, 200).obj(t)
	if at(st, "spec", "scope") != "Namespaced" || at(st, "metadata", "generation") != 2.0 || at(st, "status", "acceptedNames", "plural") != "widgets" {
		t.Errorf("status write: spec %v, generation %v, status %v", at(st, "spec"), at(st, "metadata", "generation"), at(st, "status"))
	}
}

// putLatest reads the object at path, edits it and writes it back to
// path+sub, again while the write conflicts with one the server's
// controllers made in between.
func putLatest(t *testing.T, e *env, path, sub string, edit func(obj map[string]any)) *resp {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		obj := e.do("GET", path, nil).mustCode(t, 200).obj(t)
		edit(obj)
		r := e.do("PUT", path+sub, obj)
		if r.code != 409 || time.Now().After(deadline) {
			return r
		}
	}
}

// TestCRDCreateRefusesInvalid checks upstream's texts and paths for a CRD
// whose name, versions and schema are wrong; nothing is stored.
func TestCRDCreateRefusesInvalid(t *testing.T) {
	t.Parallel()
	e := start(t)
	p := groupPath(platBrand.Group("apiextensions"), "v1", "", "customresourcedefinitions")
	kind := "CustomResourceDefinition." + platBrand.Group("apiextensions")

	bad := widgetCRD()
	bad["metadata"].(map[string]any)["name"] = "gadgets.example.com"
	v := at(bad, "spec", "versions", 0).(map[string]any)
	v["storage"] = false
	at(v, "schema", "openAPIV3Schema", "properties", "spec", "properties").(map[string]any)["color"] = map[string]any{"enum": []any{"red"}}
	at(v, "schema", "openAPIV3Schema").(map[string]any)["additionalProperties"] = map[string]any{"type": "string"}
	mustRefuse(t, e, p, bad, kind, []string{
		`metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group`,
		`spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:"v1", Served:true, Storage:false, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}}: must have exactly one version marked as storage version`,
		`spec.validation.openAPIV3Schema: Invalid value: "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{\"color\":{\"enum\":[\"red\"]},\"size\":{\"type\":\"integer\",\"default\":1}}}},\"additionalProperties\":{\"type\":\"string\"}}": only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled`,
		`spec.validation.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root`,
		`spec.validation.openAPIV3Schema.properties[spec].properties[color].type: Required value: must not be empty for specified object fields`,
		`spec.validation.openAPIV3Schema.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
		`status.storedVersions: Invalid value: []string(nil): must have at least one stored version`,
	})
}

// TestCRDFirstDeleteMarks checks that the first DELETE of a CRD answers
// with the definition marked for deletion: the cleanup finalizer holds it
// and its Terminating condition says why.
func TestCRDFirstDeleteMarks(t *testing.T) {
	t.Parallel()
	e := start(t)
	p := groupPath(platBrand.Group("apiextensions"), "v1", "", "customresourcedefinitions")
	e.do("POST", p, widgetCRD()).mustCode(t, 201)
	got := e.do("DELETE", p+"/widgets.example.com", nil).mustCode(t, 200).obj(t)
	if at(got, "kind") != "CustomResourceDefinition" || at(got, "metadata", "deletionTimestamp") == nil {
		t.Fatalf("DELETE answered %v", got)
	}
	if f := at(got, "metadata", "finalizers"); !reflect.DeepEqual(f, []any{"customresourcecleanup." + platBrand.Group("apiextensions")}) {
		t.Errorf("finalizers = %v", f)
	}
	var terminating map[string]any
	for _, c := range at(got, "status", "conditions").([]any) {
		if c := c.(map[string]any); c["type"] == "Terminating" {
			terminating = c
		}
	}
	if terminating["status"] != "True" || terminating["reason"] != "InstanceDeletionPending" ||
		terminating["message"] != "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon" || terminating["lastTransitionTime"] == nil {
		t.Errorf("Terminating condition = %v", terminating)
	}
}

// TestCRDPatchAndApproval checks that a patch is held to the update rules
// (group and plural never change; the name is not checked against them
// again, as upstream), and that in the kubernetes brand a CRD
// of the brand's own groups needs the API approval annotation, in
// upstream's words.
func TestCRDPatchAndApproval(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"))
	b, _ := config.LookupBrand("kubernetes")
	p := groupPath(b.Group("apiextensions"), "v1", "", "customresourcedefinitions")
	kind := "CustomResourceDefinition." + b.Group("apiextensions")
	e.do("POST", p, widgetCRD()).mustCode(t, 201)
	e.do("PATCH", p+"/widgets.example.com", `{"spec":{"group":"example.org","names":{"plural":"gadgets"}}}`, "Content-Type", "application/merge-patch+json").
		mustCode(t, 422).
		mustMessage(t, kind+` "widgets.example.com" is invalid: [spec.group: Invalid value: "example.org": field is immutable, `+
			`spec.names.plural: Invalid value: "gadgets": field is immutable]`)

	protected := widgetCRD()
	protected["metadata"].(map[string]any)["name"] = "widgets.things." + b.Domain
	protected["spec"].(map[string]any)["group"] = "things." + b.Domain
	mustRefuse(t, e, p, protected, kind, []string{
		"metadata.annotations[" + b.APIApprovalAnnotation + `]: Required value: protected groups must have approval annotation "` + b.APIApprovalAnnotation + `", see https://github.com/kubernetes/enhancements/pull/1111`,
	})
	protected["metadata"].(map[string]any)["annotations"] = map[string]any{b.APIApprovalAnnotation: "unapproved, testing only"}
	e.do("POST", p, protected).mustCode(t, 201)
}
