package builtin

import (
	"fmt"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
)

// Priority bounds: users may define priorities up to a billion; the
// system classes sit above, so no user pod can preempt them.
const (
	highestUserPriority  = 1_000_000_000
	systemCriticalValue  = 2 * highestUserPriority
	systemPriorityPrefix = "system-"
)

// systemPriorityClass is one of the classes the server creates at start.
type systemPriorityClass struct {
	name, description string
	value             int64
}

var systemPriorityClasses = []systemPriorityClass{
	{"system-node-critical", "Used for system critical pods that must not be moved from their current node.", systemCriticalValue + 1000},
	{"system-cluster-critical", "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.", systemCriticalValue},
}

// SystemPriorityClasses returns the priority classes every cluster has,
// as objects to create at start. The caller owns the returned objects.
func SystemPriorityClasses(b config.Brand) []registry.Object {
	out := make([]registry.Object, 0, len(systemPriorityClasses))
	for _, pc := range systemPriorityClasses {
		out = append(out, registry.Object{
			"apiVersion": b.Group("scheduling") + "/v1", "kind": "PriorityClass",
			"metadata":         map[string]any{"name": pc.name},
			"value":            pc.value,
			"description":      pc.description,
			"preemptionPolicy": defaultPreemptionPolicy,
		})
	}
	return out
}

func schedulingV1(b config.Brand) []*registry.Descriptor {
	return []*registry.Descriptor{priorityClasses(b.Group("scheduling"))}
}

// priorityClasses: a name for a pod priority. Only one class may be the
// global default: priorityAdmission checks that, as upstream's Priority
// admission plugin.
func priorityClasses(group string) *registry.Descriptor {
	d := groupType(group, "priorityclasses", "priorityclass", "PriorityClass", false, "pc")
	d.Strategy.Default = func(obj registry.Object) {
		if !has(obj, "preemptionPolicy") {
			obj["preemptionPolicy"] = defaultPreemptionPolicy
		}
	}
	d.Strategy.Validate = validatePriorityClass
	// An update checks only what may not change, as upstream.
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		var errs apierr.FieldErrors
		if v, ok := intOf(obj["value"]); !ok || v != intAt(old, "value") {
			errs = append(errs, apierr.Forbidden("value", "may not be changed in an update."))
		}
		if pp := strOf(obj["preemptionPolicy"]); pp != strOf(old["preemptionPolicy"]) {
			errs = append(errs, apierr.Invalid("preemptionPolicy", pp, msgImmutable))
		}
		return errs
	}
	d.Strategy.ForbidDelete = func(name string) string {
		for _, pc := range systemPriorityClasses {
			if pc.name == name {
				return "this is a system priority class and cannot be deleted"
			}
		}
		return ""
	}
	return d
}

func validatePriorityClass(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	name := str(obj, "metadata", "name")
	value := intAt(obj, "value")
	if strings.HasPrefix(name, systemPriorityPrefix) {
		if msg := systemClassMismatch(name, value, boolOf(obj["globalDefault"])); msg != "" {
			errs = append(errs, apierr.Forbidden("metadata.name", "priority class names with '"+systemPriorityPrefix+"' prefix are reserved for system use only. error: "+msg))
		}
	} else if value > highestUserPriority {
		errs = append(errs, apierr.Forbidden("value", fmt.Sprintf("maximum allowed value of a user defined priority is %d", highestUserPriority)))
	}
	if has(obj, "preemptionPolicy") {
		switch pp := strOf(obj["preemptionPolicy"]); {
		case contains(preemptionPolicies, pp):
		case pp == "":
			errs = append(errs, apierr.Required("preemptionPolicy", ""))
		default:
			errs = append(errs, notSupported(pathOf("preemptionPolicy"), pp, preemptionPolicies...))
		}
	}
	return errs
}

// systemClassMismatch says how a class with the system prefix differs from
// the system class of its name, or "" when it is that class.
func systemClassMismatch(name string, value int64, globalDefault bool) string {
	for _, pc := range systemPriorityClasses {
		if pc.name != name {
			continue
		}
		if pc.value != value {
			return fmt.Sprintf("value of %s PriorityClass must be %d", pc.name, pc.value)
		}
		if globalDefault {
			return fmt.Sprintf("globalDefault of %s PriorityClass must be false", pc.name)
		}
		return ""
	}
	return name + " is not a known system priority class"
}
