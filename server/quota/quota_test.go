package quota

import (
	"encoding/json"
	"maps"
	"testing"
	"time"

	"platd/config"
	"platd/server/registry"
)

var testBrand, _ = config.LookupBrand("kubernetes")

func obj(t *testing.T, s string) registry.Object {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func TestPodUsage(t *testing.T) {
	ev := Pods(testBrand)
	for _, tc := range []struct {
		name, pod string
		want      map[string]string
	}{{
		name: "init container",
		pod:  `{"spec":{"initContainers":[{"name":"i","resources":{"requests":{"cpu":"1m"},"limits":{"cpu":"2m"}}}],"containers":[{"name":"c"}]}}`,
		want: map[string]string{"count/pods": "1", "pods": "1", "cpu": "1m", "requests.cpu": "1m", "limits.cpu": "2m"},
	}, {
		name: "containers sum, init containers at most",
		pod: `{"spec":{"initContainers":[{"name":"i","resources":{"requests":{"memory":"1Gi"},"limits":{"memory":"2Gi"}}}],
			"containers":[{"name":"a","resources":{"requests":{"cpu":"250m","memory":"256Mi"},"limits":{"cpu":"500m","memory":"512Mi"}}},
			{"name":"b","resources":{"requests":{"cpu":"250m","memory":"256Mi"},"limits":{"cpu":"1","memory":"512Mi"}}}]}}`,
		want: map[string]string{"count/pods": "1", "pods": "1", "cpu": "500m", "requests.cpu": "500m", "limits.cpu": "1500m",
			"memory": "1Gi", "requests.memory": "1Gi", "limits.memory": "2Gi"},
	}, {
		name: "sidecars run with the containers and the init containers after them",
		pod: `{"spec":{"initContainers":[{"name":"s","restartPolicy":"Always","resources":{"requests":{"cpu":"1"}}},
			{"name":"i","resources":{"requests":{"cpu":"2"}}}],
			"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}`,
		want: map[string]string{"count/pods": "1", "pods": "1", "cpu": "3", "requests.cpu": "3"},
	}, {
		name: "sidecar after the init container",
		pod: `{"spec":{"initContainers":[{"name":"i","resources":{"requests":{"cpu":"2"}}},
			{"name":"s","restartPolicy":"Always","resources":{"requests":{"cpu":"1"}}}],
			"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}`,
		want: map[string]string{"count/pods": "1", "pods": "1", "cpu": "2", "requests.cpu": "2"},
	}, {
		name: "overhead adds to requests, to limits only where limited",
		pod: `{"spec":{"overhead":{"cpu":"100m","memory":"64Mi"},
			"containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi"},"limits":{"cpu":"2"}}}]}}`,
		want: map[string]string{"count/pods": "1", "pods": "1", "cpu": "1100m", "requests.cpu": "1100m", "limits.cpu": "2100m",
			"memory": "1088Mi", "requests.memory": "1088Mi"},
	}, {
		name: "ephemeral storage, huge pages and extended resources",
		pod: `{"spec":{"containers":[{"name":"c","resources":{"requests":{"ephemeral-storage":"1Gi","hugepages-2Mi":"4Mi","example.com/gpu":"2"},
			"limits":{"ephemeral-storage":"2Gi","hugepages-2Mi":"4Mi","example.com/gpu":"2"}}}]}}`,
		want: map[string]string{"count/pods": "1", "pods": "1", "ephemeral-storage": "1Gi", "requests.ephemeral-storage": "1Gi",
			"limits.ephemeral-storage": "2Gi", "hugepages-2Mi": "4Mi", "requests.hugepages-2Mi": "4Mi", "requests.example.com/gpu": "2"},
	}, {
		name: "a finished pod is counted only as an object",
		pod:  `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]},"status":{"phase":"Succeeded"}}`,
		want: map[string]string{"count/pods": "1"},
	}, {
		name: "a failed pod too",
		pod:  `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]},"status":{"phase":"Failed"}}`,
		want: map[string]string{"count/pods": "1"},
	}, {
		name: "a pod whose deletion grace ran out",
		pod:  `{"metadata":{"deletionTimestamp":"2026-01-01T11:59:00Z","deletionGracePeriodSeconds":30},"spec":{"containers":[{"name":"c"}]}}`,
		want: map[string]string{"count/pods": "1"},
	}, {
		name: "a pod still in its deletion grace",
		pod:  `{"metadata":{"deletionTimestamp":"2026-01-01T11:59:50Z","deletionGracePeriodSeconds":30},"spec":{"containers":[{"name":"c"}]}}`,
		want: map[string]string{"count/pods": "1", "pods": "1"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ev.Usage(obj(t, tc.pod), now); !maps.Equal(got, tc.want) {
				t.Errorf("usage\n got  %v\n want %v", got, tc.want)
			}
		})
	}
}

func TestPodScopes(t *testing.T) {
	ev := Pods(testBrand)
	bestEffort := `{"spec":{"containers":[{"name":"c"}]}}`
	burstable := `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}],"activeDeadlineSeconds":10}}`
	high := `{"spec":{"priorityClassName":"high","containers":[{"name":"c"}]}}`
	cross := `{"spec":{"containers":[{"name":"c"}],"affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"podAffinityTerm":{"topologyKey":"k","namespaceSelector":{}}}]}}}}`
	exists := func(scope string) registry.ScopeRequirement {
		return registry.ScopeRequirement{ScopeName: scope, Operator: "Exists"}
	}
	class := func(op string, values ...string) registry.ScopeRequirement {
		return registry.ScopeRequirement{ScopeName: ScopePriorityClass, Operator: op, Values: values}
	}
	for _, tc := range []struct {
		pod  string
		req  registry.ScopeRequirement
		want bool
	}{
		{bestEffort, exists(ScopeBestEffort), true},
		{bestEffort, exists(ScopeNotBestEffort), false},
		{burstable, exists(ScopeBestEffort), false},
		{burstable, exists(ScopeNotBestEffort), true},
		{bestEffort, exists(ScopeTerminating), false},
		{bestEffort, exists(ScopeNotTerminating), true},
		{burstable, exists(ScopeTerminating), true},
		{high, class("In", "high", "low"), true},
		{high, class("In", "low"), false},
		{bestEffort, class("In", "high"), false},
		{high, class("NotIn", "high"), false},
		{bestEffort, class("NotIn", "high"), true},
		{high, class("Exists"), true},
		{bestEffort, class("Exists"), false},
		{bestEffort, class("DoesNotExist"), true},
		{high, class("DoesNotExist"), false},
		{cross, exists(ScopeCrossNamespacePodAffinity), true},
		{bestEffort, exists(ScopeCrossNamespacePodAffinity), false},
	} {
		if got := ev.MatchesScope(tc.req, obj(t, tc.pod)); got != tc.want {
			t.Errorf("%s %v of %s: %v, want %v", tc.req.ScopeName, tc.req.Operator, tc.pod, got, tc.want)
		}
	}
}

func TestPodConstraints(t *testing.T) {
	ev := Pods(testBrand)
	pod := obj(t, `{"spec":{"initContainers":[{"name":"init","resources":{"limits":{"cpu":"1"}}}],
		"containers":[{"name":"b","resources":{"requests":{"cpu":"1"}}},{"name":"a"}]}}`)
	for _, tc := range []struct {
		required []string
		want     string
	}{
		{[]string{"pods", "count/pods"}, ""},
		{[]string{"requests.ephemeral-storage"}, ""},
		{[]string{"requests.cpu"}, "must specify requests.cpu for: a,init"},
		{[]string{"limits.cpu", "requests.memory"}, "must specify limits.cpu for: a,b; requests.memory for: a,b,init"},
	} {
		if got := ev.Constraints(tc.required, pod); got != tc.want {
			t.Errorf("constraints of %v: %q, want %q", tc.required, got, tc.want)
		}
	}
}

func TestServiceUsage(t *testing.T) {
	ev := Services()
	for _, tc := range []struct {
		svc  string
		want map[string]string
	}{
		{`{"spec":{"type":"ClusterIP","ports":[{"port":80}]}}`,
			map[string]string{"count/services": "1", "services": "1", "services.loadbalancers": "0", "services.nodeports": "0"}},
		{`{"spec":{"type":"NodePort","ports":[{"port":80},{"port":443}]}}`,
			map[string]string{"count/services": "1", "services": "1", "services.loadbalancers": "0", "services.nodeports": "2"}},
		{`{"spec":{"type":"LoadBalancer","ports":[{"port":80},{"port":443}]}}`,
			map[string]string{"count/services": "1", "services": "1", "services.loadbalancers": "1", "services.nodeports": "2"}},
		{`{"spec":{"type":"LoadBalancer","allocateLoadBalancerNodePorts":false,"ports":[{"port":80,"nodePort":30001},{"port":443}]}}`,
			map[string]string{"count/services": "1", "services": "1", "services.loadbalancers": "1", "services.nodeports": "1"}},
	} {
		if got := ev.Usage(obj(t, tc.svc), now); !maps.Equal(got, tc.want) {
			t.Errorf("usage of %s\n got  %v\n want %v", tc.svc, got, tc.want)
		}
	}
}

func TestClaimUsage(t *testing.T) {
	ev := Claims(testBrand)
	gold := "gold.storageclass." + testBrand.Group("storage") + "/"
	for _, tc := range []struct {
		claim string
		want  map[string]string
	}{
		{`{"spec":{"resources":{"requests":{"storage":"10Gi"}}}}`,
			map[string]string{"count/persistentvolumeclaims": "1", "persistentvolumeclaims": "1", "requests.storage": "10Gi"}},
		{`{"spec":{"storageClassName":"gold","resources":{"requests":{"storage":"1500m"}}}}`,
			map[string]string{"count/persistentvolumeclaims": "1", "persistentvolumeclaims": "1", "requests.storage": "2",
				gold + "persistentvolumeclaims": "1", gold + "requests.storage": "2"}},
		{`{"metadata":{"annotations":{"volume.beta.` + testBrand.Label("storage-class") + `":"gold"}},"spec":{"storageClassName":"silver","resources":{"requests":{"storage":"1Gi"}}},
			"status":{"allocatedResources":{"storage":"2Gi"}}}`,
			map[string]string{"count/persistentvolumeclaims": "1", "persistentvolumeclaims": "1", "requests.storage": "2Gi",
				gold + "persistentvolumeclaims": "1", gold + "requests.storage": "2Gi"}},
	} {
		if got := ev.Usage(obj(t, tc.claim), now); !maps.Equal(got, tc.want) {
			t.Errorf("usage of %s\n got  %v\n want %v", tc.claim, got, tc.want)
		}
	}
	names := []string{"requests.storage", gold + "requests.storage", "bronze.storageclass.example.com/requests.storage", "count/persistentvolumeclaims", "pods"}
	if got, want := ev.MatchingResources(names), names[:2]; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != "count/persistentvolumeclaims" {
		t.Errorf("matching %v", got)
	}
}

func TestMatchingResources(t *testing.T) {
	hard := []string{"pods", "count/pods", "requests.cpu", "requests.hugepages-2Mi", "requests.example.com/gpu",
		"requests." + testBrand.Label("x"), "services", "count/configmaps", "configmaps", "count/widgets.example.com"}
	for _, tc := range []struct {
		name string
		ev   registry.QuotaEvaluator
		want []string
	}{
		{"pods", Pods(testBrand), []string{"pods", "count/pods", "requests.cpu", "requests.hugepages-2Mi", "requests.example.com/gpu"}},
		{"services", Services(), []string{"services"}},
		{"configmaps", Count("", "configmaps", "configmaps"), []string{"count/configmaps", "configmaps"}},
		{"custom", Count("example.com", "widgets", ""), []string{"count/widgets.example.com"}},
		{"events", Ignored(), nil},
	} {
		if got := tc.ev.MatchingResources(hard); !equalSets(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func equalSets(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]bool{}
	for _, s := range a {
		seen[s] = true
	}
	for _, s := range b {
		if !seen[s] {
			return false
		}
	}
	return true
}

func quotaOf(t *testing.T, s string) Quota { return Read(obj(t, s)) }

func TestCharge(t *testing.T) {
	pods := Pods(testBrand)
	pod := obj(t, `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"500m","memory":"1Gi"},"limits":{"cpu":"1","memory":"1Gi"}}}]}}`)
	for _, tc := range []struct {
		name    string
		quotas  []string
		wantErr string
		want    map[int]string
	}{{
		name:   "charged within the limit",
		quotas: []string{`{"metadata":{"name":"q"},"status":{"hard":{"pods":"2","requests.cpu":"1"},"used":{"pods":"1","requests.cpu":"250m"}}}`},
		want:   map[int]string{0: "pods=2,requests.cpu=750m"},
	}, {
		name:    "exceeded",
		quotas:  []string{`{"metadata":{"name":"q"},"status":{"hard":{"pods":"2","requests.cpu":"1"},"used":{"pods":"2","requests.cpu":"750m"}}}`},
		wantErr: "exceeded quota: q, requested: pods=1,requests.cpu=500m, used: pods=2,requests.cpu=750m, limited: pods=2,requests.cpu=1",
	}, {
		name:   "a quota without status does not constrain",
		quotas: []string{`{"metadata":{"name":"q"},"spec":{"hard":{"pods":"0"}}}`},
		want:   map[int]string{},
	}, {
		name:    "a quota whose usage is not known yet refuses",
		quotas:  []string{`{"metadata":{"name":"q"},"status":{"hard":{"pods":"2","requests.memory":"2Gi","count/configmaps":"1"},"used":{"pods":"0"}}}`},
		wantErr: "status unknown for quota: q, resources: pods,requests.memory",
	}, {
		name:    "every limited resource must have known usage",
		quotas:  []string{`{"metadata":{"name":"q"},"status":{"hard":{"requests.ephemeral-storage":"1Gi","limits.ephemeral-storage":"1Gi","requests.storage":"1"},"used":{}}}`},
		wantErr: "status unknown for quota: q, resources: limits.ephemeral-storage,requests.ephemeral-storage",
	}, {
		name: "only the quotas whose scopes the pod is in",
		quotas: []string{
			`{"metadata":{"name":"be"},"spec":{"scopes":["BestEffort"]},"status":{"hard":{"pods":"1"},"used":{"pods":"1"}}}`,
			`{"metadata":{"name":"nbe"},"spec":{"scopes":["NotBestEffort"]},"status":{"hard":{"pods":"3"},"used":{"pods":"1"}}}`,
			`{"metadata":{"name":"cm"},"status":{"hard":{"count/configmaps":"1"},"used":{"count/configmaps":"1"}}}`,
		},
		want: map[int]string{1: "pods=2"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var quotas []Quota
			for _, q := range tc.quotas {
				quotas = append(quotas, quotaOf(t, q))
			}
			got, err := Charge(pods, quotas, pod, nil, now)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			printed := map[int]string{}
			for i, l := range got {
				printed[i] = l.String()
			}
			if !maps.Equal(printed, tc.want) {
				t.Errorf("charged %v, want %v", printed, tc.want)
			}
		})
	}
}

func TestChargeUpdate(t *testing.T) {
	svc := Services()
	q := []Quota{quotaOf(t, `{"metadata":{"name":"q"},"status":{"hard":{"services.loadbalancers":"1","services":"5"},"used":{"services.loadbalancers":"1","services":"2"}}}`)}
	old := obj(t, `{"spec":{"type":"ClusterIP","ports":[{"port":80}]}}`)
	lb := obj(t, `{"spec":{"type":"LoadBalancer","ports":[{"port":80}]}}`)
	if _, err := Charge(svc, q, lb, old, now); err == nil ||
		err.Error() != "exceeded quota: q, requested: services.loadbalancers=1, used: services.loadbalancers=1, limited: services.loadbalancers=1" {
		t.Errorf("becoming a load balancer: %v", err)
	}
	// An update that does not grow the usage charges nothing.
	if got, err := Charge(svc, q, old, lb, now); err != nil || len(got) != 0 {
		t.Errorf("shrinking: %v %v", got, err)
	}
}

func TestStatus(t *testing.T) {
	pods := Pods(testBrand)
	objs := []registry.Object{
		obj(t, `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"250m"}}}]}}`),
		obj(t, `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"500m"}}}]}}`),
		obj(t, `{"spec":{"containers":[{"name":"c"}]},"status":{"phase":"Succeeded"}}`),
		obj(t, `{"spec":{"containers":[{"name":"c"}]}}`),
	}
	types := []Type{
		{Evaluator: pods, Objects: func() ([]registry.Object, error) { return objs, nil }},
		{Evaluator: Count("", "configmaps", "configmaps"), Objects: func() ([]registry.Object, error) { return nil, nil }},
	}
	for _, tc := range []struct {
		quota, hard, used string
	}{
		{`{"spec":{"hard":{"pods":"10","count/pods":"10","requests.cpu":"2","configmaps":"3","example.com/unknown":"1"}},"status":{"used":{"example.com/unknown":"1","gone":"4"}}}`,
			"configmaps=3,count/pods=10,example.com/unknown=1,pods=10,requests.cpu=2", "configmaps=0,count/pods=4,example.com/unknown=1,pods=3,requests.cpu=750m"},
		{`{"spec":{"hard":{"pods":"10"},"scopes":["BestEffort"]}}`, "pods=10", "pods=1"},
		{`{"spec":{"hard":{"pods":"10"},"scopes":["NotBestEffort"]}}`, "pods=10", "pods=2"},
	} {
		hard, used, err := Status(quotaOf(t, tc.quota), types, now)
		if err != nil {
			t.Fatal(err)
		}
		if hard.String() != tc.hard || used.String() != tc.used {
			t.Errorf("status of %s:\n hard %s, want %s\n used %s, want %s", tc.quota, hard, tc.hard, used, tc.used)
		}
	}
}
