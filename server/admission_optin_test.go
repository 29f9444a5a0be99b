package server_test

import (
	"fmt"
	"slices"
	"testing"

	"platd/config"
)

// optInPlugins are the plugins upstream leaves off that
// TestAdmissionPluginsOptIn enables.
var optInPlugins = []string{config.PluginAlwaysPullImages, config.PluginLimitPodHardAntiAffinityTopology,
	config.PluginExtendedResourceToleration, config.PluginDenyServiceExternalIPs}

// TestAdmissionPluginsOptIn: the admission plugins upstream runs only
// when --enable-admission-plugins names them change nothing by default,
// and enabled act on what is stored and refused as upstream's.
func TestAdmissionPluginsOptIn(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		name := "default"
		if on {
			name = "enabled"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := &policyEnv{env: start(t, func(o *config.Options) {
				if on {
					o.EnableAdmissionPlugins = optInPlugins
				}
			}), t: t}
			optInAlwaysPullImages(t, e, on)
			optInLimitPodHardAntiAffinityTopology(t, e, on)
			optInExtendedResourceToleration(t, e, on)
			optInDenyServiceExternalIPs(t, e, on)
		})
	}
}

// optInAlwaysPullImages: every container of a pod created pulls always,
// and one a mutating webhook sets otherwise refuses the pod with an
// aggregate of Forbidden errors, a 500 as upstream answers it.
func optInAlwaysPullImages(t *testing.T, e *policyEnv, on bool) {
	pods := "/api/v1/namespaces/default/pods"
	policies := func(p map[string]any) []any {
		return []any{path(p, "spec.initContainers").([]any)[0].(map[string]any)["imagePullPolicy"],
			path(p, "spec.containers").([]any)[0].(map[string]any)["imagePullPolicy"]}
	}
	pod := func(name string, labels map[string]any) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name, "labels": labels}, "spec": map[string]any{
			"initContainers": []any{map[string]any{"name": "i", "image": "init:1"}},
			"containers":     []any{map[string]any{"name": "c", "image": "app:1", "imagePullPolicy": "Never"}},
		}}
	}
	want := []any{"IfNotPresent", "Never"}
	if on {
		want = []any{"Always", "Always"}
	}
	created := e.do("POST", pods, pod("pull", nil)).mustCode(t, 201).obj(t)
	stored := e.do("GET", pods+"/pull", nil).mustCode(t, 200).obj(t)
	if got := policies(stored); mustJSON(t, got) != mustJSON(t, want) || mustJSON(t, policies(created)) != mustJSON(t, want) {
		t.Errorf("AlwaysPullImages: stored pull policies %v, answered %v, want %v", got, policies(created), want)
	}

	// A mutating webhook, which runs after the plugin's mutation, sets
	// the pods labelled "downgrade" to pull if not present.
	aw := startAdmissionWebhook(t)
	aw.script("/downgrade", func(req map[string]any) map[string]any {
		if path(req, "object.metadata.labels.downgrade") == nil {
			return nil
		}
		return map[string]any{"patch": []any{
			map[string]any{"op": "replace", "path": "/spec/initContainers/0/imagePullPolicy", "value": "IfNotPresent"},
			map[string]any{"op": "replace", "path": "/spec/containers/0/imagePullPolicy", "value": "IfNotPresent"},
		}}
	})
	e.webhookConfig("mutatingwebhookconfigurations", "downgrade", aw.ruleHook("downgrade.example.com", "/downgrade", rule([]any{"CREATE"}, "", "pods")))
	down := pod("down", map[string]any{"downgrade": "yes"})
	eventually(t, "the downgrading webhook", func() bool {
		return len(aw.requests("/downgrade")) > 0 || e.do("POST", pods+"?dryRun=All", down).code != 201
	})
	r := e.do("POST", pods, down)
	if !on {
		r.mustCode(t, 201)
		if got := policies(e.do("GET", pods+"/down", nil).mustCode(t, 200).obj(t)); mustJSON(t, got) != `["IfNotPresent","IfNotPresent"]` {
			t.Errorf("AlwaysPullImages off: stored the webhook's pull policies as %v", got)
		}
		return
	}
	r.mustCode(t, 500).mustMessage(t, `[pods "down" is forbidden: spec.initContainers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always", `+
		`pods "down" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values: "Always"]`)
	if reason := r.obj(t)["reason"]; reason != nil {
		t.Errorf("AlwaysPullImages refusal reason %v, want none", reason)
	}
	e.do("GET", pods+"/down", nil).mustCode(t, 404)
}

