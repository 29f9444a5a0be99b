package builtin

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	// Cron job time zones are checked against the IANA database; carry it,
	// as upstream's binaries do, so that a machine without zoneinfo files
	// accepts the same zones.
	_ "time/tzdata"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/validation"
)

// batchGroup has no domain, as upstream's.
const batchGroup = "batch"

// Job values and limits, as upstream's.
const (
	completionNonIndexed        = "NonIndexed"
	completionIndexed           = "Indexed"
	replaceTerminatingOrFailed  = "TerminatingOrFailed"
	replaceFailed               = "Failed"
	defaultBackoffLimit         = int64(6)
	maxParallelismForIndexedJob = 100000
)

// jobLabels are the labels a job's generated selector puts on its pods:
// the legacy unprefixed ones and the batch-prefixed ones.
type jobLabels struct {
	legacyUID, uid, legacyName, name string
}

func newJobLabels(b config.Brand) jobLabels {
	return jobLabels{
		legacyUID: "controller-uid", uid: "batch." + b.Label("controller-uid"),
		legacyName: "job-name", name: "batch." + b.Label("job-name"),
	}
}

// jobFieldLabelRefusal words batch/v1's refusal of a field label a job
// does not have, which names the Go type of its version.
const jobFieldLabelRefusal = "field label %q not supported for batchv1.Job"

func batchV1(b config.Brand, sv Services) []*registry.Descriptor {
	r := newPodRules(b).under(sv)
	return []*registry.Descriptor{cronJobs(r), jobs(r, newJobLabels(b))}
}

func jobs(r podRules, jl jobLabels) *registry.Descriptor {
	d := workloadType(batchGroup, "jobs", "job", "Job", false)
	d.FieldSelectors = map[string]registry.FieldSelector{"status.successful": intField("status", "succeeded")}
	d.FieldLabels.Refusal = jobFieldLabelRefusal
	// batch/v1 keeps a deleted job's pods unless told otherwise, for the
	// clients written before garbage collection, and says so.
	d.Strategy.OrphanByDefault = true
	d.Strategy.OrphanWarning = "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"
	d.Strategy.Default = func(obj registry.Object) {
		defaultJobSpec(child(obj, "spec"))
		copyTemplateLabels(obj)
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		startGeneration(obj)
		spec := child(obj, "spec")
		if !boolOf(spec["manualSelector"]) {
			jl.generate(obj)
		}
		// Upstream defaults every read object; its labels then follow
		// the generated template labels.
		copyTemplateLabels(obj)
		dropTemplateFields(mapOf(spec["template"]), nil)
	}
	d.Strategy.PrepareForUpdate = templateWorkloadUpdate(d)
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return r.validateJob(obj, jl, true)
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		oldLabels := mapAt(old, "spec", "template", "metadata", "labels")
		errs := r.validateJob(obj, jl, has(oldLabels, jl.name) && has(oldLabels, jl.uid))
		return append(errs, validateJobSpecUpdate(obj, old)...)
	}
	setStatusRules(d, validateJobStatusUpdate)
	d.Strategy.Warnings = withNameWarning(workloadNameWarning, r.templateWarnings("spec", "template"))
	return d
}

// defaultJobSpec applies the defaults of a Job's spec (not of a CronJob's
// job template, which upstream leaves as written).
func defaultJobSpec(spec map[string]any) {
	// A job naming neither runs one pod to completion.
	if !present(spec, "completions") && !present(spec, "parallelism") {
		spec["completions"] = int64(1)
	}
	setDefault(spec, "parallelism", int64(1))
	if !present(spec, "backoffLimit") {
		if present(spec, "backoffLimitPerIndex") {
			spec["backoffLimit"] = int64(math.MaxInt32)
		} else {
			spec["backoffLimit"] = defaultBackoffLimit
		}
	}
	setDefault(spec, "completionMode", completionNonIndexed)
	setDefault(spec, "suspend", false)
	for _, rule := range mapsOf(mapOf(spec["podFailurePolicy"])["rules"]) {
		for _, pattern := range mapsOf(rule["onPodConditions"]) {
			setIfEmpty(pattern, "status", "True")
		}
	}
	if !present(spec, "podReplacementPolicy") {
		if present(spec, "podFailurePolicy") {
			spec["podReplacementPolicy"] = replaceFailed
		} else {
			spec["podReplacementPolicy"] = replaceTerminatingOrFailed
		}
	}
	defaultTemplate(mapOf(spec["template"]))
}

