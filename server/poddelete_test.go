package server_test

import (
	"testing"
	"time"
)

// Pod deletions as upstream's graceful deletion writes them: one that
// needs no wait is first written with its deletion marks, then removed,
// so watchers see both; a shorter grace period asked later moves the
// deletion earlier by the time taken off.
func TestPodDeletionMarks(t *testing.T) {
	t.Parallel()
	e := start(t)
	const ns = "/api/v1/namespaces/pod-deletion"
	e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"pod-deletion"}}`).mustCode(t, 201)
	pods := ns + "/pods"
	created := e.do("POST", pods, podJSON("unbound", "")).mustCode(t, 201).obj(t)
	w := e.watch(pods + "?watch=1&resourceVersion=" + path(created, "metadata.resourceVersion").(string))
	out := e.do("DELETE", pods+"/unbound", nil).mustCode(t, 200).obj(t)
	marked := func(what string, obj map[string]any) {
		t.Helper()
		if path(obj, "metadata.deletionTimestamp") == nil || path(obj, "metadata.deletionGracePeriodSeconds") != float64(0) {
			t.Errorf("%s: metadata %v, want the deletion marks", what, obj["metadata"])
		}
	}
	marked("answer", out)
	marked("MODIFIED", w.expect("MODIFIED", "unbound").Object)
	marked("DELETED", w.expect("DELETED", "unbound").Object)
	e.do("GET", pods+"/unbound", nil).mustCode(t, 404)

	e.do("POST", pods, podJSON("bound", "node-1")).mustCode(t, 201)
	first := e.do("DELETE", pods+"/bound", `{"gracePeriodSeconds":300}`).mustCode(t, 200).obj(t)
	second := e.do("DELETE", pods+"/bound", `{"gracePeriodSeconds":100}`).mustCode(t, 200).obj(t)
	t1, err1 := time.Parse(time.RFC3339, path(first, "metadata.deletionTimestamp").(string))
	t2, err2 := time.Parse(time.RFC3339, path(second, "metadata.deletionTimestamp").(string))
	if err1 != nil || err2 != nil || t1.Sub(t2) != 200*time.Second || path(second, "metadata.deletionGracePeriodSeconds") != float64(100) {
		t.Errorf("shortened deletion: %v then %v (%v %v)", first["metadata"], second["metadata"], err1, err2)
	}
	// A longer one changes nothing.
	third := e.do("DELETE", pods+"/bound", `{"gracePeriodSeconds":200}`).mustCode(t, 200).obj(t)
	if path(third, "metadata.deletionTimestamp") != path(second, "metadata.deletionTimestamp") || path(third, "metadata.deletionGracePeriodSeconds") != float64(100) {
		t.Errorf("longer grace period changed the deletion: %v", third["metadata"])
	}
}
