package printers

import (
	"testing"
	"time"
)

func TestPodPrinter(t *testing.T) {
	p := New(testBrand(t, "plat"))
	cols := []colSpec{
		nameSpec, str0("Ready"), str0("Status"), str0("Restarts"), ageSpec,
		str1("IP"), str1("Node"), str1("Nominated Node"), str1("Readiness Gates"),
	}
	created := `"creationTimestamp":"` + ago(time.Hour) + `"`
	succeeded := []any{map[string]any{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}}
	failed := []any{map[string]any{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}}
	checkTable(t, p.For("", "v1", "pods"), cols, []printerCase{
		{
			name:  "pending without status",
			obj:   `{"metadata":{"name":"p",` + created + `},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Pending"}}`,
			cells: []any{"p", "0/1", "Pending", "0", "60m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "running and ready, wide cells",
			obj: `{"metadata":{"name":"web",` + created + `},
				"spec":{"nodeName":"n1","containers":[{"name":"a"},{"name":"b"}],"readinessGates":[{"conditionType":"lb"},{"conditionType":"dns"}]},
				"status":{"phase":"Running","podIP":"10.0.0.9","podIPs":[{"ip":"10.0.0.5"},{"ip":"fd00::5"}],"nominatedNodeName":"n2",
				"conditions":[{"type":"Ready","status":"True"},{"type":"lb","status":"True"},{"type":"dns","status":"False"}],
				"containerStatuses":[{"name":"a","ready":true,"restartCount":0,"state":{"running":{}}},{"name":"b","ready":true,"restartCount":0,"state":{"running":{}}}]}}`,
			cells: []any{"web", "2/2", "Running", "0", "60m", "10.0.0.5", "n1", "n2", "1/2"},
		},
		{
			name:  "singular IP stands in for the list",
			obj:   `{"metadata":{"name":"p"},"spec":{"containers":[]},"status":{"phase":"Running","podIP":"10.1.1.1"}}`,
			cells: []any{"p", "0/0", "Running", "0", "<unknown>", "10.1.1.1", "<none>", "<none>", "<none>"},
		},
		{
			name: "restarts with time of the last one",
			obj: `{"metadata":{"name":"p",` + created + `},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
				"status":{"phase":"Running","containerStatuses":[
				{"name":"a","ready":false,"restartCount":3,"state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"` + ago(5*time.Minute) + `"}}},
				{"name":"b","ready":true,"restartCount":1,"state":{"running":{}},"lastState":{"terminated":{"exitCode":0,"finishedAt":"` + ago(20*time.Minute) + `"}}}]}}`,
			cells: []any{"p", "1/2", "CrashLoopBackOff", "4 (5m ago)", "60m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "restarts without a termination time",
			obj: `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"}]},
				"status":{"phase":"Running","containerStatuses":[{"name":"a","ready":true,"restartCount":2,"state":{"running":{}}}]}}`,
			cells: []any{"p", "1/1", "Running", "2", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "the first container decides, being read last",
			obj: `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
				"status":{"phase":"Running","containerStatuses":[
				{"name":"a","state":{"terminated":{"exitCode":137,"reason":"OOMKilled"}}},
				{"name":"b","state":{"waiting":{"reason":"ImagePullBackOff"}}}]}}`,
			cells: []any{"p", "0/2", "OOMKilled", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "terminated without reason: signal, then exit code",
			obj: `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
				"status":{"phase":"Running","containerStatuses":[
				{"name":"a","state":{"terminated":{"exitCode":2}}},
				{"name":"b","state":{"terminated":{"exitCode":0,"signal":9}}}]}}`,
			cells: []any{"p", "0/2", "ExitCode:2", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "signal",
			obj: `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"}]},
				"status":{"phase":"Running","containerStatuses":[{"name":"a","state":{"terminated":{"exitCode":0,"signal":15}}}]}}`,
			cells: []any{"p", "0/1", "Signal:15", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "completed container beside a running one, pod ready",
			obj: `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
				"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[
				{"name":"a","ready":false,"state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
				{"name":"b","ready":true,"state":{"running":{}}}]}}`,
			cells: []any{"p", "1/2", "Running", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "completed container beside a running one, pod not ready",
			obj: `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
				"status":{"phase":"Running","conditions":[{"type":"Ready","status":"False"}],"containerStatuses":[
				{"name":"a","ready":false,"state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
				{"name":"b","ready":true,"state":{"running":{}}}]}}`,
			cells: []any{"p", "1/2", "NotReady", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "succeeded: Completed with its row condition",
			obj: `{"metadata":{"name":"job-x",` + created + `},"spec":{"containers":[{"name":"a"}]},
				"status":{"phase":"Succeeded","containerStatuses":[{"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}}`,
			cells: []any{"job-x", "0/1", "Completed", "0", "60m", "<none>", "<none>", "<none>", "<none>"},
			conds: succeeded,
		},
		{
			name: "failed: Error with its row condition",
			obj: `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"}]},
				"status":{"phase":"Failed","containerStatuses":[{"name":"a","state":{"terminated":{"exitCode":1,"reason":"Error"}}}]}}`,
			cells: []any{"p", "0/1", "Error", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
			conds: failed,
		},
		{
			name:  "status reason wins over the phase",
			obj:   `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Failed","reason":"Evicted"}}`,
			cells: []any{"p", "0/1", "Evicted", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
			conds: failed,
		},
		{
			name: "scheduling gated",
			obj: `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"}]},
				"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]}}`,
			cells: []any{"p", "0/1", "SchedulingGated", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container running: Init:i/n",
			obj: `{"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i1"},{"name":"i2"}],"containers":[{"name":"a"}]},
				"status":{"phase":"Pending","initContainerStatuses":[
				{"name":"i1","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
				{"name":"i2","state":{"running":{}}}],
				"containerStatuses":[{"name":"a","state":{"waiting":{"reason":"PodInitializing"}}}]}}`,
			cells: []any{"p", "0/1", "Init:1/2", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container waiting with a reason",
			obj: `{"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i1"}],"containers":[{"name":"a"}]},
				"status":{"phase":"Pending","initContainerStatuses":[
				{"name":"i1","restartCount":4,"state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"` + ago(90*time.Second) + `"}}}]}}`,
			cells: []any{"p", "0/1", "Init:CrashLoopBackOff", "4 (90s ago)", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container waiting to initialize counts as running",
			obj: `{"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i1"}],"containers":[{"name":"a"}]},
				"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","state":{"waiting":{"reason":"PodInitializing"}}}]}}`,
			cells: []any{"p", "0/1", "Init:0/1", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container failed: reason, signal, exit code",
			obj: `{"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i1"}],"containers":[{"name":"a"}]},
				"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","state":{"terminated":{"exitCode":3}}}]}}`,
			cells: []any{"p", "0/1", "Init:ExitCode:3", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container killed by signal",
			obj: `{"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i1"}],"containers":[{"name":"a"}]},
				"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","state":{"terminated":{"exitCode":1,"signal":9}}}]}}`,
			cells: []any{"p", "0/1", "Init:Signal:9", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container failed with reason",
			obj: `{"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i1"}],"containers":[{"name":"a"}]},
				"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","state":{"terminated":{"exitCode":1,"reason":"Error"}}}]}}`,
			cells: []any{"p", "0/1", "Init:Error", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "sidecar started counts in ready and total; restarts count sidecars and regular containers",
			obj: `{"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"log","restartPolicy":"Always"},{"name":"setup"}],"containers":[{"name":"a"}]},
				"status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True"},{"type":"Ready","status":"True"}],
				"initContainerStatuses":[
				{"name":"log","started":true,"ready":true,"restartCount":2,"state":{"running":{}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"` + ago(3*time.Hour) + `"}}},
				{"name":"setup","restartCount":5,"state":{"terminated":{"exitCode":0,"reason":"Completed"}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"` + ago(time.Minute) + `"}}}],
				"containerStatuses":[{"name":"a","ready":true,"restartCount":1,"state":{"running":{}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"` + ago(2*time.Hour) + `"}}}]}}`,
			cells: []any{"p", "2/2", "Running", "3 (120m ago)", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "sidecar not started yet keeps the pod initializing",
			obj: `{"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"log","restartPolicy":"Always"}],"containers":[{"name":"a"}]},
				"status":{"phase":"Pending","initContainerStatuses":[{"name":"log","started":false,"state":{"running":{}}}]}}`,
			cells: []any{"p", "0/2", "Init:0/1", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "initializing but Initialized true reads the containers",
			obj: `{"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i1"}],"containers":[{"name":"a"}]},
				"status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True"}],
				"initContainerStatuses":[{"name":"i1","state":{"waiting":{"reason":"ImagePullBackOff"}}}],
				"containerStatuses":[{"name":"a","ready":true,"state":{"running":{}}}]}}`,
			cells: []any{"p", "1/1", "Init:ImagePullBackOff", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name:  "being deleted: Terminating",
			obj:   `{"metadata":{"name":"p","deletionTimestamp":"` + ago(time.Second) + `"},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Running"}}`,
			cells: []any{"p", "0/1", "Terminating", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name:  "being deleted after its node was lost: Unknown",
			obj:   `{"metadata":{"name":"p","deletionTimestamp":"` + ago(time.Second) + `"},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Running","reason":"NodeLost"}}`,
			cells: []any{"p", "0/1", "Unknown", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name:  "being deleted after it finished keeps its status",
			obj:   `{"metadata":{"name":"p","deletionTimestamp":"` + ago(time.Second) + `"},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Succeeded"}}`,
			cells: []any{"p", "0/1", "Succeeded", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
			conds: succeeded,
		},
		{
			name:  "empty object",
			obj:   `{}`,
			cells: []any{"", "0/0", "", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
	})
}