// optInLimitPodHardAntiAffinityTopology: a pod whose required
// anti-affinity keeps it off other pods' zones is refused, one that keeps
// it off their nodes is stored.
func optInLimitPodHardAntiAffinityTopology(t *testing.T, e *policyEnv, on bool) {
	pods := "/api/v1/namespaces/default/pods"
	pod := func(name, key string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "image": "app:1"}},
			"affinity": map[string]any{"podAntiAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": []any{
				map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"app": "db"}}, "topologyKey": key},
			}}},
		}}
	}
	host, zone := platBrand.Label("hostname"), "topology."+platBrand.Label("zone")
	e.do("POST", pods, pod("spread-by-node", host)).mustCode(t, 201)
	stored := e.do("GET", pods+"/spread-by-node", nil).mustCode(t, 200).obj(t)
	if got := path(stored, "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution").([]any)[0].(map[string]any)["topologyKey"]; got != host {
		t.Errorf("LimitPodHardAntiAffinityTopology: stored topology key %v, want %s", got, host)
	}
	r := e.do("POST", pods, pod("spread-by-zone", zone))
	if !on {
		r.mustCode(t, 201)
		e.do("GET", pods+"/spread-by-zone", nil).mustCode(t, 200)
		return
	}
	r.mustCode(t, 403).mustMessage(t, `pods "spread-by-zone" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey `+
		zone+` but only key `+host+` is allowed`)
	e.do("GET", pods+"/spread-by-zone", nil).mustCode(t, 404)
}

// optInExtendedResourceToleration: a pod requesting extended resources
// (here by its limits, which its requests default to) is stored
// tolerating their taints, after the default tolerations.
func optInExtendedResourceToleration(t *testing.T, e *policyEnv, on bool) {
	pods := "/api/v1/namespaces/default/pods"
	e.do("POST", pods, map[string]any{"metadata": map[string]any{"name": "gpu"}, "spec": map[string]any{
		"containers": []any{map[string]any{"name": "c", "image": "app:1",
			"resources": map[string]any{"limits": map[string]any{"example.com/gpu": "1", "cpu": "1"}}}},
		"initContainers": []any{map[string]any{"name": "i", "image": "app:1",
			"resources": map[string]any{"requests": map[string]any{"example.com/fpga": "1"}, "limits": map[string]any{"example.com/fpga": "1"}}}},
		"tolerations": []any{map[string]any{"key": "example.com/fpga", "operator": "Exists", "effect": "NoSchedule"}},
	}}).mustCode(t, 201)
	stored := e.do("GET", pods+"/gpu", nil).mustCode(t, 200).obj(t)
	var keys []string
	for _, tol := range path(stored, "spec.tolerations").([]any) {
		tol := tol.(map[string]any)
		keys = append(keys, fmt.Sprintf("%v/%v/%v", tol["key"], tol["operator"], tol["effect"]))
	}
	want := []string{"example.com/fpga/Exists/NoSchedule",
		"node." + platBrand.Label("not-ready") + "/Exists/NoExecute", "node." + platBrand.Label("unreachable") + "/Exists/NoExecute"}
	if on {
		want = append(want, "example.com/gpu/Exists/NoSchedule")
	}
	if !slices.Equal(keys, want) {
		t.Errorf("ExtendedResourceToleration: stored tolerations %v, want %v", keys, want)
	}
}

// optInDenyServiceExternalIPs: a service is refused external IPs, on
// create and on an update adding them, and stored without them.
func optInDenyServiceExternalIPs(t *testing.T, e *policyEnv, on bool) {
	svcs := "/api/v1/namespaces/default/services"
	const denied = ` is forbidden: Use of external IPs is denied by admission control`
	r := e.do("POST", svcs, map[string]any{"metadata": map[string]any{"name": "exposed"},
		"spec": map[string]any{"ports": []any{map[string]any{"port": 80}}, "externalIPs": []any{"192.0.2.10"}}})
	if on {
		r.mustCode(t, 403).mustMessage(t, `services "exposed"`+denied)
		e.do("GET", svcs+"/exposed", nil).mustCode(t, 404)
	} else {
		r.mustCode(t, 201)
		if got := mustJSON(t, path(e.do("GET", svcs+"/exposed", nil).mustCode(t, 200).obj(t), "spec.externalIPs")); got != `["192.0.2.10"]` {
			t.Errorf("DenyServiceExternalIPs off: stored externalIPs %s", got)
		}
	}
	e.do("POST", svcs, map[string]any{"metadata": map[string]any{"name": "plain"},
		"spec": map[string]any{"ports": []any{map[string]any{"port": 80}}}}).mustCode(t, 201)
	r = e.do("PATCH", svcs+"/plain", `{"spec":{"externalIPs":["192.0.2.11"]}}`, "Content-Type", "application/merge-patch+json")
	want := `["192.0.2.11"]`
	if on {
		r.mustCode(t, 403).mustMessage(t, `services "plain"`+denied)
		want = "null"
	} else {
		r.mustCode(t, 200)
	}
	if got := mustJSON(t, path(e.do("GET", svcs+"/plain", nil).mustCode(t, 200).obj(t), "spec.externalIPs")); got != want {
		t.Errorf("DenyServiceExternalIPs: stored externalIPs %s after the update, want %s", got, want)
	}
}
