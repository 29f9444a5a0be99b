package builtin

import (
	"strings"
	"testing"

	"platd/server/registry"
)

// job is a Job named pi whose template runs one container with the restart
// policy given, plus the spec members given (nil removes one).
func job(restart string, extra map[string]any) registry.Object {
	spec := map[string]any{
		"template": map[string]any{
			"spec": map[string]any{"restartPolicy": restart, "containers": []any{map[string]any{"name": "c", "image": "busybox"}}},
		},
	}
	for k, v := range extra {
		if v == nil {
			delete(spec, k)
			continue
		}
		spec[k] = v
	}
	return registry.Object{"metadata": map[string]any{"name": "pi", "namespace": "ns", "uid": "u-1"}, "spec": spec}
}

func TestJobDefaults(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Job")
	jl := newJobLabels(brand)
	generated := map[string]any{jl.legacyUID: "u-1", jl.uid: "u-1", jl.legacyName: "pi", jl.name: "pi"}
	tests := []struct {
		name  string
		extra map[string]any
		want  map[string]any
	}{
		{"plain", nil, map[string]any{
			"spec.completions": int64(1), "spec.parallelism": int64(1), "spec.backoffLimit": int64(6),
			"spec.completionMode": "NonIndexed", "spec.suspend": false, "spec.podReplacementPolicy": "TerminatingOrFailed",
			"spec.selector":                 map[string]any{"matchLabels": map[string]any{jl.uid: "u-1"}},
			"spec.template.metadata.labels": generated, "metadata.labels": generated,
			"metadata.generation": int64(1), "spec.manualSelector": nil,
		}},
		{"parallel", map[string]any{"parallelism": int64(4)}, map[string]any{"spec.completions": nil, "spec.parallelism": int64(4)}},
		{"completions", map[string]any{"completions": int64(4)}, map[string]any{"spec.completions": int64(4), "spec.parallelism": int64(1)}},
		{"per index", map[string]any{"backoffLimitPerIndex": int64(1), "completionMode": "Indexed", "completions": int64(3)}, map[string]any{
			"spec.backoffLimit": int64(2147483647),
		}},
		{"failure policy", map[string]any{"podFailurePolicy": map[string]any{"rules": []any{map[string]any{
			"action": "Ignore", "onPodConditions": []any{map[string]any{"type": "DisruptionTarget"}},
		}}}}, map[string]any{
			"spec.podReplacementPolicy": "Failed",
			"spec.podFailurePolicy": map[string]any{"rules": []any{map[string]any{
				"action": "Ignore", "onPodConditions": []any{map[string]any{"type": "DisruptionTarget", "status": "True"}},
			}}},
		}},
		{"manual", map[string]any{"manualSelector": true, "selector": map[string]any{"matchLabels": map[string]any{"a": "b"}}, "template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
			"spec":     map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "c", "image": "busybox"}}},
		}}, map[string]any{
			"spec.selector": map[string]any{"matchLabels": map[string]any{"a": "b"}}, "spec.template.metadata.labels": map[string]any{"a": "b"},
			"metadata.labels": map[string]any{"a": "b"},
		}},
	}
	for _, tt := range tests {
		got := mustCreate(t, d, job("Never", tt.extra))
		wantAt(t, tt.name, got, tt.want)
	}
}