// copyTemplateLabels gives a job without labels its template's labels.
func copyTemplateLabels(obj registry.Object) {
	tl := mapAt(obj, "spec", "template", "metadata", "labels")
	md := child(obj, "metadata")
	if tl != nil && len(mapOf(md["labels"])) == 0 {
		md["labels"] = copyLabels(tl)
	}
}

// generate labels the job's pod template with the job's name and uid and
// selects them by uid; labels the user set are kept, and validation
// refuses them when they do not match.
func (jl jobLabels) generate(obj registry.Object) {
	name, uid := str(obj, "metadata", "name"), str(obj, "metadata", "uid")
	labels := child(child(child(child(obj, "spec"), "template"), "metadata"), "labels")
	for _, k := range []string{jl.legacyName, jl.name} {
		if !has(labels, k) {
			labels[k] = name
		}
	}
	for _, k := range []string{jl.legacyUID, jl.uid} {
		if !has(labels, k) {
			labels[k] = uid
		}
	}
	ml := child(child(child(obj, "spec"), "selector"), "matchLabels")
	if !has(ml, jl.uid) {
		ml[jl.uid] = uid
	}
}

// validateJob checks a job. requirePrefixed asks for the batch-prefixed
// generated labels too: always on create, and on updates of jobs that
// have them.
func (r podRules) validateJob(obj registry.Object, jl jobLabels, requirePrefixed bool) apierr.FieldErrors {
	spec := mapOf(obj["spec"])
	errs := jl.validateGenerated(obj, requirePrefixed)
	errs = append(errs, r.validateJobSpec(spec, pathOf("spec"))...)
	if sel := mapOf(spec["selector"]); sel == nil {
		errs = append(errs, apierr.Required("spec.selector", ""))
	} else {
		errs = append(errs, validateLabelSelector(sel, false, "spec.selector")...)
	}
	tmpl := mapOf(spec["template"])
	if sel, ok := convertSelector(mapOf(spec["selector"])); ok && !sel.matches(templateLabels(tmpl)) {
		errs = append(errs, apierr.Invalid("spec.template.metadata.labels", labelMapValue(templateLabels(tmpl)), selectorMismatch))
	}
	if str(spec, "completionMode") == completionIndexed {
		if n := intAt(spec, "completions"); n > 0 {
			name := str(obj, "metadata", "name")
			host := name + "-" + strconv.FormatInt(n-1, 10)
			if len(validation.IsDNS1123Label(host)) > 0 {
				errs = append(errs, apierr.Invalid("metadata.name", name, "will not able to create pod with invalid DNS label: "+host))
			}
		}
	}
	return errs
}

// validateGenerated checks that a job with a generated selector still has
// the generated labels and selector.
func (jl jobLabels) validateGenerated(obj registry.Object, requirePrefixed bool) apierr.FieldErrors {
	spec := mapOf(obj["spec"])
	if boolOf(spec["manualSelector"]) || spec["selector"] == nil {
		return nil
	}
	var errs apierr.FieldErrors
	name, uid := str(obj, "metadata", "name"), str(obj, "metadata", "uid")
	if uid == "" {
		errs = append(errs, apierr.Required("metadata.uid", ""))
	}
	labels := templateLabels(mapOf(spec["template"]))
	hasLabel := func(key, want string) {
		p := pathOf("spec.template.metadata.labels").key(key).String()
		switch v, ok := labels[key]; {
		case !ok:
			errs = append(errs, apierr.Required(p, want))
		case strOf(v) != want:
			errs = append(errs, apierr.Invalid(p, labelMapValue(labels), "must be '"+want+"'"))
		}
	}
	hasLabel(jl.legacyUID, uid)
	hasLabel(jl.legacyName, name)
	expected := map[string]any{jl.legacyUID: uid, jl.legacyName: name}
	if requirePrefixed {
		hasLabel(jl.uid, uid)
		hasLabel(jl.name, name)
		expected[jl.uid], expected[jl.name] = uid, name
	}
	if sel, ok := convertSelector(mapOf(spec["selector"])); ok && !sel.matches(expected) {
		errs = append(errs, apierr.Invalid("spec.selector", labelSelectorValue(mapOf(spec["selector"])), "`selector` not auto-generated"))
	}
	return errs
}

