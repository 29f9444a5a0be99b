package server_test

import (
	"testing"

	"platd/config"
)

// TestNodeRestrictionAdmission: with NodeRestriction enabled (kubeadm's
// command line), a kubelet writes its own Node, its Lease in the node
// lease namespace, mirror pods owned by its Node, and the status and
// tokens of pods bound to it; it is refused anything of another node's,
// and what it was refused is not stored. Other users are not restricted.
// Authorization allows everything here, so every refusal is the plugin's.
func TestNodeRestrictionAdmission(t *testing.T) {
	t.Parallel()
	const n1 = "n1-token"
	e := start(t, withTokens(t, n1+",system:node:n1,n1-uid,\"system:nodes\""),
		func(o *config.Options) { o.EnableAdmissionPlugins = []string{config.PluginNodeRestriction} })
	b := e.opts.Brand
	as := func(method, path string, body any) *resp {
		return e.send(req{method: method, path: path, body: body, token: n1})
	}
	patch := func(path, body string) *resp {
		return e.send(req{method: "PATCH", path: path, body: body, token: n1, header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	}

	as("POST", "/api/v1/nodes", `{"metadata":{"name":"n1","labels":{"`+b.Label("hostname")+`":"n1"}}}`).mustCode(t, 201)
	as("POST", "/api/v1/nodes", `{"metadata":{"name":"n2"}}`).mustCode(t, 403).
		mustMessage(t, `nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`)
	as("POST", "/api/v1/nodes", `{"metadata":{"name":"n1","labels":{"node-restriction.`+b.LongDomain+`/pool":"a"}}}`).mustCode(t, 403).
		mustMessage(t, `nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-restriction.`+b.LongDomain+`/pool`)
	e.do("POST", "/api/v1/nodes", `{"metadata":{"name":"n2"}}`).mustCode(t, 201)

	// The node's status writes may not touch its taints; an admin's may.
	patch("/api/v1/nodes/n1/status", `{"spec":{"taints":null},"status":{"phase":"Running"}}`).mustCode(t, 403).
		mustMessage(t, `nodes "n1" is forbidden: node "n1" is not allowed to modify taints`)
	patch("/api/v1/nodes/n1", `{"metadata":{"labels":{"`+b.Label("role")+`":"x"}}}`).mustCode(t, 403).
		mustMessage(t, `nodes "n1" is forbidden: is not allowed to modify labels: `+b.Label("role"))
	stored := e.do("GET", "/api/v1/nodes/n1", nil).mustCode(t, 200).obj(t)
	if taints, _ := path(stored, "spec.taints").([]any); len(taints) != 1 {
		t.Errorf("stored taints %v, want the not-ready taint kept", path(stored, "spec.taints"))
	}
	if l := path(stored, "metadata.labels").(map[string]any); len(l) != 1 {
		t.Errorf("stored labels %v, want the hostname only", l)
	}
	patch("/api/v1/nodes/n1/status", `{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`).mustCode(t, 200)
	e.do("PATCH", "/api/v1/nodes/n1", `{"spec":{"taints":null}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)

	// Mirror pods: owned by the node, referencing nothing.
	uid := path(stored, "metadata.uid").(string)
	mirror := func(name, volume string) string {
		return `{"metadata":{"name":"` + name + `","annotations":{"` + b.Label("config.mirror") + `":"h"},` +
			`"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":"` + uid + `","controller":true}]},` +
			`"spec":{"nodeName":"n1","containers":[{"name":"c","image":"x"}]` + volume + `}}`
	}
	as("POST", "/api/v1/namespaces/default/pods", mirror("static", "")).mustCode(t, 201)
	as("POST", "/api/v1/namespaces/default/pods", mirror("withsecret", `,"volumes":[{"name":"v","secret":{"secretName":"s"}}]`)).mustCode(t, 403)
	as("POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"plain"},"spec":{"containers":[{"name":"c","image":"x"}]}}`).mustCode(t, 403).
		mustMessage(t, `pods "plain" is forbidden: pod does not have "`+b.Label("config.mirror")+`" annotation, node "n1" can only create mirror pods`)
	e.do("GET", "/api/v1/namespaces/default/pods/plain", nil).mustCode(t, 404)
	e.do("GET", "/api/v1/namespaces/default/pods/withsecret", nil).mustCode(t, 404)

	// Pods the scheduler bound: the node's own, and another node's.
	pod := func(name, node string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"nodeName":"` + node + `","containers":[{"name":"c","image":"x"}]}}`
	}
	e.do("POST", "/api/v1/namespaces/default/pods", pod("mine", "n1")).mustCode(t, 201)
	theirs := e.do("POST", "/api/v1/namespaces/default/pods", pod("theirs", "n2")).mustCode(t, 201).obj(t)
	patch("/api/v1/namespaces/default/pods/mine/status", `{"status":{"phase":"Running"}}`).mustCode(t, 200)
	patch("/api/v1/namespaces/default/pods/theirs/status", `{"status":{"phase":"Running"}}`).mustCode(t, 403).
		mustMessage(t, `pods "theirs" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself`)
	patch("/api/v1/namespaces/default/pods/mine", `{"metadata":{"labels":{"a":"b"}}}`).mustCode(t, 403).
		mustMessage(t, `pods "mine" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods`)
	as("POST", "/api/v1/namespaces/default/pods/theirs/eviction", `{"metadata":{"name":"theirs"}}`).mustCode(t, 403).
		mustMessage(t, `pods "theirs" is forbidden: node n1 can only evict pods with spec.nodeName set to itself`)
	as("DELETE", "/api/v1/namespaces/default/pods/theirs", nil).mustCode(t, 403).
		mustMessage(t, `pods "theirs" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself`)
	if got := path(e.do("GET", "/api/v1/namespaces/default/pods/theirs", nil).mustCode(t, 200).obj(t), "metadata.deletionTimestamp"); got != nil {
		t.Errorf("the refused deletion marked the pod: %v", got)
	}
	as("POST", "/api/v1/namespaces/default/serviceaccounts/default/token",
		`{"spec":{"boundObjectRef":{"apiVersion":"v1","kind":"Pod","name":"theirs","uid":"`+path(theirs, "metadata.uid").(string)+`"}}}`).mustCode(t, 403).
		mustMessage(t, `serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node`)
	as("POST", "/api/v1/namespaces/default/serviceaccounts/default/token", `{"spec":{}}`).mustCode(t, 403).
		mustMessage(t, `serviceaccounts "default" is forbidden: node requested token not bound to a pod`)
	mine := e.do("GET", "/api/v1/namespaces/default/pods/mine", nil).mustCode(t, 200).obj(t)
	tok := as("POST", "/api/v1/namespaces/default/serviceaccounts/default/token",
		`{"spec":{"boundObjectRef":{"apiVersion":"v1","kind":"Pod","name":"mine","uid":"`+path(mine, "metadata.uid").(string)+`"}}}`).mustCode(t, 201).obj(t)
	if s, _ := path(tok, "status.token").(string); s == "" {
		t.Errorf("token request answered without a token: %v", tok)
	}
	as("DELETE", "/api/v1/namespaces/default/pods/mine", nil).mustCode(t, 200)

	// Its Lease, in the node lease namespace only.
	leases := "/apis/" + b.Group("coordination") + "/v1/namespaces/" + b.NodeLeaseNamespace + "/leases"
	as("POST", leases, `{"metadata":{"name":"n1"},"spec":{"holderIdentity":"n1"}}`).mustCode(t, 201)
	as("POST", leases, `{"metadata":{"name":"n2"}}`).mustCode(t, 403).
		mustMessage(t, `leases.`+b.Group("coordination")+` "n2" is forbidden: can only access node lease with the same name as the requesting node`)
	as("POST", "/apis/"+b.Group("coordination")+"/v1/namespaces/default/leases", `{"metadata":{"name":"n1"}}`).mustCode(t, 403).
		mustMessage(t, `leases.`+b.Group("coordination")+` "n1" is forbidden: can only access leases in the "`+b.NodeLeaseNamespace+`" system namespace`)

	// Anyone else is not restricted.
	e.do("POST", "/api/v1/namespaces/default/pods", pod("other", "n2")).mustCode(t, 201)
	e.do("DELETE", "/api/v1/namespaces/default/pods/theirs", nil).mustCode(t, 200)
}
