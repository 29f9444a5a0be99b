package server_test

import (
	"strings"
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
	// A deletecollection's items are admitted under the collection's
	// empty name, by which the plugin finds no pod, as upstream's: the
	// node's collection answers the pods as listed and marks none.
	dc := as("DELETE", "/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3Dn1", nil).mustCode(t, 200).obj(t)
	if got := strings.Join(names(t, dc), ","); got != "mine,static" {
		t.Errorf("the node's deletecollection listed %s, want mine,static", got)
	}
	for _, name := range []string{"mine", "static"} {
		if got := path(e.do("GET", "/api/v1/namespaces/default/pods/"+name, nil).mustCode(t, 200).obj(t), "metadata.deletionTimestamp"); got != nil {
			t.Errorf("the node's deletecollection marked %s: %v", name, got)
		}
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

// TestKubeletStartUnderNodeAuthorization: kubeadm's control plane
// (--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction)
// lets a kubelet do what it does when it starts and runs pods: register
// its Node, renew its Lease, report node and pod status, make a mirror
// pod, fetch the token of a pod bound to it, and evict it; another
// node's objects stay out of its reach.
func TestKubeletStartUnderNodeAuthorization(t *testing.T) {
	t.Parallel()
	const n1, n2 = "kubelet-1", "kubelet-2"
	e := start(t, withTokens(t, n1+",system:node:w1,w1-uid,\"system:nodes\"", n2+",system:node:w2,w2-uid,\"system:nodes\""),
		func(o *config.Options) {
			o.AuthorizationModes = []string{config.ModeNode, config.ModeRBAC}
			o.EnableAdmissionPlugins = []string{config.PluginNodeRestriction}
		})
	b := e.opts.Brand
	kubelet := func(method, p string, body any, contentType string) *resp {
		h := map[string]string{}
		if contentType != "" {
			h["Content-Type"] = contentType
		}
		return e.send(req{method: method, path: p, body: body, token: n1, header: h})
	}
	const merge, strategic = "application/merge-patch+json", "application/strategic-merge-patch+json"
	// The node authorizer's graph follows the store: retry until it has.
	var node map[string]any
	eventually(t, "the kubelet to register its node", func() bool {
		r := kubelet("POST", "/api/v1/nodes", `{"metadata":{"name":"w1","labels":{"`+b.Label("hostname")+`":"w1","`+b.Label("os")+`":"linux"}}}`, "")
		if r.code == 201 {
			node = r.obj(t)
		}
		return r.code == 201
	})
	kubelet("PATCH", "/api/v1/nodes/w1/status", `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}}`, strategic).mustCode(t, 200)
	leases := "/apis/" + b.Group("coordination") + "/v1/namespaces/" + b.NodeLeaseNamespace + "/leases"
	kubelet("POST", leases, `{"metadata":{"name":"w1"},"spec":{"holderIdentity":"w1","leaseDurationSeconds":40}}`, "").mustCode(t, 201)
	kubelet("PATCH", leases+"/w1", `{"spec":{"renewTime":"2026-01-01T00:00:00.000000Z"}}`, merge).mustCode(t, 200)
	// Another kubelet's Node is refused by the authorizer or the plugin.
	if code := kubelet("PATCH", "/api/v1/nodes/w2/status", `{"status":{}}`, merge).code; code != 403 && code != 404 {
		t.Errorf("kubelet patching another node's status: %d, want 403", code)
	}

	mirror := `{"metadata":{"name":"etcd-w1","namespace":"` + b.SystemNamespace + `","annotations":{"` + b.Label("config.mirror") + `":"hash"},` +
		`"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"w1","uid":"` + path(node, "metadata.uid").(string) + `","controller":true}]},` +
		`"spec":{"nodeName":"w1","containers":[{"name":"etcd","image":"etcd"}]}}`
	kubelet("POST", "/api/v1/namespaces/"+b.SystemNamespace+"/pods", mirror, "").mustCode(t, 201)

	// A pod the scheduler bound to w1, with its service account token.
	pod := e.do("POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"web"},"spec":{"nodeName":"w1","containers":[{"name":"c","image":"nginx"}]}}`).mustCode(t, 201).obj(t)
	eventually(t, "the kubelet to see its pod", func() bool {
		return kubelet("GET", "/api/v1/namespaces/default/pods/web", nil, "").code == 200
	})
	kubelet("PATCH", "/api/v1/namespaces/default/pods/web/status", `{"status":{"phase":"Running"}}`, strategic).mustCode(t, 200)
	tok := kubelet("POST", "/api/v1/namespaces/default/serviceaccounts/default/token",
		`{"spec":{"audiences":["api"],"expirationSeconds":3600,"boundObjectRef":{"apiVersion":"v1","kind":"Pod","name":"web","uid":"`+path(pod, "metadata.uid").(string)+`"}}}`, "").mustCode(t, 201).obj(t)
	if s, _ := path(tok, "status.token").(string); s == "" {
		t.Errorf("no token: %v", tok)
	}
	if got := path(e.do("GET", "/api/v1/namespaces/default/pods/web", nil).mustCode(t, 200).obj(t), "status.phase"); got != "Running" {
		t.Errorf("stored pod phase %v, want the kubelet's Running", got)
	}
	kubelet("POST", "/api/v1/namespaces/default/pods/web/eviction", `{"metadata":{"name":"web"}}`, "").mustCode(t, 201)
	// The kubelet may not relabel itself into a restricted pool.
	kubelet("PATCH", "/api/v1/nodes/w1", `{"metadata":{"labels":{"node-restriction.`+b.LongDomain+`/pool":"secure"}}}`, merge).mustCode(t, 403).
		mustMessage(t, `nodes "w1" is forbidden: is not allowed to modify labels: node-restriction.`+b.LongDomain+`/pool`)
}
