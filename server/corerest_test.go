package server_test

import (
	"encoding/json"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"platd/config"
)

const (
	claimsPath  = "/api/v1/namespaces/default/persistentvolumeclaims"
	volumesPath = "/api/v1/persistentvolumes"
	nodesPath   = "/api/v1/nodes"
	quotasPath  = "/api/v1/namespaces/default/resourcequotas"
)

// TestClaimsAndVolumes checks the stored defaults, the protection
// finalizers, upstream's error texts and the split between spec and
// status writes of claims and volumes.
func TestClaimsAndVolumes(t *testing.T) {
	t.Parallel()
	e := start(t)
	claim := `{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}},"status":{"phase":"Bound"}}`
	c := e.do("POST", claimsPath, claim).mustCode(t, 201).obj(t)
	if path(c, "spec.volumeMode") != "Filesystem" || path(c, "status.phase") != "Pending" {
		t.Errorf("claim defaults: spec %v status %v", c["spec"], c["status"])
	}
	if f := path(c, "metadata.finalizers"); !reflect.DeepEqual(f, []any{platBrand.Label("pvc-protection")}) {
		t.Errorf("claim finalizers %v", f)
	}
	got := e.do("GET", claimsPath+"/data", nil).mustCode(t, 200).obj(t)
	if !reflect.DeepEqual(got["spec"], c["spec"]) || path(got, "status.phase") != "Pending" {
		t.Errorf("stored claim %v", got)
	}

	bad := e.do("POST", claimsPath, `{"metadata":{"name":"bad"},"spec":{"accessModes":["ReadWriteOncePod","ReadWriteOnce"],"resources":{"requests":{"storage":"0"}}}}`).mustCode(t, 422).obj(t)
	want := `PersistentVolumeClaim "bad" is invalid: [spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes, spec.resources[storage]: Invalid value: "0": must be greater than zero]`
	if bad["message"] != want {
		t.Errorf("invalid claim:\n got  %v\n want %s", bad["message"], want)
	}
	causes := path(bad, "details.causes").([]any)
	if len(causes) != 2 || path(causes[1].(map[string]any), "field") != "spec.resources[storage]" {
		t.Errorf("causes %v", causes)
	}

	// Status writes keep the spec; spec writes keep the status.
	got["status"] = map[string]any{"phase": "Bound", "capacity": map[string]any{"storage": "1Gi"}}
	got["spec"].(map[string]any)["volumeName"] = "ignored"
	st := e.do("PUT", claimsPath+"/data/status", got).mustCode(t, 200).obj(t)
	if path(st, "status.phase") != "Bound" || path(st, "spec.volumeName") != nil {
		t.Errorf("status write: spec %v status %v", st["spec"], st["status"])
	}
	// A bound claim of no StorageClass may not grow.
	st["spec"].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"storage": "2Gi"}}
	e.do("PUT", claimsPath+"/data", st).mustCode(t, 403).mustMessage(t,
		`persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`)
	st["spec"].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"storage": "1Gi"}}
	st["status"] = map[string]any{"phase": "Lost"}
	grown := e.do("PUT", claimsPath+"/data", st).mustCode(t, 200).obj(t)
	if path(grown, "spec.resources.requests.storage") != "1Gi" || path(grown, "status.phase") != "Bound" {
		t.Errorf("spec write of a bound claim: spec %v status %v", grown["spec"], grown["status"])
	}
	grown["spec"].(map[string]any)["storageClassName"] = "fast"
	grown["metadata"].(map[string]any)["annotations"] = map[string]any{"volume.beta." + platBrand.Label("storage-class"): "slow"}
	// A claim without a class may get one; the beta annotation may not
	// appear later.
	imm := e.do("PUT", claimsPath+"/data", grown).mustCode(t, 422).obj(t)
	if imm["message"] != `PersistentVolumeClaim "data" is invalid: metadata.annotations.volume.beta.`+platBrand.Label("storage-class")+`: Invalid value: "slow": field is immutable` {
		t.Errorf("adding the class annotation: %v", imm["message"])
	}
	delete(grown["metadata"].(map[string]any), "annotations")
	classed := e.do("PUT", claimsPath+"/data", grown).mustCode(t, 200).obj(t)
	classed["spec"].(map[string]any)["storageClassName"] = "slow"
	imm = e.do("PUT", claimsPath+"/data", classed).mustCode(t, 422).obj(t)
	if msg, _ := imm["message"].(string); !strings.HasPrefix(msg, `PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims`) ||
		!strings.Contains(msg, "- \tstorageClassName: \"fast\",\n+ \tstorageClassName: \"slow\",") {
		t.Errorf("changing a claim's class: %q", msg)
	}
	// Claims select on metadata only: upstream's field label conversion
	// knows no other field of theirs.
	sel := e.do("GET", claimsPath+"?fieldSelector=metadata.name%3Ddata", nil).mustCode(t, 200).obj(t)
	if items := sel["items"].([]any); len(items) != 1 {
		t.Errorf("claims selected by name: %d", len(items))
	}
	e.do("GET", claimsPath+"?fieldSelector=name%3Ddata", nil).mustCode(t, 400).
		mustMessage(t, `"name" is not a known field selector: only "metadata.name", "metadata.namespace"`)

	vol := `{"metadata":{"name":"pv1"},"spec":{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"5Gi"},"hostPath":{"path":"/srv"}}}`
	v := e.do("POST", volumesPath, vol).mustCode(t, 201).obj(t)
	if path(v, "spec.persistentVolumeReclaimPolicy") != "Retain" || path(v, "spec.volumeMode") != "Filesystem" ||
		path(v, "status.phase") != "Pending" || path(v, "status.lastPhaseTransitionTime") == nil {
		t.Errorf("volume defaults: spec %v status %v", v["spec"], v["status"])
	}
	if f := path(v, "metadata.finalizers"); !reflect.DeepEqual(f, []any{platBrand.Label("pv-protection")}) {
		t.Errorf("volume finalizers %v", f)
	}
	badVol := e.do("POST", volumesPath, `{"metadata":{"name":"pv2"},"spec":{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"}}}`).mustCode(t, 422).obj(t)
	if badVol["message"] != `PersistentVolume "pv2" is invalid: spec: Required value: must specify a volume type` {
		t.Errorf("volume without a source: %v", badVol["message"])
	}
	// A pod on a node holds its claim; deleted, the claim stays until
	// the pod goes.
	e.do("POST", podsPath, `{"metadata":{"name":"user"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"busybox"}],"volumes":[{"name":"d","persistentVolumeClaim":{"claimName":"data"}}]}}`).mustCode(t, 201)
	marked := e.do("DELETE", claimsPath+"/data", nil).mustCode(t, 200).obj(t)
	if path(marked, "metadata.deletionTimestamp") == nil {
		t.Errorf("deleted claim in use: %v", marked["metadata"])
	}
	e.do("DELETE", podsPath+"/user?gracePeriodSeconds=0", nil).mustCode(t, 200)
	eventually(t, "the claim to go with its pod", func() bool { return e.do("GET", claimsPath+"/data", nil).code == 404 })

	v["spec"].(map[string]any)["hostPath"] = map[string]any{"path": "/other"}
	moved := e.do("PUT", volumesPath+"/pv1", v).mustCode(t, 422).obj(t)
	if msg, _ := moved["message"].(string); !strings.Contains(msg, "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation") {
		t.Errorf("changing a volume's source: %v", msg)
	}
	e.do("DELETE", volumesPath+"/pv1", nil).mustCode(t, 200)
	eventually(t, "the unbound volume to go", func() bool { return e.do("GET", volumesPath+"/pv1", nil).code == 404 })
}