// validateJobSpec checks the rules a Job's spec and a CronJob's job
// template share, at p.
func (r podRules) validateJobSpec(spec map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, f := range []string{"parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished", "backoffLimitPerIndex"} {
		if present(spec, f) {
			errs = append(errs, validateNonNegative(spec, f, p)...)
		}
	}
	if present(spec, "maxFailedIndexes") {
		errs = append(errs, validateNonNegative(spec, "maxFailedIndexes", p)...)
		if !present(spec, "backoffLimitPerIndex") {
			errs = append(errs, apierr.Required(p.child("backoffLimitPerIndex").String(), "when maxFailedIndexes is specified"))
		}
	}
	if mb, ok := spec["managedBy"].(string); ok {
		errs = append(errs, validateManagedBy(mb, p.child("managedBy"))...)
	}
	mode, hasMode := spec["completionMode"].(string)
	if hasMode {
		if mode != completionNonIndexed && mode != completionIndexed {
			errs = append(errs, apierr.NotSupported(p.child("completionMode").String(), mode, []string{completionNonIndexed, completionIndexed}))
		}
		if mode == completionIndexed {
			errs = append(errs, validateIndexedLimits(spec, p)...)
		}
	}
	if !hasMode || mode == completionNonIndexed {
		for _, f := range []string{"backoffLimitPerIndex", "maxFailedIndexes"} {
			if present(spec, f) {
				errs = append(errs, apierr.Invalid(p.child(f).String(), intAt(spec, f), "requires indexed completion mode"))
			}
		}
	}
	if policy := mapOf(spec["podFailurePolicy"]); policy != nil {
		errs = append(errs, validatePodFailurePolicy(spec, policy, p.child("podFailurePolicy"))...)
	}
	if policy := mapOf(spec["successPolicy"]); policy != nil {
		if mode != completionIndexed {
			errs = append(errs, apierr.Invalid(p.child("successPolicy").String(), successPolicyValue(policy), "requires indexed completion mode"))
		} else {
			errs = append(errs, validateSuccessPolicy(spec, policy, p.child("successPolicy"))...)
		}
	}
	if rp, ok := spec["podReplacementPolicy"].(string); ok {
		rpPath := p.child("podReplacementPolicy").String()
		if present(spec, "podFailurePolicy") {
			if rp != replaceFailed {
				errs = append(errs, apierr.NotSupported(rpPath, rp, []string{replaceFailed}))
			}
		} else if rp != replaceFailed && rp != replaceTerminatingOrFailed {
			errs = append(errs, apierr.NotSupported(rpPath, rp, []string{replaceFailed, replaceTerminatingOrFailed}))
		}
	}
	tmpl := mapOf(spec["template"])
	errs = append(errs, r.validatePodTemplateSpec(tmpl, p.child("template"))...)
	rpPath := p.child("template", "spec", "restartPolicy").String()
	switch restart := str(tmpl, "spec", "restartPolicy"); {
	case restart == restartAlways || restart == "":
		errs = append(errs, apierr.Required(rpPath, `valid values: "OnFailure", "Never"`))
	case restart != "OnFailure" && restart != "Never":
		errs = append(errs, apierr.NotSupported(rpPath, restart, []string{"OnFailure", "Never"}))
	case present(spec, "podFailurePolicy") && restart != "Never":
		errs = append(errs, apierr.Invalid(rpPath, restart, `only "Never" is supported when podFailurePolicy is specified`))
	}
	return errs
}

