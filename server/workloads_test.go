package server_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Paths of the workload collections in the default namespace.
const (
	deploymentsPath  = "/apis/apps/v1/namespaces/default/deployments"
	replicaSetsPath  = "/apis/apps/v1/namespaces/default/replicasets"
	statefulSetsPath = "/apis/apps/v1/namespaces/default/statefulsets"
	daemonSetsPath   = "/apis/apps/v1/namespaces/default/daemonsets"
	revisionsPath    = "/apis/apps/v1/namespaces/default/controllerrevisions"
	jobsPath         = "/apis/batch/v1/namespaces/default/jobs"
	cronJobsPath     = "/apis/batch/v1/namespaces/default/cronjobs"
	rcPath           = "/api/v1/namespaces/default/replicationcontrollers"
)

// podTemplateJSON is a pod template labelled app=<app>, with the restart
// policy given (none when empty).
func podTemplateJSON(app, restart string) string {
	rp := ""
	if restart != "" {
		rp = `"restartPolicy":"` + restart + `",`
	}
	return `{"metadata":{"labels":{"app":"` + app + `"}},"spec":{` + rp + `"containers":[{"name":"c","image":"nginx:1.27"}]}}`
}

// workloadJSON is a workload named name selecting app=<name> with a
// matching template, plus the extra spec members given.
func workloadJSON(name, extraSpec string) string {
	return `{"metadata":{"name":"` + name + `"},"spec":{` + extraSpec + `"selector":{"matchLabels":{"app":"` + name + `"}},"template":` + podTemplateJSON(name, "") + `},"status":{"replicas":7}}`
}

// wantFields checks values at dotted paths of obj.
func wantFields(t *testing.T, what string, obj map[string]any, want map[string]any) {
	t.Helper()
	for p, w := range want {
		if got := path(obj, p); !reflect.DeepEqual(got, w) {
			gj, _ := json.Marshal(got)
			t.Errorf("%s: %s = %s, want %v", what, p, gj, w)
		}
	}
}

// invalid posts or puts body and returns the 422's message and its causes
// as "field: message" lines.
func invalid(t *testing.T, e *env, method, p string, body any) (string, []string) {
	t.Helper()
	st := e.do(method, p, body).mustCode(t, 422).obj(t)
	var causes []string
	for _, c := range listAtPath(st, "details.causes") {
		m := c.(map[string]any)
		causes = append(causes, m["field"].(string)+": "+m["message"].(string))
	}
	msg, _ := st["message"].(string)
	return msg, causes
}

func listAtPath(m map[string]any, p string) []any {
	l, _ := path(m, p).([]any)
	return l
}

// hasCause fails unless causes holds want.
func hasCause(t *testing.T, what string, causes []string, want string) {
	t.Helper()
	for _, c := range causes {
		if c == want {
			return
		}
	}
	t.Errorf("%s: no cause %q in\n  %s", what, want, strings.Join(causes, "\n  "))
}

