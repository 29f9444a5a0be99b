package rest

import (
	"encoding/json"
	"reflect"
	"testing"

	"platd/server/schema"
)

// tableReadsExtra are objects beside the pinned fixtures: pods in states
// the pod printer tells apart (init containers failing, waiting, running
// and as sidecars, containers ended by a signal or an exit code,
// scheduling gates, a completed pod with a container still running, a lost
// node), and workloads with and without the fields their rows read.
var tableReadsExtra = map[string][]string{"core/v1/pods": {
	`{"metadata":{"name":"init-failed","namespace":"ns1","creationTimestamp":"2026-01-02T01:04:05Z"},"spec":{"containers":[{"name":"a","image":"x"}],"initContainers":[{"name":"i1","image":"x"},{"name":"i2","image":"x"}]},"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","ready":false,"restartCount":2,"image":"x","imageID":"","state":{"terminated":{"exitCode":1,"reason":"Error","finishedAt":"2026-01-02T02:00:00Z"}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"2026-01-02T01:30:00Z"}}}]}}`,
	`{"metadata":{"name":"init-signal","namespace":"ns1"},"spec":{"containers":[{"name":"a","image":"x"}],"initContainers":[{"name":"i1","image":"x"}]},"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","ready":false,"restartCount":0,"image":"x","imageID":"","state":{"terminated":{"exitCode":137,"signal":9}}}]}}`,
	`{"metadata":{"name":"init-waiting","namespace":"ns1"},"spec":{"containers":[{"name":"a","image":"x"}],"initContainers":[{"name":"i1","image":"x"}]},"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","ready":false,"restartCount":0,"image":"x","imageID":"","state":{"waiting":{"reason":"ImagePullBackOff"}}}]}}`,
	`{"metadata":{"name":"init-running","namespace":"ns1"},"spec":{"containers":[{"name":"a","image":"x"}],"initContainers":[{"name":"i1","image":"x"},{"name":"i2","image":"x"}]},"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","ready":false,"restartCount":0,"image":"x","imageID":"","state":{"running":{}}}]}}`,
	`{"metadata":{"name":"sidecar","namespace":"ns1"},"spec":{"containers":[{"name":"a","image":"x"}],"initContainers":[{"name":"proxy","image":"x","restartPolicy":"Always"}]},"status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True"},{"type":"Ready","status":"True"}],"initContainerStatuses":[{"name":"proxy","ready":true,"started":true,"restartCount":1,"image":"x","imageID":"","state":{"running":{}},"lastState":{"terminated":{"exitCode":2,"finishedAt":"2026-01-02T02:30:00Z"}}}],"containerStatuses":[{"name":"a","ready":true,"restartCount":0,"image":"x","imageID":"","state":{"running":{}}}],"podIP":"10.0.0.9"}}`,
	`{"metadata":{"name":"ended","namespace":"ns1"},"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"x"},{"name":"c","image":"x"}]},"status":{"phase":"Running","containerStatuses":[{"name":"a","ready":false,"restartCount":0,"image":"x","imageID":"","state":{"terminated":{"exitCode":3}}},{"name":"b","ready":false,"restartCount":0,"image":"x","imageID":"","state":{"terminated":{"exitCode":0,"signal":15}}},{"name":"c","ready":false,"restartCount":0,"image":"x","imageID":"","state":{"waiting":{"reason":"ContainerCreating"}}}]}}`,
	`{"metadata":{"name":"gated","namespace":"ns1"},"spec":{"containers":[{"name":"a","image":"x"}],"schedulingGates":[{"name":"example.com/wait"}]},"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]}}`,
	`{"metadata":{"name":"completed-running","namespace":"ns1"},"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"x"}]},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"False"}],"containerStatuses":[{"name":"a","ready":true,"restartCount":0,"image":"x","imageID":"","state":{"running":{}}},{"name":"b","ready":false,"restartCount":0,"image":"x","imageID":"","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}}`,
	`{"metadata":{"name":"lost","namespace":"ns1","deletionTimestamp":"2026-01-02T03:00:00Z","deletionGracePeriodSeconds":30},"spec":{"nodeName":"gone","containers":[{"name":"a","image":"x"}]},"status":{"phase":"Running","reason":"NodeLost","nominatedNodeName":"n2","podIPs":[]}}`,
	`{"metadata":{"name":"failed","namespace":"ns1"},"spec":{"containers":[{"name":"a","image":"x"}],"readinessGates":[{"conditionType":"x/y"},{"conditionType":"x/z"}]},"status":{"phase":"Failed","conditions":[{"type":"x/y","status":"True"}]}}`,
	`{"metadata":{"name":"bare","namespace":"ns1"},"spec":{"containers":[]}}`,
	`{"metadata":{"name":"ips-only","namespace":"ns1","labels":{"app":"db","tier":"y"}},"spec":{"hostNetwork":true,"containers":[{"name":"a","image":"x"}]},"status":{"phase":"Running","podIPs":[{"ip":"10.0.0.7"},{"ip":"fd00::7"}]}}`,
}, "core/v1/nodes": {
	`{"metadata":{"name":"node-b","creationTimestamp":"2026-01-02T01:04:05Z","labels":{"role":"edge"}},"spec":{},"status":{"conditions":[{"type":"Ready","status":"False"},{"type":"Ready","status":"True"}],"addresses":[{"type":"Hostname","address":"b"},{"type":"InternalIP","address":"10.0.0.2"}],"images":[{"names":["x:1"],"sizeBytes":1000}],"nodeInfo":{"kubeletVersion":"","osImage":"","kernelVersion":"6.8","containerRuntimeVersion":"","machineID":"","systemUUID":"","bootID":"","kubeProxyVersion":"","operatingSystem":"linux","architecture":"arm64"}}}`,
	`{"metadata":{"name":"node-c"}}`,
}, "core/v1/serviceaccounts": {
	`{"metadata":{"name":"builder","namespace":"ns1","creationTimestamp":"2026-01-02T01:04:05Z"},"secrets":[{"name":"a"},{"name":"b"}],"imagePullSecrets":[{"name":"pull"}]}`,
	`{"metadata":{"name":"none","namespace":"ns1"}}`,
}, "core/v1/replicationcontrollers": {
	`{"metadata":{"name":"rc","namespace":"ns1"},"spec":{"replicas":2,"selector":{"app":"rc","tier":"x"},"template":{"metadata":{"labels":{"app":"rc","tier":"x"}},"spec":{"containers":[{"name":"c","image":"x"},{"name":"d","image":"y"}]}}},"status":{"replicas":2,"readyReplicas":1}}`,
}, "core/v1/podtemplates": {
	`{"metadata":{"name":"tpl","namespace":"ns1"},"template":{"metadata":{"labels":{"app":"t"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}`,
	`{"metadata":{"name":"bare","namespace":"ns1"},"template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}`,
}, "apps/v1/statefulsets": {
	`{"metadata":{"name":"db","namespace":"ns1","creationTimestamp":"2026-01-02T01:04:05Z"},"spec":{"replicas":3,"serviceName":"db","selector":{"matchLabels":{"app":"db"}},"template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"db","image":"postgres:16"},{"name":"exporter","image":"exp:1"}]}}},"status":{"replicas":3,"readyReplicas":2}}`,
	`{"metadata":{"name":"empty","namespace":"ns1"},"spec":{"serviceName":"e","selector":{"matchLabels":{"app":"e"}},"template":{"metadata":{"labels":{"app":"e"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}`,
}, "apps/v1/daemonsets": {
	`{"metadata":{"name":"agent","namespace":"ns1","creationTimestamp":"2026-01-02T01:04:05Z"},"spec":{"selector":{"matchLabels":{"app":"agent"},"matchExpressions":[{"key":"tier","operator":"In","values":["a","b"]}]},"template":{"metadata":{"labels":{"app":"agent","tier":"a"}},"spec":{"nodeSelector":{"example.com/os":"linux","pool":"edge"},"containers":[{"name":"agent","image":"agent:2"}]}}},"status":{"desiredNumberScheduled":5,"currentNumberScheduled":4,"numberReady":3,"updatedNumberScheduled":2,"numberAvailable":1,"numberMisscheduled":0}}`,
	`{"metadata":{"name":"plain","namespace":"ns1"},"spec":{"selector":{"matchLabels":{"app":"p"}},"template":{"metadata":{"labels":{"app":"p"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}`,
}, "apps/v1/controllerrevisions": {
	`{"metadata":{"name":"web-5d4f","namespace":"ns1","ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa","controller":true}]},"revision":7,"data":{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}}}`,
	`{"metadata":{"name":"orphan","namespace":"ns1"},"revision":1}`,
}, "apps/v1/deployments": {
	`{"metadata":{"name":"unset","namespace":"ns1","deletionTimestamp":"2026-01-02T03:00:00Z"},"spec":{"selector":{"matchExpressions":[{"key":"app","operator":"Exists"}]},"template":{"metadata":{"labels":{"app":"u"}},"spec":{"containers":[{"name":"c","image":"x"},{"name":"d","image":"y"}]}}},"status":{"readyReplicas":1,"updatedReplicas":2,"availableReplicas":1}}`,
}, "apps/v1/replicasets": {
	`{"metadata":{"name":"unset-rs","namespace":"ns1"},"spec":{"selector":{"matchLabels":{"app":"u"}},"template":{"metadata":{"labels":{"app":"u"}},"spec":{"containers":[{"name":"c","image":"x"}]}}},"status":{"replicas":0}}`,
	`{"metadata":{"name":"zero-rs","namespace":"ns1"},"spec":{"replicas":0,"selector":{"matchLabels":{"app":"z"}},"template":{"metadata":{"labels":{"app":"z"}},"spec":{"containers":[{"name":"c","image":"x"}]}}},"status":{"replicas":3,"readyReplicas":2}}`,
}, "batch/v1/jobs": {
	`{"metadata":{"name":"counted","namespace":"ns1"},"spec":{"completions":5,"parallelism":2,"selector":{"matchLabels":{"job":"c"}},"template":{"metadata":{"labels":{"job":"c"}},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"x"}]}}},"status":{"succeeded":3,"startTime":"2026-01-02T02:00:00Z","completionTime":"2026-01-02T02:30:00Z","conditions":[{"type":"Complete","status":"True"}]}}`,
	`{"metadata":{"name":"going","namespace":"ns1","deletionTimestamp":"2026-01-02T03:00:00Z"},"spec":{"parallelism":4,"selector":{"matchLabels":{"job":"g"}},"template":{"metadata":{"labels":{"job":"g"}},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"x"}]}}},"status":{"succeeded":2,"startTime":"2026-01-02T02:00:00Z","conditions":[{"type":"Suspended","status":"False"}]}}`,
}, "batch/v1/cronjobs": {
	`{"metadata":{"name":"nightly","namespace":"ns1"},"spec":{"schedule":"0 3 * * *","timeZone":"","suspend":true,"jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"c","image":"x"}]}}}}},"status":{"active":[{"kind":"Job","name":"nightly-1"},{"kind":"Job","name":"nightly-2"}],"lastScheduleTime":"2026-01-02T03:00:00Z"}}`,
}}