// TestNodes checks that a node keeps the status it registers with, the
// spec.unschedulable field selector, the proxy subresource and the taint
// rules.
func TestNodes(t *testing.T) {
	t.Parallel()
	e := start(t)
	n := e.do("POST", nodesPath, `{"metadata":{"name":"node-a"},"spec":{"podCIDR":"10.0.0.0/24"},"status":{"capacity":{"cpu":"4","pods":"110"}}}`).mustCode(t, 201).obj(t)
	if path(n, "status.allocatable.cpu") != "4" || !reflect.DeepEqual(path(n, "spec.podCIDRs"), []any{"10.0.0.0/24"}) {
		t.Errorf("node defaults: spec %v status %v", n["spec"], n["status"])
	}
	// A new node is not ready to take pods until its controller says so;
	// a taint of that key and effect it registers with is not doubled.
	notReady := map[string]any{"key": "node." + platBrand.Label("not-ready"), "effect": "NoSchedule"}
	if got := path(e.do("GET", nodesPath+"/node-a", nil).mustCode(t, 200).obj(t), "spec.taints"); !reflect.DeepEqual(got, []any{notReady}) {
		t.Errorf("new node taints: %v", got)
	}
	own := `{"metadata":{"name":"node-e"},"spec":{"taints":[{"key":"node.` + platBrand.Label("not-ready") + `","value":"x","effect":"NoSchedule"}]}}`
	if got := path(e.do("POST", nodesPath, own).mustCode(t, 201).obj(t), "spec.taints"); len(got.([]any)) != 1 || path(got.([]any)[0].(map[string]any), "value") != "x" {
		t.Errorf("node registered not ready: %v", got)
	}
	e.do("POST", nodesPath, `{"metadata":{"name":"node-b"},"spec":{"unschedulable":true}}`).mustCode(t, 201)
	names := func(q string) []string {
		l := e.do("GET", nodesPath+"?fieldSelector="+url.QueryEscape(q), nil).mustCode(t, 200).obj(t)
		var out []string
		for _, it := range l["items"].([]any) {
			out = append(out, path(it.(map[string]any), "metadata.name").(string))
		}
		return out
	}
	if got := names("spec.unschedulable=true"); !slices.Equal(got, []string{"node-b"}) {
		t.Errorf("unschedulable nodes %v", got)
	}
	if got := names("spec.unschedulable=false,metadata.name=node-a"); !slices.Equal(got, []string{"node-a"}) {
		t.Errorf("schedulable node-a %v", got)
	}
	// Nodes convert their field labels as upstream does: no namespace.
	for _, f := range []string{"spec.nodeName", "metadata.namespace"} {
		bad := e.do("GET", nodesPath+"?fieldSelector="+url.QueryEscape(f+"=x"), nil).mustCode(t, 400).obj(t)
		if bad["message"] != "field label not supported: "+f {
			t.Errorf("unknown node field: %v", bad["message"])
		}
	}

	proxy := e.do("GET", nodesPath+"/node-a/proxy", nil).mustCode(t, 503).obj(t)
	if msg, _ := proxy["message"].(string); !strings.Contains(msg, "platd runs no nodes") {
		t.Errorf("node proxy: %v", msg)
	}
	e.do("GET", nodesPath+"/missing/proxy", nil).mustCode(t, 404)
	// A proxy takes a path below it; other subresources do not.
	e.do("GET", nodesPath+"/node-a/proxy/metrics/cadvisor", nil).mustCode(t, 503)
	e.do("GET", nodesPath+"/node-a/status/more", nil).mustCode(t, 404)

	// A spec write keeps the status; a status write keeps the spec.
	n["status"] = map[string]any{"capacity": map[string]any{"cpu": "8"}}
	n["spec"].(map[string]any)["taints"] = []any{map[string]any{"key": "dedicated", "value": "db", "effect": "NoSchedule"}}
	up := e.do("PUT", nodesPath+"/node-a", n).mustCode(t, 200).obj(t)
	if path(up, "status.capacity.cpu") != "4" || len(path(up, "spec.taints").([]any)) != 1 {
		t.Errorf("node spec write: spec %v status %v", up["spec"], up["status"])
	}
	up["status"] = map[string]any{"capacity": map[string]any{"cpu": "8"}}
	up["spec"].(map[string]any)["unschedulable"] = true
	st := e.do("PUT", nodesPath+"/node-a/status", up).mustCode(t, 200).obj(t)
	if path(st, "status.capacity.cpu") != "8" || path(st, "spec.unschedulable") != nil {
		t.Errorf("node status write: spec %v status %v", st["spec"], st["status"])
	}

	taints := `{"metadata":{"name":"node-c"},"spec":{"taints":[{"key":"k","effect":"Sometimes"}]}}`
	tb := e.do("POST", nodesPath, taints).mustCode(t, 422).obj(t)
	if tb["message"] != `Node "node-c" is invalid: metadata.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"` {
		t.Errorf("invalid taint: %v", tb["message"])
	}
	cidr := e.do("POST", nodesPath, `{"metadata":{"name":"node-d"},"spec":{"podCIDRs":["10.0.0.0/8","10.1.0.0/16"]}}`).mustCode(t, 422).obj(t)
	if cidr["message"] != `Node "node-d" is invalid: spec.podCIDRs: Invalid value: []string{"10.0.0.0/8", "10.1.0.0/16"}: may specify no more than one CIDR for each IP family` {
		t.Errorf("two IPv4 pod CIDRs: %v", cidr["message"])
	}
}

