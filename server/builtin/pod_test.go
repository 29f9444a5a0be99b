package builtin

import (
	"strings"
	"testing"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
	"platd/server/validation"
)

const minimalPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`

// storedPod creates a pod through the create steps and returns it as
// storage returns it: encoded and decoded again.
func storedPod(t *testing.T, b config.Brand, podJSON string) registry.Object {
	t.Helper()
	d := descriptor(t, b, "Pod")
	obj := decodeJSON(t, podJSON)
	if errs := runCreate(t, d, obj); len(errs) > 0 {
		t.Fatalf("create %s: %q", podJSON, errs)
	}
	s := testCatalog(t, b).ByGVK("", "v1", "Pod")
	dec, err := schema.Decode(schema.Encode(nil, obj, s), s)
	if err != nil {
		t.Fatal(err)
	}
	return dec.Object
}

func TestPodCreate(t *testing.T) {
	t.Parallel()
	for _, name := range config.BrandNames() {
		b := config.Brands[name]
		// The service account and the priority are the admission's, which
		// reads other objects; the create steps here leave them out.
		obj := storedPod(t, b, minimalPod)
		wantSpec := `{"containers":[{"name":"c","image":"nginx","imagePullPolicy":"Always","resources":{},` + ctrDefaults + `}],
			"dnsPolicy":"ClusterFirst","enableServiceLinks":true,
			"restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},
			"terminationGracePeriodSeconds":30,"tolerations":[
			{"effect":"NoExecute","key":"node.` + b.LongDomain + `/not-ready","operator":"Exists","tolerationSeconds":300},
			{"effect":"NoExecute","key":"node.` + b.LongDomain + `/unreachable","operator":"Exists","tolerationSeconds":300}]}`
		if got, want := canonicalJSON(t, obj["spec"]), canonicalJSON(t, decodeJSON(t, wantSpec)); got != want {
			t.Errorf("%s spec:\n got  %s\n want %s", name, got, want)
		}
		if got, want := canonicalJSON(t, obj["status"]), `{"phase":"Pending","qosClass":"BestEffort"}`; got != want {
			t.Errorf("%s status: %s", name, got)
		}
	}
}

func TestPodCreateDropsStatusAndDisabledFields(t *testing.T) {
	t.Parallel()
	obj := storedPod(t, brand, `{"metadata":{"name":"p","namespace":"ns"},"status":{"phase":"Running","podIP":"10.0.0.1"},
		"spec":{"hostUsers":false,"resources":{"limits":{"cpu":"1"}},"resourceClaims":[{"name":"r","resourceClaimName":"x"}],
		"securityContext":{"supplementalGroupsPolicy":"Strict","seLinuxChangePolicy":"Recursive"},
		"containers":[{"name":"c","image":"x:1","resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotRequired"}],"resources":{"claims":[{"name":"r"}]}}]}}`)
	spec := mapOf(obj["spec"])
	for _, f := range []string{"hostUsers", "resources", "resourceClaims"} {
		if has(spec, f) {
			t.Errorf("spec.%s kept", f)
		}
	}
	if sc := mapOf(spec["securityContext"]); len(sc) != 0 {
		t.Errorf("securityContext %v", sc)
	}
	c := mapsOf(spec["containers"])[0]
	if has(c, "resizePolicy") || has(mapOf(c["resources"]), "claims") {
		t.Errorf("container kept disabled fields: %v", c)
	}
	if got := canonicalJSON(t, obj["status"]); got != `{"phase":"Pending","qosClass":"BestEffort"}` {
		t.Errorf("status %s", got)
	}
}

func TestPodQOSClass(t *testing.T) {
	t.Parallel()
	res := func(req, lim string) string {
		return `{"name":"c","image":"x","resources":{"requests":` + req + `,"limits":` + lim + `}}`
	}
	tests := []struct {
		name, containers, want string
	}{
		{"none", `[{"name":"c","image":"x"}]`, qosBestEffort},
		{"zero amounts", `[` + res(`{"cpu":"0"}`, `{}`) + `]`, qosBestEffort},
		{"other resources only", `[` + res(`{"ephemeral-storage":"1Gi"}`, `{}`) + `]`, qosBestEffort},
		{"limits become requests", `[` + res(`{}`, `{"cpu":"1","memory":"1Gi"}`) + `]`, qosGuaranteed},
		{"equal", `[` + res(`{"cpu":"1000m","memory":"1Gi"}`, `{"cpu":"1","memory":"1024Mi"}`) + `]`, qosGuaranteed},
		{"request below limit", `[` + res(`{"cpu":"500m","memory":"1Gi"}`, `{"cpu":"1","memory":"1Gi"}`) + `]`, qosBurstable},
		{"memory limit missing", `[` + res(`{"cpu":"1"}`, `{"cpu":"1"}`) + `]`, qosBurstable},
		{"one container without", `[` + res(`{}`, `{"cpu":"1","memory":"1Gi"}`) + `,{"name":"d","image":"x"}]`, qosBurstable},
	}
	for _, tt := range tests {
		obj := storedPod(t, brand, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":`+tt.containers+`}}`)
		if got := strOf(mapOf(obj["status"])["qosClass"]); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestPodCreateAdmission(t *testing.T) {
	t.Parallel()
	r := newPodRules(brand)
	t.Run("tolerations already there", func(t *testing.T) {
		obj := storedPod(t, brand, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"x"}],
			"tolerations":[{"operator":"Exists"}]}}`)
		if got := canonicalJSON(t, mapOf(obj["spec"])["tolerations"]); got != `[{"operator":"Exists"}]` {
			t.Errorf("tolerations %s", got)
		}
		obj = storedPod(t, brand, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"x"}],
			"tolerations":[{"key":"`+r.unreachableTaint+`","operator":"Exists","effect":"NoExecute","tolerationSeconds":5}]}}`)
		want := `[{"effect":"NoExecute","key":"` + r.unreachableTaint + `","operator":"Exists","tolerationSeconds":5},` +
			`{"effect":"NoExecute","key":"` + r.notReadyTaint + `","operator":"Exists","tolerationSeconds":300}]`
		if got := canonicalJSON(t, mapOf(obj["spec"])["tolerations"]); got != want {
			t.Errorf("tolerations %s", got)
		}
	})
	t.Run("named priority class and own account", func(t *testing.T) {
		obj := storedPod(t, brand, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"x"}],
			"priorityClassName":"high","serviceAccount":"builder"}}`)
		spec := mapOf(obj["spec"])
		if has(spec, "priority") || has(spec, "preemptionPolicy") || spec["priorityClassName"] != "high" {
			t.Errorf("priority fields changed before admission: %v", spec)
		}
		if spec["serviceAccountName"] != "builder" || spec["serviceAccount"] != "builder" {
			t.Errorf("account %v / %v", spec["serviceAccountName"], spec["serviceAccount"])
		}
	})
	t.Run("mirror pods get no account", func(t *testing.T) {
		obj := storedPod(t, brand, `{"metadata":{"name":"p","namespace":"ns","annotations":{"`+r.mirrorAnnotation+`":"x"}},
			"spec":{"nodeName":"n","containers":[{"name":"c","image":"x"}]}}`)
		if has(mapOf(obj["spec"]), "serviceAccountName") {
			t.Error("mirror pod got an account")
		}
	})
	t.Run("scheduling gates", func(t *testing.T) {
		obj := storedPod(t, brand, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"x"}],"schedulingGates":[{"name":"g"}]}}`)
		conds := mapsOf(mapOf(obj["status"])["conditions"])
		if len(conds) != 1 || conds[0]["type"] != "PodScheduled" || conds[0]["status"] != "False" ||
			conds[0]["reason"] != "SchedulingGated" || conds[0]["message"] != schedulingGatedMessage {
			t.Errorf("conditions %v", conds)
		}
	})
	t.Run("match label keys", func(t *testing.T) {
		obj := storedPod(t, brand, `{"metadata":{"name":"p","namespace":"ns","labels":{"app":"web","ver":"2"}},"spec":{"containers":[{"name":"c","image":"x"}],
			"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"zone",
			"labelSelector":{"matchLabels":{"app":"web"}},"matchLabelKeys":["ver","missing"],"mismatchLabelKeys":["app"]}]}}}}`)
		term := mapsOf(mapOf(mapOf(mapOf(obj["spec"])["affinity"])["podAntiAffinity"])["requiredDuringSchedulingIgnoredDuringExecution"])[0]
		want := `[{"key":"ver","operator":"In","values":["2"]},{"key":"app","operator":"NotIn","values":["web"]}]`
		if got := canonicalJSON(t, mapOf(term["labelSelector"])["matchExpressions"]); got != want {
			t.Errorf("matchExpressions %s", got)
		}
	})
}

