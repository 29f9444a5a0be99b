package builtin

import (
	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
)

func podTemplates(b config.Brand, sv Services) *registry.Descriptor {
	d := core("podtemplates", "podtemplate", "PodTemplate", true)
	d.ReturnDeleted = true // upstream answers DELETE with the removed object
	r := newPodRules(b).under(sv)
	d.Strategy.Default = func(obj registry.Object) {
		defaultPodSpec(child(child(obj, "template"), "spec"))
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		child(obj, "metadata")["generation"] = int64(1)
		dropDisabledPodSpecFields(mapOf(mapOf(obj["template"])["spec"]), nil)
	}
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, _ string) {
		dropDisabledPodSpecFields(mapOf(mapOf(obj["template"])["spec"]), mapOf(mapOf(old["template"])["spec"]))
		// Any change of the template is a new generation.
		if !semanticEqual(obj["template"], old["template"]) {
			md := child(obj, "metadata")
			md["generation"] = intAt(mapOf(old["metadata"]), "generation") + 1
		}
	}
	validate := func(obj registry.Object) apierr.FieldErrors {
		return r.validatePodTemplateSpec(mapOf(obj["template"]), pathOf("template"))
	}
	d.Strategy.Validate = validate
	d.Strategy.ValidateUpdate = func(obj, _ registry.Object) apierr.FieldErrors { return validate(obj) }
	d.Strategy.Warnings = r.templateWarnings("template")
	return d
}