func TestWorkloads(t *testing.T) {
	t.Parallel()
	e := start(t)
	t.Run("DeploymentDefaults", func(t *testing.T) {
		t.Parallel()
		d := e.do("POST", deploymentsPath, workloadJSON("dep-defaults", "")).mustCode(t, 201).obj(t)
		wantFields(t, "deployment", d, map[string]any{
			"metadata.generation":                              float64(1),
			"spec.replicas":                                    float64(1),
			"spec.strategy.type":                               "RollingUpdate",
			"spec.strategy.rollingUpdate.maxUnavailable":       "25%",
			"spec.strategy.rollingUpdate.maxSurge":             "25%",
			"spec.revisionHistoryLimit":                        float64(10),
			"spec.progressDeadlineSeconds":                     float64(600),
			"spec.minReadySeconds":                             nil,
			"spec.template.spec.restartPolicy":                 "Always",
			"spec.template.spec.dnsPolicy":                     "ClusterFirst",
			"spec.template.spec.terminationGracePeriodSeconds": float64(30),
			"status": map[string]any{},
		})
		r := e.do("POST", deploymentsPath, workloadJSON("dep-recreate", `"strategy":{"type":"Recreate"},`)).mustCode(t, 201).obj(t)
		wantFields(t, "recreate", r, map[string]any{"spec.strategy": map[string]any{"type": "Recreate"}})
	})
	t.Run("DeploymentErrors", func(t *testing.T) {
		t.Parallel()
		msg, causes := invalid(t, e, "POST", deploymentsPath, `{"metadata":{"name":"nosel"},"spec":{"template":`+podTemplateJSON("x", "")+`}}`)
		if msg != `Deployment.apps "nosel" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: `+"`selector` does not match template `labels`]" {
			t.Errorf("no selector: %s", msg)
		}
		_, causes = invalid(t, e, "POST", deploymentsPath, workloadJSON("bad", `"replicas":-1,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":0,"maxSurge":"0%"}},"minReadySeconds":700,`))
		hasCause(t, "bad", causes, "spec.replicas: Invalid value: -1: must be greater than or equal to 0")
		hasCause(t, "bad", causes, `spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `+"`maxSurge`"+` is 0`)
		hasCause(t, "bad", causes, "spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds")
		_, causes = invalid(t, e, "POST", deploymentsPath, workloadJSON("bad2", `"strategy":{"type":"Recreate","rollingUpdate":{}},`))
		hasCause(t, "recreate", causes, "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'")
		_, causes = invalid(t, e, "POST", deploymentsPath, workloadJSON("bad3", `"strategy":{"type":"Blue"},`))
		hasCause(t, "type", causes, `spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"Blue", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate"`)
		_, causes = invalid(t, e, "POST", deploymentsPath, strings.Replace(workloadJSON("bad4", ""), `"template":{"metadata":{"labels":{"app":"bad4"}},"spec":{`, `"template":{"metadata":{"labels":{"app":"bad4"}},"spec":{"restartPolicy":"Never",`, 1))
		hasCause(t, "restart", causes, `spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`)

		// The selector of an apps/v1 object is fixed.
		d := e.do("POST", deploymentsPath, workloadJSON("dep-sel", "")).mustCode(t, 201).obj(t)
		d["spec"].(map[string]any)["selector"] = map[string]any{"matchLabels": map[string]any{"app": "dep-sel", "tier": "x"}}
		d["spec"].(map[string]any)["template"].(map[string]any)["metadata"] = map[string]any{"labels": map[string]any{"app": "dep-sel", "tier": "x"}}
		_, causes = invalid(t, e, "PUT", deploymentsPath+"/dep-sel", d)
		hasCause(t, "immutable", causes, `spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"dep-sel", "tier":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable`)
	})
	t.Run("ScaleAndStatus", func(t *testing.T) {
		t.Parallel()
		e.do("POST", deploymentsPath, workloadJSON("dep-scale", "")).mustCode(t, 201)
		sc := e.do("GET", deploymentsPath+"/dep-scale/scale", nil).mustCode(t, 200).obj(t)
		wantFields(t, "scale", sc, map[string]any{"kind": "Scale", "apiVersion": "autoscaling/v1", "spec.replicas": float64(1), "status.replicas": float64(0), "status.selector": "app=dep-scale"})
		sc["spec"] = map[string]any{"replicas": 5}
		out := e.do("PUT", deploymentsPath+"/dep-scale/scale", sc).mustCode(t, 200).obj(t)
		wantFields(t, "scaled", out, map[string]any{"spec.replicas": float64(5)})
		d := e.do("GET", deploymentsPath+"/dep-scale", nil).mustCode(t, 200).obj(t)
		wantFields(t, "after scale", d, map[string]any{"spec.replicas": float64(5), "metadata.generation": float64(2)})

		// A status write keeps spec and generation; a main write keeps status.
		d["spec"].(map[string]any)["replicas"] = 9
		d["status"] = map[string]any{"replicas": 5, "readyReplicas": 4, "availableReplicas": 3}
		s := e.do("PUT", deploymentsPath+"/dep-scale/status", d).mustCode(t, 200).obj(t)
		wantFields(t, "status write", s, map[string]any{"spec.replicas": float64(5), "status.replicas": float64(5), "metadata.generation": float64(2)})
		s["spec"].(map[string]any)["paused"] = true
		s["status"] = map[string]any{}
		m := e.do("PUT", deploymentsPath+"/dep-scale", s).mustCode(t, 200).obj(t)
		wantFields(t, "main write", m, map[string]any{"status.replicas": float64(5), "spec.paused": true, "metadata.generation": float64(3)})
		m["status"] = map[string]any{"replicas": 1, "readyReplicas": 2}
		_, causes := invalid(t, e, "PUT", deploymentsPath+"/dep-scale/status", m)
		hasCause(t, "status", causes, "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas")

		// A replication controller's selector is a label map.
		e.do("POST", rcPath, `{"metadata":{"name":"rc-scale"},"spec":{"replicas":2,"template":`+podTemplateJSON("rc-scale", "")+`}}`).mustCode(t, 201)
		rsc := e.do("GET", rcPath+"/rc-scale/scale", nil).mustCode(t, 200).obj(t)
		wantFields(t, "rc scale", rsc, map[string]any{"spec.replicas": float64(2), "status.selector": "app=rc-scale"})
		bad := e.do("PUT", rcPath+"/rc-scale/scale", `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"rc-scale"},"spec":{"replicas":-1}}`).mustCode(t, 422).obj(t)
		if !strings.Contains(bad["message"].(string), "spec.replicas: Invalid value: -1: must be greater than or equal to 0") {
			t.Errorf("negative scale: %v", bad["message"])
		}
	})
	t.Run("ReplicaSetsAndControllers", func(t *testing.T) {
		t.Parallel()
		rs := e.do("POST", replicaSetsPath, workloadJSON("rs-a", "")).mustCode(t, 201).obj(t)
		wantFields(t, "replicaset", rs, map[string]any{"spec.replicas": float64(1), "status": map[string]any{"replicas": float64(0)}, "metadata.generation": float64(1)})
		_, causes := invalid(t, e, "POST", replicaSetsPath, strings.Replace(workloadJSON("rs-bad", ""), `"selector":{"matchLabels":{"app":"rs-bad"}}`, `"selector":{}`, 1))
		hasCause(t, "empty", causes, "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment")
		rc := e.do("POST", rcPath, `{"metadata":{"name":"rc-a"},"spec":{"template":`+podTemplateJSON("rc-a", "")+`}}`).mustCode(t, 201).obj(t)
		wantFields(t, "rc", rc, map[string]any{
			"spec.replicas": float64(1), "spec.selector": map[string]any{"app": "rc-a"}, "metadata.labels": map[string]any{"app": "rc-a"},
			"spec.template.spec.restartPolicy": "Always",
		})
		_, causes = invalid(t, e, "POST", rcPath, `{"metadata":{"name":"rc-bad"},"spec":{"selector":{"app":"other"},"template":`+podTemplateJSON("rc-bad", "OnFailure")+`}}`)
		hasCause(t, "rc", causes, "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"rc-bad\"}: `selector` does not match template `labels`")
		hasCause(t, "rc", causes, `spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"`)
		// Field selectors on status.replicas.
		rcObj := e.do("GET", rcPath+"/rc-a", nil).mustCode(t, 200).obj(t)
		rcObj["status"] = map[string]any{"replicas": 3}
		e.do("PUT", rcPath+"/rc-a/status", rcObj).mustCode(t, 200)
		e.do("POST", rcPath, `{"metadata":{"name":"rc-zero"},"spec":{"template":`+podTemplateJSON("rc-zero", "")+`}}`).mustCode(t, 201)
		for p, want := range map[string]string{
			rcPath + "?fieldSelector=status.replicas%3D3": "rc-a",
			rcPath + "?fieldSelector=status.replicas%3D0": "rc-zero",
		} {
			if got := strings.Join(names(t, e.do("GET", p, nil).mustCode(t, 200).obj(t)), ","); !strings.Contains(","+got+",", ","+want+",") || (want == "rc-a" && got != "rc-a") {
				t.Errorf("%s: %s", p, got)
			}
		}
		// apps/v1 converts no field labels: a replica set's status is
		// not selectable, as upstream.
		e.do("GET", replicaSetsPath+"?fieldSelector=status.replicas%3D0", nil).mustCode(t, 400).
			mustMessage(t, `"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"`)
		e.do("GET", rcPath+"?fieldSelector=spec.replicas%3D1", nil).mustCode(t, 400).mustMessage(t, "field label not supported: spec.replicas")
	})
	t.Run("StatefulSetsAndDaemonSets", func(t *testing.T) {
		t.Parallel()
		sts := e.do("POST", statefulSetsPath, workloadJSON("web", `"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}],`)).mustCode(t, 201).obj(t)
		wantFields(t, "statefulset", sts, map[string]any{
			"spec.replicas": float64(1), "spec.podManagementPolicy": "OrderedReady",
			"spec.updateStrategy":                       map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": float64(0)}},
			"spec.revisionHistoryLimit":                 float64(10),
			"spec.persistentVolumeClaimRetentionPolicy": map[string]any{"whenDeleted": "Retain", "whenScaled": "Retain"},
		})
		claim := listAtPath(sts, "spec.volumeClaimTemplates")[0].(map[string]any)
		wantFields(t, "claim template", claim, map[string]any{"spec.volumeMode": "Filesystem", "status.phase": "Pending"})
		sts["spec"].(map[string]any)["serviceName"] = "other"
		_, causes := invalid(t, e, "PUT", statefulSetsPath+"/web", sts)
		hasCause(t, "sts update", causes, "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")
		_, causes = invalid(t, e, "POST", statefulSetsPath, workloadJSON("sts-bad", `"podManagementPolicy":"Fast","updateStrategy":{"type":"OnDelete","rollingUpdate":{"partition":1}},`))
		hasCause(t, "policy", causes, `spec.podManagementPolicy: Invalid value: "Fast": must be 'OrderedReady' or 'Parallel'`)
		hasCause(t, "strategy", causes, "spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:&1, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'")

		msg, _ := invalid(t, e, "POST", statefulSetsPath, workloadJSON("web.v1", ""))
		if msg != `StatefulSet.apps "web.v1" is invalid: metadata.name: Invalid value: "web.v1": must not contain dots` {
			t.Errorf("statefulset name: %s", msg)
		}

		ds := e.do("POST", daemonSetsPath, workloadJSON("ds-a", "")).mustCode(t, 201).obj(t)
		wantFields(t, "daemonset", ds, map[string]any{
			"spec.updateStrategy":       map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": float64(1), "maxSurge": float64(0)}},
			"spec.revisionHistoryLimit": float64(10),
			"metadata.annotations":      map[string]any{"deprecated.daemonset.template.generation": "1"},
		})
		ds["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "nginx:1.28"
		ds2 := e.do("PUT", daemonSetsPath+"/ds-a", ds).mustCode(t, 200).obj(t)
		wantFields(t, "daemonset update", ds2, map[string]any{"metadata.generation": float64(2), "metadata.annotations": map[string]any{"deprecated.daemonset.template.generation": "2"}})
		_, causes = invalid(t, e, "POST", daemonSetsPath, workloadJSON("ds-bad", `"updateStrategy":{"rollingUpdate":{"maxUnavailable":1,"maxSurge":1}},`))
		hasCause(t, "ds", causes, `spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero`)
		if e.do("GET", "/apis/apps/v1/namespaces/default/daemonsets/ds-a/scale", nil).code != 404 {
			t.Errorf("daemon sets have no scale subresource")
		}
		_, causes = invalid(t, e, "POST", revisionsPath, `{"metadata":{"name":"rev"},"revision":-1}`)
		hasCause(t, "revision", causes, "data: Required value: data is mandatory")
		hasCause(t, "revision", causes, "revision: Invalid value: -1: must be greater than or equal to 0")
		e.do("POST", revisionsPath, `{"metadata":{"name":"rev"},"revision":1,"data":{"spec":{}}}`).mustCode(t, 201)
	})
	t.Run("Jobs", func(t *testing.T) {
		t.Parallel()
		j := e.do("POST", jobsPath, `{"metadata":{"name":"pi"},"spec":{"template":`+podTemplateJSON("pi", "Never")+`},"status":{"succeeded":3}}`).mustCode(t, 201).obj(t)
		uid := path(j, "metadata.uid").(string)
		b := platBrand
		wantFields(t, "job", j, map[string]any{
			"spec.parallelism": float64(1), "spec.completions": float64(1), "spec.backoffLimit": float64(6),
			"spec.completionMode": "NonIndexed", "spec.suspend": false, "spec.podReplacementPolicy": "TerminatingOrFailed",
			"spec.manualSelector": nil, "metadata.generation": float64(1), "status": map[string]any{},
			"spec.selector": map[string]any{"matchLabels": map[string]any{"batch." + b.Label("controller-uid"): uid}},
			"spec.template.metadata.labels": map[string]any{
				"app": "pi", "controller-uid": uid, "job-name": "pi",
				"batch." + b.Label("controller-uid"): uid, "batch." + b.Label("job-name"): "pi",
			},
		})
		// A job without labels takes its template's as written; one whose
		// template has none takes the generated ones.
		wantFields(t, "job labels", j, map[string]any{"metadata.labels": map[string]any{"app": "pi"}})
		bare := e.do("POST", jobsPath, `{"metadata":{"name":"bare"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`).mustCode(t, 201).obj(t)
		if l, _ := path(bare, "metadata.labels").(map[string]any); l["job-name"] != "bare" || l["batch."+b.Label("job-name")] != "bare" || len(l) != 4 {
			t.Errorf("bare job labels %v", l)
		}
		// Parallelism alone leaves completions unset.
		p := e.do("POST", jobsPath, `{"metadata":{"name":"par"},"spec":{"parallelism":3,"template":`+podTemplateJSON("par", "OnFailure")+`}}`).mustCode(t, 201).obj(t)
		wantFields(t, "parallel", p, map[string]any{"spec.parallelism": float64(3), "spec.completions": nil})

		_, causes := invalid(t, e, "POST", jobsPath, `{"metadata":{"name":"always"},"spec":{"template":`+podTemplateJSON("always", "")+`}}`)
		hasCause(t, "restart", causes, `spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`)
		_, causes = invalid(t, e, "POST", jobsPath, `{"metadata":{"name":"idx"},"spec":{"completionMode":"Indexed","parallelism":2,"backoffLimit":-1,"template":`+podTemplateJSON("idx", "Never")+`}}`)
		hasCause(t, "indexed", causes, "spec.completions: Required value: when completion mode is Indexed")
		hasCause(t, "indexed", causes, "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0")
		_, causes = invalid(t, e, "POST", jobsPath, `{"metadata":{"name":"manual"},"spec":{"manualSelector":true,"selector":{"matchLabels":{"app":"other"}},"template":`+podTemplateJSON("manual", "Never")+`}}`)
		hasCause(t, "manual", causes, "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"manual\"}: `selector` does not match template `labels`")

		// Completions of a non-indexed job are fixed.
		j["spec"].(map[string]any)["completions"] = 4
		_, causes = invalid(t, e, "PUT", jobsPath+"/pi", j)
		hasCause(t, "completions", causes, "spec.completions: Invalid value: 4: field is immutable")
		// Status writes count successes, which a field selector reads.
		j = e.do("GET", jobsPath+"/pi", nil).mustCode(t, 200).obj(t)
		j["status"] = map[string]any{"succeeded": 1}
		e.do("PUT", jobsPath+"/pi/status", j).mustCode(t, 200)
		if got := strings.Join(names(t, e.do("GET", jobsPath+"?fieldSelector=status.successful%3D1", nil).mustCode(t, 200).obj(t)), ","); got != "pi" {
			t.Errorf("status.successful=1 lists %q", got)
		}
	})
	t.Run("CronJobs", func(t *testing.T) {
		t.Parallel()
		cronJob := func(name, schedule, extra string) string {
			return `{"metadata":{"name":"` + name + `"},"spec":{` + extra + `"schedule":"` + schedule + `","jobTemplate":{"spec":{"template":` + podTemplateJSON(name, "OnFailure") + `}}}}`
		}
		c := e.do("POST", cronJobsPath, cronJob("nightly", "*/5 * * * *", "")).mustCode(t, 201).obj(t)
		wantFields(t, "cronjob", c, map[string]any{
			"spec.concurrencyPolicy": "Allow", "spec.suspend": false,
			"spec.successfulJobsHistoryLimit": float64(3), "spec.failedJobsHistoryLimit": float64(1),
			"spec.jobTemplate.spec.template.spec.dnsPolicy": "ClusterFirst",
			"spec.jobTemplate.spec.backoffLimit":            nil,
		})
		_, causes := invalid(t, e, "POST", cronJobsPath, cronJob("bad", "61 * * * *", `"timeZone":"Mars/Olympus","concurrencyPolicy":"Sometimes",`))
		hasCause(t, "schedule", causes, `spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61`)
		hasCause(t, "policy", causes, `spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"`)
		hasCause(t, "zone", causes, `spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus`)
		_, causes = invalid(t, e, "POST", cronJobsPath, cronJob("tz", "TZ=UTC 0 * * * *", ""))
		hasCause(t, "tz", causes, `spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead`)
		_, causes = invalid(t, e, "POST", cronJobsPath, cronJob("few", "* * *", ""))
		hasCause(t, "fields", causes, `spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]`)
	})
	t.Run("ReplicationControllerOrphans", func(t *testing.T) {
		t.Parallel()
		rc := e.do("POST", rcPath, `{"metadata":{"name":"rc-orphan"},"spec":{"template":`+podTemplateJSON("rc-orphan", "")+`}}`).mustCode(t, 201).obj(t)
		owner := `[{"apiVersion":"v1","kind":"ReplicationController","name":"rc-orphan","uid":"` + path(rc, "metadata.uid").(string) + `","controller":true}]`
		e.do("POST", podsPath, `{"metadata":{"name":"rc-orphan-pod","ownerReferences":`+owner+`},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`).mustCode(t, 201)
		// Deleting without a propagation policy orphans the pods, as core
		// v1 always has for replication controllers.
		e.do("DELETE", rcPath+"/rc-orphan", nil).mustCode(t, 200)
		eventually(t, "the pod orphaned", func() bool {
			r := e.do("GET", podsPath+"/rc-orphan-pod", nil)
			return r.code == 200 && path(r.obj(t), "metadata.ownerReferences") == nil &&
				e.do("GET", rcPath+"/rc-orphan", nil).code == 404
		})
	})
	t.Run("JobDeletionOrphans", func(t *testing.T) {
		t.Parallel()
		j := e.do("POST", jobsPath, `{"metadata":{"name":"orphaner"},"spec":{"template":`+podTemplateJSON("orphaner", "Never")+`}}`).mustCode(t, 201).obj(t)
		owner := `[{"apiVersion":"batch/v1","kind":"Job","name":"orphaner","uid":"` + path(j, "metadata.uid").(string) + `","controller":true}]`
		e.do("POST", podsPath, `{"metadata":{"name":"orphaner-pod","ownerReferences":`+owner+`},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`).mustCode(t, 201)
		r := e.do("DELETE", jobsPath+"/orphaner", nil).mustCode(t, 200)
		if w := r.header.Get("Warning"); w != `299 - "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"` {
			t.Errorf("job deletion warning %q", w)
		}
		eventually(t, "the job's pod orphaned", func() bool {
			r := e.do("GET", podsPath+"/orphaner-pod", nil)
			return r.code == 200 && path(r.obj(t), "metadata.ownerReferences") == nil &&
				e.do("GET", jobsPath+"/orphaner", nil).code == 404
		})
		// A collection deletion warns the same.
		e.do("POST", jobsPath, `{"metadata":{"name":"swept","labels":{"sweep":"yes"}},"spec":{"template":`+podTemplateJSON("swept", "Never")+`}}`).mustCode(t, 201)
		if r := e.do("DELETE", jobsPath+"?labelSelector=sweep%3Dyes", nil).mustCode(t, 200); !strings.Contains(r.header.Get("Warning"), "child pods are preserved by default") {
			t.Errorf("collection deletion warning %q", r.header.Get("Warning"))
		}
		// A policy named silences the warning.
		e.do("POST", jobsPath, `{"metadata":{"name":"quiet"},"spec":{"template":`+podTemplateJSON("quiet", "Never")+`}}`).mustCode(t, 201)
		if r := e.do("DELETE", jobsPath+"/quiet?propagationPolicy=Background", nil).mustCode(t, 200); r.header.Get("Warning") != "" {
			t.Errorf("warning with a policy: %q", r.header.Get("Warning"))
		}
	})
	t.Run("Discovery", func(t *testing.T) {
		t.Parallel()
		l := e.do("GET", "/api/v1", nil).mustCode(t, 200).obj(t)
		found := map[string]map[string]any{}
		for _, r := range listAtPath(l, "resources") {
			m := r.(map[string]any)
			found[m["name"].(string)] = m
		}
		rc := found["replicationcontrollers"]
		if rc == nil || !reflect.DeepEqual(rc["shortNames"], []any{"rc"}) || !reflect.DeepEqual(rc["categories"], []any{"all"}) {
			t.Errorf("replicationcontrollers %v", rc)
		}
		if s := found["replicationcontrollers/scale"]; s == nil || s["group"] != "autoscaling" || s["kind"] != "Scale" {
			t.Errorf("replicationcontrollers/scale %v", s)
		}
	})
}
