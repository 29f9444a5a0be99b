package printers

import (
	"testing"
	"time"
)

func TestJobPrinter(t *testing.T) {
	p := New(testBrand(t, "plat"))
	cols := []colSpec{nameSpec, str0("Status"), str0("Completions"), str0("Duration"), ageSpec, str1("Containers"), str1("Images"), str1("Selector")}
	tmpl := `"template":{"spec":{"containers":[{"name":"pi","image":"perl"}]}},"selector":{"matchLabels":{"batch.example/job":"pi"}}`
	checkTable(t, p.For("batch", "v1", "jobs"), cols, []printerCase{
		{
			name: "complete",
			obj: `{` + meta("pi") + `,"spec":{"completions":1,"parallelism":1,` + tmpl + `},
				"status":{"succeeded":1,"startTime":"` + ago(50*time.Minute) + `","completionTime":"` + ago(49*time.Minute+30*time.Second) + `",
				"conditions":[{"type":"SuccessCriteriaMet","status":"True"},{"type":"Complete","status":"True"}]}}`,
			cells: []any{"pi", "Complete", "1/1", "30s", "60m", "pi", "perl", "batch.example/job=pi"},
		},
		{
			name:  "running, parallel without completions",
			obj:   `{` + meta("work") + `,"spec":{"parallelism":4,` + tmpl + `},"status":{"succeeded":2,"startTime":"` + ago(5*time.Minute) + `"}}`,
			cells: []any{"work", "Running", "2/1 of 4", "5m", "60m", "pi", "perl", "batch.example/job=pi"},
		},
		{
			name:  "not started",
			obj:   `{` + meta("j") + `,"spec":{"completions":5}}`,
			cells: []any{"j", "Running", "0/5", "", "60m", "", "", "<none>"},
		},
		{
			name:  "failed",
			obj:   `{` + meta("j") + `,"spec":{"parallelism":1},"status":{"failed":6,"conditions":[{"type":"FailureTarget","status":"True"},{"type":"Failed","status":"True"}]}}`,
			cells: []any{"j", "Failed", "0/1", "", "60m", "", "", "<none>"},
		},
		{
			name:  "terminating",
			obj:   `{"metadata":{"name":"j","deletionTimestamp":"` + ago(0) + `"},"spec":{"completions":1},"status":{"conditions":[{"type":"Suspended","status":"True"}]}}`,
			cells: []any{"j", "Terminating", "0/1", "", "<unknown>", "", "", "<none>"},
		},
		{
			name:  "suspended",
			obj:   `{` + meta("j") + `,"spec":{"completions":1},"status":{"conditions":[{"type":"Complete","status":"False"},{"type":"Suspended","status":"True"}]}}`,
			cells: []any{"j", "Suspended", "0/1", "", "60m", "", "", "<none>"},
		},
		{
			name:  "failure target",
			obj:   `{` + meta("j") + `,"spec":{"completions":1},"status":{"conditions":[{"type":"FailureTarget","status":"True"}]}}`,
			cells: []any{"j", "FailureTarget", "0/1", "", "60m", "", "", "<none>"},
		},
	})
}

func TestCronJobPrinter(t *testing.T) {
	p := New(testBrand(t, "plat"))
	cols := []colSpec{nameSpec, str0("Schedule"), str0("Timezone"), bool0("Suspend"), int0("Active"), str0("Last Schedule"), ageSpec,
		str1("Containers"), str1("Images"), str1("Selector")}
	checkTable(t, p.For("batch", "v1", "cronjobs"), cols, []printerCase{
		{
			name: "scheduled",
			obj: `{` + meta("nightly") + `,"spec":{"schedule":"0 3 * * *","timeZone":"Europe/Paris","suspend":false,
				"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"backup","image":"tool:1"}]}}}}},
				"status":{"active":[{"name":"nightly-1"}],"lastScheduleTime":"` + ago(9*time.Hour) + `"}}`,
			cells: []any{"nightly", "0 3 * * *", "Europe/Paris", "False", int64(1), "9h", "60m", "backup", "tool:1", "<none>"},
		},
		{
			name:  "never run, suspend unset",
			obj:   `{` + meta("c") + `,"spec":{"schedule":"@hourly"}}`,
			cells: []any{"c", "@hourly", "<none>", "<unset>", int64(0), "<none>", "60m", "", "", "<none>"},
		},
		{
			name:  "suspended",
			obj:   `{` + meta("c") + `,"spec":{"schedule":"*/5 * * * *","suspend":true,"jobTemplate":{"spec":{"selector":{"matchLabels":{"a":"b"}}}}}}`,
			cells: []any{"c", "*/5 * * * *", "<none>", "True", int64(0), "<none>", "60m", "", "", "a=b"},
		},
	})
}