// Limits of indexed jobs, as upstream's: past completionsSoftLimit
// completions, a job with a backoff limit per index must bound its failed
// indexes and parallelism further.
const (
	completionsSoftLimit          = 100000
	highCompletionsLimit          = 10000
	maxFailedIndexesForIndexedJob = 100000
)

func validateIndexedLimits(spec map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if !present(spec, "completions") {
		errs = append(errs, apierr.Required(p.child("completions").String(), "when completion mode is "+completionIndexed))
	}
	if n := intAt(spec, "parallelism"); present(spec, "parallelism") && n > maxParallelismForIndexedJob {
		errs = append(errs, apierr.Invalid(p.child("parallelism").String(), n, fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, completionIndexed)))
	}
	mf, hasMF := intAt(spec, "maxFailedIndexes"), present(spec, "maxFailedIndexes")
	if hasMF && present(spec, "completions") && mf > intAt(spec, "completions") {
		errs = append(errs, apierr.Invalid(p.child("maxFailedIndexes").String(), mf, "must be less than or equal to completions"))
	}
	if hasMF && mf > maxFailedIndexesForIndexedJob {
		errs = append(errs, apierr.Invalid(p.child("maxFailedIndexes").String(), mf, fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexedJob)))
	}
	if present(spec, "completions") && intAt(spec, "completions") > completionsSoftLimit && present(spec, "backoffLimitPerIndex") {
		high := fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", highCompletionsLimit, completionsSoftLimit)
		if !hasMF {
			errs = append(errs, apierr.Required(p.child("maxFailedIndexes").String(), fmt.Sprintf("must be specified when completions is above %d", completionsSoftLimit)))
		}
		if n := intAt(spec, "parallelism"); present(spec, "parallelism") && n > highCompletionsLimit {
			errs = append(errs, apierr.Invalid(p.child("parallelism").String(), n, high))
		}
		if hasMF && mf > highCompletionsLimit {
			errs = append(errs, apierr.Invalid(p.child("maxFailedIndexes").String(), mf, high))
		}
	}
	return errs
}

// jobImmutable are the spec members of a job no update may change, after
// completions, selector and template, in upstream's order.
var jobImmutable = []string{"completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy", "successPolicy"}

func validateJobSpecUpdate(obj, old registry.Object) apierr.FieldErrors {
	spec, oldSpec := mapOf(obj["spec"]), mapOf(old["spec"])
	var errs apierr.FieldErrors
	// Completions of an indexed job may change along with parallelism
	// (elastic indexed jobs); otherwise they are fixed.
	if !sameOptional(spec["completions"], oldSpec["completions"]) {
		switch {
		case str(spec, "completionMode") != completionIndexed:
			errs = append(errs, apierr.Invalid("spec.completions", spec["completions"], fieldImmutable))
		case present(spec, "completions") && intAt(spec, "completions") != intAt(spec, "parallelism"):
			errs = append(errs, apierr.Invalid("spec.completions", intAt(spec, "completions"), "can only be modified in tandem with spec.parallelism"))
		}
	}
	errs = append(errs, immutableSelector(obj, old)...)
	errs = append(errs, validateJobTemplateUpdate(spec, oldSpec, boolOf(oldSpec["suspend"]) && !present(mapOf(old["status"]), "startTime"))...)
	for _, f := range jobImmutable {
		if !sameOptional(spec[f], oldSpec[f]) {
			errs = append(errs, apierr.Invalid("spec."+f, immutableValue(spec[f]), fieldImmutable))
		}
	}
	return errs
}

// sameOptional compares members of pointer type: an absent one differs
// from a present zero.
func sameOptional(a, b any) bool { return (a == nil) == (b == nil) && semanticEqual(a, b) }

