package builtin

import (
	"strconv"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
)

// appsGroup has no domain, as upstream's.
const appsGroup = "apps"

// categoryAll puts a type in `kubectl get all`.
var categoryAll = []string{"all"}

func appsV1(b config.Brand, sv Services) []*registry.Descriptor {
	r := newPodRules(b).under(sv)
	return []*registry.Descriptor{
		controllerRevisions(), daemonSets(r), deployments(r), replicaSets(r), statefulSets(r),
	}
}

// workloadType is a namespaced workload of a group, in `all`, with a
// status subresource and, when scalable, a scale one.
func workloadType(group, resource, singular, kind string, scalable bool, short ...string) *registry.Descriptor {
	d := groupType(group, resource, singular, kind, true, short...)
	d.Categories = categoryAll
	if scalable {
		d.Subresources = append(d.Subresources, scaleOf(false))
	}
	d.Subresources = append(d.Subresources, registry.Subresource{Name: "status", Verbs: statusVerbs, Keep: keepSpec})
	return d
}

// setStatusRules makes writes through d's status subresource check status
// with check, in place of the spec rules.
func setStatusRules(d *registry.Descriptor, check func(obj, old registry.Object) apierr.FieldErrors) {
	d.Subresource("status").Validate = check
}

// Deployment defaults, as upstream's apps/v1.
const (
	defaultRevisionHistoryLimit    = int64(10)
	defaultProgressDeadlineSeconds = int64(600)
	defaultMaxUnavailablePercent   = "25%"
	defaultMaxSurgePercent         = "25%"
	strategyRollingUpdate          = "RollingUpdate"
	strategyRecreate               = "Recreate"
	strategyOnDelete               = "OnDelete"
)

func deployments(r podRules) *registry.Descriptor {
	d := workloadType(appsGroup, "deployments", "deployment", "Deployment", true, "deploy")
	// A deployment's status writes keep its labels too.
	d.Subresource("status").Keep = []string{"spec", "metadata.labels"}
	d.Strategy.Default = func(obj registry.Object) {
		spec := child(obj, "spec")
		setDefault(spec, "replicas", int64(1))
		strategy := child(spec, "strategy")
		setIfEmpty(strategy, "type", strategyRollingUpdate)
		if strOf(strategy["type"]) == strategyRollingUpdate {
			ru := child(strategy, "rollingUpdate")
			setDefault(ru, "maxUnavailable", defaultMaxUnavailablePercent)
			setDefault(ru, "maxSurge", defaultMaxSurgePercent)
		}
		setDefault(spec, "revisionHistoryLimit", defaultRevisionHistoryLimit)
		setDefault(spec, "progressDeadlineSeconds", defaultProgressDeadlineSeconds)
		defaultTemplate(mapOf(spec["template"]))
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		startGeneration(obj)
		dropTemplateFields(mapAt(obj, "spec", "template"), nil)
	}
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, sub string) {
		if sub != "" {
			return
		}
		dropTemplateFields(mapAt(obj, "spec", "template"), mapAt(old, "spec", "template"))
		// Annotations count too: the controller copies them to the
		// deployment's replica sets.
		if !sameMember(d.Schema, obj, old, "spec") || !semanticEqual(mapAt(obj, "metadata", "annotations"), mapAt(old, "metadata", "annotations")) {
			bumpGeneration(obj, old)
		}
	}
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return r.validateDeploymentSpec(mapOf(obj["spec"]))
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return append(r.validateDeploymentSpec(mapOf(obj["spec"])), immutableSelector(obj, old)...)
	}
	setStatusRules(d, func(obj, old registry.Object) apierr.FieldErrors {
		status := mapOf(obj["status"])
		errs := nonNegative(status, pathOf("status"), "observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")
		if present(status, "collisionCount") {
			errs = append(errs, nonNegative(status, pathOf("status"), "collisionCount")...)
		}
		errs = append(errs, notAbove(status, "replicas", replicasBound, "updatedReplicas", "readyReplicas", "availableReplicas")...)
		errs = append(errs, notAbove(status, "readyReplicas", "cannot be greater than readyReplicas", "availableReplicas")...)
		return append(errs, notDecremented(obj, old)...)
	})
	d.Strategy.Warnings = withNameWarning(workloadNameWarning, r.templateWarnings("spec", "template"))
	return d
}

