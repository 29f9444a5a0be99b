package server_test

import (
	"reflect"
	"strings"
	"testing"

	"platd/config"
)

// policyEnv is a server with helpers to write admission policies.
type policyEnv struct {
	*env
	t *testing.T
}

func startPolicies(t *testing.T) *policyEnv {
	t.Helper()
	return &policyEnv{env: start(t), t: t}
}

func (e *policyEnv) policyPath(resource string) string {
	return groupPath(platBrand.Group("admissionregistration"), "v1", "", resource)
}

// policy creates a ValidatingAdmissionPolicy.
func (e *policyEnv) policy(name string, spec map[string]any) {
	e.t.Helper()
	e.do("POST", e.policyPath("validatingadmissionpolicies"), map[string]any{"metadata": map[string]any{"name": name}, "spec": spec}).mustCode(e.t, 201)
}

// binding creates a ValidatingAdmissionPolicyBinding of policy with
// actions.
func (e *policyEnv) binding(name, policy string, actions []any, extra map[string]any) {
	e.t.Helper()
	spec := map[string]any{"policyName": policy, "validationActions": actions}
	for k, v := range extra {
		spec[k] = v
	}
	e.do("POST", e.policyPath("validatingadmissionpolicybindings"), map[string]any{"metadata": map[string]any{"name": name}, "spec": spec}).mustCode(e.t, 201)
}

// namespace creates a namespace with labels.
func (e *policyEnv) namespace(name string, labels map[string]any) {
	e.t.Helper()
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": name, "labels": labels}}).mustCode(e.t, 201)
}

// untilCode polls a dry-run request until it is answered code.
func (e *policyEnv) untilCode(what, method, path string, body any, code int) *resp {
	e.t.Helper()
	var r *resp
	eventually(e.t, what, func() bool {
		r = e.do(method, path+"?dryRun=All", body)
		return r.code == code
	})
	return r
}

func configMapRules(ops ...any) map[string]any {
	return map[string]any{"resourceRules": []any{map[string]any{
		"operations": ops, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"},
	}}}
}

func deployment(name string, replicas int) map[string]any {
	labels := map[string]any{"app": name}
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}}}
}

