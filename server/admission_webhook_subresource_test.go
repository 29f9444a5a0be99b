package server_test

import (
	"reflect"
	"strings"
	"testing"
)

// ruleHook is a webhook of the test server at p on rules, without side
// effects.
func (aw *admissionWebhook) ruleHook(name, p string, rules ...any) map[string]any {
	return aw.hook(name, p, map[string]any{"rules": rules})
}

// rule is a webhook rule on ops of resources in group's v1.
func rule(ops []any, group string, resources ...any) map[string]any {
	return map[string]any{"operations": ops, "apiGroups": []any{group}, "apiVersions": []any{"v1"}, "resources": resources}
}

// denyAnnotated refuses an object annotated "deny" with its value.
func denyAnnotated(req map[string]any) map[string]any {
	if msg, ok := path(req, "object.metadata.annotations.deny").(string); ok {
		return map[string]any{"allowed": false, "status": map[string]any{"message": msg, "reason": "Forbidden"}}
	}
	return nil
}

// wantReview checks members of a review's request.
func wantReview(t *testing.T, what string, req map[string]any, want map[string]any) {
	t.Helper()
	if req == nil {
		t.Errorf("%s: no review", what)
		return
	}
	for k, v := range want {
		if got := path(req, k); !reflect.DeepEqual(got, v) {
			t.Errorf("%s: request.%s = %v, want %v", what, k, got, v)
		}
	}
}

// last is the last of reqs, nil for none.
func last(reqs []map[string]any) map[string]any {
	if len(reqs) == 0 {
		return nil
	}
	return reqs[len(reqs)-1]
}