// TestResourceQuotas checks that a quota starts with an empty status,
// upstream's texts, and that status writes are checked on their own. The
// quota controller, which fills the status, is off.
func TestResourceQuotas(t *testing.T) {
	t.Parallel()
	e := start(t, withControllers(append(slices.Clone(quietControllers), "-"+config.ControllerResourceQuota)...))
	q := e.do("POST", quotasPath, `{"metadata":{"name":"q"},"spec":{"hard":{"pods":"10","requests.cpu":"2"}},"status":{"used":{"pods":"3"}}}`).mustCode(t, 201).obj(t)
	if st, _ := q["status"].(map[string]any); len(st) != 0 {
		t.Errorf("quota status on create %v", q["status"])
	}
	q["status"] = map[string]any{"hard": map[string]any{"pods": "10"}, "used": map[string]any{"pods": "-1"}}
	bad := e.do("PUT", quotasPath+"/q/status", q).mustCode(t, 422).obj(t)
	if bad["message"] != `ResourceQuota "q" is invalid: status.used[pods]: Invalid value: "-1": must be greater than or equal to 0` {
		t.Errorf("negative usage: %v", bad["message"])
	}
	// A status write must name the version it replaces; a patch does.
	noRV := map[string]any{"metadata": map[string]any{"name": "q"}, "status": map[string]any{"used": map[string]any{"pods": "1"}}}
	nv := e.do("PUT", quotasPath+"/q/status", noRV).mustCode(t, 422).obj(t)
	if nv["message"] != `ResourceQuota "q" is invalid: resourceVersion: Required value` {
		t.Errorf("status write without resourceVersion: %v", nv["message"])
	}
	patched := e.do("PATCH", quotasPath+"/q/status", `{"status":{"used":{"pods":"2"}}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200).obj(t)
	q["metadata"] = patched["metadata"]
	q["status"] = map[string]any{"hard": map[string]any{"pods": "10"}, "used": map[string]any{"pods": "3"}}
	q["spec"] = map[string]any{"hard": map[string]any{"pods": "99"}}
	st := e.do("PUT", quotasPath+"/q/status", q).mustCode(t, 200).obj(t)
	if path(st, "status.used.pods") != "3" || path(st, "spec.hard.pods") != "10" {
		t.Errorf("quota status write: spec %v status %v", st["spec"], st["status"])
	}
	sc := e.do("POST", quotasPath, `{"metadata":{"name":"be"},"spec":{"hard":{"cpu":"1"},"scopes":["BestEffort"]}}`).mustCode(t, 422).obj(t)
	if sc["message"] != `ResourceQuota "be" is invalid: spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort"}: unsupported scope applied to resource` {
		t.Errorf("best-effort cpu quota: %v", sc["message"])
	}
}

