package server_test

import (
	"strings"
	"testing"
)

// podJSON is a pod with one container, optionally bound to a node.
func podJSON(name, node string) string {
	nodeName := ""
	if node != "" {
		nodeName = `,"nodeName":"` + node + `"`
	}
	return `{"metadata":{"name":"` + name + `","labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80}]}]` + nodeName + `}}`
}

const podsPath = "/api/v1/namespaces/default/pods"

// TestPodDefaultsAndTable checks what a created pod holds and how kubectl
// prints it.
func TestPodDefaultsAndTable(t *testing.T) {
	t.Parallel()
	e := start(t)
	p := e.do("POST", podsPath, podJSON("web-1", "")).mustCode(t, 201).obj(t)
	for field, want := range map[string]any{
		"spec.restartPolicy":                 "Always",
		"spec.dnsPolicy":                     "ClusterFirst",
		"spec.schedulerName":                 "default-scheduler",
		"spec.terminationGracePeriodSeconds": float64(30),
		"spec.serviceAccountName":            "default",
		"spec.enableServiceLinks":            true,
		"spec.priority":                      float64(0),
		"status.phase":                       "Pending",
		"status.qosClass":                    "BestEffort",
	} {
		if got := path(p, field); got != want {
			t.Errorf("%s = %v, want %v", field, got, want)
		}
	}
	c := p["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	if c["imagePullPolicy"] != "IfNotPresent" || c["terminationMessagePath"] != "/dev/termination-log" ||
		c["terminationMessagePolicy"] != "File" || path(c["ports"].([]any)[0].(map[string]any), "protocol") != "TCP" {
		t.Errorf("container defaults %v", c)
	}
	if tol, _ := path(p, "spec.tolerations").([]any); len(tol) != 2 {
		t.Errorf("default tolerations %v", path(p, "spec.tolerations"))
	}
	tab := e.do("GET", podsPath, nil, "Accept", metaAccept(platBrand, "application/json", "Table", "v1")).mustCode(t, 200).obj(t)
	var names []string
	for _, c := range tab["columnDefinitions"].([]any) {
		names = append(names, c.(map[string]any)["name"].(string))
	}
	if got := strings.Join(names, ","); got != "Name,Ready,Status,Restarts,Age,IP,Node,Nominated Node,Readiness Gates" {
		t.Errorf("pod columns %s", got)
	}
	cells := tab["rows"].([]any)[0].(map[string]any)["cells"].([]any)
	if cells[0] != "web-1" || cells[1] != "0/1" || cells[2] != "Pending" || cells[3] != "0" || cells[5] != "<none>" || cells[6] != "<none>" {
		t.Errorf("pod row %v", cells)
	}
	// Validation with upstream's texts.
	bad := e.do("POST", podsPath, `{"metadata":{"name":"bad"},"spec":{"containers":[{"name":"c"}]}}`).mustCode(t, 422).obj(t)
	if bad["message"] != `Pod "bad" is invalid: spec.containers[0].image: Required value` {
		t.Errorf("invalid pod: %v", bad["message"])
	}
	// Only a few fields of a pod may change.
	p["spec"].(map[string]any)["restartPolicy"] = "Never"
	up := e.do("PUT", podsPath+"/web-1", p).mustCode(t, 422).obj(t)
	if !strings.Contains(up["message"].(string), "pod updates may not change fields other than") {
		t.Errorf("forbidden update: %v", up["message"])
	}
}

// TestPodSubresources checks binding, eviction, ephemeral containers, the
// node-only subresources and graceful deletion.
func TestPodSubresources(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", podsPath, podJSON("unbound", "")).mustCode(t, 201)
	bind := `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"unbound","annotations":{"scheduled-by":"test"}},"target":{"kind":"Node","name":"node-a"}}`
	st := e.do("POST", podsPath+"/unbound/binding", bind).mustCode(t, 201).obj(t)
	if st["kind"] != "Status" || st["status"] != "Success" || st["code"] != float64(201) {
		t.Errorf("binding answer %v", st)
	}
	got := e.do("GET", podsPath+"/unbound", nil).mustCode(t, 200).obj(t)
	if path(got, "spec.nodeName") != "node-a" || path(got, "metadata.annotations.scheduled-by") != "test" {
		t.Errorf("bound pod %v %v", got["spec"], got["metadata"])
	}
	again := e.do("POST", podsPath+"/unbound/binding", bind).mustCode(t, 409).obj(t)
	if again["message"] != `Operation cannot be fulfilled on pods/binding "unbound": pod unbound is already assigned to node "node-a"` {
		t.Errorf("second binding: %v", again["message"])
	}
	e.do("POST", podsPath, podJSON("viares", "")).mustCode(t, 201)

	// Node-only subresources say so, after checking the pod exists.
	logs := e.do("GET", podsPath+"/unbound/log", nil).mustCode(t, 503).obj(t)
	if !strings.Contains(logs["message"].(string), "platd runs no nodes") {
		t.Errorf("log answer %v", logs["message"])
	}
	e.do("GET", podsPath+"/missing/log", nil).mustCode(t, 404)
	e.do("POST", podsPath+"/unbound/exec?command=ls", nil).mustCode(t, 503)

	// Ephemeral containers are added through their subresource only.
	eph := e.do("GET", podsPath+"/unbound/ephemeralcontainers", nil).mustCode(t, 200).obj(t)
	eph["spec"].(map[string]any)["ephemeralContainers"] = []any{map[string]any{"name": "debug", "image": "busybox"}}
	eph["spec"].(map[string]any)["restartPolicy"] = "Never" // ignored: not the subresource's part
	after := e.do("PUT", podsPath+"/unbound/ephemeralcontainers", eph).mustCode(t, 200).obj(t)
	if path(after, "spec.restartPolicy") != "Always" || len(path(after, "spec.ephemeralContainers").([]any)) != 1 {
		t.Errorf("ephemeral containers write: %v", after["spec"])
	}
	after["spec"].(map[string]any)["ephemeralContainers"] = []any{}
	rm := e.do("PUT", podsPath+"/unbound/ephemeralcontainers", after).mustCode(t, 422).obj(t)
	if !strings.Contains(rm["message"].(string), `existing ephemeral containers \"debug\" may not be removed`) && !strings.Contains(rm["message"].(string), `existing ephemeral containers "debug" may not be removed`) {
		t.Errorf("removing an ephemeral container: %v", rm["message"])
	}

	// A bound pod's deletion waits for its grace period; an unbound one
	// goes at once.
	marked := e.do("DELETE", podsPath+"/unbound", `{"gracePeriodSeconds":120}`).mustCode(t, 200).obj(t)
	if path(marked, "metadata.deletionGracePeriodSeconds") != float64(120) || path(marked, "metadata.deletionTimestamp") == nil {
		t.Errorf("graceful deletion marked %v", marked["metadata"])
	}
	e.do("GET", podsPath+"/unbound", nil).mustCode(t, 200)
	e.do("POST", podsPath, podJSON("lonely", "")).mustCode(t, 201)
	e.do("DELETE", podsPath+"/lonely", nil).mustCode(t, 200)
	e.do("GET", podsPath+"/lonely", nil).mustCode(t, 404)
	// A zero grace period deletes a bound pod at once.
	e.do("DELETE", podsPath+"/unbound?gracePeriodSeconds=0", nil).mustCode(t, 200)
	e.do("GET", podsPath+"/unbound", nil).mustCode(t, 404)

	// Eviction deletes the pod, unless its own delete options ask for a
	// dry run (kubectl drain --dry-run=server).
	e.do("POST", podsPath, podJSON("evictee", "")).mustCode(t, 201)
	e.do("POST", podsPath+"/evictee/eviction", `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"evictee"},"deleteOptions":{"dryRun":["All"]}}`).mustCode(t, 201)
	e.do("GET", podsPath+"/evictee", nil).mustCode(t, 200)
	e.do("POST", podsPath+"/evictee/eviction", `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"evictee"},"deleteOptions":{"dryRun":["Some"]}}`).mustCode(t, 422)
	e.do("GET", podsPath+"/evictee", nil).mustCode(t, 200)
	ev := e.do("POST", podsPath+"/evictee/eviction", `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"evictee"}}`).mustCode(t, 201).obj(t)
	if ev["status"] != "Success" {
		t.Errorf("eviction answer %v", ev)
	}
	e.do("GET", podsPath+"/evictee", nil).mustCode(t, 404)
	e.do("POST", podsPath+"/viares/eviction", `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"other"}}`).mustCode(t, 400)
}

// TestPodFieldSelectors checks the pod-specific selectable fields.
func TestPodFieldSelectors(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", podsPath, podJSON("on-a", "node-a")).mustCode(t, 201)
	e.do("POST", podsPath, podJSON("on-b", "node-b")).mustCode(t, 201)
	e.do("POST", podsPath, podJSON("nowhere", "")).mustCode(t, 201)
	for sel, want := range map[string]string{
		"spec.nodeName=node-a":                    "on-a",
		"spec.nodeName=":                          "nowhere",
		"spec.nodeName!=,spec.nodeName!=node-a":   "on-b",
		"status.phase=Pending,metadata.name=on-b": "on-b",
		"spec.restartPolicy=Never":                "",
	} {
		got := strings.Join(names(t, e.do("GET", podsPath+"?fieldSelector="+strings.ReplaceAll(sel, "=", "%3D"), nil).mustCode(t, 200).obj(t)), ",")
		if got != want {
			t.Errorf("fieldSelector %s: %q, want %q", sel, got, want)
		}
	}
	e.do("GET", podsPath+"?fieldSelector=spec.image%3Dx", nil).mustCode(t, 400)
}