// TestWebhookMutatingActions calls the mutating webhooks on the actions
// of pods as upstream: a binding (pods/binding and the bindings
// resource) is reviewed as a v1 Binding and an eviction as a policy/v1
// Eviction, the webhook's patch to them is what the action does, and a
// refusal refuses the action with upstream's message, changing nothing.
func TestWebhookMutatingActions(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	aw := startAdmissionWebhook(t)
	aw.script("/action", func(req map[string]any) map[string]any {
		if out := denyAnnotated(req); out != nil {
			return out
		}
		switch {
		case path(req, "object.kind") == "Binding" && path(req, "object.target.name") == "node-a":
			return map[string]any{"patch": []any{map[string]any{"op": "replace", "path": "/target/name", "value": "node-b"}}}
		case path(req, "object.kind") == "Eviction" && path(req, "object.metadata.annotations.dry") == "yes":
			return map[string]any{"patch": []any{map[string]any{"op": "add", "path": "/deleteOptions", "value": map[string]any{"dryRun": []any{"All"}}}}}
		case path(req, "object.kind") == "TokenRequest" && path(req, "object.spec.audiences") == nil:
			return map[string]any{"patch": []any{map[string]any{"op": "add", "path": "/spec/audiences", "value": []any{"from-webhook"}}}}
		}
		return nil
	})
	e.webhookConfig("mutatingwebhookconfigurations", "actions",
		aw.ruleHook("action.example.com", "/action", rule([]any{"CREATE"}, "", "pods/binding", "pods/eviction", "bindings", "serviceaccounts/token")))
	pods := "/api/v1/namespaces/default/pods"
	for _, name := range []string{"p1", "p2", "p3", "p4", "p5"} {
		e.do("POST", pods, map[string]any{"metadata": map[string]any{"name": name},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}).mustCode(t, 201)
	}
	binding := func(name, node string, annotations map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Binding", "metadata": map[string]any{"name": name, "annotations": annotations},
			"target": map[string]any{"kind": "Node", "name": node}}
	}
	eviction := func(name string, annotations map[string]any) map[string]any {
		return map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": name, "annotations": annotations}}
	}
	const denied = `admission webhook "action.example.com" denied the request: `
	eventually(t, "the webhook to refuse an eviction", func() bool {
		r := e.do("POST", pods+"/p5/eviction?dryRun=All", eviction("p5", map[string]any{"deny": "probe"}))
		return r.code == 400 && r.obj(t)["message"] == denied+"probe"
	})
	nodeOf := func(name string) any {
		return path(e.do("GET", pods+"/"+name, nil).mustCode(t, 200).obj(t), "spec.nodeName")
	}

	e.do("POST", pods+"/p1/binding", binding("p1", "node-a", nil)).mustCode(t, 201)
	if got := nodeOf("p1"); got != "node-b" {
		t.Errorf("pods/binding: p1 is on %v, want the webhook's node-b", got)
	}
	wantReview(t, "pods/binding", last(aw.requests("/action")), map[string]any{
		"kind": map[string]any{"group": "", "version": "v1", "kind": "Binding"}, "resource": map[string]any{"group": "", "version": "v1", "resource": "pods"},
		"subResource": "binding", "operation": "CREATE", "name": "p1", "namespace": "default", "object.kind": "Binding",
		"object.target.name": "node-a", "options.kind": "CreateOptions",
	})
	e.do("POST", "/api/v1/namespaces/default/bindings", binding("p2", "node-a", nil)).mustCode(t, 201)
	if got := nodeOf("p2"); got != "node-b" {
		t.Errorf("bindings: p2 is on %v, want the webhook's node-b", got)
	}
	wantReview(t, "bindings", last(aw.requests("/action")), map[string]any{
		"kind": map[string]any{"group": "", "version": "v1", "kind": "Binding"}, "resource": map[string]any{"group": "", "version": "v1", "resource": "bindings"},
		"subResource": nil, "operation": "CREATE", "name": "p2", "object.kind": "Binding",
	})
	e.do("POST", pods+"/p3/binding", binding("p3", "node-a", map[string]any{"deny": "not there"})).mustCode(t, 400).mustMessage(t, denied+"not there")
	if got := nodeOf("p3"); got != nil {
		t.Errorf("a refused binding put p3 on %v", got)
	}

	// The webhook makes this eviction a dry run: the pod stays.
	e.do("POST", pods+"/p4/eviction", eviction("p4", map[string]any{"dry": "yes"})).mustCode(t, 201)
	if got := path(e.do("GET", pods+"/p4", nil).mustCode(t, 200).obj(t), "metadata.deletionTimestamp"); got != nil {
		t.Errorf("an eviction the webhook made a dry run deleted p4 at %v", got)
	}
	wantReview(t, "pods/eviction", last(aw.requests("/action")), map[string]any{
		"kind": map[string]any{"group": "policy", "version": "v1", "kind": "Eviction"}, "resource": map[string]any{"group": "", "version": "v1", "resource": "pods"},
		"subResource": "eviction", "operation": "CREATE", "name": "p4", "namespace": "default", "object.kind": "Eviction",
		"object.apiVersion": "policy/v1", "object.deleteOptions": nil,
	})
	e.do("POST", pods+"/p4/eviction", eviction("p4", map[string]any{"deny": "keep it"})).mustCode(t, 400).mustMessage(t, denied+"keep it")
	e.do("GET", pods+"/p4", nil).mustCode(t, 200)
	e.do("POST", pods+"/p4/eviction", eviction("p4", nil)).mustCode(t, 201)
	if r := e.do("GET", pods+"/p4", nil); r.code != 404 && path(r.obj(t), "metadata.deletionTimestamp") == nil {
		t.Errorf("an admitted eviction left p4: %d %s", r.code, r.body)
	}

	// A token request is reviewed as the TokenRequest written, before the
	// token is made from it as the webhook left it.
	tokens := "/api/v1/namespaces/default/serviceaccounts/default/token"
	e.do("POST", tokens, map[string]any{"metadata": map[string]any{"annotations": map[string]any{"deny": "no tokens"}}, "spec": map[string]any{}}).
		mustCode(t, 400).mustMessage(t, denied+"no tokens")
	tok := e.do("POST", tokens, map[string]any{"spec": map[string]any{}}).mustCode(t, 201).obj(t)
	if got := path(tok, "spec.audiences"); !reflect.DeepEqual(got, []any{"from-webhook"}) {
		t.Errorf("token request answered with audiences %v, want the webhook's", got)
	}
	authn := e.opts.Brand.Group("authentication")
	wantReview(t, "serviceaccounts/token", last(aw.requests("/action")), map[string]any{
		"kind": map[string]any{"group": authn, "version": "v1", "kind": "TokenRequest"}, "resource": map[string]any{"group": "", "version": "v1", "resource": "serviceaccounts"},
		"subResource": "token", "operation": "CREATE", "name": "default", "namespace": "default", "object.kind": "TokenRequest",
		"object.apiVersion": authn + "/v1", "object.spec.audiences": nil,
	})
}