func TestPodCreateValidation(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "Pod")
	r := newPodRules(brand)
	tests := []struct {
		name, pod string
		want      []string
	}{
		{"no containers", `{"metadata":{"name":"p"},"spec":{}}`, []string{"spec.containers: Required value"}},
		{"ephemeral on create", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x"}],"ephemeralContainers":[{"name":"e","image":"x"}]}}`,
			[]string{"spec.ephemeralContainers: Forbidden: cannot be set on create"}},
		{"bound while gated", `{"metadata":{"name":"p"},"spec":{"nodeName":"n","schedulingGates":[{"name":"g"}],"containers":[{"name":"c","image":"x"}]}}`,
			[]string{"spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"}},
		{"image whitespace in pods", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x "}]}}`,
			[]string{`spec.containers[0].image: Invalid value: "x ": must not have leading or trailing whitespace`}},
		{"mirror pod unbound", `{"metadata":{"name":"p","annotations":{"` + r.mirrorAnnotation + `":"m"}},"spec":{"containers":[{"name":"c","image":"x"}]}}`,
			[]string{`metadata.annotations[` + r.mirrorAnnotation + `]: Invalid value: "m": must set spec.nodeName if mirror pod annotation is set`}},
		{"deletion cost", `{"metadata":{"name":"p","annotations":{"` + r.deletionCostKey + `":"+5"}},"spec":{"containers":[{"name":"c","image":"x"}]}}`,
			[]string{`metadata.annotations[` + r.deletionCostKey + `]: Invalid value: "+5": must be a 32bit integer`}},
		{"token without account", `{"metadata":{"name":"p","annotations":{"` + r.mirrorAnnotation + `":"m"}},"spec":{"nodeName":"n","containers":[{"name":"c","image":"x"}],
			"volumes":[{"name":"t","projected":{"sources":[{"serviceAccountToken":{"path":"token"}}]}}]}}`,
			[]string{"spec.volumes[0].projected.sources[0].serviceAccountToken: Forbidden: must not be specified when serviceAccountName is not set"}},
	}
	for _, tt := range tests {
		checkStrings(t, tt.name, runCreate(t, d, decodeJSON(t, tt.pod)), tt.want)
	}
}