// TestBindingsAndComponentStatuses checks the two resources without
// stored objects: a Binding sets a pod's node, component statuses report
// the storage.
func TestBindingsAndComponentStatuses(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", podsPath, podJSON("to-bind", "")).mustCode(t, 201)
	b := `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"to-bind"},"target":{"kind":"Node","name":"node-x"}}`
	st := e.do("POST", "/api/v1/namespaces/default/bindings", b).mustCode(t, 201).obj(t)
	if st["kind"] != "Status" || st["status"] != "Success" {
		t.Errorf("binding answer %v", st)
	}
	if p := e.do("GET", podsPath+"/to-bind", nil).mustCode(t, 200).obj(t); path(p, "spec.nodeName") != "node-x" {
		t.Errorf("bound pod node %v", path(p, "spec.nodeName"))
	}
	missing := e.do("POST", "/api/v1/namespaces/default/bindings", strings.Replace(b, "to-bind", "nope", 1)).mustCode(t, 404).obj(t)
	if missing["message"] != `pods "nope" not found` {
		t.Errorf("binding a missing pod: %v", missing["message"])
	}
	e.do("GET", "/api/v1/namespaces/default/bindings", nil).mustCode(t, 405)

	lr := e.do("GET", "/api/v1/componentstatuses", nil).mustCode(t, 200)
	if w := lr.header.Get("Warning"); w != `299 - "v1 ComponentStatus is deprecated in v1.19+"` {
		t.Errorf("deprecation warning %q", w)
	}
	l := lr.obj(t)
	if l["kind"] != "ComponentStatusList" || len(l["items"].([]any)) != 1 {
		t.Fatalf("component statuses %v", l)
	}
	cs := e.do("GET", "/api/v1/componentstatuses/storage", nil).mustCode(t, 200).obj(t)
	want := []any{map[string]any{"type": "Healthy", "status": "True", "message": "ok"}}
	if cs["kind"] != "ComponentStatus" || !reflect.DeepEqual(cs["conditions"], want) {
		t.Errorf("storage status %v", cs)
	}
	e.do("GET", "/api/v1/componentstatuses/etcd-0", nil).mustCode(t, 404)
	for sel, n := range map[string]int{"fieldSelector=metadata.name%3Dstorage": 1, "fieldSelector=metadata.name%3Detcd-0": 0, "labelSelector=a%3Db": 0} {
		if l := e.do("GET", "/api/v1/componentstatuses?"+sel, nil).mustCode(t, 200).obj(t); len(l["items"].([]any)) != n {
			t.Errorf("component statuses ?%s: %d items, want %d", sel, len(l["items"].([]any)), n)
		}
	}
	e.do("GET", "/api/v1/componentstatuses?fieldSelector=status%3Dx", nil).mustCode(t, 400).
		mustMessage(t, `"status" is not a known field selector: only "metadata.name", "metadata.namespace"`)
	e.do("DELETE", "/api/v1/componentstatuses/storage", nil).mustCode(t, 405)
}

