package builtin

import (
	"platd/server/apierr"
	"platd/server/quota"
	"platd/server/registry"
)

// replicationControllers are core v1's replica sets: a label map selects
// their pods, and deleting one orphans its pods unless asked otherwise, for
// the clients written before garbage collection.
func replicationControllers(r podRules) *registry.Descriptor {
	d := core("replicationcontrollers", "replicationcontroller", "ReplicationController", true, "rc")
	d.Quota = quota.Count("", "replicationcontrollers", "replicationcontrollers")
	d.Categories = categoryAll
	d.Subresources = []registry.Subresource{scaleOf(true), {Name: "status", Verbs: statusVerbs, Keep: keepSpec}}
	d.Subresources[0].Scale.NotFoundAsScale = true
	d.FieldSelectors = map[string]registry.FieldSelector{"status.replicas": intField("status", "replicas")}
	d.FieldLabels.Refusal = registry.FieldLabelNotSupported
	d.Strategy.OrphanByDefault = true
	d.Strategy.Default = func(obj registry.Object) {
		spec := child(obj, "spec")
		tmpl := mapOf(spec["template"])
		if labels := templateLabels(tmpl); labels != nil {
			if len(mapOf(spec["selector"])) == 0 {
				spec["selector"] = copyLabels(labels)
			}
			md := child(obj, "metadata")
			if len(mapOf(md["labels"])) == 0 {
				md["labels"] = copyLabels(labels)
			}
		}
		setDefault(spec, "replicas", int64(1))
		defaultTemplate(tmpl)
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		startGeneration(obj)
		dropTemplateFields(mapAt(obj, "spec", "template"), nil)
	}
	d.Strategy.PrepareForUpdate = templateWorkloadUpdate(d)
	validate := func(obj registry.Object) apierr.FieldErrors {
		return r.validateReplicationControllerSpec(mapOf(obj["spec"]))
	}
	d.Strategy.Validate = validate
	d.Strategy.ValidateUpdate = func(obj, _ registry.Object) apierr.FieldErrors { return validate(obj) }
	setStatusRules(d, func(obj, _ registry.Object) apierr.FieldErrors {
		return validateReplicaStatus(mapOf(obj["status"]))
	})
	d.Strategy.Warnings = withNameWarning(workloadNameWarning, r.templateWarnings("spec", "template"))
	return d
}

func (r podRules) validateReplicationControllerSpec(spec map[string]any) apierr.FieldErrors {
	errs := nonNegative(spec, pathOf("spec"), "minReadySeconds")
	set := mapOf(spec["selector"])
	if len(set) == 0 {
		errs = append(errs, apierr.Required("spec.selector", ""))
	}
	// A selector that does not convert counts as empty: it picks any
	// template.
	sel, _ := convertSet(set)
	errs = append(errs, nonNegative(spec, pathOf("spec"), "replicas")...)
	return append(errs, r.validateReplicatedTemplate(mapOf(spec["template"]), sel, pathOf("spec.template"), "ReplicationController", intAt(spec, "replicas") > 1)...)
}

// copyLabels copies a label map.
func copyLabels(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
