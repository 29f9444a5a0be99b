package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
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

// TestResourceQuotaStatusAndEnforcement: the controller fills a new
// quota's status; a create beyond it is refused with upstream's words;
// deleting an object frees its usage.
func TestResourceQuotaStatusAndEnforcement(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", rqPath, quotaJSON("q", map[string]string{"pods": "2", "requests.cpu": "1", "count/configmaps": "3"})).mustCode(t, http.StatusCreated)
	q := waitQuotaUsed(t, e, "q", map[string]string{"pods": "0", "requests.cpu": "0", "count/configmaps": "0"})
	hard, _ := path(q, "status.hard").(map[string]any)
	if hard["pods"] != "2" || hard["requests.cpu"] != "1" || hard["count/configmaps"] != "3" || len(hard) != 3 {
		t.Errorf("status.hard %v, want spec.hard", hard)
	}

	for i := range 3 {
		e.do("POST", "/api/v1/namespaces/default/configmaps", cm(fmt.Sprintf("c%d", i), nil, nil)).mustCode(t, http.StatusCreated)
		// The charge is written with the object: it is there as the
		// create answers, and a create that fails charges nothing. (A
		// full quota refuses before the name is found taken.)
		dup := http.StatusConflict
		if i == 2 {
			dup = http.StatusForbidden
		}
		e.do("POST", "/api/v1/namespaces/default/configmaps", cm(fmt.Sprintf("c%d", i), nil, nil)).mustCode(t, dup)
		q := e.do("GET", rqPath+"/q", nil).mustCode(t, http.StatusOK).obj(t)
		if got, want := path(q, "status.used.count/configmaps"), fmt.Sprint(i+1); got != want {
			t.Errorf("count/configmaps used %v after %d creates, want %s", got, i+1, want)
		}
	}
	// The charges are the server's status writes, owned as upstream's.
	var charged map[string]any
	for _, m := range path(e.do("GET", rqPath+"/q", nil).mustCode(t, http.StatusOK).obj(t), "metadata.managedFields").([]any) {
		if m := m.(map[string]any); m["manager"] == e.opts.Brand.FieldManager {
			charged = m
		}
	}
	if charged["operation"] != "Update" || charged["subresource"] != "status" || charged["apiVersion"] != "v1" ||
		path(charged, "fieldsV1.f:status.f:used.f:count/configmaps") == nil {
		t.Errorf("the charges' managed fields entry: %v", charged)
	}
	r := e.do("POST", "/api/v1/namespaces/default/configmaps", cm("c3", nil, nil)).mustCode(t, http.StatusForbidden)
	r.mustMessage(t, `configmaps "c3" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=3, limited: count/configmaps=3`)
	if got := r.obj(t); got["reason"] != "Forbidden" || path(got, "details.kind") != "configmaps" || path(got, "details.name") != "c3" {
		t.Errorf("refusal %v", got)
	}
	waitQuotaUsed(t, e, "q", map[string]string{"pods": "0", "requests.cpu": "0", "count/configmaps": "3"})
	e.do("GET", "/api/v1/namespaces/default/configmaps/c3", nil).mustCode(t, http.StatusNotFound)

	// A pod must request cpu when its quota limits requests.cpu.
	e.do("POST", podsPath, podJSON("bare", "")).mustCode(t, http.StatusForbidden).
		mustMessage(t, `pods "bare" is forbidden: failed quota: q: must specify requests.cpu for: web`)
	e.do("POST", podsPath, cpuPod("p1", "600m")).mustCode(t, http.StatusCreated)
	e.do("POST", podsPath, cpuPod("p2", "600m")).mustCode(t, http.StatusForbidden).
		mustMessage(t, `pods "p2" is forbidden: exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1`)
	waitQuotaUsed(t, e, "q", map[string]string{"pods": "1", "requests.cpu": "600m", "count/configmaps": "3"})

	// Deleting frees the usage again.
	e.do("DELETE", "/api/v1/namespaces/default/configmaps/c0", nil).mustCode(t, http.StatusOK)
	e.do("DELETE", podsPath+"/p1?gracePeriodSeconds=0", nil).mustCode(t, http.StatusOK)
	waitQuotaUsed(t, e, "q", map[string]string{"pods": "0", "requests.cpu": "0", "count/configmaps": "2"})
	e.do("POST", "/api/v1/namespaces/default/configmaps", cm("c3", nil, nil)).mustCode(t, http.StatusCreated)
	e.do("POST", podsPath, cpuPod("p2", "600m")).mustCode(t, http.StatusCreated)
	waitQuotaUsed(t, e, "q", map[string]string{"pods": "1", "requests.cpu": "600m", "count/configmaps": "3"})
}

// cpuPod is a pod whose one container requests cpu.
func cpuPod(name, cpu string) string {
	return `{"metadata":{"name":"` + name + `"},"spec":{"containers":[{"name":"web","image":"nginx:1.27","resources":{"requests":{"cpu":"` + cpu + `"}}}]}}`
}