func TestPodFieldSelectors(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "Pod")
	obj := decodeJSON(t, `{"spec":{"nodeName":"n1","restartPolicy":"Never","schedulerName":"s","serviceAccountName":"sa","hostNetwork":true},
		"status":{"phase":"Running","podIP":"10.0.0.9","podIPs":[{"ip":"10.0.0.1"},{"ip":"fd00::1"}],"nominatedNodeName":"n2"}}`)
	want := map[string]string{
		"spec.nodeName": "n1", "spec.restartPolicy": "Never", "spec.schedulerName": "s", "spec.serviceAccountName": "sa",
		"spec.hostNetwork": "true", "status.phase": "Running", "status.podIP": "10.0.0.1", "status.nominatedNodeName": "n2",
	}
	if len(d.FieldSelectors) != len(want) {
		t.Errorf("selectable fields %d, want %d", len(d.FieldSelectors), len(want))
	}
	for f, v := range want {
		get, ok := d.FieldSelectors[f]
		if !ok {
			t.Errorf("%s not selectable", f)
			continue
		}
		if got := get.Get(obj); got != v {
			t.Errorf("%s = %q, want %q", f, got, v)
		}
	}
	empty := registry.Object{}
	if got := d.FieldSelectors["spec.hostNetwork"].Get(empty); got != "false" {
		t.Errorf("hostNetwork of empty pod %q", got)
	}
	if got := d.FieldSelectors["status.podIP"].Get(decodeJSON(t, `{"status":{"podIP":"1.2.3.4"}}`)); got != "1.2.3.4" {
		t.Errorf("podIP without podIPs %q", got)
	}
}