// immutableValue is how a changed member prints: scalars as themselves,
// structures by type only (upstream prints their Go structs).
func immutableValue(v any) any {
	switch v.(type) {
	case map[string]any, []any:
		return goSyntax("{...}")
	}
	return v
}

// validateJobTemplateUpdate refuses a change of the pod template, except
// that a suspended job that never ran may change where its pods run
// (node selector, affinity, tolerations, scheduling gates) and its pods'
// labels and annotations.
func validateJobTemplateUpdate(spec, oldSpec map[string]any, mutableScheduling bool) apierr.FieldErrors {
	tmpl, oldTmpl := mapOf(spec["template"]), mapOf(oldSpec["template"])
	if mutableScheduling {
		a, b := schedulingFree(tmpl), schedulingFree(oldTmpl)
		if semanticEqual(a, b) {
			return nil
		}
	} else if semanticEqual(tmpl, oldTmpl) {
		return nil
	}
	return apierr.FieldErrors{apierr.Invalid("spec.template", goSyntax("core.PodTemplateSpec{...}"), fieldImmutable)}
}

// schedulingFree copies a template without what a suspended job may
// change. Only node affinity of the affinity may change.
func schedulingFree(tmpl map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range tmpl {
		out[k] = v
	}
	md := map[string]any{}
	for k, v := range mapOf(tmpl["metadata"]) {
		if k != "labels" && k != "annotations" {
			md[k] = v
		}
	}
	out["metadata"] = md
	spec := map[string]any{}
	for k, v := range mapOf(tmpl["spec"]) {
		switch k {
		case "nodeSelector", "tolerations", "schedulingGates":
		case "affinity":
			rest := map[string]any{}
			for ak, av := range mapOf(v) {
				if ak != "nodeAffinity" && !isEmptyValue(av) {
					rest[ak] = av
				}
			}
			if len(rest) > 0 {
				spec[k] = rest
			}
		default:
			spec[k] = v
		}
	}
	out["spec"] = spec
	return out
}

// CronJob values and defaults, as upstream's.
const (
	concurrencyAllow                  = "Allow"
	concurrencyForbid                 = "Forbid"
	concurrencyReplace                = "Replace"
	defaultSuccessfulJobsHistoryLimit = int64(3)
	defaultFailedJobsHistoryLimit     = int64(1)
	// maxCronJobNameLength leaves room for the 11-character suffix the
	// controller appends to name each job in a 63-character label.
	maxCronJobNameLength = 52
)

func cronJobs(r podRules) *registry.Descriptor {
	d := workloadType(batchGroup, "cronjobs", "cronjob", "CronJob", false, "cj")
	d.Strategy.Default = func(obj registry.Object) {
		spec := child(obj, "spec")
		setIfEmpty(spec, "concurrencyPolicy", concurrencyAllow)
		setDefault(spec, "suspend", false)
		setDefault(spec, "successfulJobsHistoryLimit", defaultSuccessfulJobsHistoryLimit)
		setDefault(spec, "failedJobsHistoryLimit", defaultFailedJobsHistoryLimit)
		defaultTemplate(mapAt(spec, "jobTemplate", "spec", "template"))
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		startGeneration(obj)
		dropTemplateFields(mapAt(obj, "spec", "jobTemplate", "spec", "template"), nil)
	}
	bump := bumpGenerationOnSpec(d)
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, sub string) {
		if sub != "" {
			return
		}
		dropTemplateFields(mapAt(obj, "spec", "jobTemplate", "spec", "template"), mapAt(old, "spec", "jobTemplate", "spec", "template"))
		bump(obj, old, sub)
	}
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		errs := r.validateCronJobSpec(mapOf(obj["spec"]), nil)
		if name := str(obj, "metadata", "name"); len(name) > maxCronJobNameLength {
			errs = append(errs, apierr.Invalid("metadata.name", name, fmt.Sprintf("must be no more than %d characters", maxCronJobNameLength)))
		}
		return errs
	}
	// Updates skip the name's length: older cron jobs may have longer
	// names and must stay updatable.
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return r.validateCronJobSpec(mapOf(obj["spec"]), mapOf(old["spec"]))
	}
	setStatusRules(d, func(registry.Object, registry.Object) apierr.FieldErrors { return nil })
	d.Strategy.Warnings = withNameWarning(workloadNameWarning, r.templateWarnings("spec", "jobTemplate", "spec", "template"))
	return d
}