// replicasBound is the detail of a status count above status.replicas.
const replicasBound = "cannot be greater than status.replicas"

func (r podRules) validateDeploymentSpec(spec map[string]any) apierr.FieldErrors {
	errs := nonNegative(spec, pathOf("spec"), "replicas")
	errs = append(errs, validateWorkloadSelector(spec, "deployment")...)
	errs = append(errs, r.validateSelectedTemplate(spec)...)
	errs = append(errs, validateDeploymentStrategy(mapOf(spec["strategy"]))...)
	errs = append(errs, nonNegative(spec, pathOf("spec"), "minReadySeconds")...)
	if present(spec, "revisionHistoryLimit") {
		errs = append(errs, nonNegative(spec, pathOf("spec"), "revisionHistoryLimit")...)
	}
	if present(spec, "progressDeadlineSeconds") {
		errs = append(errs, nonNegative(spec, pathOf("spec"), "progressDeadlineSeconds")...)
		if pd := intAt(spec, "progressDeadlineSeconds"); pd <= intAt(spec, "minReadySeconds") {
			errs = append(errs, apierr.Invalid("spec.progressDeadlineSeconds", pd, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

func validateDeploymentStrategy(strategy map[string]any) apierr.FieldErrors {
	const p = "spec.strategy"
	ru := mapOf(strategy["rollingUpdate"])
	switch t := strOf(strategy["type"]); t {
	case strategyRecreate:
		if ru != nil {
			return apierr.FieldErrors{apierr.Forbidden(p+".rollingUpdate", "may not be specified when strategy `type` is '"+strategyRecreate+"'")}
		}
	case strategyRollingUpdate:
		if ru == nil {
			return apierr.FieldErrors{apierr.Required(p+".rollingUpdate", "this should be defaulted and never be nil")}
		}
		errs := validateIntOrPercent(ru["maxUnavailable"], p+".rollingUpdate.maxUnavailable")
		errs = append(errs, validateIntOrPercent(ru["maxSurge"], p+".rollingUpdate.maxSurge")...)
		if intOrPercentValue(ru["maxUnavailable"]) == 0 && intOrPercentValue(ru["maxSurge"]) == 0 {
			errs = append(errs, apierr.Invalid(p+".rollingUpdate.maxUnavailable", intOrStringValue(ru["maxUnavailable"]), "may not be 0 when `maxSurge` is 0"))
		}
		return append(errs, notOver100Percent(ru["maxUnavailable"], p+".rollingUpdate.maxUnavailable")...)
	default:
		return apierr.FieldErrors{apierr.NotSupported(p, deploymentStrategyValue(t, ru), []string{strategyRecreate, strategyRollingUpdate})}
	}
	return nil
}

// deploymentStrategyValue spells a strategy as the bad value of an unknown
// type. Its pointer member prints by value: upstream prints its address.
func deploymentStrategyValue(t string, ru map[string]any) goSyntax {
	rolling := "(*apps.RollingUpdateDeployment)(nil)"
	if ru != nil {
		rolling = "&apps.RollingUpdateDeployment{MaxUnavailable:" + string(intOrStringValue(ru["maxUnavailable"])) + ", MaxSurge:" + string(intOrStringValue(ru["maxSurge"])) + "}"
	}
	return goSyntax("apps.DeploymentStrategy{Type:" + strconv.Quote(t) + ", RollingUpdate:" + rolling + "}")
}

// intOrPercentValue is the number an int-or-percent stands for, as
// upstream reads it to compare with zero: a valid percentage's number, an
// integer, or 0.
func intOrPercentValue(v any) int64 {
	if s, ok := v.(string); ok {
		if !percentRe().MatchString(s) {
			return 0
		}
		n, _ := strconv.ParseInt(s[:len(s)-1], 10, 64)
		return n
	}
	n, _ := intOf(v)
	return n
}

func replicaSets(r podRules) *registry.Descriptor {
	// apps/v1 has no field-label conversion of its own: replica sets
	// select on metadata.name and metadata.namespace only.
	d := workloadType(appsGroup, "replicasets", "replicaset", "ReplicaSet", true, "rs")
	d.Strategy.Default = func(obj registry.Object) {
		spec := child(obj, "spec")
		setDefault(spec, "replicas", int64(1))
		defaultTemplate(mapOf(spec["template"]))
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		startGeneration(obj)
		dropTemplateFields(mapAt(obj, "spec", "template"), nil)
	}
	d.Strategy.PrepareForUpdate = templateWorkloadUpdate(d)
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return r.validateReplicaSetSpec(mapOf(obj["spec"]))
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return append(r.validateReplicaSetSpec(mapOf(obj["spec"])), immutableSelector(obj, old)...)
	}
	setStatusRules(d, func(obj, _ registry.Object) apierr.FieldErrors {
		return validateReplicaStatus(mapOf(obj["status"]))
	})
	d.Strategy.Warnings = withNameWarning(workloadNameWarning, r.templateWarnings("spec", "template"))
	return d
}

// templateWorkloadUpdate drops disabled template fields and bumps the
// generation of a spec change.
func templateWorkloadUpdate(d *registry.Descriptor) func(obj, old registry.Object, sub string) {
	bump := bumpGenerationOnSpec(d)
	return func(obj, old registry.Object, sub string) {
		if sub != "" {
			return
		}
		dropTemplateFields(mapAt(obj, "spec", "template"), mapAt(old, "spec", "template"))
		bump(obj, old, sub)
	}
}

func (r podRules) validateReplicaSetSpec(spec map[string]any) apierr.FieldErrors {
	errs := nonNegative(spec, pathOf("spec"), "replicas", "minReadySeconds")
	errs = append(errs, validateWorkloadSelector(spec, "deployment")...)
	return append(errs, r.validateSelectedTemplate(spec)...)
}

// validateSelectedTemplate checks the template of a replica set or a
// deployment against its selector, which must convert.
func (r podRules) validateSelectedTemplate(spec map[string]any) apierr.FieldErrors {
	sel, ok := convertSelector(mapOf(spec["selector"]))
	if !ok {
		return apierr.FieldErrors{apierr.Invalid("spec.selector", labelSelectorValue(mapOf(spec["selector"])), "invalid label selector")}
	}
	return r.validateReplicatedTemplate(mapOf(spec["template"]), sel, pathOf("spec.template"), "ReplicaSet", false)
}

// validateReplicaStatus checks the status of a replica set or a
// replication controller.
func validateReplicaStatus(status map[string]any) apierr.FieldErrors {
	errs := nonNegative(status, pathOf("status"), "replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration")
	errs = append(errs, notAbove(status, "replicas", replicasBound, "fullyLabeledReplicas", "readyReplicas", "availableReplicas")...)
	return append(errs, notAbove(status, "readyReplicas", "cannot be greater than readyReplicas", "availableReplicas")...)
}

// StatefulSet values.
const (
	podManagementOrderedReady = "OrderedReady"
	podManagementParallel     = "Parallel"
	claimRetain               = "Retain"
	claimDelete               = "Delete"
)

func statefulSets(r podRules) *registry.Descriptor {
	d := workloadType(appsGroup, "statefulsets", "statefulset", "StatefulSet", true, "sts")
	// Its pods are named <name>-<ordinal>, which must be a DNS label.
	d.NameRule = registry.NameLabel
	d.Strategy.Default = func(obj registry.Object) {
		spec := child(obj, "spec")
		setIfEmpty(spec, "podManagementPolicy", podManagementOrderedReady)
		strategy := child(spec, "updateStrategy")
		if strOf(strategy["type"]) == "" {
			strategy["type"] = strategyRollingUpdate
			child(strategy, "rollingUpdate")
		}
		if ru := mapOf(strategy["rollingUpdate"]); ru != nil && strOf(strategy["type"]) == strategyRollingUpdate {
			setDefault(ru, "partition", int64(0))
		}
		policy := child(spec, "persistentVolumeClaimRetentionPolicy")
		setIfEmpty(policy, "whenDeleted", claimRetain)
		setIfEmpty(policy, "whenScaled", claimRetain)
		setDefault(spec, "replicas", int64(1))
		setDefault(spec, "revisionHistoryLimit", defaultRevisionHistoryLimit)
		defaultTemplate(mapOf(spec["template"]))
		for _, claim := range mapsOf(spec["volumeClaimTemplates"]) {
			defaultClaimSpec(child(claim, "spec"))
			// A claim template carries the status a new claim starts with.
			setIfEmpty(child(claim, "status"), "phase", claimPending)
		}
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		startGeneration(obj)
		dropStatefulSetFields(obj, nil)
		dropTemplateFields(mapAt(obj, "spec", "template"), nil)
	}
	update := templateWorkloadUpdate(d)
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, sub string) {
		if sub == "" {
			dropStatefulSetFields(obj, old)
		}
		update(obj, old, sub)
	}
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return r.validateStatefulSetSpec(mapOf(obj["spec"]))
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		errs := r.validateStatefulSetSpec(mapOf(obj["spec"]))
		if !sameStatefulSetSpec(d, mapOf(obj["spec"]), mapOf(old["spec"])) {
			errs = append(errs, apierr.Forbidden("spec", "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
		}
		return append(errs, immutableSelector(obj, old)...)
	}
	setStatusRules(d, func(obj, old registry.Object) apierr.FieldErrors {
		status := mapOf(obj["status"])
		errs := nonNegative(status, pathOf("status"), "replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas")
		for _, f := range []string{"observedGeneration", "collisionCount"} {
			if present(status, f) {
				errs = append(errs, nonNegative(status, pathOf("status"), f)...)
			}
		}
		errs = append(errs, notAbove(status, "replicas", replicasBound, "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas")...)
		errs = append(errs, notAbove(status, "readyReplicas", "cannot be greater than status.readyReplicas", "availableReplicas")...)
		return append(errs, notDecremented(obj, old)...)
	})
	d.Strategy.Warnings = r.templateWarnings("spec", "template")
	return d
}

// dropStatefulSetFields drops the rolling update's maxUnavailable, whose
// feature is off by default in v1.32, unless the stored object (nil on
// create) uses it.
func dropStatefulSetFields(obj, old registry.Object) {
	if valueAt(old, "spec", "updateStrategy", "rollingUpdate", "maxUnavailable") != nil {
		return
	}
	if ru := mapAt(obj, "spec", "updateStrategy", "rollingUpdate"); ru != nil {
		delete(ru, "maxUnavailable")
	}
}

// statefulSetMutable are the spec members an update of a stateful set may
// change.
var statefulSetMutable = []string{"replicas", "template", "updateStrategy", "minReadySeconds", "ordinals", "persistentVolumeClaimRetentionPolicy"}

// sameStatefulSetSpec reports whether two specs differ only in what an
// update may change.
func sameStatefulSetSpec(d *registry.Descriptor, spec, old map[string]any) bool {
	a, b := map[string]any{}, map[string]any{}
	for k, v := range spec {
		a[k] = v
	}
	for k, v := range old {
		b[k] = v
	}
	for _, k := range statefulSetMutable {
		delete(a, k)
		delete(b, k)
	}
	return sameMember(d.Schema, registry.Object{"spec": a}, registry.Object{"spec": b}, "spec")
}

func (r podRules) validateStatefulSetSpec(spec map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	switch pm := strOf(spec["podManagementPolicy"]); pm {
	case "":
		errs = append(errs, apierr.Required("spec.podManagementPolicy", ""))
	case podManagementOrderedReady, podManagementParallel:
	default:
		errs = append(errs, apierr.Invalid("spec.podManagementPolicy", pm, "must be '"+podManagementOrderedReady+"' or '"+podManagementParallel+"'"))
	}
	strategy := mapOf(spec["updateStrategy"])
	ru := mapOf(strategy["rollingUpdate"])
	switch t := strOf(strategy["type"]); t {
	case "":
		errs = append(errs, apierr.Required("spec.updateStrategy", ""))
	case strategyOnDelete:
		if ru != nil {
			errs = append(errs, apierr.Invalid("spec.updateStrategy.rollingUpdate", statefulSetRollingValue(ru), "only allowed for updateStrategy '"+strategyRollingUpdate+"'"))
		}
	case strategyRollingUpdate:
		if ru != nil {
			errs = append(errs, validateStatefulSetRolling(ru)...)
		}
	default:
		errs = append(errs, apierr.Invalid("spec.updateStrategy", goSyntax("apps.StatefulSetUpdateStrategy{Type:"+strconv.Quote(t)+", RollingUpdate:"+string(statefulSetRollingPointer(ru))+"}"),
			"must be '"+strategyRollingUpdate+"' or '"+strategyOnDelete+"'"))
	}
	if policy := mapOf(spec["persistentVolumeClaimRetentionPolicy"]); policy != nil {
		for _, f := range []string{"whenDeleted", "whenScaled"} {
			if v := strOf(policy[f]); v != claimRetain && v != claimDelete {
				errs = append(errs, apierr.NotSupported("spec.persistentVolumeClaimRetentionPolicy."+f, v, []string{claimRetain, claimDelete}))
			}
		}
	}
	errs = append(errs, nonNegative(spec, pathOf("spec"), "replicas", "minReadySeconds")...)
	if o := mapOf(spec["ordinals"]); o != nil {
		if n := intAt(o, "start"); n < 0 {
			errs = append(errs, apierr.Invalid("spec.ordinals.start", n, msgNegative))
		}
	}
	errs = append(errs, validateWorkloadSelector(spec, "statefulset")...)
	// Upstream checks only the labels and annotations of a stateful set's
	// template, not its pod spec.
	tmpl := mapOf(spec["template"])
	if sel, ok := convertSelector(mapOf(spec["selector"])); !ok {
		errs = append(errs, apierr.Invalid("spec.selector", labelSelectorValue(mapOf(spec["selector"])), ""))
	} else {
		errs = append(errs, templateSelected(tmpl, sel, pathOf("spec.template"))...)
		md := mapOf(tmpl["metadata"])
		errs = append(errs, validateLabels(mapOf(md["labels"]), "spec.template.labels")...)
		errs = append(errs, r.validateAnnotations(mapOf(md["annotations"]), pathOf("spec.template.annotations"))...)
		errs = append(errs, r.validatePodSpecificAnnotations(mapOf(md["annotations"]), mapOf(tmpl["spec"]), pathOf("spec.template.annotations"), false)...)
	}
	return append(errs, alwaysRestarts(tmpl, pathOf("spec.template"), "StatefulSet")...)
}

func validateStatefulSetRolling(ru map[string]any) apierr.FieldErrors {
	const p = "spec.updateStrategy.rollingUpdate"
	errs := nonNegative(ru, pathOf(p), "partition")
	if v := ru["maxUnavailable"]; v != nil {
		errs = append(errs, validateIntOrPercent(v, p+".maxUnavailable")...)
		if intOrPercentValue(v) == 0 {
			errs = append(errs, apierr.Invalid(p+".maxUnavailable", intOrStringValue(v), "cannot be 0"))
		}
		errs = append(errs, notOver100Percent(v, p+".maxUnavailable")...)
	}
	return errs
}

// statefulSetRollingValue spells a rolling update as a bad value; its
// pointer members print by value.
func statefulSetRollingValue(ru map[string]any) goSyntax {
	partition := "(*int32)(nil)"
	if present(ru, "partition") {
		partition = "&" + strconv.FormatInt(intAt(ru, "partition"), 10)
	}
	maxUn := "(*intstr.IntOrString)(nil)"
	if v := ru["maxUnavailable"]; v != nil {
		maxUn = "&" + string(intOrStringValue(v))
	}
	return goSyntax("apps.RollingUpdateStatefulSetStrategy{Partition:" + partition + ", MaxUnavailable:" + maxUn + "}")
}

func statefulSetRollingPointer(ru map[string]any) goSyntax {
	if ru == nil {
		return "(*apps.RollingUpdateStatefulSetStrategy)(nil)"
	}
	return "&" + statefulSetRollingValue(ru)
}

// deprecatedTemplateGeneration is the annotation apps/v1 daemon sets carry
// their template generation in, as upstream's conversion writes it.
const deprecatedTemplateGeneration = "deprecated.daemonset.template.generation"

func daemonSets(r podRules) *registry.Descriptor {
	d := workloadType(appsGroup, "daemonsets", "daemonset", "DaemonSet", false, "ds")
	d.Strategy.Default = func(obj registry.Object) {
		spec := child(obj, "spec")
		strategy := child(spec, "updateStrategy")
		setIfEmpty(strategy, "type", strategyRollingUpdate)
		if strOf(strategy["type"]) == strategyRollingUpdate {
			ru := child(strategy, "rollingUpdate")
			setDefault(ru, "maxUnavailable", int64(1))
			setDefault(ru, "maxSurge", int64(0))
		}
		setDefault(spec, "revisionHistoryLimit", defaultRevisionHistoryLimit)
		defaultTemplate(mapOf(spec["template"]))
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		startGeneration(obj)
		child(child(obj, "metadata"), "annotations")[deprecatedTemplateGeneration] = "1"
		dropTemplateFields(mapAt(obj, "spec", "template"), nil)
	}
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, sub string) {
		if sub != "" {
			return
		}
		dropTemplateFields(mapAt(obj, "spec", "template"), mapAt(old, "spec", "template"))
		// A template change is a new template generation; otherwise the
		// written one stays, and validation refuses a changed one.
		if !semanticEqual(valueAt(obj, "spec", "template"), valueAt(old, "spec", "template")) {
			gen, _ := templateGeneration(old)
			child(child(obj, "metadata"), "annotations")[deprecatedTemplateGeneration] = strconv.FormatInt(gen+1, 10)
		}
		if !sameMember(d.Schema, obj, old, "spec") {
			bumpGeneration(obj, old)
		}
	}
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return r.validateDaemonSetSpec(mapOf(obj["spec"]), false)
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		errs := validateTemplateGeneration(obj, old)
		errs = append(errs, r.validateDaemonSetSpec(mapOf(obj["spec"]), selectorHasBadValue(mapAt(old, "spec", "selector")))...)
		return append(errs, immutableSelector(obj, old)...)
	}
	setStatusRules(d, func(obj, old registry.Object) apierr.FieldErrors {
		status := mapOf(obj["status"])
		errs := nonNegative(status, pathOf("status"), "currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady", "observedGeneration", "updatedNumberScheduled", "numberAvailable", "numberUnavailable")
		if present(status, "collisionCount") {
			errs = append(errs, nonNegative(status, pathOf("status"), "collisionCount")...)
		}
		return append(errs, notDecremented(obj, old)...)
	})
	d.Strategy.Warnings = r.templateWarnings("spec", "template")
	return d
}

// templateGeneration reads a daemon set's template generation from its
// annotation; 0 when absent, ok false when it is no integer.
func templateGeneration(obj registry.Object) (int64, bool) {
	v, has := mapAt(obj, "metadata", "annotations")[deprecatedTemplateGeneration]
	if !has {
		return 0, true
	}
	n, err := strconv.ParseInt(strOf(v), 10, 64)
	return n, err == nil
}

// validateTemplateGeneration refuses a template generation that goes back,
// or forward without a template change. It is reported at the spec member
// upstream's internal form keeps it in.
func validateTemplateGeneration(obj, old registry.Object) apierr.FieldErrors {
	const p = "spec.templateGeneration"
	gen, ok := templateGeneration(obj)
	if !ok {
		return apierr.FieldErrors{apierr.Invalid("metadata.annotations", str(obj, "metadata", "annotations", deprecatedTemplateGeneration), "must be an integer")}
	}
	oldGen, _ := templateGeneration(old)
	changed := !semanticEqual(valueAt(obj, "spec", "template"), valueAt(old, "spec", "template"))
	switch {
	case gen < oldGen:
		return apierr.FieldErrors{apierr.Invalid(p, gen, "must not be decremented")}
	case gen == oldGen && changed:
		return apierr.FieldErrors{apierr.Invalid(p, gen, "must be incremented upon template update")}
	case gen > oldGen && !changed:
		return apierr.FieldErrors{apierr.Invalid(p, gen, "must not be incremented without template update")}
	}
	return nil
}

func (r podRules) validateDaemonSetSpec(spec map[string]any, allowBadSelectorValues bool) apierr.FieldErrors {
	sel := mapOf(spec["selector"])
	errs := validateLabelSelector(sel, allowBadSelectorValues, "spec.selector")
	tmpl := mapOf(spec["template"])
	// A missing selector selects nothing, so it matches no template.
	if ps, ok := convertSelector(sel); ok && !ps.matches(templateLabels(tmpl)) {
		errs = append(errs, apierr.Invalid("spec.template.metadata.labels", labelMapValue(templateLabels(tmpl)), selectorMismatch))
	}
	if sel != nil && emptySelector(sel) {
		errs = append(errs, apierr.Invalid("spec.selector", labelSelectorValue(sel), "empty selector is invalid for daemonset"))
	}
	errs = append(errs, r.validatePodTemplateSpec(tmpl, pathOf("spec.template"))...)
	errs = append(errs, alwaysRestarts(tmpl, pathOf("spec.template"), "DaemonSet")...)
	errs = append(errs, nonNegative(spec, pathOf("spec"), "minReadySeconds")...)
	errs = append(errs, validateDaemonSetStrategy(mapOf(spec["updateStrategy"]))...)
	if present(spec, "revisionHistoryLimit") {
		errs = append(errs, nonNegative(spec, pathOf("spec"), "revisionHistoryLimit")...)
	}
	return errs
}

func validateDaemonSetStrategy(strategy map[string]any) apierr.FieldErrors {
	const p = "spec.updateStrategy"
	ru := mapOf(strategy["rollingUpdate"])
	switch t := strOf(strategy["type"]); t {
	case strategyOnDelete:
	case strategyRollingUpdate:
		if ru == nil {
			return apierr.FieldErrors{apierr.Required(p+".rollingUpdate", "")}
		}
		maxUn, maxSurge := ru["maxUnavailable"], ru["maxSurge"]
		errs := validateIntOrPercent(maxUn, p+".rollingUpdate.maxUnavailable")
		errs = append(errs, validateIntOrPercent(maxSurge, p+".rollingUpdate.maxSurge")...)
		errs = append(errs, notOver100Percent(maxUn, p+".rollingUpdate.maxUnavailable")...)
		errs = append(errs, notOver100Percent(maxSurge, p+".rollingUpdate.maxSurge")...)
		hasUnavailable, hasSurge := intOrPercentValue(maxUn) != 0, intOrPercentValue(maxSurge) != 0
		switch {
		case hasUnavailable && hasSurge:
			errs = append(errs, apierr.Invalid(p+".rollingUpdate.maxSurge", intOrStringValue(maxSurge), "may not be set when maxUnavailable is non-zero"))
		case !hasUnavailable && !hasSurge:
			errs = append(errs, apierr.Required(p+".rollingUpdate.maxUnavailable", "cannot be 0 when maxSurge is 0"))
		}
		return errs
	default:
		rolling := "(*apps.RollingUpdateDaemonSet)(nil)"
		if ru != nil {
			rolling = "&apps.RollingUpdateDaemonSet{MaxUnavailable:" + string(intOrStringValue(ru["maxUnavailable"])) + ", MaxSurge:" + string(intOrStringValue(ru["maxSurge"])) + "}"
		}
		return apierr.FieldErrors{apierr.NotSupported(p, goSyntax("apps.DaemonSetUpdateStrategy{Type:"+strconv.Quote(t)+", RollingUpdate:"+rolling+"}"), []string{strategyRollingUpdate, strategyOnDelete})}
	}
	return nil
}

func controllerRevisions() *registry.Descriptor {
	d := groupType(appsGroup, "controllerrevisions", "controllerrevision", "ControllerRevision", true)
	validate := func(obj registry.Object) apierr.FieldErrors {
		var errs apierr.FieldErrors
		if obj["data"] == nil {
			errs = append(errs, apierr.Required("data", "data is mandatory"))
		}
		return append(errs, nonNegative(obj, pathOf(""), "revision")...)
	}
	d.Strategy.Validate = validate
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		errs := validate(obj)
		if !semanticEqual(obj["data"], old["data"]) {
			errs = append(errs, apierr.Invalid("data", goSyntax("runtime.RawExtension{...}"), fieldImmutable))
		}
		return errs
	}
	return d
}
