package builtin

import (
	"fmt"
	"strings"
	"time"

	"platd/server/apierr"
	"platd/server/registry"
)

// Job condition types the status rules read.
const (
	jobComplete           = "Complete"
	jobFailed             = "Failed"
	jobFailureTarget      = "FailureTarget"
	jobSuccessCriteriaMet = "SuccessCriteriaMet"
)

// jobStatus reads what the status rules of a job ask of one state.
type jobStatus struct {
	spec, status map[string]any
}

func (j jobStatus) cond(t string) bool {
	for _, c := range mapsOf(j.status["conditions"]) {
		if strOf(c["type"]) == t && strOf(c["status"]) == "True" {
			return true
		}
	}
	return false
}

func (j jobStatus) complete() bool { return j.cond(jobComplete) }
func (j jobStatus) failed() bool   { return j.cond(jobFailed) }
func (j jobStatus) finished() bool { return j.complete() || j.failed() }

// time reads a timestamp member; ok is false when it is absent or not a
// time.
func (j jobStatus) time(f string) (time.Time, bool) {
	s, ok := j.status[f].(string)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

// timeValue prints a timestamp as upstream prints its metav1.Time.
func timeValue(t time.Time) goSyntax { return goSyntax(t.UTC().String()) }

func uncounted(status map[string]any) map[string]any { return mapOf(status["uncountedTerminatedPods"]) }

// uncountedValue prints uncountedTerminatedPods as upstream's Go struct.
func uncountedValue(u map[string]any) goSyntax {
	uids := func(v any) string {
		l, ok := v.([]any)
		if !ok {
			return "[]types.UID(nil)"
		}
		parts := make([]string, len(l))
		for i, x := range l {
			parts[i] = fmt.Sprintf("%q", strOf(x))
		}
		return "[]types.UID{" + strings.Join(parts, ", ") + "}"
	}
	return goSyntax("batch.UncountedTerminatedPods{Succeeded:" + uids(u["succeeded"]) + ", Failed:" + uids(u["failed"]) + "}")
}

// validateJobStatusUpdate checks a write of a job's status. As upstream,
// most rules apply only when the facts they relate change, so that jobs
// written before a rule existed stay updatable.
func validateJobStatusUpdate(obj, old registry.Object) apierr.FieldErrors {
	n := jobStatus{spec: mapOf(obj["spec"]), status: mapOf(obj["status"])}
	o := jobStatus{spec: mapOf(old["spec"]), status: mapOf(old["status"])}
	st := n.status
	errs := nonNegative(st, pathOf("status"), "active", "succeeded", "failed")
	for _, f := range []string{"ready", "terminating"} {
		if present(st, f) {
			errs = append(errs, nonNegative(st, pathOf("status"), f)...)
		}
	}
	if u := uncounted(st); u != nil {
		seen := map[string]bool{}
		for _, kind := range []string{"succeeded", "failed"} {
			for i, v := range listOf(u[kind]) {
				p := pathOf("status.uncountedTerminatedPods").child(kind).index(i).String()
				switch k := strOf(v); {
				case k == "":
					errs = append(errs, apierr.Invalid(p, k, "must not be empty"))
				case seen[k]:
					errs = append(errs, apierr.Duplicate(p, k))
				default:
					seen[k] = true
				}
			}
		}
	}

	changed := func(f string) bool { return !semanticEqual(st[f], o.status[f]) }
	finishedChanged := n.finished() != o.finished()
	completeChanged := n.complete() != o.complete()
	start, hasStart := n.time("startTime")
	done, hasDone := n.time("completionTime")
	if (completeChanged || n.failed() != o.failed()) && n.complete() && n.failed() {
		errs = append(errs, apierr.Invalid("status.conditions", apierr.OmitValue, "cannot set Complete=True and Failed=true conditions"))
	}
	if (completeChanged || n.cond(jobFailureTarget) != o.cond(jobFailureTarget)) && n.complete() && n.cond(jobFailureTarget) {
		errs = append(errs, apierr.Invalid("status.conditions", apierr.OmitValue, "cannot set Complete=True and FailureTarget=true conditions"))
	}
	if completeChanged || changed("completionTime") {
		if hasDone && !n.complete() {
			errs = append(errs, apierr.Invalid("status.completionTime", timeValue(done), "cannot set completionTime when there is no Complete=True condition"))
		}
		if !present(st, "completionTime") && n.complete() {
			errs = append(errs, apierr.Required("status.completionTime", "completionTime is required for Complete jobs"))
		}
	}
	if (changed("startTime") || changed("completionTime")) && hasStart && hasDone && done.Before(start) {
		errs = append(errs, apierr.Invalid("status.completionTime", timeValue(done), "completionTime cannot be set before startTime"))
	}
	if (finishedChanged || changed("active")) && intAt(st, "active") > 0 && n.finished() {
		errs = append(errs, apierr.Invalid("status.active", intAt(st, "active"), "active>0 is invalid for finished job"))
	}
	if (finishedChanged || changed("startTime")) && !present(st, "startTime") && n.finished() {
		errs = append(errs, apierr.Required("status.startTime", "startTime is required for finished job"))
	}
	if u := uncounted(st); (finishedChanged || changed("uncountedTerminatedPods")) && n.finished() && len(listOf(u["succeeded"]))+len(listOf(u["failed"])) > 0 {
		errs = append(errs, apierr.Invalid("status.uncountedTerminatedPods", uncountedValue(u), "uncountedTerminatedPods needs to be empty for finished job"))
	}
	ci := strOf(st["completedIndexes"])
	fi, hasFailed := st["failedIndexes"].(string)
	completions, hasCompletions := intOf(n.spec["completions"])
	if changed("completedIndexes") && hasCompletions {
		if _, err := countIndexes(ci, completions); err != nil {
			errs = append(errs, apierr.Invalid("status.completedIndexes", ci, "error parsing completedIndexes: "+err.Error()))
		}
	}
	if changed("failedIndexes") && hasCompletions && present(n.spec, "backoffLimitPerIndex") && hasFailed {
		if _, err := countIndexes(fi, completions); err != nil {
			errs = append(errs, apierr.Invalid("status.failedIndexes", fi, "error parsing failedIndexes: "+err.Error()))
		}
	}
	if changed("completedIndexes") && ci != "" && str(n.spec, "completionMode") != completionIndexed {
		errs = append(errs, apierr.Invalid("status.completedIndexes", ci, "cannot set non-empty completedIndexes when non-indexed completion mode"))
	}
	if hasFailed && changed("failedIndexes") && !present(n.spec, "backoffLimitPerIndex") {
		errs = append(errs, apierr.Invalid("status.failedIndexes", fi, "cannot set non-null failedIndexes when backoffLimitPerIndex is null"))
	}
	if (changed("failedIndexes") || changed("completedIndexes")) && hasCompletions && hasFailed {
		if at, ok := indexesOverlap(ci, fi, completions); ok {
			errs = append(errs, apierr.Invalid("status.failedIndexes", fi, fmt.Sprintf("failedIndexes and completedIndexes overlap at index: %d", at)))
		}
	}
	scm := n.cond(jobSuccessCriteriaMet)
	if scm && n.failed() {
		errs = append(errs, apierr.Invalid("status.conditions", apierr.OmitValue, "cannot set SuccessCriteriaMet=True and Failed=true conditions"))
	}
	if scm && n.cond(jobFailureTarget) {
		errs = append(errs, apierr.Invalid("status.conditions", apierr.OmitValue, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"))
	}
	if present(n.spec, "successPolicy") && !scm && n.complete() {
		errs = append(errs, apierr.Invalid("status.conditions", apierr.OmitValue, "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True"))
	}

	// Rules of the change itself.
	for _, t := range []string{jobFailed, jobComplete, jobFailureTarget} {
		if o.cond(t) && !n.cond(t) {
			errs = append(errs, apierr.Invalid("status.conditions", apierr.OmitValue, "cannot disable the terminal "+t+"=True condition"))
		}
	}
	if f := intAt(st, "failed"); f < intAt(o.status, "failed") {
		errs = append(errs, apierr.Invalid("status.failed", f, "cannot decrease the failed counter"))
	}
	// Indexed jobs of equal parallelism and completions may scale down.
	elastic := str(n.spec, "completionMode") == completionIndexed && semanticEqual(n.spec["completions"], n.spec["parallelism"])
	if s := intAt(st, "succeeded"); !elastic && s < intAt(o.status, "succeeded") {
		errs = append(errs, apierr.Invalid("status.succeeded", s, "cannot decrease the succeeded counter"))
	}
	if hasDone && present(o.status, "completionTime") && changed("completionTime") {
		errs = append(errs, apierr.Invalid("status.completionTime", timeValue(done), "completionTime cannot be mutated"))
	}
	if present(o.status, "startTime") && changed("startTime") && !boolOf(n.spec["suspend"]) {
		errs = append(errs, apierr.Required("status.startTime", "startTime cannot be removed for unsuspended job"))
	}
	if o.cond(jobSuccessCriteriaMet) && !scm {
		errs = append(errs, apierr.Invalid("status.conditions", apierr.OmitValue, "cannot disable the SuccessCriteriaMet=True condition"))
	}
	if o.complete() && !o.cond(jobSuccessCriteriaMet) && scm {
		errs = append(errs, apierr.Invalid("status.conditions", apierr.OmitValue, "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"))
	}
	return errs
}

// indexesOverlap walks the completed and failed index lists in order and
// returns the first index both name. Intervals that do not parse are
// skipped: their format is reported on its own.
func indexesOverlap(completed, failed string, completions int64) (int64, bool) {
	if completed == "" || failed == "" {
		return 0, false
	}
	cs, fs := strings.Split(completed, ","), strings.Split(failed, ",")
	ci, fi := 0, 0
	cx, cy, cErr := parseIndexInterval(cs[0], completions)
	fx, fy, fErr := parseIndexInterval(fs[0], completions)
	for ci < len(cs) && fi < len(fs) {
		switch {
		case cErr != nil:
			if ci++; ci < len(cs) {
				cx, cy, cErr = parseIndexInterval(cs[ci], completions)
			}
		case fErr != nil:
			if fi++; fi < len(fs) {
				fx, fy, fErr = parseIndexInterval(fs[fi], completions)
			}
		case cx <= fy && fx <= cy:
			return max(cx, fx), true
		case cx <= fx:
			if ci++; ci < len(cs) {
				cx, cy, cErr = parseIndexInterval(cs[ci], completions)
			}
		default:
			if fi++; fi < len(fs) {
				fx, fy, fErr = parseIndexInterval(fs[fi], completions)
			}
		}
	}
	return 0, false
}