// skippedCoreResources are the core subresources, as "resource/sub", that
// the discovery comparisons leave out because platd does not serve them
// yet (notYetServed).
func skippedCoreResources(b config.Brand) []string {
	_, subs := notYetServed(b)
	var out []string
	for r, sub := range subs {
		out = append(out, r+"/"+sub)
	}
	return out
}

// TestCoreDiscoveryGolden compares the core group's legacy and aggregated
// discovery with a v1.32 server's: names, kinds, verbs, short names,
// categories and subresources with their response kinds.
func TestCoreDiscoveryGolden(t *testing.T) {
	t.Parallel()
	e := start(t, withBrand("kubernetes"))
	b, _ := config.LookupBrand("kubernetes")
	skipped := skippedCoreResources(b)

	var legacyWant []map[string]any
	readJSON(t, "testdata/discovery-core-v1-legacy.json", &legacyWant)
	legacy := e.do("GET", "/api/v1", nil).mustCode(t, 200).obj(t)
	served := map[string]any{}
	for _, r := range legacy["resources"].([]any) {
		served[path(r.(map[string]any), "name").(string)] = r
	}
	for _, want := range legacyWant {
		name := want["name"].(string)
		if slices.Contains(skipped, name) {
			continue
		}
		if !reflect.DeepEqual(served[name], any(want)) {
			g, _ := json.Marshal(served[name])
			w, _ := json.Marshal(want)
			t.Errorf("/api/v1 %s:\n got  %s\n want %s", name, g, w)
		}
		delete(served, name)
	}
	for name := range served {
		t.Errorf("/api/v1 serves %s, which upstream does not", name)
	}

	var aggWant []map[string]any
	readJSON(t, "testdata/discovery-core-v1-aggregated.json", &aggWant)
	accept := "application/json;g=" + b.DiscoveryGroup() + ";v=v2;as=APIGroupDiscoveryList"
	agg := e.do("GET", "/api", nil, "Accept", accept).mustCode(t, 200).obj(t)
	resources := path(agg["items"].([]any)[0].(map[string]any)["versions"].([]any)[0].(map[string]any), "resources").([]any)
	aggServed := map[string]any{}
	for _, r := range resources {
		aggServed[path(r.(map[string]any), "resource").(string)] = r
	}
	for _, want := range aggWant {
		name := want["resource"].(string)
		if slices.Contains(skipped, name) {
			continue
		}
		// Subresources not served yet are left out of the comparison.
		if subs, ok := want["subresources"].([]any); ok {
			var kept []any
			for _, s := range subs {
				if !slices.Contains(skipped, name+"/"+s.(map[string]any)["subresource"].(string)) {
					kept = append(kept, s)
				}
			}
			if len(kept) == 0 {
				delete(want, "subresources")
			} else {
				want["subresources"] = kept
			}
		}
		if !reflect.DeepEqual(aggServed[name], any(want)) {
			g, _ := json.Marshal(aggServed[name])
			w, _ := json.Marshal(want)
			t.Errorf("aggregated %s:\n got  %s\n want %s", name, g, w)
		}
		delete(aggServed, name)
	}
	for name := range aggServed {
		t.Errorf("aggregated discovery serves %s, which upstream does not", name)
	}
}