func TestJobValidation(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Job")
	jl := newJobLabels(brand)
	tests := []struct {
		name    string
		restart string
		extra   map[string]any
		want    []string
	}{
		{"always", "Always", nil, []string{`spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`}},
		{"failure policy", "OnFailure", map[string]any{"podFailurePolicy": map[string]any{"rules": []any{}}, "podReplacementPolicy": "TerminatingOrFailed"}, []string{
			`spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"`,
			`spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified`,
		}},
		{"negative", "Never", map[string]any{"parallelism": int64(-1), "activeDeadlineSeconds": int64(-1), "ttlSecondsAfterFinished": int64(-1)}, []string{
			"spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
			"spec.activeDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
			"spec.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0",
		}},
		{"mode", "Never", map[string]any{"completionMode": "Sometimes", "backoffLimitPerIndex": int64(1), "maxFailedIndexes": int64(2)}, []string{
			`spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"`,
		}},
		{"per index", "Never", map[string]any{"backoffLimitPerIndex": int64(1), "maxFailedIndexes": int64(2), "successPolicy": map[string]any{"rules": []any{map[string]any{"succeededCount": int64(1)}}}}, []string{
			"spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
			"spec.maxFailedIndexes: Invalid value: 2: requires indexed completion mode",
			"spec.successPolicy: Invalid value: batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule{batch.SuccessPolicyRule{SucceededIndexes:(*string)(nil), SucceededCount:&1}}}: requires indexed completion mode",
		}},
		{"success policy", "Never", map[string]any{"completionMode": "Indexed", "completions": int64(5), "successPolicy": map[string]any{"rules": []any{
			map[string]any{},
			map[string]any{"succeededIndexes": "0,2-3", "succeededCount": int64(4)},
			map[string]any{"succeededIndexes": "3,1", "succeededCount": int64(6)},
			map[string]any{"succeededIndexes": "1-7"},
		}}}, []string{
			"spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified",
			"spec.successPolicy.rules[1].succeededCount: Invalid value: 4: must be less than or equal to 3 (the number of indexes in the specified succeededIndexes field)",
			`spec.successPolicy.rules[2].succeededIndexes: Invalid value: "3,1": error parsing succeededIndexes: non-increasing order, previous: 3, current: 1`,
			"spec.successPolicy.rules[2].succeededCount: Invalid value: 6: must be less than or equal to 5 (the number of specified completions)",
			"spec.successPolicy.rules[2].succeededCount: Invalid value: 6: must be less than or equal to 0 (the number of indexes in the specified succeededIndexes field)",
			`spec.successPolicy.rules[3].succeededIndexes: Invalid value: "1-7": error parsing succeededIndexes: too large index: "7"`,
		}},
		{"high completions", "Never", map[string]any{"completionMode": "Indexed", "completions": int64(200000), "parallelism": int64(20000), "backoffLimitPerIndex": int64(1)}, []string{
			"spec.maxFailedIndexes: Required value: must be specified when completions is above 100000",
			"spec.parallelism: Invalid value: 20000: must be less than or equal to 10000 when completions are above 100000 and used with backoff limit per index",
		}},
		{"indexed", "Never", map[string]any{"completionMode": "Indexed", "completions": nil, "parallelism": int64(100001), "maxFailedIndexes": int64(1)}, []string{
			"spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
			"spec.completions: Required value: when completion mode is Indexed",
			"spec.parallelism: Invalid value: 100001: must be less than or equal to 100000 when completion mode is Indexed",
		}},
		{"replacement", "Never", map[string]any{"podReplacementPolicy": "Never"}, []string{
			`spec.podReplacementPolicy: Unsupported value: "Never": supported values: "Failed", "TerminatingOrFailed"`,
		}},
		{"wrong generated label", "Never", map[string]any{"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"job-name": "other"}},
			"spec":     map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "c", "image": "busybox"}}},
		}}, []string{
			`spec.template.metadata.labels[job-name]: Invalid value: map[string]string{"batch.` + brand.Label("controller-uid") + `":"u-1", "batch.` + brand.Label("job-name") + `":"pi", "controller-uid":"u-1", "job-name":"other"}: must be 'pi'`,
		}},
		{"foreign selector", "Never", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{jl.uid: "u-2"}}}, []string{
			"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"batch." + brand.Label("controller-uid") + "\":\"u-2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated",
			"spec.template.metadata.labels: Invalid value: map[string]string{\"batch." + brand.Label("controller-uid") + "\":\"u-1\", \"batch." + brand.Label("job-name") + "\":\"pi\", \"controller-uid\":\"u-1\", \"job-name\":\"pi\"}: `selector` does not match template `labels`",
		}},
		{"failure policy rules", "Never", map[string]any{"podFailurePolicy": map[string]any{"rules": []any{
			map[string]any{"action": "FailIndex", "onExitCodes": map[string]any{"operator": "In", "containerName": "x", "values": []any{int64(3), int64(0), int64(3)}}},
			map[string]any{"action": "Retry", "onPodConditions": []any{map[string]any{"type": "Bad Type", "status": "Maybe"}}},
			map[string]any{"action": "Ignore"},
			map[string]any{"action": "Count", "onExitCodes": map[string]any{"operator": "Has", "values": []any{}}, "onPodConditions": []any{map[string]any{"type": "Ready"}}},
		}}}, []string{
			`spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set`,
			`spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "x": must be one of the container or initContainer names in the pod template`,
			"spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Invalid value: 0: must not be 0 for the In operator",
			"spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3",
			"spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{3, 0, 3}: must be ordered",
			`spec.podFailurePolicy.rules[1].action: Unsupported value: "Retry": supported values: "Count", "FailIndex", "FailJob", "Ignore"`,
			`spec.podFailurePolicy.rules[1].onPodConditions[0].type: Invalid value: "Bad Type": ` + qualifiedNameMsg,
			`spec.podFailurePolicy.rules[1].onPodConditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"`,
			"spec.podFailurePolicy.rules[2]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
			`spec.podFailurePolicy.rules[3].onExitCodes.operator: Unsupported value: "Has": supported values: "In", "NotIn"`,
			"spec.podFailurePolicy.rules[3].onExitCodes.values: Invalid value: []int32{}: at least one value is required",
			"spec.podFailurePolicy.rules[3]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported",
		}},
		{"managed by", "Never", map[string]any{"managedBy": "example.com/" + strings.Repeat("x", 60)}, []string{
			"spec.managedBy: Too long: may not be more than 63 bytes",
		}},
		{"manual without selector", "Never", map[string]any{"manualSelector": true}, []string{
			"spec.selector: Required value",
			"spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match template `labels`",
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, job(tt.restart, tt.extra))
		checkErrs(t, tt.name, errs, tt.want)
	}
	// An indexed job's name must leave room for its pods' hostnames.
	long := job("Never", map[string]any{"completionMode": "Indexed", "completions": int64(10)})
	name := strings.Repeat("a", 62)
	long["metadata"].(map[string]any)["name"] = name
	_, errs := create(d, long)
	checkErrs(t, "hostname", errs, []string{
		`metadata.name: Invalid value: "` + name + `": will not able to create pod with invalid DNS label: ` + name + `-9`,
	})
}

