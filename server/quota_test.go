package server_test

import (
	"fmt"
	"net/http"
	"testing"
)

const rqPath = "/api/v1/namespaces/default/resourcequotas"

// quotaJSON is a ResourceQuota with the hard limits given.
func quotaJSON(name string, hard map[string]string) map[string]any {
	h := map[string]any{}
	for k, v := range hard {
		h[k] = v
	}
	return map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{"hard": h}}
}

// waitQuotaUsed waits until the quota's status.used holds want.
func waitQuotaUsed(t *testing.T, e *env, name string, want map[string]string) map[string]any {
	t.Helper()
	var q map[string]any
	eventually(t, fmt.Sprintf("quota %s used %v", name, want), func() bool {
		r := e.do("GET", rqPath+"/"+name, nil)
		if r.code != http.StatusOK {
			return false
		}
		q = r.obj(t)
		used, _ := path(q, "status.used").(map[string]any)
		if len(used) != len(want) {
			return false
		}
		for k, v := range want {
			if used[k] != v {
				return false
			}
		}
		return true
	})
	return q
}

// cpuPod is a pod whose one container requests cpu.
func cpuPod(name, cpu string) string {
	return `{"metadata":{"name":"` + name + `"},"spec":{"containers":[{"name":"web","image":"nginx:1.27","resources":{"requests":{"cpu":"` + cpu + `"}}}]}}`
}

// TestResourceQuotaStatus: the controller fills a new quota's status from
// the objects in its namespace, and counts again when an object goes or
// stops using what it was charged (a pod that finished).
func TestResourceQuotaStatus(t *testing.T) {
	t.Parallel()
	e := start(t)
	for i := range 2 {
		e.do("POST", "/api/v1/namespaces/default/configmaps", cm(fmt.Sprintf("c%d", i), nil, nil)).mustCode(t, http.StatusCreated)
	}
	e.do("POST", podsPath, cpuPod("p0", "250m")).mustCode(t, http.StatusCreated)
	e.do("POST", podsPath, cpuPod("p1", "500m")).mustCode(t, http.StatusCreated)
	e.do("POST", rqPath, quotaJSON("q", map[string]string{"pods": "10", "count/pods": "10", "requests.cpu": "4", "count/configmaps": "5", "configmaps": "5"})).mustCode(t, http.StatusCreated)
	q := waitQuotaUsed(t, e, "q", map[string]string{"pods": "2", "count/pods": "2", "requests.cpu": "750m", "count/configmaps": "2", "configmaps": "2"})
	hard, _ := path(q, "status.hard").(map[string]any)
	if len(hard) != 5 || hard["pods"] != "10" || hard["requests.cpu"] != "4" || hard["count/configmaps"] != "5" {
		t.Errorf("status.hard %v, want spec.hard", hard)
	}

	e.do("DELETE", "/api/v1/namespaces/default/configmaps/c0", nil).mustCode(t, http.StatusOK)
	waitQuotaUsed(t, e, "q", map[string]string{"pods": "2", "count/pods": "2", "requests.cpu": "750m", "count/configmaps": "1", "configmaps": "1"})
	// A finished pod is still an object, but no longer uses its requests.
	e.do("PATCH", podsPath+"/p1/status", `{"status":{"phase":"Succeeded"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
	waitQuotaUsed(t, e, "q", map[string]string{"pods": "1", "count/pods": "2", "requests.cpu": "250m", "count/configmaps": "1", "configmaps": "1"})

	// A changed spec.hard is mirrored.
	e.do("PATCH", rqPath+"/q", `{"spec":{"hard":{"pods":"3","count/pods":null,"requests.cpu":null,"count/configmaps":null,"configmaps":null}}}`, "Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
	q = waitQuotaUsed(t, e, "q", map[string]string{"pods": "1"})
	if hard, _ := path(q, "status.hard").(map[string]any); len(hard) != 1 || hard["pods"] != "3" {
		t.Errorf("status.hard after the spec changed: %v", hard)
	}
}
