package builtin

import (
	"context"
	"fmt"

	"platd/server/apierr"
	"platd/server/registry"
)

// priorityAdmission gives a new pod the priority of its PriorityClass, or
// of the global default class, and keeps a second class from becoming the
// global default, as upstream's Priority admission plugin. classes is the
// PriorityClass descriptor.
type priorityAdmission struct{ classes *registry.Descriptor }

// admitPod resolves the priority of a pod being created: the class it
// names must exist; naming none, it takes the global default class's name,
// else priority 0. A priority or preemption policy the pod gives must be
// what the class says. An update that leaves out the priority or the
// policy keeps the stored one; validation refuses any other change.
func (p priorityAdmission) admitPod(_ context.Context, l registry.Lookup, obj, old registry.Object) error {
	spec := child(obj, "spec")
	if old != nil {
		oldSpec := mapOf(old["spec"])
		for _, f := range []string{"priority", "preemptionPolicy"} {
			if !has(spec, f) && has(oldSpec, f) {
				spec[f] = oldSpec[f]
			}
		}
		return nil
	}
	name := strOf(spec["priorityClassName"])
	value, policy := defaultPriority, defaultPreemptionPolicy
	if name == "" {
		pc, err := p.globalDefault(l)
		if err != nil {
			return fmt.Errorf("failed to get default priority class: %v", err)
		}
		if pc != nil {
			value, policy = intAt(pc, "value"), strOf(pc["preemptionPolicy"])
			spec["priorityClassName"] = str(pc, "metadata", "name")
		}
	} else {
		pc, err := l.Get(p.classes, "", name)
		if apierr.ReasonOf(err) == apierr.ReasonNotFound {
			return &registry.Denial{Reason: fmt.Sprintf("no PriorityClass with name %s was found", name)}
		}
		if err != nil {
			return fmt.Errorf("failed to get PriorityClass with name %s: %v", name, err)
		}
		value, policy = intAt(pc, "value"), strOf(pc["preemptionPolicy"])
	}
	if has(spec, "priority") {
		if given := intAt(spec, "priority"); given != value {
			return &registry.Denial{Reason: fmt.Sprintf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", given, value)}
		}
	}
	spec["priority"] = value
	// A class stored without a policy leaves the pod's as it is.
	if policy == "" {
		return nil
	}
	if has(spec, "preemptionPolicy") {
		if given := strOf(spec["preemptionPolicy"]); given != policy {
			return &registry.Denial{Reason: fmt.Sprintf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", given, policy)}
		}
	}
	spec["preemptionPolicy"] = policy
	return nil
}

// validateClass refuses a class marked global default while another one
// is: on create whatever the other's name, on update when it is another.
func (p priorityAdmission) validateClass(_ context.Context, l registry.Lookup, obj, old registry.Object) error {
	if !boolOf(obj["globalDefault"]) {
		return nil
	}
	pc, err := p.globalDefault(l)
	if err != nil {
		return fmt.Errorf("failed to get default priority class: %v", err)
	}
	if pc == nil {
		return nil
	}
	if other := str(pc, "metadata", "name"); old == nil || other != str(obj, "metadata", "name") {
		return &registry.Denial{Reason: fmt.Sprintf("PriorityClass %s is already marked as default. Only one default can exist", other)}
	}
	return nil
}

// globalDefault returns the class marked global default, or nil. Should
// racing writes have marked several, the one of lowest value wins, as
// upstream.
func (p priorityAdmission) globalDefault(l registry.Lookup) (registry.Object, error) {
	list, _, err := l.List(p.classes, "")
	if err != nil {
		return nil, err
	}
	var found registry.Object
	for _, pc := range list {
		if boolOf(pc["globalDefault"]) && (found == nil || intAt(pc, "value") < intAt(found, "value")) {
			found = pc
		}
	}
	return found, nil
}
