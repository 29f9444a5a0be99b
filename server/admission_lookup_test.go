package server_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestPriorityAdmission checks that pods get their priority from the class
// they name or from the global default class, and that only one class may
// be the global default, with upstream's messages.
func TestPriorityAdmission(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	pcs := groupPath(b.Group("scheduling"), "v1", "", "priorityclasses")
	pod := func(name, spec string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"containers":[{"name":"c","image":"x"}]` + spec + `}}`
	}
	// stored reads the priority fields of a pod as the client sees it.
	stored := func(name string) [3]any {
		p := e.do("GET", podsPath+"/"+name, nil).mustCode(t, 200).obj(t)
		return [3]any{path(p, "spec.priorityClassName"), path(p, "spec.priority"), path(p, "spec.preemptionPolicy")}
	}

	e.do("POST", podsPath, pod("plain", "")).mustCode(t, 201)
	if got, want := stored("plain"), [3]any{nil, 0.0, "PreemptLowerPriority"}; got != want {
		t.Errorf("pod without a class and no default: %v, want %v", got, want)
	}
	e.do("POST", pcs, `{"metadata":{"name":"high"},"value":1000,"preemptionPolicy":"Never"}`).mustCode(t, 201)
	e.do("POST", podsPath, pod("named", `,"priorityClassName":"high"`)).mustCode(t, 201)
	if got, want := stored("named"), [3]any{"high", 1000.0, "Never"}; got != want {
		t.Errorf("pod naming a class: %v, want %v", got, want)
	}
	e.do("POST", podsPath, pod("critical", `,"priorityClassName":"system-cluster-critical"`)).mustCode(t, 201)
	if got, want := stored("critical"), [3]any{"system-cluster-critical", 2000000000.0, "PreemptLowerPriority"}; got != want {
		t.Errorf("pod naming a system class: %v, want %v", got, want)
	}
	e.do("POST", podsPath, pod("missing", `,"priorityClassName":"nope"`)).mustCode(t, 403).
		mustMessage(t, `pods "missing" is forbidden: no PriorityClass with name nope was found`)
	e.do("POST", podsPath, `{"metadata":{"generateName":"gen-"},"spec":{"containers":[{"name":"c","image":"x"}],"priority":5}}`).mustCode(t, 403).
		mustMessage(t, `pods "gen-" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name`)
	e.do("POST", podsPath, `{"metadata":{},"spec":{"containers":[{"name":"c","image":"x"}],"priorityClassName":"nope"}}`).mustCode(t, 403).
		mustMessage(t, `pods "Unknown" is forbidden: no PriorityClass with name nope was found`)

	// An update leaving the priority out keeps it; one changing it is
	// refused by the pod update rules.
	named := e.do("GET", podsPath+"/named", nil).mustCode(t, 200).obj(t)
	spec := named["spec"].(map[string]any)
	delete(spec, "priority")
	delete(spec, "preemptionPolicy")
	named["metadata"].(map[string]any)["labels"] = map[string]any{"updated": "yes"}
	e.do("PUT", podsPath+"/named", named).mustCode(t, 200)
	if got, want := stored("named"), [3]any{"high", 1000.0, "Never"}; got != want {
		t.Errorf("pod updated without its priority: %v, want %v", got, want)
	}
	named = e.do("GET", podsPath+"/named", nil).mustCode(t, 200).obj(t)
	named["spec"].(map[string]any)["priority"] = 7
	st := e.do("PUT", podsPath+"/named", named).mustCode(t, 422).obj(t)
	if msg, _ := st["message"].(string); !strings.Contains(msg, "pod updates may not change fields other than") || !strings.Contains(msg, "priority: 7") {
		t.Errorf("priority change: %s", msg)
	}
	if got, want := stored("named"), [3]any{"high", 1000.0, "Never"}; got != want {
		t.Errorf("refused update stored: %v, want %v", got, want)
	}

	// The first global default is taken; a second is refused, created or
	// marked later.
	e.do("POST", pcs, `{"metadata":{"name":"gd-a"},"value":50,"globalDefault":true}`).mustCode(t, 201)
	e.do("POST", pcs, `{"metadata":{"name":"gd-b"},"value":60,"globalDefault":true}`).mustCode(t, 403).
		mustMessage(t, `priorityclasses.`+b.Group("scheduling")+` "gd-b" is forbidden: PriorityClass gd-a is already marked as default. Only one default can exist`)
	e.do("GET", pcs+"/gd-b", nil).mustCode(t, 404)
	high := e.do("GET", pcs+"/high", nil).mustCode(t, 200).obj(t)
	high["globalDefault"] = true
	e.do("PUT", pcs+"/high", high).mustCode(t, 403).
		mustMessage(t, `priorityclasses.`+b.Group("scheduling")+` "high" is forbidden: PriorityClass gd-a is already marked as default. Only one default can exist`)
	if got := e.do("GET", pcs+"/high", nil).mustCode(t, 200).obj(t); got["globalDefault"] != nil {
		t.Errorf("refused update stored: %v", got)
	}
	// The default itself may be written again.
	gdA := e.do("GET", pcs+"/gd-a", nil).mustCode(t, 200).obj(t)
	gdA["description"] = "the default"
	e.do("PUT", pcs+"/gd-a", gdA).mustCode(t, 200)

	// A pod naming no class now gets the default's name and value, dry
	// run or not.
	dry := e.do("POST", podsPath+"?dryRun=All", pod("dry", "")).mustCode(t, 201).obj(t)
	if path(dry, "spec.priorityClassName") != "gd-a" || path(dry, "spec.priority") != 50.0 {
		t.Errorf("dry run: %v", dry["spec"])
	}
	e.do("POST", podsPath, pod("defaulted", "")).mustCode(t, 201)
	if got, want := stored("defaulted"), [3]any{"gd-a", 50.0, "PreemptLowerPriority"}; got != want {
		t.Errorf("pod under a global default: %v, want %v", got, want)
	}
}

// TestDefaultIngressClass checks that an Ingress created naming no class
// gets the newest IngressClass marked default.
func TestDefaultIngressClass(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	classes := groupPath(b.Group("networking"), "v1", "", "ingressclasses")
	ingresses := groupPath(b.Group("networking"), "v1", "default", "ingresses")
	ingress := func(name, meta, spec string) string {
		return `{"metadata":{"name":"` + name + `"` + meta + `},"spec":{"defaultBackend":{"service":{"name":"s","port":{"number":80}}}` + spec + `}}`
	}
	className := func(name string) any {
		return path(e.do("GET", ingresses+"/"+name, nil).mustCode(t, 200).obj(t), "spec.ingressClassName")
	}
	e.do("POST", ingresses, ingress("before", "", "")).mustCode(t, 201)
	if got := className("before"); got != nil {
		t.Errorf("no default class: %v", got)
	}
	isDefault := `"annotations":{"ingressclass.` + b.LongDomain + `/is-default-class":"true"}`
	e.do("POST", classes, `{"metadata":{"name":"nginx",`+isDefault+`},"spec":{"controller":"example.com/nginx"}}`).mustCode(t, 201)
	e.do("POST", classes, `{"metadata":{"name":"other"},"spec":{"controller":"example.com/other"}}`).mustCode(t, 201)
	e.do("POST", ingresses, ingress("after", "", "")).mustCode(t, 201)
	if got := className("after"); got != "nginx" {
		t.Errorf("default class: %v", got)
	}
	e.do("POST", ingresses, ingress("own", "", `,"ingressClassName":"other"`)).mustCode(t, 201)
	if got := className("own"); got != "other" {
		t.Errorf("named class: %v", got)
	}
	e.do("POST", ingresses, ingress("legacy", `,"annotations":{"`+b.Label("ingress.class")+`":"other"}`, "")).mustCode(t, 201)
	if got := className("legacy"); got != nil {
		t.Errorf("class named by annotation: %v", got)
	}
}

// TestDefaultStorageClass checks that a claim created naming no class
// gets the StorageClass marked default, and that one asking for no class
// or naming one by the beta annotation keeps what it asked for.
func TestDefaultStorageClass(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	classes := groupPath(b.Group("storage"), "v1", "", "storageclasses")
	const claims = "/api/v1/namespaces/default/persistentvolumeclaims"
	claim := func(name, meta, spec string) string {
		return `{"metadata":{"name":"` + name + `"` + meta + `},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}` + spec + `}}`
	}
	className := func(name string) any {
		return path(e.do("GET", claims+"/"+name, nil).mustCode(t, 200).obj(t), "spec.storageClassName")
	}
	e.do("POST", claims, claim("before", "", "")).mustCode(t, 201)
	if got := className("before"); got != nil {
		t.Errorf("no default class: %v", got)
	}
	isDefault := `"annotations":{"storageclass.` + b.LongDomain + `/is-default-class":"true"}`
	e.do("POST", classes, `{"metadata":{"name":"standard",`+isDefault+`},"provisioner":"example.com/disk"}`).mustCode(t, 201)
	e.do("POST", classes, `{"metadata":{"name":"fast"},"provisioner":"example.com/disk"}`).mustCode(t, 201)
	created := e.do("POST", claims, claim("after", "", "")).mustCode(t, 201).obj(t)
	if got := path(created, "spec.storageClassName"); got != "standard" {
		t.Errorf("create answered class %v", got)
	}
	if got := className("after"); got != "standard" {
		t.Errorf("default class: %v", got)
	}
	for _, c := range []struct {
		name, meta, spec string
		want             any
	}{
		{"named", "", `,"storageClassName":"fast"`, "fast"},
		{"none", "", `,"storageClassName":""`, ""},
		{"beta", `,"annotations":{"volume.beta.` + b.Label("storage-class") + `":"fast"}`, "", nil},
	} {
		e.do("POST", claims, claim(c.name, c.meta, c.spec)).mustCode(t, 201)
		if got := className(c.name); got != c.want {
			t.Errorf("%s: class %v, want %v", c.name, got, c.want)
		}
	}
}

// TestClaimResize checks that a claim's storage request grows only when
// the claim is bound and its StorageClass allows volume expansion, with
// upstream's PersistentVolumeClaimResize messages, and that a refused
// growth leaves the stored claim as it was.
func TestClaimResize(t *testing.T) {
	t.Parallel()
	e := start(t)
	classes := groupPath(platBrand.Group("storage"), "v1", "", "storageclasses")
	const claims = "/api/v1/namespaces/default/persistentvolumeclaims"
	const mergePatch = "application/merge-patch+json"
	e.do("POST", classes, `{"metadata":{"name":"grows"},"provisioner":"example.com/disk","allowVolumeExpansion":true}`).mustCode(t, 201)
	e.do("POST", classes, `{"metadata":{"name":"fixed"},"provisioner":"example.com/disk"}`).mustCode(t, 201)
	claim := func(name, class, phase string) {
		t.Helper()
		e.do("POST", claims, `{"metadata":{"name":"`+name+`"},"spec":{"storageClassName":"`+class+`","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`).mustCode(t, 201)
		e.do("PATCH", claims+"/"+name+"/status", `{"status":{"phase":"`+phase+`"}}`, "Content-Type", mergePatch).mustCode(t, 200)
	}
	grow := func(name, storage string) *resp {
		t.Helper()
		return e.do("PATCH", claims+"/"+name, `{"spec":{"resources":{"requests":{"storage":"`+storage+`"}}}}`, "Content-Type", mergePatch)
	}
	stored := func(name string) any {
		t.Helper()
		return path(e.do("GET", claims+"/"+name, nil).mustCode(t, 200).obj(t), "spec.resources.requests.storage")
	}
	claim("elastic", "grows", "Bound")
	claim("rigid", "fixed", "Bound")
	claim("waiting", "grows", "Pending")

	if got := grow("elastic", "2Gi").mustCode(t, 200).obj(t); path(got, "spec.resources.requests.storage") != "2Gi" {
		t.Errorf("grown claim answered %v", path(got, "spec.resources.requests.storage"))
	}
	if got := stored("elastic"); got != "2Gi" {
		t.Errorf("grown claim stored %v", got)
	}

	const refused = `persistentvolumeclaims "rigid" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`
	grow("rigid", "2Gi").mustCode(t, 403).mustMessage(t, refused)
	e.do("PATCH", claims+"/rigid?dryRun=All", `{"spec":{"resources":{"requests":{"storage":"3Gi"}}}}`, "Content-Type", mergePatch).
		mustCode(t, 403).mustMessage(t, refused)
	if got := stored("rigid"); got != "1Gi" {
		t.Errorf("refused growth stored %v", got)
	}
	// The class is read at each write: once it allows expansion, the
	// claim grows.
	e.do("PATCH", classes+"/fixed", `{"allowVolumeExpansion":true}`, "Content-Type", mergePatch).mustCode(t, 200)
	grow("rigid", "2Gi").mustCode(t, 200)
	if got := stored("rigid"); got != "2Gi" {
		t.Errorf("growth the class allows stored %v", got)
	}

	// An unbound claim's requests are immutable: validation refuses the
	// growth before admission would.
	grow("waiting", "2Gi").mustCode(t, 422)
	if got := stored("waiting"); got != "1Gi" {
		t.Errorf("pending claim stored %v", got)
	}
}