// TestWebhookMutatingConnect calls the mutating webhooks on a connect
// (an exec) as upstream, before the policies: the review's object is
// the connect's options, and a refusal refuses the connect with
// upstream's message.
func TestWebhookMutatingConnect(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	aw := startAdmissionWebhook(t)
	aw.script("/connect", func(req map[string]any) map[string]any {
		if cmd, _ := path(req, "object.command").([]any); len(cmd) > 1 {
			return map[string]any{"allowed": false, "status": map[string]any{"message": "one word only", "reason": "Forbidden", "code": 403}}
		}
		return nil
	})
	e.webhookConfig("mutatingwebhookconfigurations", "connects",
		aw.ruleHook("connect.example.com", "/connect", rule([]any{"CONNECT"}, "", "pods/exec")))
	e.do("POST", "/api/v1/namespaces/default/pods", map[string]any{"metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}).mustCode(t, 201)
	exec := "/api/v1/namespaces/default/pods/p/exec?command=ls&command=-l&stdout=true"
	var r *resp
	eventually(t, "the connect webhook", func() bool {
		r = e.do("POST", exec, nil)
		return r.code == 403
	})
	r.mustMessage(t, `admission webhook "connect.example.com" denied the request: one word only`)
	wantReview(t, "exec", last(aw.requests("/connect")), map[string]any{
		"resource": map[string]any{"group": "", "version": "v1", "resource": "pods"}, "subResource": "exec", "operation": "CONNECT",
		"name": "p", "namespace": "default", "object.kind": "PodExecOptions", "object.command": []any{"ls", "-l"}, "object.stdout": true,
		"oldObject": nil,
	})
	// One allowed reaches the answer that no node serves it.
	e.do("POST", "/api/v1/namespaces/default/pods/p/exec?command=ls&stdout=true", nil).mustCode(t, 503)
}

// TestWebhookMutatingScale calls the mutating webhooks matching
// deployments/scale on a write of the scale subresource as upstream:
// they review an update of a Scale, the old one the stored object's,
// and their patch to the Scale's replicas is what the deployment
// stores, for a PUT and a PATCH of the Scale.
func TestWebhookMutatingScale(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	aw := startAdmissionWebhook(t)
	aw.script("/scale", func(req map[string]any) map[string]any {
		if path(req, "object.spec.replicas") == float64(3) {
			return map[string]any{"patch": []any{map[string]any{"op": "replace", "path": "/spec/replicas", "value": 5}}}
		}
		return nil
	})
	e.webhookConfig("mutatingwebhookconfigurations", "scales",
		aw.ruleHook("scale.example.com", "/scale", rule([]any{"UPDATE"}, "apps", "deployments/scale")))
	deployments := "/apis/apps/v1/namespaces/default/deployments"
	e.do("POST", deployments, deployment("web", 1)).mustCode(t, 201)
	scale := func(replicas int) map[string]any {
		return map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": map[string]any{"name": "web", "namespace": "default"},
			"spec": map[string]any{"replicas": replicas}}
	}
	eventually(t, "the scale webhook", func() bool {
		r := e.do("PUT", deployments+"/web/scale?dryRun=All", scale(3))
		return r.code == 200 && path(r.obj(t), "spec.replicas") == float64(5)
	})
	stored := func() any {
		return path(e.do("GET", deployments+"/web", nil).mustCode(t, 200).obj(t), "spec.replicas")
	}
	if got := stored(); got != float64(1) {
		t.Fatalf("a dry run stored %v replicas", got)
	}
	got := e.do("PUT", deployments+"/web/scale", scale(3)).mustCode(t, 200).obj(t)
	if path(got, "spec.replicas") != float64(5) || stored() != float64(5) {
		t.Errorf("PUT scale of 3: answered %v, stored %v, want the webhook's 5", path(got, "spec.replicas"), stored())
	}
	wantReview(t, "scale", last(aw.requests("/scale")), map[string]any{
		"kind": map[string]any{"group": "autoscaling", "version": "v1", "kind": "Scale"}, "resource": map[string]any{"group": "apps", "version": "v1", "resource": "deployments"},
		"subResource": "scale", "operation": "UPDATE", "name": "web", "namespace": "default",
		"object.kind": "Scale", "object.apiVersion": "autoscaling/v1", "object.spec.replicas": float64(3),
		"oldObject.kind": "Scale", "oldObject.spec.replicas": float64(1), "options.kind": "UpdateOptions",
	})
	merge := []string{"Content-Type", "application/merge-patch+json"}
	e.do("PATCH", deployments+"/web/scale", `{"spec":{"replicas":2}}`, merge...).mustCode(t, 200)
	if got := stored(); got != float64(2) {
		t.Errorf("PATCH scale of 2: stored %v", got)
	}
	e.do("PATCH", deployments+"/web/scale", `{"spec":{"replicas":3}}`, merge...).mustCode(t, 200)
	if got := stored(); got != float64(5) {
		t.Errorf("PATCH scale of 3: stored %v, want the webhook's 5", got)
	}
	wantReview(t, "scale patch", last(aw.requests("/scale")), map[string]any{"object.spec.replicas": float64(3), "oldObject.spec.replicas": float64(2)})

	// A server-side apply through the subresource is reviewed as the
	// Scale it leaves.
	applyScale := func(replicas int) *resp {
		return e.do("PATCH", deployments+"/web/scale?fieldManager=autoscaler&force=true", scale(replicas), "Content-Type", "application/apply-patch+yaml")
	}
	applyScale(2).mustCode(t, 200)
	if got := stored(); got != float64(2) {
		t.Errorf("apply scale of 2: stored %v", got)
	}
	wantReview(t, "scale apply", last(aw.requests("/scale")), map[string]any{
		"kind": map[string]any{"group": "autoscaling", "version": "v1", "kind": "Scale"}, "subResource": "scale", "operation": "UPDATE",
		"object.kind": "Scale", "object.spec.replicas": float64(2), "oldObject.kind": "Scale", "oldObject.spec.replicas": float64(5),
		"options.kind": "UpdateOptions",
	})
	if got := path(applyScale(3).mustCode(t, 200).obj(t), "spec.replicas"); got != float64(5) || stored() != float64(5) {
		t.Errorf("apply scale of 3: answered %v, stored %v, want the webhook's 5", got, stored())
	}
}

// TestWebhookMutatingCreateOrder calls the mutating webhooks on a create
// as upstream, after the built-in mutating admission and before what the
// storage does to a new object: the review's object has the service
// account and default tolerations the built-in plugins add, but no
// generated name, uid or creationTimestamp, and the status as written;
// a status the webhook writes on a type written through a status
// subresource is reset by the type's create rules.
func TestWebhookMutatingCreateOrder(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	aw := startAdmissionWebhook(t)
	aw.script("/pods", func(req map[string]any) map[string]any {
		return map[string]any{"patch": []any{
			map[string]any{"op": "add", "path": "/status", "value": map[string]any{"phase": "Failed", "message": "webhook"}},
			map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]any{"mutated": "yes"}},
		}}
	})
	e.webhookConfig("mutatingwebhookconfigurations", "pods", aw.ruleHook("pods.example.com", "/pods", rule([]any{"CREATE"}, "", "pods")))
	pods := "/api/v1/namespaces/default/pods"
	// The client's system fields are wiped before admission.
	pod := map[string]any{"metadata": map[string]any{"generateName": "gen-", "uid": "from-the-client", "creationTimestamp": "2020-01-01T00:00:00Z"},
		"spec":   map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
		"status": map[string]any{"phase": "Running"}}
	eventually(t, "the pods webhook", func() bool {
		r := e.do("POST", pods+"?dryRun=All", pod)
		return r.code == 201 && path(r.obj(t), "metadata.labels.mutated") == "yes"
	})
	created := e.do("POST", pods, pod).mustCode(t, 201).obj(t)
	name, _ := path(created, "metadata.name").(string)
	if !strings.HasPrefix(name, "gen-") || len(name) == len("gen-") {
		t.Fatalf("created as %q", name)
	}
	stored := e.do("GET", pods+"/"+name, nil).mustCode(t, 200).obj(t)
	if got := path(stored, "status.phase"); got != "Pending" || path(stored, "status.message") != nil {
		t.Errorf("stored status %v, want the create's own Pending", stored["status"])
	}
	if path(stored, "metadata.labels.mutated") != "yes" {
		t.Errorf("stored labels %v, want the webhook's", path(stored, "metadata.labels"))
	}
	req := last(aw.requests("/pods"))
	wantReview(t, "create", req, map[string]any{
		"operation": "CREATE", "name": nil, "namespace": "default", "object.metadata.name": nil, "object.metadata.generateName": "gen-",
		"object.metadata.namespace": "default", "object.metadata.uid": nil, "object.metadata.creationTimestamp": nil,
		"object.status": map[string]any{"phase": "Running"}, "object.spec.serviceAccountName": "default",
	})
	var tolerated []any
	for _, tol := range asSlice(path(req, "object.spec.tolerations")) {
		tolerated = append(tolerated, path(tol.(map[string]any), "key"))
	}
	if want := []any{"node." + platBrand.LongDomain + "/not-ready", "node." + platBrand.LongDomain + "/unreachable"}; !reflect.DeepEqual(tolerated, want) {
		t.Errorf("the webhook saw tolerations of %v, want the default ones %v", tolerated, want)
	}
	// A namespace that does not exist refuses the create before any
	// other admission (NamespaceLifecycle runs first): no webhook call.
	calls := len(aw.requests("/pods"))
	r := e.do("POST", "/api/v1/namespaces/nowhere/pods", pod)
	if r.code != 404 || path(r.obj(t), "reason") != "NotFound" || path(r.obj(t), "message") != `namespaces "nowhere" not found` {
		t.Errorf("create in a missing namespace: %d %s", r.code, r.body)
	}
	if n := len(aw.requests("/pods")); n != calls {
		t.Errorf("the webhook was called %d times for a create in a missing namespace", n-calls)
	}
}