// TestResourceQuotaParallelCreates: creates racing for the last of a quota
// are charged one at a time: exactly as many succeed as it allows.
func TestResourceQuotaParallelCreates(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", rqPath, quotaJSON("q", map[string]string{"pods": "5"})).mustCode(t, http.StatusCreated)
	waitQuotaUsed(t, e, "q", map[string]string{"pods": "0"})
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch r := e.do("POST", podsPath, podJSON(fmt.Sprintf("p%d", i), "")); r.code {
			case http.StatusCreated:
				ok.Add(1)
			case http.StatusForbidden:
				refused.Add(1)
			default:
				t.Errorf("create: %d %s", r.code, r.body)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 5 || refused.Load() != 11 {
		t.Errorf("%d created, %d refused; want 5 and 11", ok.Load(), refused.Load())
	}
	items, _ := e.do("GET", podsPath, nil).mustCode(t, http.StatusOK).obj(t)["items"].([]any)
	if len(items) != 5 {
		t.Errorf("%d pods stored, want 5", len(items))
	}
	waitQuotaUsed(t, e, "q", map[string]string{"pods": "5"})
}

// TestResourceQuotaDryRun: a dry run is checked against the quota and
// charges nothing.
func TestResourceQuotaDryRun(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", rqPath, quotaJSON("q", map[string]string{"count/configmaps": "1"})).mustCode(t, http.StatusCreated)
	waitQuotaUsed(t, e, "q", map[string]string{"count/configmaps": "0"})
	e.do("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", cm("a", nil, nil)).mustCode(t, http.StatusCreated)
	q := e.do("GET", rqPath+"/q", nil).mustCode(t, http.StatusOK).obj(t)
	if used, _ := path(q, "status.used").(map[string]any); used["count/configmaps"] != "0" {
		t.Errorf("a dry run charged the quota: used %v", used)
	}
	e.do("POST", "/api/v1/namespaces/default/configmaps", cm("a", nil, nil)).mustCode(t, http.StatusCreated)
	e.do("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", cm("b", nil, nil)).mustCode(t, http.StatusForbidden).
		mustMessage(t, `configmaps "b" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1`)
}

// TestResourceQuotaCustomResourceCount: a quota counts a custom resource's
// objects by count/<resource>.<group>.
func TestResourceQuotaCustomResourceCount(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.do("POST", groupPath(platBrand.Group("apiextensions"), "v1", "", "customresourcedefinitions"), widgetCRD()).mustCode(t, http.StatusCreated)
	widgets := groupPath("example.com", "v1", "default", "widgets")
	widget := func(name string) map[string]any {
		return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": name}}
	}
	eventually(t, "widgets served", func() bool { return e.do("GET", widgets, nil).code == http.StatusOK })
	e.do("POST", widgets, widget("w0")).mustCode(t, http.StatusCreated)
	e.do("POST", rqPath, quotaJSON("q", map[string]string{"count/widgets.example.com": "2"})).mustCode(t, http.StatusCreated)
	waitQuotaUsed(t, e, "q", map[string]string{"count/widgets.example.com": "1"})
	e.do("POST", widgets, widget("w1")).mustCode(t, http.StatusCreated)
	e.do("POST", widgets, widget("w2")).mustCode(t, http.StatusForbidden).
		mustMessage(t, `widgets.example.com "w2" is forbidden: exceeded quota: q, requested: count/widgets.example.com=1, used: count/widgets.example.com=2, limited: count/widgets.example.com=2`)
	e.do("DELETE", widgets+"/w0", nil).mustCode(t, http.StatusOK)
	waitQuotaUsed(t, e, "q", map[string]string{"count/widgets.example.com": "1"})
	e.do("POST", widgets, widget("w2")).mustCode(t, http.StatusCreated)
}

// TestResourceQuotaServicesAndClaims: a service becoming a load balancer
// is charged on update; claims are charged their storage, per class too.
func TestResourceQuotaServicesAndClaims(t *testing.T) {
	t.Parallel()
	e := start(t)
	class := "gold.storageclass." + platBrand.Group("storage") + "/requests.storage"
	e.do("POST", rqPath, quotaJSON("q", map[string]string{"services.loadbalancers": "0", "services.nodeports": "1", "requests.storage": "10Gi", class: "1Gi"})).mustCode(t, http.StatusCreated)
	waitQuotaUsed(t, e, "q", map[string]string{"services.loadbalancers": "0", "services.nodeports": "0", "requests.storage": "0", class: "0"})

	svcs := "/api/v1/namespaces/default/services"
	e.do("POST", svcs, `{"metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}`).mustCode(t, http.StatusCreated)
	e.do("PATCH", svcs+"/s", `{"spec":{"type":"LoadBalancer"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, http.StatusForbidden).
		mustMessage(t, `services "s" is forbidden: exceeded quota: q, requested: services.loadbalancers=1, used: services.loadbalancers=0, limited: services.loadbalancers=0`)
	e.do("PATCH", svcs+"/s", `{"spec":{"type":"NodePort"}}`, "Content-Type", "application/merge-patch+json").mustCode(t, http.StatusOK)
	waitQuotaUsed(t, e, "q", map[string]string{"services.loadbalancers": "0", "services.nodeports": "1", "requests.storage": "0", class: "0"})

	claim := func(name, size string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"storageClassName":"gold","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"` + size + `"}}}}`
	}
	e.do("POST", claimsPath, claim("c0", "512Mi")).mustCode(t, http.StatusCreated)
	e.do("POST", claimsPath, claim("c1", "1Gi")).mustCode(t, http.StatusForbidden).
		mustMessage(t, `persistentvolumeclaims "c1" is forbidden: exceeded quota: q, requested: `+class+`=1Gi, used: `+class+`=512Mi, limited: `+class+`=1Gi`)
	waitQuotaUsed(t, e, "q", map[string]string{"services.loadbalancers": "0", "services.nodeports": "1", "requests.storage": "512Mi", class: "512Mi"})
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