func (r podRules) validateCronJobSpec(spec, old map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	schedule := strOf(spec["schedule"])
	if schedule == "" {
		errs = append(errs, apierr.Required("spec.schedule", ""))
	} else {
		errs = append(errs, validateSchedule(schedule, old != nil && strings.Contains(strOf(old["schedule"]), "TZ"), present(spec, "timeZone"))...)
	}
	if present(spec, "startingDeadlineSeconds") {
		errs = append(errs, validateNonNegative(spec, "startingDeadlineSeconds", pathOf("spec"))...)
	}
	// A time zone is checked when it is set or changed: a zone the
	// machine's database lost since must not block updates.
	if tz, ok := spec["timeZone"].(string); ok && (old == nil || !sameOptional(spec["timeZone"], old["timeZone"])) {
		errs = append(errs, validateTimeZone(tz)...)
	}
	switch cp := strOf(spec["concurrencyPolicy"]); cp {
	case concurrencyAllow, concurrencyForbid, concurrencyReplace:
	case "":
		errs = append(errs, apierr.Required("spec.concurrencyPolicy", ""))
	default:
		errs = append(errs, apierr.NotSupported("spec.concurrencyPolicy", cp, []string{concurrencyAllow, concurrencyForbid, concurrencyReplace}))
	}
	jobSpec := mapAt(spec, "jobTemplate", "spec")
	errs = append(errs, r.validateJobSpec(jobSpec, pathOf("spec.jobTemplate.spec"))...)
	if sel := mapOf(jobSpec["selector"]); sel != nil {
		errs = append(errs, apierr.Invalid("spec.jobTemplate.spec.selector", labelSelectorValue(sel), "`selector` will be auto-generated"))
	}
	if boolOf(jobSpec["manualSelector"]) {
		errs = append(errs, apierr.NotSupported("spec.jobTemplate.spec.manualSelector", true, []string{"nil", "false"}))
	}
	for _, f := range []string{"successfulJobsHistoryLimit", "failedJobsHistoryLimit"} {
		if present(spec, f) {
			errs = append(errs, validateNonNegative(spec, f, pathOf("spec"))...)
		}
	}
	return errs
}

func validateSchedule(schedule string, allowTZ, hasTimeZone bool) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if err := parseCron(schedule); err != nil {
		errs = append(errs, apierr.Invalid("spec.schedule", schedule, err.Error()))
	}
	hasTZ := strings.Contains(schedule, "TZ")
	switch {
	case allowTZ && hasTZ && hasTimeZone:
		errs = append(errs, apierr.Invalid("spec.schedule", schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && hasTZ:
		errs = append(errs, apierr.Invalid("spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return errs
}

// timeZonePart is one slash-separated part of a time zone name.
var timeZonePart = lazyRegexp(`^[A-Za-z\.\-_0-9+]{1,14}$`)

func validateTimeZone(tz string) apierr.FieldErrors {
	const p = "spec.timeZone"
	if tz == "" {
		return apierr.FieldErrors{apierr.Invalid(p, tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !timeZonePart().MatchString(part) {
			return apierr.FieldErrors{apierr.Invalid(p, tz, "unknown time zone "+tz)}
		}
	}
	var errs apierr.FieldErrors
	if strings.EqualFold(tz, "Local") {
		errs = append(errs, apierr.Invalid(p, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(tz); err != nil {
		errs = append(errs, apierr.Invalid(p, tz, err.Error()))
	}
	return errs
}
