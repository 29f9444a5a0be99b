package builtin

import (
	"context"
	"maps"
	"strconv"

	"platd/config"
	"platd/server/apierr"
	"platd/server/quota"
	"platd/server/registry"
)

// Pod phases that matter to the server.
const (
	podPending   = "Pending"
	podSucceeded = "Succeeded"
	podFailed    = "Failed"
)

// Defaults the admission steps of a pod create apply.
const (
	// defaultServiceAccount runs pods that name no account.
	defaultServiceAccount = "default"
	// defaultTolerationSeconds is how long a pod stays on a node that is
	// not ready or unreachable before it is evicted.
	defaultTolerationSeconds = int64(300)
	// defaultPreemptionPolicy and defaultPriority apply while no
	// PriorityClass is marked global default.
	defaultPreemptionPolicy = "PreemptLowerPriority"
	defaultPriority         = int64(0)
	// schedulingGatedMessage explains the condition of a gated pod.
	schedulingGatedMessage = "Scheduling is blocked due to non-empty scheduling gates"
)

func pods(b config.Brand, sv Services) *registry.Descriptor {
	d := core("pods", "pod", "Pod", true, "po")
	d.Quota = quota.Pods(b)
	d.ReturnDeleted = true // upstream answers DELETE with the removed object
	d.Categories = []string{"all"}
	r := newPodRules(b).under(sv)
	d.Subresources = podSubresources(r)
	d.Strategy.Default = defaultPod
	d.Strategy.PrepareForCreate = r.prepareForCreate
	d.Strategy.PrepareForUpdate = r.prepareForUpdate
	d.Strategy.AdmissionSteps = []registry.AdmissionStep{
		{Plugin: config.PluginLimitPodHardAntiAffinityTopology, Validate: newHardAntiAffinityLimit(b).validatePod},
		{Plugin: config.PluginAlwaysPullImages, Admit: admitAlwaysPull, Validate: validateAlwaysPull},
		{Plugin: config.PluginDefaultTolerationSeconds, Admit: r.admitDefaultTolerations},
		{Plugin: config.PluginExtendedResourceToleration, Admit: r.admitExtendedResourceTolerations},
	}
	d.Strategy.Validate = r.validatePodCreate
	d.Strategy.ValidateUpdate = r.validatePodUpdate
	d.Strategy.DeleteGrace = podDeletionGracePeriod
	d.FieldLabels = podFieldLabels
	d.FieldSelectors = podFieldSelectors
	d.Strategy.Warnings = withNameWarning(podNameWarning, r.podWarningsHook)
	return d
}

// podFieldLabels is core v1's field-label conversion of pods: spec.host
// still selects on spec.nodeName for older clients, and status.podIPs is
// accepted though no selectable field stands behind it, so that every pod
// reads it empty.
var podFieldLabels = registry.FieldLabels{
	Refusal: registry.FieldLabelNotSupported,
	Empty:   []string{"status.podIPs"},
	Aliases: map[string]string{"spec.host": "spec.nodeName"},
}

// podFieldSelectors are the fields a pod list may select on, as upstream:
// spec.hostNetwork reads "true" or "false", status.podIP the first of the
// pod's IPs.
var podFieldSelectors = map[string]registry.FieldSelector{
	"spec.nodeName":           fieldGetter("spec", "nodeName"),
	"spec.restartPolicy":      fieldGetter("spec", "restartPolicy"),
	"spec.schedulerName":      fieldGetter("spec", "schedulerName"),
	"spec.serviceAccountName": fieldGetter("spec", "serviceAccountName"),
	"spec.hostNetwork": {
		Get:   func(o registry.Object) string { return strconv.FormatBool(boolOf(mapOf(o["spec"])["hostNetwork"])) },
		Reads: [][]string{{"spec", "hostNetwork"}},
	},
	"status.phase":             fieldGetter("status", "phase"),
	"status.podIP":             {Get: podIP, Reads: [][]string{{"status", "podIPs"}, {"status", "podIP"}}},
	"status.nominatedNodeName": fieldGetter("status", "nominatedNodeName"),
}

