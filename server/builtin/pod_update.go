package builtin

import (
	"fmt"
	"math"
	"strings"

	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
)

// updatablePodSpecFields is the list the pod update error names.
var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// validatePodUpdate checks an update of a pod itself: the pod rules, then
// that its spec changes only where a running pod can change: images,
// a shorter active deadline, added tolerations, removed scheduling gates,
// and (while gated) added node selector labels.
func (r podRules) validatePodUpdate(obj, old registry.Object) apierr.FieldErrors {
	oldAnn := mapOf(mapOf(old["metadata"])["annotations"])
	_, costErr := oldAnn[r.deletionCostKey]
	allowInvalidCost := costErr && !validDeletionCost(strOf(oldAnn[r.deletionCostKey]))
	errs := r.validatePodMetadataAndSpec(obj, allowInvalidCost)
	errs = append(errs, r.validateAnnotationUpdates(obj, old, allowInvalidCost)...)

	spec, oldSpec := mapOf(obj["spec"]), mapOf(old["spec"])
	sp := pathOf("spec")
	for _, kind := range []string{"containers", "initContainers"} {
		ctrs, oldCtrs := mapsOf(spec[kind]), mapsOf(oldSpec[kind])
		if len(ctrs) != len(oldCtrs) {
			return append(errs, apierr.Forbidden(sp.child(kind).String(), "pod updates may not add or remove containers"))
		}
		for i, c := range ctrs {
			if strOf(c["image"]) == "" {
				errs = append(errs, apierr.Required(sp.child(kind).index(i).child("image").String(), ""))
			}
			errs = append(errs, imageWhitespace(c, sp.child(kind).index(i))...)
		}
	}
	adp := sp.child("activeDeadlineSeconds").String()
	if has(spec, "activeDeadlineSeconds") {
		v := intAt(spec, "activeDeadlineSeconds")
		if v < 0 || v > math.MaxInt32 {
			return append(errs, apierr.Invalid(adp, v, inclusiveRange(0, math.MaxInt32)))
		}
		if has(oldSpec, "activeDeadlineSeconds") && intAt(oldSpec, "activeDeadlineSeconds") < v {
			return append(errs, apierr.Invalid(adp, v, "must be less than or equal to previous value"))
		}
	} else if has(oldSpec, "activeDeadlineSeconds") {
		errs = append(errs, apierr.Invalid(adp, nil, "must not update from a positive integer to nil value"))
	}
	errs = append(errs, onlyAddedTolerations(spec["tolerations"], oldSpec["tolerations"], sp.child("tolerations"))...)
	errs = append(errs, onlyDeletedSchedulingGates(spec["schedulingGates"], oldSpec["schedulingGates"], sp.child("schedulingGates"))...)
	if semanticEqual(spec, oldSpec) {
		return errs
	}
	munged := mungePodSpec(spec, oldSpec)
	if len(listOf(oldSpec["schedulingGates"])) > 0 && !semanticEqual(munged["nodeSelector"], oldSpec["nodeSelector"]) {
		// A gated pod may gain node selector labels.
		newSel, oldSel := mapOf(munged["nodeSelector"]), mapOf(oldSpec["nodeSelector"])
		for _, k := range sortedKeys(oldSel) {
			if v, ok := newSel[k]; !ok || strOf(v) != strOf(oldSel[k]) {
				errs = append(errs, apierr.Invalid(sp.child("nodeSelector").String(), stringMap(newSel), "only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
				break
			}
		}
		setOrDelete(munged, "nodeSelector", oldSpec)
	}
	if !semanticEqual(munged, oldSpec) {
		msg := "pod updates may not change fields other than " + strings.Join(updatablePodSpecFields, ",") + "\n" + specDiff(oldSpec, munged)
		errs = append(errs, apierr.Forbidden(sp.String(), msg))
	}
	return errs
}

// mungePodSpec returns a copy of spec with the fields an update may change
// set back to their stored values.
func mungePodSpec(spec, oldSpec map[string]any) map[string]any {
	munged := deepCopyMap(spec)
	for _, kind := range []string{"containers", "initContainers"} {
		oldCtrs := mapsOf(oldSpec[kind])
		for i, c := range mapsOf(munged[kind]) {
			setOrDelete(c, "image", oldCtrs[i])
		}
	}
	for _, f := range []string{"activeDeadlineSeconds", "schedulingGates", "tolerations"} {
		setOrDelete(munged, f, oldSpec)
	}
	if has(oldSpec, "terminationGracePeriodSeconds") && intAt(oldSpec, "terminationGracePeriodSeconds") < 0 &&
		has(munged, "terminationGracePeriodSeconds") && intAt(munged, "terminationGracePeriodSeconds") == 1 {
		munged["terminationGracePeriodSeconds"] = oldSpec["terminationGracePeriodSeconds"]
	}
	return munged
}

// setOrDelete copies member key of from into m, or removes it.
func setOrDelete(m map[string]any, key string, from map[string]any) {
	if v, ok := from[key]; ok {
		m[key] = v
	} else {
		delete(m, key)
	}
}

// deepCopyMap copies a decoded object or member, so that changing the
// copy leaves m as it was.
func deepCopyMap(m map[string]any) map[string]any {
	out, _ := schema.DeepCopy(m).(map[string]any)
	return out
}

// stringMap reads a label map as map[string]string, which field errors
// print as upstream prints one.
func stringMap(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = strOf(v)
	}
	return out
}

// onlyAddedTolerations requires every stored toleration to remain, with
// only its tolerationSeconds changed, then checks the new list.
func onlyAddedTolerations(list, oldList any, p fieldPath) apierr.FieldErrors {
	tolerations := mapsOf(list)
	for _, old := range mapsOf(oldList) {
		found := false
		for _, t := range tolerations {
			clone := deepCopyMap(old)
			setOrDelete(clone, "tolerationSeconds", t)
			if semanticEqual(clone, t) {
				found = true
				break
			}
		}
		if !found {
			return apierr.FieldErrors{apierr.Forbidden(p.String(), "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return validateTolerations(list, p)
}

// onlyDeletedSchedulingGates forbids new scheduling gates.
func onlyDeletedSchedulingGates(list, oldList any, p fieldPath) apierr.FieldErrors {
	old := map[string]bool{}
	for _, g := range mapsOf(oldList) {
		old[strOf(g["name"])] = true
	}
	gates := mapsOf(list)
	last := map[string]int{}
	for i, g := range gates {
		last[strOf(g["name"])] = i
	}
	var errs apierr.FieldErrors
	for i, g := range gates {
		name := strOf(g["name"])
		if old[name] || last[name] != i {
			continue
		}
		errs = append(errs, apierr.Forbidden(p.index(i).child("name").String(), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", name)))
	}
	return errs
}

// validateAnnotationUpdates forbids adding, changing or removing the
// mirror pod annotation and AppArmor annotations, then rechecks the pod's
// annotations with a meaning.
func (r podRules) validateAnnotationUpdates(obj, old registry.Object, allowInvalidCost bool) apierr.FieldErrors {
	ann, oldAnn := mapOf(mapOf(obj["metadata"])["annotations"]), mapOf(mapOf(old["metadata"])["annotations"])
	p := pathOf("metadata.annotations")
	appArmorPrefix := "container.apparmor.security.beta." + r.longDomain + "/"
	var errs apierr.FieldErrors
	for _, k := range sortedKeys(oldAnn) {
		if v, ok := ann[k]; ok && strOf(v) == strOf(oldAnn[k]) {
			continue
		}
		if strings.HasPrefix(k, appArmorPrefix) {
			errs = append(errs, apierr.Forbidden(p.key(k).String(), "may not remove or update AppArmor annotations"))
		}
		if k == r.mirrorAnnotation {
			errs = append(errs, apierr.Forbidden(p.key(k).String(), "may not remove or update mirror pod annotation"))
		}
	}
	for _, k := range sortedKeys(ann) {
		if _, ok := oldAnn[k]; ok {
			continue
		}
		if strings.HasPrefix(k, appArmorPrefix) {
			errs = append(errs, apierr.Forbidden(p.key(k).String(), "may not add AppArmor annotations"))
		}
		if k == r.mirrorAnnotation {
			errs = append(errs, apierr.Forbidden(p.key(k).String(), "may not add mirror pod annotation"))
		}
	}
	return append(errs, r.validatePodSpecificAnnotations(ann, mapOf(obj["spec"]), p, allowInvalidCost)...)
}

// systemPodConditions are the condition types the kubelet owns; others
// must be qualified names.
var systemPodConditions = []string{"PodScheduled", "Ready", "Initialized"}

// validatePodStatusUpdate checks a status write: condition types, the
// nominated node, the fixed QoS class, container states that may not go
// back from terminated, and the pod's and host's IPs.
func (r podRules) validatePodStatusUpdate(obj, old registry.Object) apierr.FieldErrors {
	oldAnn := mapOf(mapOf(old["metadata"])["annotations"])
	_, hadCost := oldAnn[r.deletionCostKey]
	errs := r.validateAnnotationUpdates(obj, old, hadCost && !validDeletionCost(strOf(oldAnn[r.deletionCostKey])))
	status, oldStatus := mapOf(obj["status"]), mapOf(old["status"])
	spec, oldSpec := mapOf(obj["spec"]), mapOf(old["spec"])
	for i, cond := range mapsOf(status["conditions"]) {
		if t := strOf(cond["type"]); !contains(systemPodConditions, t) {
			// Upstream reports condition types under metadata.
			errs = append(errs, qualifiedName(t, pathOf("metadata.conditions").index(i).child("Type"))...)
		}
	}
	sp := pathOf("status")
	if strOf(spec["nodeName"]) != strOf(oldSpec["nodeName"]) {
		errs = append(errs, apierr.Forbidden(sp.child("nodeName").String(), "may not be changed directly"))
	}
	if nn := strOf(status["nominatedNodeName"]); nn != "" && nn != strOf(oldStatus["nominatedNodeName"]) {
		errs = append(errs, dnsSubdomain(nn, sp.child("nominatedNodeName"))...)
	}
	if qos, oldQOS := strOf(status["qosClass"]), strOf(oldStatus["qosClass"]); qos != oldQOS {
		errs = append(errs, apierr.Invalid(sp.child("qosClass").String(), qos, msgImmutable))
	}
	restart := strOf(oldSpec["restartPolicy"])
	errs = append(errs, stateTransitions(status["containerStatuses"], oldStatus["containerStatuses"], sp.child("containerStatuses"), restart, nil)...)
	errs = append(errs, stateTransitions(status["initContainerStatuses"], oldStatus["initContainerStatuses"], sp.child("initContainerStatuses"), restart, sidecarNames(oldSpec))...)
	errs = append(errs, stateTransitions(status["ephemeralContainerStatuses"], oldStatus["ephemeralContainerStatuses"], sp.child("ephemeralContainerStatuses"), "Never", nil)...)
	errs = append(errs, validateStatusIPs(status, "podIPs", "PodIP", false)...)
	return append(errs, validateStatusIPs(status, "hostIPs", "HostIP", true)...)
}

// sidecarNames are the init containers that restart, which may leave the
// terminated state.
func sidecarNames(spec map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, c := range mapsOf(spec["initContainers"]) {
		if strOf(c["restartPolicy"]) == defaultRestartPolicy {
			out[strOf(c["name"])] = true
		}
	}
	return out
}

// stateTransitions forbids a terminated container that will not be
// restarted from reporting any other state.
func stateTransitions(list, oldList any, p fieldPath, restartPolicy string, restartable map[string]bool) apierr.FieldErrors {
	if restartPolicy == defaultRestartPolicy {
		return nil
	}
	var errs apierr.FieldErrors
	for i, old := range mapsOf(oldList) {
		term := mapOf(mapOf(old["state"])["terminated"])
		if term == nil || intAt(term, "exitCode") != 0 && restartPolicy == "OnFailure" || restartable[strOf(old["name"])] {
			continue
		}
		for _, st := range mapsOf(list) {
			if strOf(st["name"]) == strOf(old["name"]) && !has(mapOf(st["state"]), "terminated") {
				errs = append(errs, apierr.Forbidden(p.index(i).child("state").String(), "may not be transitioned to non-terminated state"))
			}
		}
	}
	return errs
}

// goValue prints as it is in a field error: the Go syntax upstream's
// values of its own types print with.
type goValue string

func (v goValue) GoString() string { return string(v) }

// validateStatusIPs checks podIPs or hostIPs: valid addresses, at most one
// per family, no duplicates; hostIPs must also start with hostIP.
func validateStatusIPs(status map[string]any, member, goType string, checkFirst bool) apierr.FieldErrors {
	list := mapsOf(status[member])
	if len(list) == 0 {
		return nil
	}
	p := pathOf("status").child(member)
	var errs apierr.FieldErrors
	if checkFirst && strOf(status["hostIP"]) != strOf(list[0]["ip"]) {
		errs = append(errs, apierr.Invalid(p.index(0).child("ip").String(), strOf(list[0]["ip"]), "must be equal to `hostIP`"))
	}
	ips := make([]string, len(list))
	items := make([]string, len(list))
	for i, e := range list {
		ips[i] = strOf(e["ip"])
		items[i] = fmt.Sprintf("core.%s{IP:%q}", goType, ips[i])
		errs = append(errs, validateIP(ips[i], p.index(i))...)
	}
	if len(list) < 2 {
		return errs
	}
	seen := map[string]bool{}
	var dups apierr.FieldErrors
	for i, ip := range ips {
		if seen[ip] {
			dups = append(dups, apierr.Duplicate(p.index(i).String(), goValue(items[i])))
		}
		seen[ip] = true
	}
	all := goValue("[]core." + goType + "{" + strings.Join(items, ", ") + "}")
	oneFamily := !isDualStack(ips) || len(ips) > 2
	if checkFirst {
		// For host IPs upstream reports duplicates before the family rule.
		errs = append(errs, dups...)
	}
	if oneFamily {
		errs = append(errs, apierr.Invalid(p.String(), all, "may specify no more than one IP for each IP family"))
	}
	if !checkFirst {
		errs = append(errs, dups...)
	}
	return errs
}

// isDualStack reports whether valid addresses of both families are given.
func isDualStack(ips []string) bool {
	v4, v6 := false, false
	for _, s := range ips {
		ip := parseIPSloppy(s)
		if ip == nil {
			return false
		}
		if ip.To4() != nil {
			v4 = true
		} else {
			v6 = true
		}
	}
	return v4 && v6
}
