package builtin

import (
	"context"
	"fmt"

	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
)

// runtimeClassAdmission fits a new pod to the RuntimeClass it names, as
// upstream's RuntimeClass admission plugin: the class must exist, its
// fixed overhead becomes the pod's, and its scheduling constraints join
// the pod's. classes is the RuntimeClass descriptor. Only creates are
// admitted: a pod's runtime class and overhead never change.
type runtimeClassAdmission struct{ classes *registry.Descriptor }

// Upstream's refusals of a pod that does not fit its class.
const (
	overheadMismatchMsg = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
	overheadNoClassMsg  = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
)

// admitPod sets the overhead of a new pod from its class, refusing one
// the pod gives that differs, and merges the class's node selector and
// tolerations into the pod's.
func (a runtimeClassAdmission) admitPod(_ context.Context, l registry.Lookup, obj, old registry.Object) error {
	if old != nil {
		return nil
	}
	spec := child(obj, "spec")
	rc, err := a.class(l, spec)
	if err != nil || rc == nil {
		return err
	}
	if overhead, ok := rc["overhead"].(map[string]any); ok {
		fixed := mapOf(overhead["podFixed"])
		if present(spec, "overhead") && !sameResources(fixed, mapOf(spec["overhead"])) {
			return &registry.Denial{Reason: overheadMismatchMsg}
		}
		if fixed == nil {
			delete(spec, "overhead")
		} else {
			spec["overhead"] = schema.DeepCopy(fixed)
		}
	}
	sched, ok := rc["scheduling"].(map[string]any)
	if !ok {
		return nil
	}
	classSelector := mapOf(sched["nodeSelector"])
	if podSelector, ok := spec["nodeSelector"].(map[string]any); ok {
		for _, k := range sortedKeys(classSelector) {
			want := strOf(classSelector[k])
			if got, ok := podSelector[k]; ok && strOf(got) != want {
				return &registry.Denial{Reason: fmt.Sprintf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, want, k, strOf(got))}
			}
			podSelector[k] = want
		}
	} else if classSelector != nil {
		spec["nodeSelector"] = schema.DeepCopy(classSelector)
	}
	merged := mergeTolerations(mapsOf(spec["tolerations"]), mapsOf(schema.DeepCopy(sched["tolerations"])))
	if len(merged) > 0 {
		list := make([]any, len(merged))
		for i, t := range merged {
			list[i] = t
		}
		spec["tolerations"] = list
	}
	return nil
}

// validatePod checks that a new valid pod's overhead is its class's, or
// that it has none when its class defines none.
func (a runtimeClassAdmission) validatePod(_ context.Context, l registry.Lookup, obj, old registry.Object) error {
	if old != nil {
		return nil
	}
	spec := mapOf(obj["spec"])
	rc, err := a.class(l, spec)
	if err != nil {
		return err
	}
	if overhead, ok := rc["overhead"].(map[string]any); ok {
		if !sameResources(mapOf(overhead["podFixed"]), mapOf(spec["overhead"])) {
			return &registry.Denial{Reason: overheadMismatchMsg}
		}
		return nil
	}
	if present(spec, "overhead") {
		return &registry.Denial{Reason: overheadNoClassMsg}
	}
	return nil
}

// class returns the RuntimeClass a pod spec names, nil when it names
// none; a missing class refuses the pod.
func (a runtimeClassAdmission) class(l registry.Lookup, spec map[string]any) (registry.Object, error) {
	name := strOf(spec["runtimeClassName"])
	if name == "" {
		// An empty name is refused by the pod's validation.
		return nil, nil
	}
	rc, err := l.Get(a.classes, "", name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil, &registry.Denial{Reason: fmt.Sprintf("pod rejected: RuntimeClass %q not found", name)}
	}
	return rc, err
}

// sameResources reports whether two resource lists hold the same amounts
// of the same resources; an empty list equals an absent one.
func sameResources(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok {
			return false
		}
		qa, okA := schema.AmountOf(v)
		qb, okB := schema.AmountOf(w)
		if !okA || !okB {
			if strOf(v) != strOf(w) {
				return false
			}
			continue
		}
		if qa.Cmp(qb) != 0 {
			return false
		}
	}
	return true
}

// mergeTolerations joins two toleration lists, first's before second's,
// leaving out each toleration another one kept tolerates a superset of;
// of two equal ones the first is kept.
func mergeTolerations(first, second []map[string]any) []map[string]any {
	all := append(append([]map[string]any{}, first...), second...)
	var merged []map[string]any
next:
	for i, t := range all {
		for _, m := range merged {
			if toleratesSuperset(m, t) {
				continue next
			}
		}
		for _, later := range all[i+1:] {
			if !sameToleration(t, later) && toleratesSuperset(later, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// toleratesSuperset reports whether ss tolerates every taint t does. An
// empty key with Exists matches every key, an empty effect every effect;
// a NoExecute toleration with a time bound covers only shorter stays.
func toleratesSuperset(ss, t map[string]any) bool {
	if sameToleration(ss, t) {
		return true
	}
	ssOp, tOp := strOf(ss["operator"]), strOf(t["operator"])
	if strOf(t["key"]) != strOf(ss["key"]) && (strOf(ss["key"]) != "" || ssOp != tolerationOpExists) {
		return false
	}
	if strOf(t["effect"]) != strOf(ss["effect"]) && strOf(ss["effect"]) != "" {
		return false
	}
	if strOf(ss["effect"]) == taintNoExecute {
		if ssSecs, ok := intOf(ss["tolerationSeconds"]); ok {
			tSecs, ok := intOf(t["tolerationSeconds"])
			if !ok || tSecs > ssSecs {
				return false
			}
		}
	}
	switch ssOp {
	case tolerationOpEqual, "":
		return tOp == tolerationOpEqual && strOf(t["value"]) == strOf(ss["value"])
	case tolerationOpExists:
		return true
	default:
		return false
	}
}

// sameToleration reports whether two tolerations are equal field by field.
func sameToleration(a, b map[string]any) bool {
	if !tolerationsMatch(a, b) {
		return false
	}
	sa, okA := intOf(a["tolerationSeconds"])
	sb, okB := intOf(b["tolerationSeconds"])
	return okA == okB && sa == sb
}