// tableReadsFixtures are the pinned fixtures with tableReadsExtra, and
// how many the extra ones are.
func tableReadsFixtures(t *testing.T) (map[string][]json.RawMessage, int) {
	t.Helper()
	fixtures := tablePinFixtures(t)
	extra := 0
	for key, objs := range tableReadsExtra {
		for _, o := range objs {
			fixtures[key] = append(fixtures[key], json.RawMessage(o))
			extra++
		}
	}
	return fixtures, extra
}

// TestTableRowsFromReads checks, for every resource whose Table declares
// what its rows read, that a row computed from those parts only (selected
// from the stored bytes, or scanned from them) is the row of the whole
// decoded object: a part a row reads but its Table does not declare would
// show here as a wrong cell.
func TestTableRowsFromReads(t *testing.T) {
	t.Parallel()
	_, reg, br := tablePinHandler(t)
	fixtures, extra := tableReadsFixtures(t)
	checked := 0
	for key, objs := range fixtures {
		d := tablePinDescriptor(t, reg, br, key)
		tb := d.Table
		if tb == nil || tb.Reads == nil && tb.Fields == nil {
			if _, ok := tableReadsExtra[key]; ok {
				t.Errorf("%s: its Table declares no reads", key)
			}
			continue
		}
		for _, kv := range tablePinItems(t, d, objs) {
			whole, err := schema.DecodeStored(kv.Value, d.Schema)
			if err != nil {
				t.Fatalf("%s: %v", kv.Key, err)
			}
			wantCells, wantConds := tb.Row(whole, tablePinNow)
			if tb.Reads != nil {
				obj, err := schema.DecodeStoredSelected(kv.Value, d.Schema, tb.Reads)
				if err != nil {
					t.Fatalf("%s: %v", kv.Key, err)
				}
				cells, conds := tb.Row(obj, tablePinNow)
				if !reflect.DeepEqual(cells, wantCells) || !reflect.DeepEqual(conds, wantConds) {
					t.Errorf("%s: row from the selected parts %v %v, from the whole object %v %v", kv.Key, cells, conds, wantCells, wantConds)
				}
			}
			if tb.Fields != nil && tb.RowValues != nil {
				vals, raws := make([]any, tb.Fields.Len()), make([][]byte, tb.Fields.RawLen())
				if !schema.ScanStored(kv.Value, d.Schema, tb.Fields, vals, raws) {
					t.Fatalf("%s: stored object does not scan", kv.Key)
				}
				cells, conds := tb.RowValues(nil, vals, tablePinNow)
				if !reflect.DeepEqual(cells, wantCells) || !reflect.DeepEqual(conds, wantConds) {
					t.Errorf("%s: row from the scanned values %v %v, from the whole object %v %v", kv.Key, cells, conds, wantCells, wantConds)
				}
			}
			checked++
		}
	}
	if checked < extra {
		t.Fatalf("checked %d rows, want at least the %d extra objects", checked, extra)
	}
}