// TestWebhookMutatingUpdateOrder calls the mutating webhooks on an update
// as upstream, before the type's update rules: a webhook's change to a
// deployment's pod template bumps its generation, and its change to the
// status, which the main resource does not write, is dropped.
func TestWebhookMutatingUpdateOrder(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	aw := startAdmissionWebhook(t)
	aw.script("/deployments", func(req map[string]any) map[string]any {
		if path(req, "object.metadata.labels.touch") != "yes" {
			return nil
		}
		return map[string]any{"patch": []any{
			map[string]any{"op": "add", "path": "/spec/template/metadata/labels/touched", "value": "yes"},
			map[string]any{"op": "add", "path": "/status", "value": map[string]any{"observedGeneration": 42}},
		}}
	})
	e.webhookConfig("mutatingwebhookconfigurations", "deployments",
		aw.ruleHook("deployments.example.com", "/deployments", rule([]any{"UPDATE"}, "apps", "deployments")))
	deployments := "/apis/apps/v1/namespaces/default/deployments"
	e.do("POST", deployments, deployment("web", 1)).mustCode(t, 201)
	touched := func(dryRun string) *resp {
		cur := e.do("GET", deployments+"/web", nil).mustCode(t, 200).obj(t)
		cur["metadata"].(map[string]any)["labels"] = map[string]any{"touch": "yes"}
		return e.do("PUT", deployments+"/web"+dryRun, cur)
	}
	eventually(t, "the deployments webhook", func() bool {
		r := touched("?dryRun=All")
		return r.code == 200 && path(r.obj(t), "spec.template.metadata.labels.touched") == "yes"
	})
	before := e.do("GET", deployments+"/web", nil).mustCode(t, 200).obj(t)
	if got := path(before, "metadata.generation"); got != float64(1) {
		t.Fatalf("generation before the update %v", got)
	}
	touched("").mustCode(t, 200)
	after := e.do("GET", deployments+"/web", nil).mustCode(t, 200).obj(t)
	if path(after, "spec.template.metadata.labels.touched") != "yes" {
		t.Errorf("stored template labels %v, want the webhook's", path(after, "spec.template.metadata.labels"))
	}
	if got := path(after, "metadata.generation"); got != float64(2) {
		t.Errorf("generation %v after the webhook changed the spec, want 2", got)
	}
	if got := path(after, "status.observedGeneration"); got == float64(42) {
		t.Errorf("the webhook's status was stored: %v", after["status"])
	}
	wantReview(t, "update", last(aw.requests("/deployments")), map[string]any{
		"operation": "UPDATE", "object.metadata.labels.touch": "yes", "oldObject.metadata.generation": float64(1),
	})
}

func asSlice(v any) []any { l, _ := v.([]any); return l }