// TestAdmissionPolicyDeny binds a replicas limit on deployments with
// Deny: a deployment over it is refused with upstream's 422 and is not
// stored, one within it is created, and removing the binding lifts the
// limit.
func TestAdmissionPolicyDeny(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	e.policy("replicas", map[string]any{
		"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
			"operations": []any{"CREATE", "UPDATE"}, "apiGroups": []any{"apps"}, "apiVersions": []any{"v1"}, "resources": []any{"deployments"},
		}}},
		"validations": []any{map[string]any{"expression": "object.spec.replicas <= 5"}},
	})
	e.binding("replicas-binding", "replicas", []any{"Deny"}, nil)
	deployments := "/apis/apps/v1/namespaces/default/deployments"
	st := e.untilCode("the policy to deny", "POST", deployments, deployment("web", 6), 422).obj(t)
	const msg = `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: failed expression: object.spec.replicas <= 5`
	want := map[string]any{
		"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
		"message": msg, "reason": "Invalid", "code": float64(422),
		"details": map[string]any{"name": "web", "group": "apps", "kind": "deployments", "causes": []any{map[string]any{
			"message": "ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: failed expression: object.spec.replicas <= 5",
		}}},
	}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("refusal:\n got  %v\n want %v", st, want)
	}
	e.do("POST", deployments, deployment("web", 6)).mustCode(t, 422).mustMessage(t, msg)
	e.do("GET", deployments+"/web", nil).mustCode(t, 404)
	e.do("POST", deployments, deployment("web", 5)).mustCode(t, 201)
	// An update over the limit is refused as well, and changes nothing.
	e.do("PATCH", deployments+"/web", `{"spec":{"replicas":7}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 422)
	if got := path(e.do("GET", deployments+"/web", nil).mustCode(t, 200).obj(t), "spec.replicas"); got != float64(5) {
		t.Errorf("replicas after a refused update: %v", got)
	}
	e.do("DELETE", e.policyPath("validatingadmissionpolicybindings")+"/replicas-binding", nil).mustCode(t, 200)
	e.untilCode("the removed binding to stop denying", "POST", deployments, deployment("big", 9), 201)
}

// TestAdmissionPolicyDeleteCollection: the items of a deletecollection
// are admitted one by one, each with its old state, under the
// collection's empty name, as upstream admits them: a policy requiring
// deletes to name their object refuses the collection (naming the object
// "Unknown", as upstream's refusal of a nameless delete) and leaves
// every item stored, while single deletes pass.
func TestAdmissionPolicyDeleteCollection(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	e.policy("named-deletes", map[string]any{
		"matchConstraints": configMapRules("DELETE"),
		"validations": []any{
			// An empty name is left out of the request, as upstream's.
			map[string]any{"expression": "has(request.name)", "message": "deletes must name their object"},
			map[string]any{"expression": "oldObject.metadata.name != 'guarded'", "message": "guarded stays"},
		},
	})
	e.binding("named-deletes-binding", "named-deletes", []any{"Deny"}, nil)
	base := "/api/v1/namespaces/default/configmaps"
	for _, name := range []string{"a", "b", "guarded"} {
		e.do("POST", base, map[string]any{"metadata": map[string]any{"name": name, "labels": map[string]any{"set": "dc"}}}).mustCreated(t)
	}
	var r *resp
	eventually(t, "the policy to deny", func() bool {
		r = e.do("DELETE", base+"?labelSelector=set%3Ddc&dryRun=All", nil)
		return r.code == 422
	})
	const msg = `configmaps "Unknown" is forbidden: ValidatingAdmissionPolicy 'named-deletes' with binding 'named-deletes-binding' denied request: deletes must name their object`
	r.mustMessage(t, msg)
	e.do("DELETE", base+"?labelSelector=set%3Ddc", nil).mustCode(t, 422).mustMessage(t, msg)
	if got := strings.Join(names(t, e.do("GET", base+"?labelSelector=set%3Ddc", nil).mustCode(t, 200).obj(t)), ","); got != "a,b,guarded" {
		t.Errorf("after the refused deletecollection: %s, want every item kept", got)
	}
	e.do("DELETE", base+"/guarded", nil).mustCode(t, 422).mustMessage(t,
		`configmaps "guarded" is forbidden: ValidatingAdmissionPolicy 'named-deletes' with binding 'named-deletes-binding' denied request: guarded stays`)
	e.do("DELETE", base+"/a", nil).mustCode(t, 200)
	e.do("GET", base+"/a", nil).mustCode(t, 404)
}

// TestAdmissionPolicyWarnAndAudit binds one policy with Warn: the write
// succeeds and is answered upstream's Warning.
func TestAdmissionPolicyWarn(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	e.policy("no-debug", map[string]any{
		"matchConstraints": configMapRules("CREATE"),
		"validations": []any{map[string]any{
			"expression":        "!has(object.data) || !('debug' in object.data)",
			"messageExpression": "'configmap ' + object.metadata.name + ' sets debug'",
			"reason":            "Forbidden",
		}},
	})
	e.binding("no-debug", "no-debug", []any{"Warn"}, nil)
	const warning = `299 - "Validation failed for ValidatingAdmissionPolicy 'no-debug' with binding 'no-debug': configmap c1 sets debug"`
	eventually(t, "the warning", func() bool {
		r := e.do("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", cm("c1", map[string]string{"debug": "1"}, nil)).mustCode(t, 201)
		return r.header.Get("Warning") == warning
	})
	r := e.do("POST", "/api/v1/namespaces/default/configmaps", cm("c1", map[string]string{"debug": "1"}, nil)).mustCode(t, 201)
	if got := r.header.Values("Warning"); !reflect.DeepEqual(got, []string{warning}) {
		t.Errorf("warnings %q", got)
	}
	e.do("GET", "/api/v1/namespaces/default/configmaps/c1", nil).mustCode(t, 200)
	// Bound with Deny too, its reason picks the code.
	e.binding("no-debug-deny", "no-debug", []any{"Deny"}, nil)
	st := e.untilCode("the deny binding", "POST", "/api/v1/namespaces/default/configmaps", cm("c2", map[string]string{"debug": "1"}, nil), 403).obj(t)
	if st["reason"] != "Forbidden" || st["message"] != `configmaps "c2" is forbidden: ValidatingAdmissionPolicy 'no-debug' with binding 'no-debug-deny' denied request: configmap c2 sets debug` {
		t.Errorf("refusal %v", st)
	}
}

// TestAdmissionPolicyParams checks parameters: a missing one with
// parameterNotFoundAction Deny refuses, a present one is read through
// params, and the binding's namespaceSelector limits where it applies.
func TestAdmissionPolicyParams(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	e.namespace("limits", nil)
	e.namespace("team", map[string]any{"limited": "yes"})
	e.namespace("free", nil)
	e.policy("size", map[string]any{
		"paramKind":        map[string]any{"apiVersion": "v1", "kind": "ConfigMap"},
		"matchConstraints": configMapRules("CREATE"),
		"variables":        []any{map[string]any{"name": "keys", "expression": "has(object.data) ? object.data.size() : 0"}},
		"validations": []any{map[string]any{
			"expression":        "variables.keys <= int(params.data.max)",
			"messageExpression": "'at most ' + params.data.max + ' keys in ' + namespaceObject.metadata.name",
		}},
	})
	e.binding("size", "size", []any{"Deny"}, map[string]any{
		"paramRef":       map[string]any{"name": "limit", "namespace": "limits", "parameterNotFoundAction": "Deny"},
		"matchResources": map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"limited": "yes"}}},
	})
	two := cm("two", map[string]string{"a": "1", "b": "2"}, nil)
	e.untilCode("the missing parameter to deny", "POST", "/api/v1/namespaces/team/configmaps", two, 422).
		mustMessage(t, "configmaps \"two\" is forbidden: ValidatingAdmissionPolicy 'size' with binding 'size' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction")
	// Outside the selected namespaces the policy does not apply.
	e.do("POST", "/api/v1/namespaces/free/configmaps", two).mustCode(t, 201)
	e.do("POST", "/api/v1/namespaces/limits/configmaps", cm("limit", map[string]string{"max": "1"}, nil)).mustCode(t, 201)
	e.untilCode("the parameter to be read", "POST", "/api/v1/namespaces/team/configmaps", two, 422).
		mustMessage(t, `configmaps "two" is forbidden: ValidatingAdmissionPolicy 'size' with binding 'size' denied request: at most 1 keys in team`)
	e.do("POST", "/api/v1/namespaces/team/configmaps", cm("one", map[string]string{"a": "1"}, nil)).mustCode(t, 201)
}

// TestAdmissionPolicyMatchAndFailure checks match conditions, object
// selectors, DELETE and the failure policies: a runtime error denies
// under Fail and is ignored under Ignore.
func TestAdmissionPolicyMatchAndFailure(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	for _, fp := range []string{"Fail", "Ignore"} {
		name := strings.ToLower(fp)
		e.policy(name, map[string]any{
			"failurePolicy":    fp,
			"matchConstraints": configMapRules("CREATE"),
			"matchConditions":  []any{map[string]any{"name": "mine", "expression": "object.metadata.name.startsWith('" + name + "-')"}},
			"validations":      []any{map[string]any{"expression": "object.data.mode == 'safe'"}},
		})
		e.binding(name, name, []any{"Deny"}, nil)
	}
	e.policy("keep", map[string]any{
		"matchConstraints": map[string]any{
			"resourceRules":  configMapRules("DELETE")["resourceRules"],
			"objectSelector": map[string]any{"matchLabels": map[string]any{"keep": "true"}},
		},
		"validations": []any{map[string]any{"expression": "request.userInfo.username != 'admin'", "message": "kept objects stay"}},
	})
	e.binding("keep", "keep", []any{"Deny"}, nil)
	cms := "/api/v1/namespaces/default/configmaps"
	e.untilCode("the failing expression to deny", "POST", cms, cm("fail-a", map[string]string{}, nil), 422).
		mustMessage(t, `configmaps "fail-a" is forbidden: ValidatingAdmissionPolicy 'fail' with binding 'fail' denied request: expression 'object.data.mode == 'safe'' resulted in error: no such key: mode`)
	// Dry runs wait for the other binding too, so that no write below
	// lands while only some of them are in effect.
	e.untilCode("the Ignore policy to deny", "POST", cms, cm("ignore-b", map[string]string{"mode": "x"}, nil), 422)
	e.do("POST", cms, cm("fail-b", map[string]string{"mode": "safe"}, nil)).mustCode(t, 201)
	// Under Ignore the error admits; a false validation still denies.
	e.do("POST", cms, cm("ignore-a", map[string]string{}, nil)).mustCode(t, 201)
	e.do("POST", cms, cm("ignore-b", map[string]string{"mode": "x"}, nil)).mustCode(t, 422).
		mustMessage(t, `configmaps "ignore-b" is forbidden: ValidatingAdmissionPolicy 'ignore' with binding 'ignore' denied request: failed expression: object.data.mode == 'safe'`)
	// Names outside the match conditions are not checked.
	e.do("POST", cms, cm("other", map[string]string{}, map[string]string{"keep": "true"})).mustCode(t, 201)
	e.do("POST", cms, cm("loose", map[string]string{}, nil)).mustCode(t, 201)
	e.untilCode("the delete policy", "DELETE", cms+"/other", nil, 422).
		mustMessage(t, `configmaps "other" is forbidden: ValidatingAdmissionPolicy 'keep' with binding 'keep' denied request: kept objects stay`)
	e.do("GET", cms+"/other", nil).mustCode(t, 200)
	e.do("DELETE", cms+"/loose", nil).mustCode(t, 200)
}

// TestAdmissionPolicyAudit binds a policy with Audit: the write passes,
// and its audit event carries upstream's validation_failure annotation
// and the policy's own audit annotation.
func TestAdmissionPolicyAudit(t *testing.T) {
	t.Parallel()
	opt, log := withAudit(t, auditPolicy)
	e := &policyEnv{env: start(t, opt), t: t}
	e.namespace("lvl-meta", nil)
	e.policy("audited", map[string]any{
		"matchConstraints": configMapRules("CREATE"),
		"validations":      []any{map[string]any{"expression": "object.metadata.name != 'bad'", "message": "bad name"}},
		"auditAnnotations": []any{map[string]any{"key": "seen", "valueExpression": "'cm ' + object.metadata.name"}},
	})
	e.binding("audited", "audited", []any{"Audit"}, nil)
	cms := "/api/v1/namespaces/lvl-meta/configmaps"
	// Dry runs, which store nothing, wait for the binding.
	eventually(t, "the audit annotation", func() bool {
		r := e.do("POST", cms+"?dryRun=All", cm("bad", nil, nil)).mustCode(t, 201)
		return strings.Contains(auditEvents(t, log, r.header.Get("Audit-Id"), 1)[0], `"audited/seen":"cm bad"`)
	})
	r := e.do("POST", cms, cm("bad", nil, nil)).mustCode(t, 201)
	ev := auditEvents(t, log, r.header.Get("Audit-Id"), 1)[0]
	if !strings.Contains(ev, `"audited/seen":"cm bad"`) {
		t.Errorf("event %s\nlacks the policy's annotation", ev)
	}
	want := branded(`"validation.policy.admission.DOMAIN/validation_failure":"[{\"message\":\"bad name\",\"policy\":\"audited\",\"binding\":\"audited\",\"expressionIndex\":0,\"validationActions\":[\"Audit\"]}]"`)
	if !strings.Contains(ev, want) {
		t.Errorf("event %s\nlacks %s", ev, want)
	}
}

// TestAdmissionPolicyAuthorizer checks a policy that asks the server's
// authorizer (RBAC) about another user: refused until a role grants it.
func TestAdmissionPolicyAuthorizer(t *testing.T) {
	t.Parallel()
	e := &policyEnv{env: start(t, func(o *config.Options) { o.AuthorizationModes = []string{config.ModeRBAC} }), t: t}
	e.policy("reader", map[string]any{
		"matchConstraints": configMapRules("CREATE"),
		"validations": []any{map[string]any{
			"expression":        "request.userInfo.username == 'admin' && authorizer.requestResource.check('create').allowed()",
			"messageExpression": "'not admin: ' + request.userInfo.username",
		}, map[string]any{
			"expression": "authorizer.serviceAccount('default', 'reader').group('').resource('secrets').namespace('default').check('get').allowed()",
			"message":    "reader cannot read secrets",
		}},
	})
	e.binding("reader", "reader", []any{"Deny"}, nil)
	cms := "/api/v1/namespaces/default/configmaps"
	e.untilCode("the policy to deny", "POST", cms, cm("c", nil, nil), 422).
		mustMessage(t, `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'reader' with binding 'reader' denied request: reader cannot read secrets`)
	rbac := platBrand.Group("rbac.authorization")
	e.do("POST", groupPath(rbac, "v1", "default", "roles"), map[string]any{"metadata": map[string]any{"name": "secrets"},
		"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"get"}}}}).mustCode(t, 201)
	e.do("POST", groupPath(rbac, "v1", "default", "rolebindings"), map[string]any{"metadata": map[string]any{"name": "secrets"},
		"roleRef":  map[string]any{"apiGroup": rbac, "kind": "Role", "name": "secrets"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "reader", "namespace": "default"}}}).mustCode(t, 201)
	e.untilCode("the role to allow", "POST", cms, cm("c", nil, nil), 201)
}

// TestAdmissionPolicyEquivalent checks matchPolicy: a policy on
// autoscaling/v2 applies to an autoscaling/v1 request (converted) under
// Equivalent, and not under Exact.
func TestAdmissionPolicyEquivalent(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	for _, mp := range []string{"Exact", "Equivalent"} {
		name := strings.ToLower(mp)
		e.policy(name, map[string]any{
			"matchConstraints": map[string]any{"matchPolicy": mp, "resourceRules": []any{map[string]any{
				"operations": []any{"CREATE"}, "apiGroups": []any{"autoscaling"}, "apiVersions": []any{"v2"}, "resources": []any{"horizontalpodautoscalers"}}}},
			"validations": []any{map[string]any{
				"expression":        "object.apiVersion == 'autoscaling/v2' && object.spec.maxReplicas <= 10",
				"messageExpression": "'" + name + ": ' + request.kind.version + ' from ' + request.requestKind.version + ', ' + string(object.spec.metrics.size()) + ' metrics'",
			}},
		})
		e.binding(name, name, []any{"Deny"}, nil)
	}
	hpa := map[string]any{"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": map[string]any{"name": "h"},
		"spec": map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
			"maxReplicas": 20, "targetCPUUtilizationPercentage": 50}}
	e.untilCode("the v2 policy to deny a v1 request", "POST", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", hpa, 422).
		mustMessage(t, `horizontalpodautoscalers.autoscaling "h" is forbidden: ValidatingAdmissionPolicy 'equivalent' with binding 'equivalent' denied request: equivalent: v2 from v1, 1 metrics`)
	// Without it, the Exact policy lets the v1 request pass.
	e.do("DELETE", e.policyPath("validatingadmissionpolicybindings")+"/equivalent", nil).mustCode(t, 200)
	e.untilCode("the Exact policy alone to admit", "POST", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", hpa, 201)
	v2 := map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": map[string]any{"name": "h"},
		"spec": map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 20}}
	// A dry run waits for the Exact binding before the write.
	const exact = `horizontalpodautoscalers.autoscaling "h" is forbidden: ValidatingAdmissionPolicy 'exact' with binding 'exact' denied request: exact: v2 from v2, 1 metrics`
	e.untilCode("the Exact policy to deny a v2 request", "POST", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", v2, 422).mustMessage(t, exact)
	e.do("POST", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", v2).mustCode(t, 422).mustMessage(t, exact)
}

// TestAdmissionPolicyScale checks that a write through the scale
// subresource is seen as upstream's: a Scale of the scale subresource.
func TestAdmissionPolicyScale(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	e.policy("scale", map[string]any{
		"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
			"operations": []any{"UPDATE"}, "apiGroups": []any{"apps"}, "apiVersions": []any{"v1"}, "resources": []any{"deployments/scale"}}}},
		"validations": []any{map[string]any{
			"expression":        "object.spec.replicas <= 5",
			"messageExpression": "object.apiVersion + ' ' + request.kind.kind + ' of ' + request.resource.resource + '/' + request.subResource + ': ' + string(oldObject.spec.replicas) + ' to ' + string(object.spec.replicas)",
		}},
	})
	e.binding("scale", "scale", []any{"Deny"}, nil)
	e.binding("scale-warn", "scale", []any{"Warn"}, nil)
	deployments := "/apis/apps/v1/namespaces/default/deployments"
	e.do("POST", deployments, deployment("web", 2)).mustCode(t, 201)
	const msg = "autoscaling/v1 Scale of deployments/scale: 2 to 7"
	// Dry runs wait for both bindings, so that no scale goes through
	// while only one of them is in effect.
	eventually(t, "the scale policy's bindings", func() bool {
		r := e.do("PATCH", deployments+"/web/scale?dryRun=All", `{"spec":{"replicas":7}}`, "Content-Type", "application/merge-patch+json")
		return r.code == 422 && r.header.Get("Warning") != ""
	})
	r := e.do("PATCH", deployments+"/web/scale", `{"spec":{"replicas":7}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 422)
	r.mustMessage(t, `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'scale' with binding 'scale' denied request: `+msg)
	if got := r.header.Get("Warning"); got != `299 - "Validation failed for ValidatingAdmissionPolicy 'scale' with binding 'scale-warn': `+msg+`"` {
		t.Errorf("warning %q", got)
	}
	if got := path(e.do("GET", deployments+"/web", nil).mustCode(t, 200).obj(t), "spec.replicas"); got != float64(2) {
		t.Errorf("replicas after a refused scale: %v", got)
	}
	e.do("PATCH", deployments+"/web/scale", `{"spec":{"replicas":4}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
	// Writes of the deployment itself are not writes of its scale.
	e.do("PATCH", deployments+"/web", `{"spec":{"replicas":9}}`, "Content-Type", "application/merge-patch+json").mustCode(t, 200)
}

// TestAdmissionPolicyEquivalentEvents checks that core events and the
// events group's events, which share their stored form, are equivalent
// resources: a rule for either group matches a write through the other.
func TestAdmissionPolicyEquivalentEvents(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	eventsGroup := platBrand.Group("events")
	for _, g := range []string{"", eventsGroup} {
		name := "core"
		if g != "" {
			name = "grouped"
		}
		e.policy(name, map[string]any{
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"operations": []any{"CREATE"}, "apiGroups": []any{g}, "apiVersions": []any{"v1"}, "resources": []any{"events"}}}},
			"validations": []any{map[string]any{"expression": "false",
				"messageExpression": "'" + name + ": ' + request.resource.group + ' from ' + request.requestResource.group + '/' + request.requestResource.version"}},
		})
	}
	coreEvent := map[string]any{"metadata": map[string]any{"name": "e1"}, "involvedObject": map[string]any{"kind": "Pod", "name": "p", "namespace": "default"},
		"reason": "R", "message": "m", "type": "Normal"}
	groupedEvent := map[string]any{"metadata": map[string]any{"name": "e2"}, "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "x/y",
		"reportingInstance": "i", "action": "A", "reason": "R", "type": "Normal", "regarding": map[string]any{"kind": "Pod", "name": "p", "namespace": "default"}}
	// Each policy is bound alone, so that its answer is the only one.
	e.binding("grouped", "grouped", []any{"Deny"}, nil)
	e.untilCode("the events-group policy to deny a core event", "POST", "/api/v1/namespaces/default/events", coreEvent, 422).
		mustMessage(t, `events "e1" is forbidden: ValidatingAdmissionPolicy 'grouped' with binding 'grouped' denied request: grouped: `+eventsGroup+` from /v1`)
	e.do("DELETE", e.policyPath("validatingadmissionpolicybindings")+"/grouped", nil).mustCode(t, 200)
	e.binding("core", "core", []any{"Deny"}, nil)
	eventually(t, "only the core binding", func() bool {
		r := e.do("POST", "/api/v1/namespaces/default/events?dryRun=All", coreEvent)
		return r.code == 422 && strings.Contains(string(r.body), "ValidatingAdmissionPolicy 'core'")
	})
	e.do("POST", groupPath(eventsGroup, "v1", "default", "events"), groupedEvent).mustCode(t, 422).
		mustMessage(t, `events.`+eventsGroup+` "e2" is forbidden: ValidatingAdmissionPolicy 'core' with binding 'core' denied request: core:  from `+eventsGroup+`/v1`)
	e.do("GET", groupPath(eventsGroup, "v1", "default", "events")+"/e2", nil).mustCode(t, 404)
}

// TestAdmissionPolicyConnect checks that a connect (here an exec) passes
// the policies before the answer that no node serves it: its object is
// the connect's options, and a denial is answered as other denials.
func TestAdmissionPolicyConnect(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	e.policy("noexec", map[string]any{
		"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
			"operations": []any{"CONNECT"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"pods/exec"},
		}}},
		"validations": []any{map[string]any{"expression": "object.command.size() < 2 && !has(request.options)",
			"messageExpression": "request.operation + ' ' + request.kind.kind + ' ' + object.kind + ': ' + object.command.join(' ')"}},
	})
	e.binding("noexec", "noexec", []any{"Deny"}, nil)
	pod := map[string]any{"metadata": map[string]any{"name": "p"}, "spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}
	e.do("POST", "/api/v1/namespaces/default/pods", pod).mustCode(t, 201)
	exec := "/api/v1/namespaces/default/pods/p/exec?command=ls&command=-l&stdout=true"
	// An exec changes nothing: it may be repeated until the policy is in effect.
	var r *resp
	eventually(t, "the connect policy", func() bool {
		r = e.do("POST", exec, nil)
		return r.code == 422
	})
	r.mustMessage(t, `pods "p" is forbidden: ValidatingAdmissionPolicy 'noexec' with binding 'noexec' denied request: CONNECT PodExecOptions PodExecOptions: ls -l`)
	// One allowed reaches the answer that no node serves it.
	e.do("POST", "/api/v1/namespaces/default/pods/p/exec?command=ls&stdout=true", nil).mustCode(t, 503)
}

// TestAdmissionPolicyLongWarnings checks that warnings past upstream's
// bound of 4096 runes in all are each cut to 256 runes.
func TestAdmissionPolicyLongWarnings(t *testing.T) {
	t.Parallel()
	e := startPolicies(t)
	x, y := strings.Repeat("x", 3000), strings.Repeat("y", 3000)
	e.policy("long", map[string]any{
		"matchConstraints": configMapRules("CREATE"),
		"validations": []any{map[string]any{"expression": "false", "message": x},
			map[string]any{"expression": "false", "message": y}},
	})
	e.binding("long", "long", []any{"Warn"}, nil)
	const prefix = "Validation failed for ValidatingAdmissionPolicy 'long' with binding 'long': "
	want := []string{`299 - "` + (prefix + x)[:256] + `"`, `299 - "` + (prefix + y)[:256] + `"`}
	var got []string
	eventually(t, "the warnings", func() bool {
		got = e.do("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", map[string]any{"metadata": map[string]any{"name": "cm"}}).mustCode(t, 201).header.Values("Warning")
		return len(got) > 0
	})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings %.300q", got)
	}
}