func TestJobUpdate(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Job")
	stored := mustCreate(t, d, job("Never", nil))
	change := func(f func(spec map[string]any)) registry.Object {
		next := copyObj(stored)
		f(next["spec"].(map[string]any))
		return next
	}
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"parallelism", change(func(s map[string]any) { s["parallelism"] = int64(3) }), nil},
		{"completions", change(func(s map[string]any) { s["completions"] = int64(3) }), []string{"spec.completions: Invalid value: 3: field is immutable"}},
		{"template", change(func(s map[string]any) {
			s["template"].(map[string]any)["spec"].(map[string]any)["nodeSelector"] = map[string]any{"zone": "a"}
		}), []string{"spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable"}},
		{"limit per index", change(func(s map[string]any) { s["backoffLimitPerIndex"] = int64(0) }), []string{
			"spec.backoffLimitPerIndex: Invalid value: 0: requires indexed completion mode",
			"spec.backoffLimitPerIndex: Invalid value: 0: field is immutable",
		}},
		{"mode", change(func(s map[string]any) { s["completionMode"] = "Indexed" }), []string{
			"spec.completionMode: Invalid value: \"Indexed\": field is immutable",
		}},
	}
	for _, tt := range tests {
		_, errs := update(d, tt.obj, stored, "")
		checkErrs(t, tt.name, errs, tt.want)
	}

	// A suspended job that never started may move its pods.
	suspended := mustCreate(t, d, job("Never", map[string]any{"suspend": true}))
	next := copyObj(suspended)
	next["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["nodeSelector"] = map[string]any{"zone": "a"}
	next["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["annotations"] = map[string]any{"a": "b"}
	_, errs := update(d, next, suspended, "")
	checkErrs(t, "suspended", errs, nil)

	// An indexed job's completions change along with its parallelism.
	indexed := mustCreate(t, d, job("Never", map[string]any{"completionMode": "Indexed", "completions": int64(2), "parallelism": int64(2)}))
	next = copyObj(indexed)
	next["spec"].(map[string]any)["completions"] = int64(4)
	_, errs = update(d, next, indexed, "")
	checkErrs(t, "elastic", errs, []string{"spec.completions: Invalid value: 4: can only be modified in tandem with spec.parallelism"})
	next["spec"].(map[string]any)["parallelism"] = int64(4)
	_, errs = update(d, next, indexed, "")
	checkErrs(t, "elastic in tandem", errs, nil)
}

func TestCronJobs(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "CronJob")
	cron := func(extra map[string]any) registry.Object {
		spec := map[string]any{
			"schedule":    "0 * * * *",
			"jobTemplate": map[string]any{"spec": job("OnFailure", nil)["spec"]},
		}
		for k, v := range extra {
			spec[k] = v
		}
		return registry.Object{"metadata": map[string]any{"name": "c", "namespace": "ns"}, "spec": spec}
	}
	got := mustCreate(t, d, cron(nil))
	wantAt(t, "cronjob", got, map[string]any{
		"spec.concurrencyPolicy": "Allow", "spec.suspend": false,
		"spec.successfulJobsHistoryLimit": int64(3), "spec.failedJobsHistoryLimit": int64(1),
		"spec.jobTemplate.spec.template.spec.terminationGracePeriodSeconds": int64(30),
		"spec.jobTemplate.spec.parallelism":                                 nil,
		"metadata.generation":                                               int64(1),
	})
	tests := []struct {
		name  string
		extra map[string]any
		want  []string
	}{
		{"schedule", map[string]any{"schedule": "* 24 * * *"}, []string{`spec.schedule: Invalid value: "* 24 * * *": end of range (24) above maximum (23): 24`}},
		{"no schedule", map[string]any{"schedule": ""}, []string{"spec.schedule: Required value"}},
		{"zone in schedule", map[string]any{"schedule": "CRON_TZ=UTC * * * * * *"}, []string{
			`spec.schedule: Invalid value: "CRON_TZ=UTC * * * * * *": expected exactly 5 fields, found 6: [* * * * * *]`,
			`spec.schedule: Invalid value: "CRON_TZ=UTC * * * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead`,
		}},
		{"time zones", map[string]any{"timeZone": "Local"}, []string{
			`spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones`,
		}},
		{"empty zone", map[string]any{"timeZone": ""}, []string{`spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string`}},
		{"zone chars", map[string]any{"timeZone": "../etc"}, []string{`spec.timeZone: Invalid value: "../etc": unknown time zone ../etc`}},
		{"good zone", map[string]any{"timeZone": "Europe/Berlin"}, nil},
		{"limits", map[string]any{"startingDeadlineSeconds": int64(-1), "failedJobsHistoryLimit": int64(-1)}, []string{
			"spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
			"spec.failedJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
		}},
		{"selector", map[string]any{"jobTemplate": map[string]any{"spec": job("Always", map[string]any{
			"manualSelector": true, "selector": map[string]any{"matchLabels": map[string]any{"a": "b"}},
		})["spec"]}}, []string{
			`spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`,
			"spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"a\":\"b\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated",
			`spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", "false"`,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, cron(tt.extra))
		checkErrs(t, tt.name, errs, tt.want)
	}
	long := cron(nil)
	long["metadata"].(map[string]any)["name"] = "a-cron-job-name-that-is-longer-than-fifty-two-characters"
	_, errs := create(d, long)
	checkErrs(t, "long name", errs, []string{`metadata.name: Invalid value: "a-cron-job-name-that-is-longer-than-fifty-two-characters": must be no more than 52 characters`})
	// Updates may keep a TZ the stored schedule has.
	stored := mustCreate(t, d, cron(nil))
	stored["spec"].(map[string]any)["schedule"] = "TZ=UTC 0 * * * *"
	next := copyObj(stored)
	_, errs = update(d, next, stored, "")
	checkErrs(t, "kept TZ", errs, nil)
}

// qualifiedNameMsg is the problem of a qualified name with a space.
const qualifiedNameMsg = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

func TestJobStatusRules(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "Job")
	stored := mustCreate(t, d, job("Never", nil))
	stored["status"] = map[string]any{"startTime": "2026-01-01T00:00:00Z", "active": int64(1), "succeeded": int64(2), "failed": int64(1)}
	complete := []any{
		map[string]any{"type": "SuccessCriteriaMet", "status": "True"},
		map[string]any{"type": "Complete", "status": "True"},
	}
	tests := []struct {
		name   string
		status map[string]any
		want   []string
	}{
		{"progress", map[string]any{"startTime": "2026-01-01T00:00:00Z", "active": int64(1), "succeeded": int64(3), "failed": int64(1), "ready": int64(1)}, nil},
		{"counts", map[string]any{"startTime": "2026-01-01T00:00:00Z", "active": int64(-1), "succeeded": int64(1), "failed": int64(0), "uncountedTerminatedPods": map[string]any{
			"succeeded": []any{"a", ""}, "failed": []any{"a"},
		}}, []string{
			"status.active: Invalid value: -1: must be greater than or equal to 0",
			`status.uncountedTerminatedPods.succeeded[1]: Invalid value: "": must not be empty`,
			`status.uncountedTerminatedPods.failed[0]: Duplicate value: "a"`,
			"status.failed: Invalid value: 0: cannot decrease the failed counter",
			"status.succeeded: Invalid value: 1: cannot decrease the succeeded counter",
		}},
		{"complete", map[string]any{"startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:05:00Z", "succeeded": int64(2), "failed": int64(1), "conditions": complete}, nil},
		{"complete early", map[string]any{
			"startTime": "2026-01-01T00:00:00Z", "completionTime": "2025-12-31T00:00:00Z", "active": int64(1), "succeeded": int64(2), "failed": int64(1), "conditions": complete,
		}, []string{
			"status.completionTime: Invalid value: 2025-12-31 00:00:00 +0000 UTC: completionTime cannot be set before startTime",
			"status.active: Invalid value: 1: active>0 is invalid for finished job",
		}},
		{"complete without time", map[string]any{"startTime": "2026-01-01T00:00:00Z", "succeeded": int64(2), "failed": int64(1), "conditions": []any{
			map[string]any{"type": "Complete", "status": "True"}, map[string]any{"type": "Failed", "status": "True"},
		}}, []string{
			"status.conditions: Invalid value: cannot set Complete=True and Failed=true conditions",
			"status.completionTime: Required value: completionTime is required for Complete jobs",
		}},
		{"start removed", map[string]any{"succeeded": int64(2), "failed": int64(1), "completedIndexes": "1"}, []string{
			`status.completedIndexes: Invalid value: "1": error parsing completedIndexes: too large index: "1"`,
			`status.completedIndexes: Invalid value: "1": cannot set non-empty completedIndexes when non-indexed completion mode`,
			"status.startTime: Required value: startTime cannot be removed for unsuspended job",
		}},
	}
	for _, tt := range tests {
		next := copyObj(stored)
		next["status"] = tt.status
		checkErrs(t, tt.name, d.Subresource("status").Validate(next, stored), tt.want)
	}
	// Index lists of an indexed job with a backoff limit per index.
	indexed := mustCreate(t, d, job("Never", map[string]any{"completionMode": "Indexed", "completions": int64(6), "parallelism": int64(6), "backoffLimitPerIndex": int64(1)}))
	next := copyObj(indexed)
	next["status"] = map[string]any{"completedIndexes": "0-2,9", "failedIndexes": "2,4"}
	checkErrs(t, "indexes", d.Subresource("status").Validate(next, indexed), []string{
		`status.completedIndexes: Invalid value: "0-2,9": error parsing completedIndexes: too large index: "9"`,
		`status.failedIndexes: Invalid value: "2,4": failedIndexes and completedIndexes overlap at index: 2`,
	})
	// A complete job cannot meet its success criteria after the fact.
	legacy := copyObj(stored)
	legacy["status"] = map[string]any{"startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:05:00Z", "succeeded": int64(2), "failed": int64(1),
		"conditions": []any{map[string]any{"type": "Complete", "status": "True"}}}
	late := copyObj(legacy)
	late["status"].(map[string]any)["conditions"] = complete
	checkErrs(t, "late criteria", d.Subresource("status").Validate(late, legacy), []string{
		"status.conditions: Invalid value: cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
	})
	// Terminal conditions stay.
	done := copyObj(stored)
	done["status"] = map[string]any{"startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:05:00Z", "succeeded": int64(2), "failed": int64(1), "conditions": complete}
	back := copyObj(done)
	back["status"].(map[string]any)["conditions"] = []any{}
	checkErrs(t, "terminal", d.Subresource("status").Validate(back, done), []string{
		"status.completionTime: Invalid value: 2026-01-01 00:05:00 +0000 UTC: cannot set completionTime when there is no Complete=True condition",
		"status.conditions: Invalid value: cannot disable the terminal Complete=True condition",
		"status.conditions: Invalid value: cannot disable the SuccessCriteriaMet=True condition",
	})
}

// FuzzCountIndexes checks the parser of job index lists: no panic, and an
// accepted list names at most completions indexes.
func FuzzCountIndexes(f *testing.F) {
	for _, s := range []string{"0,2-3", "1-7", "3,1", "1-2-3", "x", "", ",", "-1", "0-0"} {
		f.Add(s, int64(5))
	}
	f.Fuzz(func(t *testing.T, s string, completions int64) {
		n, err := countIndexes(s, completions)
		if err == nil && n > 0 && n > completions {
			t.Errorf("countIndexes(%q, %d) = %d, more than completions", s, completions, n)
		}
		if err == nil && n < 0 {
			t.Errorf("countIndexes(%q, %d) = %d", s, completions, n)
		}
	})
}