// TestLimitRanger checks that new pods take the default resources of their
// namespace's LimitRanges, with the annotation that says so, and that pods
// and claims breaking their bounds are refused with upstream's messages.
func TestLimitRanger(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	const (
		ranges = "/api/v1/namespaces/default/limitranges"
		claims = "/api/v1/namespaces/default/persistentvolumeclaims"
	)
	pod := func(name, resources string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"containers":[{"name":"c","image":"x"` + resources + `}]}}`
	}
	claim := func(name, storage string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"` + storage + `"}}}}`
	}
	e.do("POST", ranges, `{"metadata":{"name":"bounds"},"spec":{"limits":[
		{"type":"Container","max":{"memory":"1Gi"},"default":{"cpu":"500m","memory":"256Mi"},"defaultRequest":{"cpu":"100m"}},
		{"type":"Pod","max":{"cpu":"2"}},
		{"type":"PersistentVolumeClaim","min":{"storage":"1Gi"}}]}}`).mustCode(t, 201)
	lr := e.do("GET", ranges+"/bounds", nil).mustCode(t, 200).obj(t)
	if got := path(lr, "spec.limits"); !reflect.DeepEqual(got, []any{
		map[string]any{"type": "Container", "max": map[string]any{"memory": "1Gi"},
			"default":        map[string]any{"cpu": "500m", "memory": "256Mi"},
			"defaultRequest": map[string]any{"cpu": "100m", "memory": "256Mi"}},
		map[string]any{"type": "Pod", "max": map[string]any{"cpu": "2"}},
		map[string]any{"type": "PersistentVolumeClaim", "min": map[string]any{"storage": "1Gi"}},
	}) {
		t.Errorf("stored limits: %v", got)
	}

	created := e.do("POST", podsPath, pod("defaulted", `,"resources":{"requests":{"memory":"64Mi"}}`)).mustCode(t, 201).obj(t)
	for _, p := range []map[string]any{created, e.do("GET", podsPath+"/defaulted", nil).mustCode(t, 200).obj(t)} {
		if got, want := path(p, "spec.containers").([]any)[0].(map[string]any)["resources"], map[string]any{
			"limits":   map[string]any{"cpu": "500m", "memory": "256Mi"},
			"requests": map[string]any{"cpu": "100m", "memory": "64Mi"},
		}; !reflect.DeepEqual(got, want) {
			t.Errorf("resources %v, want %v", got, want)
		}
		annotations, _ := path(p, "metadata.annotations").(map[string]any)
		if got, want := annotations[b.Label("limit-ranger")], "LimitRanger plugin set: cpu request for container c; cpu, memory limit for container c"; got != want {
			t.Errorf("annotation %q, want %q", got, want)
		}
		if got := path(p, "status.qosClass"); got != "Burstable" {
			t.Errorf("qosClass %v", got)
		}
	}

	e.do("POST", podsPath, pod("big", `,"resources":{"limits":{"memory":"2Gi"}}`)).mustCode(t, 403).
		mustMessage(t, `pods "big" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi`)
	e.do("GET", podsPath+"/big", nil).mustCode(t, 404)
	e.do("POST", podsPath, `{"metadata":{"name":"wide"},"spec":{"containers":[
		{"name":"a","image":"x","resources":{"limits":{"cpu":"1500m"}}},
		{"name":"b","image":"x","resources":{"limits":{"cpu":"1"}}}]}}`).mustCode(t, 403).
		mustMessage(t, `pods "wide" is forbidden: maximum cpu usage per Pod is 2, but limit is 2500m`)
	e.do("POST", podsPath+"?dryRun=All", pod("dry", `,"resources":{"limits":{"memory":"2Gi"}}`)).mustCode(t, 403)

	e.do("POST", claims, claim("small", "500Mi")).mustCode(t, 403).
		mustMessage(t, `persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi`)
	e.do("GET", claims+"/small", nil).mustCode(t, 404)
	e.do("POST", claims, claim("enough", "2Gi")).mustCode(t, 201)

	// Another namespace's pods and claims are not bounded by them.
	e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"free"}}`).mustCode(t, 201)
	free := e.do("POST", "/api/v1/namespaces/free/pods", pod("big", `,"resources":{"limits":{"memory":"2Gi"}}`)).mustCode(t, 201).obj(t)
	if got := path(free, "metadata.annotations"); got != nil {
		t.Errorf("pod in another namespace annotated: %v", got)
	}
	e.do("POST", "/api/v1/namespaces/free/persistentvolumeclaims", claim("small", "500Mi")).mustCode(t, 201)
}

// TestRuntimeClassAdmission checks that a pod naming a RuntimeClass must
// name one that exists and gets its overhead, node selector and
// tolerations, with upstream's messages.
func TestRuntimeClassAdmission(t *testing.T) {
	t.Parallel()
	e := start(t)
	b := platBrand
	classes := groupPath(b.Group("node"), "v1", "", "runtimeclasses")
	pod := func(name, spec string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"containers":[{"name":"c","image":"x"}]` + spec + `}}`
	}
	e.do("POST", podsPath, pod("missing", `,"runtimeClassName":"gvisor"`)).mustCode(t, 403).
		mustMessage(t, `pods "missing" is forbidden: pod rejected: RuntimeClass "gvisor" not found`)
	e.do("GET", podsPath+"/missing", nil).mustCode(t, 404)

	e.do("POST", classes, `{"metadata":{"name":"gvisor"},"handler":"runsc","overhead":{"podFixed":{"cpu":"250m","memory":"64Mi"}},
		"scheduling":{"nodeSelector":{"sandbox":"gvisor"},"tolerations":[{"key":"sandbox","operator":"Exists","effect":"NoSchedule"}]}}`).mustCode(t, 201)
	e.do("POST", podsPath, pod("sandboxed", `,"runtimeClassName":"gvisor","nodeSelector":{"disk":"ssd"}`)).mustCode(t, 201)
	got := e.do("GET", podsPath+"/sandboxed", nil).mustCode(t, 200).obj(t)
	if want := map[string]any{"cpu": "250m", "memory": "64Mi"}; !reflect.DeepEqual(path(got, "spec.overhead"), want) {
		t.Errorf("overhead %v, want %v", path(got, "spec.overhead"), want)
	}
	if want := map[string]any{"disk": "ssd", "sandbox": "gvisor"}; !reflect.DeepEqual(path(got, "spec.nodeSelector"), want) {
		t.Errorf("nodeSelector %v, want %v", path(got, "spec.nodeSelector"), want)
	}
	// The pod's own tolerations, its defaults among them, come first.
	var tols []string
	for _, x := range path(got, "spec.tolerations").([]any) {
		tol := x.(map[string]any)
		tols = append(tols, fmt.Sprint(tol["key"], ":", tol["operator"], ":", tol["effect"]))
	}
	if want := []string{
		"node." + b.Label("not-ready") + ":Exists:NoExecute", "node." + b.Label("unreachable") + ":Exists:NoExecute", "sandbox:Exists:NoSchedule",
	}; !reflect.DeepEqual(tols, want) {
		t.Errorf("tolerations %v, want %v", tols, want)
	}

	e.do("POST", podsPath, pod("other-overhead", `,"runtimeClassName":"gvisor","overhead":{"cpu":"1"}`)).mustCode(t, 403).
		mustMessage(t, `pods "other-overhead" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`)
	e.do("POST", podsPath, pod("conflict", `,"runtimeClassName":"gvisor","nodeSelector":{"sandbox":"kata"}`)).mustCode(t, 403).
		mustMessage(t, `pods "conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; pod.spec.nodeSelector[sandbox] = kata`)
	e.do("POST", podsPath, pod("no-class", `,"overhead":{"cpu":"1"}`)).mustCode(t, 403).
		mustMessage(t, `pods "no-class" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`)
}