func TestPodDeletionGracePeriod(t *testing.T) {
	t.Parallel()
	i64 := func(n int64) *int64 { return &n }
	tests := []struct {
		name      string
		pod       string
		requested *int64
		want      int64
	}{
		{"bound uses spec", `{"spec":{"nodeName":"n","terminationGracePeriodSeconds":30}}`, nil, 30},
		{"requested wins", `{"spec":{"nodeName":"n","terminationGracePeriodSeconds":30}}`, i64(5), 5},
		{"requested may exceed spec", `{"spec":{"nodeName":"n","terminationGracePeriodSeconds":30}}`, i64(600), 600},
		{"unset spec", `{"spec":{"nodeName":"n"}}`, nil, 0},
		{"unscheduled goes at once", `{"spec":{"terminationGracePeriodSeconds":30}}`, i64(10), 0},
		{"succeeded", `{"spec":{"nodeName":"n","terminationGracePeriodSeconds":30},"status":{"phase":"Succeeded"}}`, nil, 0},
		{"failed", `{"spec":{"nodeName":"n","terminationGracePeriodSeconds":30},"status":{"phase":"Failed"}}`, i64(9), 0},
		{"negative requested", `{"spec":{"nodeName":"n"}}`, i64(-3), 1},
		{"negative spec", `{"spec":{"nodeName":"n","terminationGracePeriodSeconds":-1}}`, nil, 1},
		{"negative on unscheduled", `{"spec":{}}`, i64(-3), 0},
	}
	for _, tt := range tests {
		if got := podDeletionGracePeriod(decodeJSON(t, tt.pod), tt.requested); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

const updatableMsg = "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`," +
	"`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` " +
	"(allow it to be set to 1 if it was previously negative)\n"

func TestPodValidateUpdate(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "Pod")
	r := newPodRules(brand)
	const base = `{"metadata":{"name":"p","namespace":"ns"},"spec":{"activeDeadlineSeconds":100,"schedulingGates":[{"name":"a"},{"name":"b"}],
		"nodeSelector":{"disk":"ssd"},"tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":5}],
		"initContainers":[{"name":"i","image":"busybox:1"}],"containers":[{"name":"c","image":"nginx:1"}]}}`
	tests := []struct {
		name   string
		change func(spec map[string]any)
		want   []string
	}{
		{"unchanged", func(map[string]any) {}, nil},
		{"images", func(s map[string]any) {
			mapsOf(s["containers"])[0]["image"] = "nginx:2"
			mapsOf(s["initContainers"])[0]["image"] = "busybox:2"
		}, nil},
		{"image removed", func(s map[string]any) { mapsOf(s["containers"])[0]["image"] = "" }, []string{
			"spec.containers[0].image: Required value", "spec.containers[0].image: Required value",
		}},
		{"container added", func(s map[string]any) {
			s["containers"] = append(listOf(s["containers"]), map[string]any{"name": "d", "image": "x"})
		}, []string{"spec.containers: Forbidden: pod updates may not add or remove containers"}},
		{"shorter deadline", func(s map[string]any) { s["activeDeadlineSeconds"] = int64(50) }, nil},
		{"longer deadline", func(s map[string]any) { s["activeDeadlineSeconds"] = int64(200) }, []string{
			"spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value",
		}},
		{"deadline removed", func(s map[string]any) { delete(s, "activeDeadlineSeconds") }, []string{
			"spec.activeDeadlineSeconds: Invalid value: \"null\": must not update from a positive integer to nil value",
		}},
		{"toleration added and seconds changed", func(s map[string]any) {
			tl := mapsOf(s["tolerations"])
			tl[0]["tolerationSeconds"] = int64(60)
			s["tolerations"] = append(listOf(s["tolerations"]), map[string]any{"key": "x", "operator": "Exists"})
		}, nil},
		{"toleration changed", func(s map[string]any) { mapsOf(s["tolerations"])[0]["key"] = "other" }, []string{
			"spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds",
		}},
		{"gate removed", func(s map[string]any) { s["schedulingGates"] = []any{map[string]any{"name": "b"}} }, nil},
		{"gate added", func(s map[string]any) {
			s["schedulingGates"] = append(listOf(s["schedulingGates"]), map[string]any{"name": "c"})
		}, []string{"spec.schedulingGates[2].name: Forbidden: only deletion is allowed, but found new scheduling gate 'c'"}},
		{"node selector added while gated", func(s map[string]any) { mapOf(s["nodeSelector"])["zone"] = "a" }, nil},
		{"node selector changed while gated", func(s map[string]any) { mapOf(s["nodeSelector"])["disk"] = "hdd" }, []string{
			`spec.nodeSelector: Invalid value: map[string]string{"disk":"hdd"}: only additions to spec.nodeSelector are allowed (no mutations or deletions)`,
		}},
		{"other field", func(s map[string]any) { s["dnsPolicy"] = "Default"; s["hostname"] = "h" }, []string{
			updatableMsg + "  core.PodSpec{\n- \tdnsPolicy: \"ClusterFirst\",\n+ \tdnsPolicy: \"Default\",\n+ \thostname: \"h\",\n  }\n",
		}},
		{"priority changed", func(s map[string]any) { s["priority"] = int64(7); s["priorityClassName"] = "x" }, []string{
			updatableMsg + "  core.PodSpec{\n+ \tpriority: 7,\n+ \tpriorityClassName: \"x\",\n  }\n",
		}},
	}
	for _, tt := range tests {
		old := storedPod(t, brand, base)
		obj := deepCopyMap(old)
		tt.change(mapOf(obj["spec"]))
		checkStrings(t, tt.name, runUpdate(t, d, obj, old, ""), tt.want)
	}
	t.Run("annotations", func(t *testing.T) {
		old := storedPod(t, brand, `{"metadata":{"name":"p","namespace":"ns","annotations":{"`+r.mirrorAnnotation+`":"m"}},
			"spec":{"nodeName":"n","containers":[{"name":"c","image":"x"}]}}`)
		// A cost stored before it was checked stays acceptable.
		mapOf(mapOf(old["metadata"])["annotations"])[r.deletionCostKey] = "x"
		obj := deepCopyMap(old)
		mapOf(mapOf(obj["metadata"])["annotations"])[r.mirrorAnnotation] = "changed"
		checkStrings(t, "mirror changed", runUpdate(t, d, obj, old, ""), []string{
			"metadata.annotations[" + r.mirrorAnnotation + "]: Forbidden: may not remove or update mirror pod annotation",
		})
	})
	t.Run("negative grace may become 1", func(t *testing.T) {
		old := storedPod(t, brand, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"terminationGracePeriodSeconds":-5,"containers":[{"name":"c","image":"x"}]}}`)
		obj := deepCopyMap(old)
		mapOf(obj["spec"])["terminationGracePeriodSeconds"] = int64(1)
		checkStrings(t, "to 1", runUpdate(t, d, obj, old, ""), nil)
		obj = deepCopyMap(old)
		mapOf(obj["spec"])["terminationGracePeriodSeconds"] = int64(2)
		got := runUpdate(t, d, obj, old, "")
		if len(got) != 1 || !strings.HasPrefix(got[0], updatableMsg) || !strings.Contains(got[0], "+ \tterminationGracePeriodSeconds: 2,") {
			t.Errorf("to 2: %q", got)
		}
	})
	t.Run("default tolerations come back", func(t *testing.T) {
		old := storedPod(t, brand, minimalPod)
		obj := deepCopyMap(old)
		mapOf(obj["spec"])["tolerations"] = []any{}
		checkStrings(t, "cleared", runUpdate(t, d, obj, old, ""), nil)
		if got := len(listOf(mapOf(obj["spec"])["tolerations"])); got != 2 {
			t.Errorf("%d tolerations", got)
		}
	})
}

func TestPodStatusUpdate(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "Pod")
	withStatus := func(t *testing.T, old registry.Object, status string) registry.Object {
		t.Helper()
		obj := deepCopyMap(old)
		obj["status"] = decodeJSON(t, status)
		return obj
	}
	t.Run("kubelet report", func(t *testing.T) {
		old := storedPod(t, brand, minimalPod)
		obj := withStatus(t, old, `{"phase":"Running","podIP":"10.0.0.5","hostIPs":[{"ip":"192.168.1.2"}],"conditions":[{"type":"Ready","status":"True"}]}`)
		checkStrings(t, "report", runUpdate(t, d, obj, old, "status"), nil)
		st := mapOf(obj["status"])
		if st["qosClass"] != qosBestEffort {
			t.Errorf("qosClass %v", st["qosClass"])
		}
		if got := canonicalJSON(t, st["podIPs"]); got != `[{"ip":"10.0.0.5"}]` {
			t.Errorf("podIPs %s", got)
		}
		if st["hostIP"] != "192.168.1.2" {
			t.Errorf("hostIP %v", st["hostIP"])
		}
	})
	t.Run("podIP wins over a different list", func(t *testing.T) {
		st := decodeJSON(t, `{"podIP":"10.0.0.7","podIPs":[{"ip":"10.0.0.1"},{"ip":"fd00::1"}]}`)
		syncIPs(st, "podIP", "podIPs")
		if got := canonicalJSON(t, st["podIPs"]); got != `[{"ip":"10.0.0.7"}]` {
			t.Errorf("podIPs %s", got)
		}
	})
	old := storedPod(t, brand, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"x"}]}}`)
	old["status"] = decodeJSON(t, `{"phase":"Failed","qosClass":"BestEffort","containerStatuses":[{"name":"c","state":{"terminated":{"exitCode":1}}}]}`)
	tests := []struct {
		name, status string
		want         []string
	}{
		{"qos is fixed", `{"qosClass":"Guaranteed"}`, []string{`status.qosClass: Invalid value: "Guaranteed": field is immutable`}},
		{"terminated stays terminated", `{"containerStatuses":[{"name":"c","state":{"running":{}}}]}`, []string{
			"status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state",
		}},
		{"condition types", `{"conditions":[{"type":"Ready"},{"type":"bad type"},{"type":"example.com/ok"}]}`,
			msgs("metadata.conditions[1].Type", "bad type", validationIsQualifiedName)},
		{"nominated node", `{"nominatedNodeName":"Bad"}`, msgs("status.nominatedNodeName", "Bad", validationIsDNS1123Subdomain)},
		{"pod IPs", `{"podIPs":[{"ip":"10.0.0.1"},{"ip":"10.0.0.1"},{"ip":"x"}]}`, []string{
			`status.podIPs[2]: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
			`status.podIPs: Invalid value: []core.PodIP{core.PodIP{IP:"10.0.0.1"}, core.PodIP{IP:"10.0.0.1"}, core.PodIP{IP:"x"}}: may specify no more than one IP for each IP family`,
			`status.podIPs[1]: Duplicate value: core.PodIP{IP:"10.0.0.1"}`,
		}},
		{"dual stack", `{"podIPs":[{"ip":"10.0.0.1"},{"ip":"fd00::1"}],"hostIPs":[{"ip":"10.1.0.1"},{"ip":"fd01::1"}]}`, nil},
	}
	for _, tt := range tests {
		obj := withStatus(t, old, tt.status)
		if !has(mapOf(obj["status"]), "containerStatuses") {
			mapOf(obj["status"])["containerStatuses"] = mapOf(old["status"])["containerStatuses"]
		}
		checkStrings(t, tt.name, runUpdate(t, d, obj, old, "status"), tt.want)
	}
}

var (
	validationIsQualifiedName    = validation.IsQualifiedName
	validationIsDNS1123Subdomain = validation.IsDNS1123Subdomain
)

// TestPodEphemeralContainersUpdate: ephemeral containers are added to a
// pod, never changed or removed; a static pod's mirror takes none, which
// is then the only error.
func TestPodEphemeralContainersUpdate(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "Pod")
	r := newPodRules(brand)
	const debug = `{"name":"debug","image":"busybox","terminationMessagePolicy":"File","imagePullPolicy":"Always"}`
	plain := `{"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"x"}]}}`
	mirror := `{"metadata":{"name":"p","namespace":"ns","annotations":{"` + r.mirrorAnnotation + `":"x"}},"spec":{"nodeName":"n","containers":[{"name":"c","image":"x"}]}}`
	for _, tt := range []struct {
		name, pod, before, after string
		want                     []string
	}{
		{"added", plain, `[]`, `[` + debug + `]`, nil},
		{"removed", plain, `[` + debug + `]`, `[]`, []string{`spec.ephemeralContainers: Forbidden: existing ephemeral containers "debug" may not be removed` + "\n"}},
		{"added to a static pod", mirror, `[]`, `[` + debug + `]`, []string{"[]: Forbidden: static pods do not support ephemeral containers"}},
		{"removed from a static pod", mirror, `[` + debug + `]`, `[]`, []string{"[]: Forbidden: static pods do not support ephemeral containers"}},
	} {
		old := storedPod(t, brand, tt.pod)
		mapOf(old["spec"])["ephemeralContainers"] = decodeJSON(t, `{"l":`+tt.before+`}`)["l"]
		obj := deepCopyMap(old)
		mapOf(obj["spec"])["ephemeralContainers"] = decodeJSON(t, `{"l":`+tt.after+`}`)["l"]
		checkStrings(t, tt.name, runUpdate(t, d, obj, old, "ephemeralcontainers"), tt.want)
	}
}