// TestFieldSelectorsFromReads checks, for every selectable field that
// declares what it reads, that its value read from those parts of a
// stored object is its value on the whole object, and that a predicate on
// it matches stored objects as it matches the decoded ones, over the
// pinned fixtures and the extra objects above.
func TestFieldSelectorsFromReads(t *testing.T) {
	t.Parallel()
	_, reg, br := tablePinHandler(t)
	fixtures, _ := tableReadsFixtures(t)
	checked := map[string]bool{}
	for key, objs := range fixtures {
		d := tablePinDescriptor(t, reg, br, key)
		for _, kv := range tablePinItems(t, d, objs) {
			whole, err := decodeTransient(d, kv.Value)
			if err != nil {
				t.Fatalf("%s: %v", kv.Key, err)
			}
			for field, fs := range d.FieldSelectors {
				if fs.Reads == nil {
					continue
				}
				want := fs.Get(whole)
				if d.Storage == nil {
					sel := new(schema.Selection)
					for _, path := range fs.Reads {
						sel.Add(path...)
					}
					part, err := schema.DecodeStoredSelected(kv.Value, d.Schema, sel)
					if err != nil {
						t.Fatalf("%s: %v", kv.Key, err)
					}
					if got := fs.Get(part); got != want {
						t.Errorf("%s: %s from its reads %q, from the whole object %q", kv.Key, field, got, want)
					}
				}
				for _, q := range []string{field + "=" + want, field + "!=" + want, field + "=other-value"} {
					p, err := parsePredicate(d, "", q)
					if err != nil {
						t.Fatalf("%s: %s: %v", kv.Key, q, err)
					}
					if got, want := selected(p.matchesStored(kv.Value)), p.matchesObject(whole); got != want {
						t.Errorf("%s: %s matches the stored object: %v, the decoded one: %v", kv.Key, q, got, want)
					}
				}
				checked[key+" "+field] = true
			}
			for _, q := range []string{"app=web", "app", "!app", "app in (web,db),tier!=x"} {
				p, err := parsePredicate(d, q, "")
				if err != nil {
					t.Fatal(err)
				}
				if got, want := selected(p.matchesStored(kv.Value)), p.matchesObject(whole); got != want {
					t.Errorf("%s: labels %s match the stored object: %v, the decoded one: %v", kv.Key, q, got, want)
				}
			}
		}
	}
	for _, want := range []string{"core/v1/pods spec.nodeName", "core/v1/pods status.podIP", "core/v1/pods spec.hostNetwork",
		"core/v1/events source", "core/v1/nodes spec.unschedulable", "core/v1/secrets type", "batch/v1/jobs status.successful"} {
		if !checked[want] {
			t.Errorf("%s: not checked on any fixture", want)
		}
	}
}

// TestFieldSelectorsDeclareReads keeps every built-in selectable field
// declaring what it reads, so that selecting on it never decodes whole
// objects.
func TestFieldSelectorsDeclareReads(t *testing.T) {
	t.Parallel()
	_, reg, _ := tablePinHandler(t)
	for _, d := range reg.All() {
		for field, fs := range d.FieldSelectors {
			if fs.Reads == nil {
				t.Errorf("%s/%s %s: field %s declares no reads", d.Group, d.Version, d.Resource, field)
			}
		}
	}
}
