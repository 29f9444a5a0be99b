package printers

import (
	"time"

	"platd/config"
	"platd/server/registry"
)

func addAdmission(p *Printers, b config.Brand) {
	g := b.Group("admissionregistration")
	webhooks := func() *registry.Table {
		return columns(
			nameColumn(),
			col("Webhooks", "integer", "Number of webhooks in the configuration.", count("webhooks")),
			ageColumn(),
		)
	}
	p.add(g, "v1", "mutatingwebhookconfigurations", webhooks())
	p.add(g, "v1", "validatingwebhookconfigurations", webhooks())
	p.add(g, "v1", "validatingadmissionpolicies", columns(
		nameColumn(),
		col("Validations", "integer", "Number of validation rules.", count("spec", "validations")),
		col("ParamKind", "string", "Kind of the parameter objects, as apiVersion/kind.", func(o registry.Object, _ time.Time) any {
			if !has(o, "spec", "paramKind") {
				return unset
			}
			return str(o, "spec", "paramKind", "apiVersion") + "/" + str(o, "spec", "paramKind", "kind")
		}),
		ageColumn(),
	))
	p.add(g, "v1", "validatingadmissionpolicybindings", columns(
		nameColumn(),
		col("PolicyName", "string", "Policy the binding applies.", text("spec", "policyName")),
		col("ParamRef", "string", "Parameter object of the binding.", func(o registry.Object, _ time.Time) any {
			return paramRef(object(o, "spec", "paramRef"))
		}),
		ageColumn(),
	))
}

// paramRef names the parameter of a policy binding: namespace/name, "*/name"
// when the namespace is not given, else the selector; "<unset>" without
// one.
func paramRef(ref map[string]any) string {
	switch {
	case ref == nil:
		return unset
	case str(ref, "name") != "":
		if ns := str(ref, "namespace"); ns != "" {
			return ns + "/" + str(ref, "name")
		}
		return "*/" + str(ref, "name")
	case has(ref, "selector"):
		return selectorStruct(object(ref, "selector"))
	}
	return unset
}
