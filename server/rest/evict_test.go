package rest

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"testing"
)

// evictEnv is a handler with a namespace per case, and the calls the
// eviction tests make.
type evictEnv struct {
	t   *testing.T
	srv *httptest.Server
}

// must sends a JSON request and returns the decoded answer, failing the
// test unless it has code want.
func (e evictEnv) must(method, path, body string, want int) map[string]any {
	e.t.Helper()
	code, _, b := call(e.t, e.srv, method, path, "application/json", "", body)
	if code != want {
		e.t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	return decodeBody(e.t, b)
}

// pod creates a pod labelled app=web in ns, bound to a node (so that its
// deletion is graceful and leaves it to be read), with status.
func (e evictEnv) pod(ns, name, status string) {
	e.t.Helper()
	pods := "/api/v1/namespaces/" + ns + "/pods"
	e.must("POST", pods, `{"metadata":{"name":"`+name+`","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"x"}]}}`, 201)
	e.must("POST", pods+"/"+name+"/binding", `{"metadata":{"name":"`+name+`"},"target":{"name":"node-a"}}`, 201)
	if status != "" {
		p := e.must("GET", pods+"/"+name, "", 200)
		var st map[string]any
		if err := json.Unmarshal([]byte(status), &st); err != nil {
			e.t.Fatal(err)
		}
		p["status"] = st
		raw, _ := json.Marshal(p)
		e.must("PUT", pods+"/"+name+"/status", string(raw), 200)
	}
}

// budget creates a budget selecting app=web in ns, with status when set.
func (e evictEnv) budget(ns, name, status string) {
	e.t.Helper()
	budgets := "/apis/policy/v1/namespaces/" + ns + "/poddisruptionbudgets"
	b := e.must("POST", budgets, `{"metadata":{"name":"`+name+`"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}}}`, 201)
	if status != "" {
		var st map[string]any
		if err := json.Unmarshal([]byte(status), &st); err != nil {
			e.t.Fatal(err)
		}
		b["status"] = st
		raw, _ := json.Marshal(b)
		e.must("PUT", budgets+"/"+name+"/status", string(raw), 200)
	}
}

// condition returns the pod's condition of type typ, nil when none.
func condition(pod map[string]any, typ string) map[string]any {
	for _, c := range asList(getPath(pod, "status.conditions")) {
		if m, _ := c.(map[string]any); m["type"] == typ {
			return m
		}
	}
	return nil
}

const (
	runningReady   = `{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}`
	runningUnready = `{"phase":"Running","conditions":[{"type":"Ready","status":"False"}]}`
)

// TestEviction: an eviction takes a disruption from the pod's budget, is
// refused as upstream refuses it when the budget allows none, is not
// settled, or is one of several, skips the budget for pods that are not
// running or are unready within a healthy budget, and marks the pod it
// deletes with the DisruptionTarget condition.
func TestEviction(t *testing.T) {
	t.Parallel()
	_, srv, _ := newTestHandler(t, Config{})
	marked := map[string]any{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}
	for i, c := range []struct {
		name string
		// podStatus is the pod's status ("": as created, Pending);
		// budgets the statuses of the budgets that select it.
		podStatus string
		budgets   []string
		dryRun    bool
		code      int
		// message, causes and retry are the refusal's.
		message string
		causes  []any
		retry   float64
		// evicted says the pod is marked and deleted (gone: at once,
		// nothing left to read); left the budget's disruptionsAllowed
		// after (-1: not checked).
		evicted, gone bool
		left          float64
	}{
		{name: "pending without budget", code: 201, evicted: true, left: -1},
		{name: "dry run", podStatus: runningReady, dryRun: true, code: 201, left: -1},
		{name: "running without budget", podStatus: runningReady, code: 201, evicted: true, left: -1},
		{name: "budget allows one", podStatus: runningReady, code: 201, evicted: true, left: 0,
			budgets: []string{`{"observedGeneration":1,"disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":1,"expectedPods":2}`}},
		{name: "budget allows none", podStatus: runningReady, code: 429, left: 0,
			budgets: []string{`{"observedGeneration":1,"disruptionsAllowed":0,"currentHealthy":2,"desiredHealthy":2,"expectedPods":2}`},
			message: "Cannot evict pod as it would violate the pod's disruption budget.",
			causes:  []any{map[string]any{"reason": "DisruptionBudget", "message": "The disruption budget b0 needs 2 healthy pods and has 2 currently"}}},
		{name: "budget not settled", podStatus: runningReady, code: 429, left: -1, budgets: []string{""},
			message: "Cannot evict pod as it would violate the pod's disruption budget.", retry: 10,
			causes: []any{map[string]any{"reason": "DisruptionBudget", "message": "The disruption budget b0 is still being processed by the server."}}},
		{name: "two budgets", podStatus: runningReady, code: 500, left: -1, budgets: []string{"", ""},
			message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."},
		{name: "unready within a healthy budget", podStatus: runningUnready, code: 201, evicted: true, left: 0,
			budgets: []string{`{"observedGeneration":1,"disruptionsAllowed":0,"currentHealthy":2,"desiredHealthy":2,"expectedPods":3}`}},
		{name: "pending within a budget allowing none", code: 201, evicted: true, left: 0,
			budgets: []string{`{"observedGeneration":1,"disruptionsAllowed":0,"currentHealthy":2,"desiredHealthy":2,"expectedPods":2}`}},
		{name: "succeeded within a budget allowing none", podStatus: `{"phase":"Succeeded"}`, code: 201, evicted: true, gone: true, left: 0,
			budgets: []string{`{"observedGeneration":1,"disruptionsAllowed":0,"currentHealthy":2,"desiredHealthy":2,"expectedPods":2}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := evictEnv{t: t, srv: srv}
			ns := fmt.Sprintf("ev%d", i)
			e.must("POST", "/api/v1/namespaces", `{"metadata":{"name":"`+ns+`"}}`, 201)
			defaultAccount(t, srv, ns)
			e.pod(ns, "p", c.podStatus)
			for i, st := range c.budgets {
				e.budget(ns, "b"+string(rune('0'+i)), st)
			}
			body := `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"}}`
			if c.dryRun {
				body = `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"},"deleteOptions":{"dryRun":["All"]}}`
			}
			podURL := "/api/v1/namespaces/" + ns + "/pods/p"
			code, _, b := call(t, srv, "POST", podURL+"/eviction", "application/json", "", body)
			got := decodeBody(t, b)
			if code != c.code {
				t.Fatalf("eviction: %d %s, want %d", code, b, c.code)
			}
			if c.code != 201 {
				details, _ := got["details"].(map[string]any)
				causes, _ := details["causes"].([]any)
				if got["message"] != c.message || !reflect.DeepEqual(causes, c.causes) || (details["retryAfterSeconds"] != nil || c.retry != 0) && details["retryAfterSeconds"] != c.retry {
					t.Errorf("refusal %s", b)
				}
			}
			if c.gone {
				e.must("GET", podURL, "", 404)
				return
			}
			pod := e.must("GET", podURL, "", 200)
			if deleting := getPath(pod, "metadata.deletionTimestamp") != nil; deleting != c.evicted {
				t.Errorf("pod deleting %v, want %v", deleting, c.evicted)
			}
			mark := condition(pod, "DisruptionTarget")
			if mark != nil {
				if mark["lastTransitionTime"] == nil {
					t.Errorf("mark has no transition time: %v", mark)
				}
				mark = map[string]any{"type": mark["type"], "status": mark["status"], "reason": mark["reason"], "message": mark["message"]}
			}
			if c.evicted && !reflect.DeepEqual(mark, marked) || !c.evicted && mark != nil {
				t.Errorf("DisruptionTarget %v, evicted %v", condition(pod, "DisruptionTarget"), c.evicted)
			}
			if c.left >= 0 {
				b0 := e.must("GET", "/apis/policy/v1/namespaces/"+ns+"/poddisruptionbudgets/b0", "", 200)
				if left := getPath(b0, "status.disruptionsAllowed"); left != c.left {
					t.Errorf("budget allows %v after, want %v", left, c.left)
				}
			}
		})
	}
}

// TestEvictionTakesDisruption: the disruption an eviction takes is
// recorded in the budget's status as upstream's eviction writes it: the
// pod among the disrupted ones, and the DisruptionAllowed condition False
// once none is left.
func TestEvictionTakesDisruption(t *testing.T) {
	t.Parallel()
	_, srv, _ := newTestHandler(t, Config{})
	e := evictEnv{t: t, srv: srv}
	e.pod("default", "p", runningReady)
	e.budget("default", "b", `{"observedGeneration":1,"disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":1,"expectedPods":2}`)
	e.must("POST", podsURL+"/p/eviction", `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"}}`, 201)
	b := e.must("GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/b", "", 200)
	status := b["status"].(map[string]any)
	if when, _ := getPath(status, "disruptedPods.p").(string); when == "" || status["disruptionsAllowed"] != float64(0) {
		t.Errorf("budget status %v", status)
	}
	conds := asList(status["conditions"])
	if len(conds) != 1 {
		t.Fatalf("conditions %v", conds)
	}
	c := conds[0].(map[string]any)
	if c["lastTransitionTime"] == nil {
		t.Errorf("condition without transition time %v", c)
	}
	delete(c, "lastTransitionTime")
	if want := map[string]any{"type": "DisruptionAllowed", "status": "False", "observedGeneration": float64(1), "reason": "InsufficientPods", "message": ""}; !reflect.DeepEqual(c, want) {
		t.Errorf("condition %v, want %v", c, want)
	}
	// The next eviction of a pod it selects is refused.
	e.pod("default", "q", runningReady)
	e.must("POST", podsURL+"/q/eviction", `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"q"}}`, 429)
}

// TestEvictionPreconditions: the delete options' preconditions hold for
// the mark as for the deletion: a stale one refuses the eviction before
// the pod is marked; the pod's own resourceVersion evicts it, although
// marking it moves its version on.
func TestEvictionPreconditions(t *testing.T) {
	t.Parallel()
	_, srv, _ := newTestHandler(t, Config{})
	e := evictEnv{t: t, srv: srv}
	const other = "00000000-0000-0000-0000-000000000000"
	for i, c := range []struct {
		preconditions func(uid, rv string) string
		code          int
		message       func(uid, rv string) string
	}{
		{func(uid, rv string) string { return `{"uid":"` + other + `"}` }, 409, func(uid, rv string) string {
			return `Operation cannot be fulfilled on Pod "p": the UID in the precondition (` + other + `) does not match the UID in record (` + uid + `). The object might have been deleted and then recreated`
		}},
		{func(uid, rv string) string { return `{"resourceVersion":"1"}` }, 409, func(uid, rv string) string {
			return `Operation cannot be fulfilled on Pod "p": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (` + rv + `). The object might have been modified`
		}},
		{func(uid, rv string) string { return `{"uid":"` + uid + `","resourceVersion":"` + rv + `"}` }, 201, nil},
	} {
		ns := fmt.Sprintf("pre%d", i)
		e.must("POST", "/api/v1/namespaces", `{"metadata":{"name":"`+ns+`"}}`, 201)
		defaultAccount(t, srv, ns)
		e.pod(ns, "p", runningReady)
		podURL := "/api/v1/namespaces/" + ns + "/pods/p"
		pod := e.must("GET", podURL, "", 200)
		uid, rv := getPath(pod, "metadata.uid").(string), getPath(pod, "metadata.resourceVersion").(string)
		body := `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"},"deleteOptions":{"preconditions":` + c.preconditions(uid, rv) + `}}`
		got := e.must("POST", podURL+"/eviction", body, c.code)
		after := e.must("GET", podURL, "", 200)
		if c.message != nil {
			if got["message"] != c.message(uid, rv) || condition(after, "DisruptionTarget") != nil {
				t.Errorf("case %d: %v; pod conditions %v", i, got["message"], getPath(after, "status.conditions"))
			}
			continue
		}
		if condition(after, "DisruptionTarget") == nil || getPath(after, "metadata.deletionTimestamp") == nil {
			t.Errorf("case %d: pod not evicted: %v", i, after)
		}
	}
}
