package printers

import (
	"fmt"
	"time"

	"platd/config"
	"platd/server/registry"
)

func addBatch(p *Printers, _ config.Brand) {
	p.add("batch", "v1", "jobs", columns(
		nameColumn(),
		col("Status", "string", "State of the job.", func(o registry.Object, _ time.Time) any { return jobStatus(o) }).
			reading(field("status", "conditions"), field("metadata", "deletionTimestamp")),
		col("Completions", "string", "Succeeded pods out of the completions needed.", func(o registry.Object, _ time.Time) any {
			return jobCompletions(o)
		}).reading(field("status", "succeeded"), field("spec", "completions"), field("spec", "parallelism")),
		col("Duration", "string", "How long the job ran, or has been running.", func(o registry.Object, now time.Time) any {
			start := timestamp(o, "status", "startTime")
			if !has(o, "status", "startTime") {
				return ""
			}
			if !has(o, "status", "completionTime") {
				return HumanDuration(now.Sub(start))
			}
			return HumanDuration(timestamp(o, "status", "completionTime").Sub(start))
		}).reading(field("status", "startTime"), field("status", "completionTime")),
		ageColumn(),
		containersColumn("spec", "template", "spec", "containers").wide(),
		imagesColumn("spec", "template", "spec", "containers").wide(),
		selectorColumn("Label selector of the job's pods.", "spec", "selector").wide(),
	))
	jobTemplate := []string{"spec", "jobTemplate", "spec", "template", "spec", "containers"}
	p.add("batch", "v1", "cronjobs", columns(
		nameColumn(),
		col("Schedule", "string", "Cron schedule of the job runs.", text("spec", "schedule")).reading(field("spec", "schedule")),
		col("Timezone", "string", "Time zone the schedule is read in.", textSet(none, "spec", "timeZone")).reading(field("spec", "timeZone")),
		col("Suspend", "boolean", "Whether new runs are held back.", func(o registry.Object, _ time.Time) any {
			b, ok := boolOK(o, "spec", "suspend")
			switch {
			case !ok:
				return unset
			case b:
				return "True"
			}
			return "False"
		}).reading(field("spec", "suspend")),
		col("Active", "integer", "Number of running jobs.", count("status", "active")).reading(counted("status", "active")),
		col("Last Schedule", "string", "Time since a job was last started.", func(o registry.Object, now time.Time) any {
			if !has(o, "status", "lastScheduleTime") {
				return none
			}
			return since(timestamp(o, "status", "lastScheduleTime"), now)
		}).reading(field("status", "lastScheduleTime")),
		ageColumn(),
		containersColumn(jobTemplate...).wide(),
		imagesColumn(jobTemplate...).wide(),
		selectorColumn("Label selector of the jobs' pods.", "spec", "jobTemplate", "spec", "selector").wide(),
	))
}

// jobStatus is the first that holds of: Complete, Failed, Terminating,
// Suspended, FailureTarget, else Running.
func jobStatus(o registry.Object) string {
	conds := list(o, "status", "conditions")
	switch {
	case jobCondition(conds, "Complete"):
		return "Complete"
	case jobCondition(conds, "Failed"):
		return "Failed"
	case has(o, "metadata", "deletionTimestamp"):
		return "Terminating"
	case jobCondition(conds, "Suspended"):
		return "Suspended"
	case jobCondition(conds, "FailureTarget"):
		return "FailureTarget"
	}
	return "Running"
}

// jobCondition reports the truth of the first condition of the type.
func jobCondition(conds []any, typ string) bool {
	for _, c := range conds {
		if str(c, "type") == typ {
			return str(c, "status") == "True"
		}
	}
	return false
}

// jobCompletions is "succeeded/completions"; a job without a completion
// count needs one success, "of N" telling its parallelism when above one.
func jobCompletions(o registry.Object) string {
	succeeded := num(o, "status", "succeeded")
	if c, ok := integer(o, "spec", "completions"); ok {
		return fmt.Sprintf("%d/%d", succeeded, c)
	}
	if par := num(o, "spec", "parallelism"); par > 1 {
		return fmt.Sprintf("%d/1 of %d", succeeded, par)
	}
	return fmt.Sprintf("%d/1", succeeded)
}