func readJSON(t *testing.T, file string, v any) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// TestOwnFieldLabels checks the refusal of kinds upstream converts field
// labels for itself: "field label not supported", and no namespace on
// cluster-scoped kinds.
func TestOwnFieldLabels(t *testing.T) {
	t.Parallel()
	e := start(t)
	for _, c := range []struct{ path, field string }{
		{podsPath, "spec.host2"},
		{"/api/v1/namespaces/default/secrets", "data"},
		{"/api/v1/namespaces/default/events", "message"},
		{"/api/v1/namespaces", "metadata.namespace"},
		{"/api/v1/namespaces", "spec.finalizers"},
	} {
		bad := e.do("GET", c.path+"?fieldSelector="+url.QueryEscape(c.field+"=x"), nil).mustCode(t, 400).obj(t)
		if bad["message"] != "field label not supported: "+c.field {
			t.Errorf("%s ?%s: %v", c.path, c.field, bad["message"])
		}
	}
	for _, p := range []string{podsPath + "?fieldSelector=metadata.namespace%3Ddefault", "/api/v1/namespaces?fieldSelector=status.phase%3DActive"} {
		e.do("GET", p, nil).mustCode(t, 200)
	}
	// Kinds without their own conversion keep the generic message.
	cmBad := e.do("GET", "/api/v1/namespaces/default/configmaps?fieldSelector=data%3Dx", nil).mustCode(t, 400).obj(t)
	if cmBad["message"] != `"data" is not a known field selector: only "metadata.name", "metadata.namespace"` {
		t.Errorf("configmaps: %v", cmBad["message"])
	}
}