func podIP(o registry.Object) string {
	st := mapOf(o["status"])
	if ips := mapsOf(st["podIPs"]); len(ips) > 0 {
		return strOf(ips[0]["ip"])
	}
	return strOf(st["podIP"])
}

// podDeletionGracePeriod is the grace period a pod's deletion gets: the
// requested one, else the pod's terminationGracePeriodSeconds (0 when
// unset); 0 for a pod no node runs (unscheduled, or finished), since no
// kubelet will confirm it; and 1 for a negative period.
func podDeletionGracePeriod(obj registry.Object, requested *int64) int64 {
	spec, status := mapOf(obj["spec"]), mapOf(obj["status"])
	var period int64
	if requested != nil {
		period = *requested
	} else if has(spec, "terminationGracePeriodSeconds") {
		period = intAt(spec, "terminationGracePeriodSeconds")
	}
	if strOf(spec["nodeName"]) == "" {
		period = 0
	}
	if phase := strOf(status["phase"]); phase == podFailed || phase == podSucceeded {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	return period
}

// prepareForCreate applies what a pod create does after admission:
// fields of disabled features dropped, and a fresh status. Admission (the
// default tolerations, the service account, the priority) is the
// AdmissionSteps'.
func (r podRules) prepareForCreate(obj registry.Object) {
	spec := child(obj, "spec")
	dropDisabledPodSpecFields(spec, nil)
	syncServiceAccount(spec)
	status := map[string]any{"phase": podPending, "qosClass": podQOSClass(spec)}
	if len(listOf(spec["schedulingGates"])) > 0 {
		status["conditions"] = []any{map[string]any{
			"type": "PodScheduled", "status": "False", "reason": "SchedulingGated", "message": schedulingGatedMessage,
		}}
	}
	obj["status"] = status
	applyMatchLabelKeys(spec, mapOf(mapOf(obj["metadata"])["labels"]))
}

// prepareForUpdate applies what an update of a pod or its status does
// before validation.
func (r podRules) prepareForUpdate(obj, old registry.Object, sub string) {
	switch sub {
	case "":
		spec, oldSpec := child(obj, "spec"), mapOf(old["spec"])
		dropDisabledPodSpecFields(spec, oldSpec)
	case "status":
		status, oldStatus := child(obj, "status"), mapOf(old["status"])
		// The class is fixed at create; a writer that drops it keeps it.
		if strOf(status["qosClass"]) == "" && has(oldStatus, "qosClass") {
			status["qosClass"] = oldStatus["qosClass"]
		}
		syncIPs(status, "podIP", "podIPs")
		syncIPs(status, "hostIP", "hostIPs")
	}
}

// admitDefaultTolerations is DefaultTolerationSeconds' step: it adds the
// default tolerations to a pod written, in the mutating admission, so
// the webhooks see them.
func (r podRules) admitDefaultTolerations(_ context.Context, _ registry.Lookup, obj, _ registry.Object) error {
	r.addDefaultTolerations(child(obj, "spec"))
	return nil
}

// addDefaultTolerations lets a pod stay on a node that is not ready or
// unreachable for a while, unless it already tolerates that taint.
func (r podRules) addDefaultTolerations(spec map[string]any) {
	notReady, unreachable := false, false
	for _, t := range mapsOf(spec["tolerations"]) {
		key, effect := strOf(t["key"]), strOf(t["effect"])
		if effect != "" && effect != "NoExecute" {
			continue
		}
		notReady = notReady || key == "" || key == r.notReadyTaint
		unreachable = unreachable || key == "" || key == r.unreachableTaint
	}
	list := listOf(spec["tolerations"])
	// The copies share the templates' member values, which are scalars.
	if !notReady {
		list = append(list, maps.Clone(r.notReadyToleration))
	}
	if !unreachable {
		list = append(list, maps.Clone(r.unreachableToleration))
	}
	if len(list) > 0 {
		spec["tolerations"] = list
	}
}

// syncIPs keeps a status's single IP and its list agreeing, as upstream's
// conversion does: the single value wins when both are given and differ,
// and is always the first of the list.
func syncIPs(status map[string]any, one, many string) {
	ip, list := strOf(status[one]), mapsOf(status[many])
	if ip != "" && (len(list) == 0 || strOf(list[0]["ip"]) != ip) {
		status[many] = []any{map[string]any{"ip": ip}}
		return
	}
	if len(list) > 0 {
		status[one] = strOf(list[0]["ip"])
	}
}

// applyMatchLabelKeys turns the matchLabelKeys and mismatchLabelKeys of a
// pod's affinity terms into selector requirements on the pod's own label
// values, as upstream does when a pod is created.
func applyMatchLabelKeys(spec, labels map[string]any) {
	aff := mapOf(spec["affinity"])
	for _, kind := range []string{"podAffinity", "podAntiAffinity"} {
		pa := mapOf(aff[kind])
		var terms []map[string]any
		for _, wt := range mapsOf(pa["preferredDuringSchedulingIgnoredDuringExecution"]) {
			terms = append(terms, mapOf(wt["podAffinityTerm"]))
		}
		terms = append(terms, mapsOf(pa["requiredDuringSchedulingIgnoredDuringExecution"])...)
		for _, term := range terms {
			sel := mapOf(term["labelSelector"])
			if sel == nil {
				continue
			}
			exprs := listOf(sel["matchExpressions"])
			for _, k := range []struct{ member, op string }{{"matchLabelKeys", "In"}, {"mismatchLabelKeys", "NotIn"}} {
				for _, key := range listOf(term[k.member]) {
					if v, ok := labels[strOf(key)]; ok {
						exprs = append(exprs, map[string]any{"key": strOf(key), "operator": k.op, "values": []any{strOf(v)}})
					}
				}
			}
			if len(exprs) > 0 {
				sel["matchExpressions"] = exprs
			}
		}
	}
}

// validatePodMetadataAndSpec applies the rules of a pod on create and on
// update: its annotations with a meaning, its spec as a pod's, and the
// checks upstream makes only for pods, not templates.
func (r podRules) validatePodMetadataAndSpec(obj registry.Object, allowInvalidCost bool) apierr.FieldErrors {
	md, spec := mapOf(obj["metadata"]), mapOf(obj["spec"])
	sp := pathOf("spec")
	errs := r.validatePodSpecificAnnotations(mapOf(md["annotations"]), spec, pathOf("metadata.annotations"), allowInvalidCost)
	errs = append(errs, r.validatePodSpec(spec, sp, podSpecOptions{resourceIsPod: true, podName: strOf(md["name"])})...)
	if strOf(spec["serviceAccountName"]) == "" {
		for vi, vol := range mapsOf(spec["volumes"]) {
			for si, src := range mapsOf(mapOf(vol["projected"])["sources"]) {
				if has(src, "serviceAccountToken") {
					p := sp.child("volumes").index(vi).child("projected", "sources").index(si).child("serviceAccountToken")
					errs = append(errs, apierr.Forbidden(p.String(), "must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	for _, kind := range []string{"containers", "initContainers"} {
		for i, c := range mapsOf(spec[kind]) {
			errs = append(errs, imageWhitespace(c, sp.child(kind).index(i))...)
		}
	}
	return errs
}

// validatePodCreate checks a new pod.
func (r podRules) validatePodCreate(obj registry.Object) apierr.FieldErrors {
	errs := r.validatePodMetadataAndSpec(obj, false)
	spec := mapOf(obj["spec"])
	if len(listOf(spec["ephemeralContainers"])) > 0 {
		errs = append(errs, apierr.Forbidden("spec.ephemeralContainers", "cannot be set on create"))
	}
	if strOf(spec["nodeName"]) != "" && len(listOf(spec["schedulingGates"])) > 0 {
		errs = append(errs, apierr.Forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
	}
	return errs
}
