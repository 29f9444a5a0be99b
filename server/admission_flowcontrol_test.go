package server_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"platd/config"
	"platd/server/builtin"
)

// TestAdmissionFlowControlDefaults creates objects of each type and reads
// back the defaults upstream's v1 defaulting stores.
func TestAdmissionFlowControlDefaults(t *testing.T) {
	t.Parallel()
	e := start(t)
	adm := func(resource string) string {
		return groupPath(platBrand.Group("admissionregistration"), "v1", "", resource)
	}
	fc := func(resource string) string {
		return groupPath(platBrand.Group("flowcontrol.apiserver"), "v1", "", resource)
	}
	hook := map[string]any{
		"name": "check.example.com", "sideEffects": "None", "admissionReviewVersions": []any{"v1"},
		"clientConfig": map[string]any{"service": map[string]any{"name": "hook", "namespace": "default"}},
		"rules": []any{map[string]any{"operations": []any{"CREATE"}, "apiGroups": []any{""},
			"apiVersions": []any{"v1"}, "resources": []any{"pods"}}},
	}
	type check = fieldCheck
	tests := []struct {
		name, path string
		body       map[string]any
		checks     []check
	}{
		{"mutating webhook", adm("mutatingwebhookconfigurations"),
			map[string]any{"metadata": map[string]any{"name": "mw"}, "webhooks": []any{hook}},
			[]check{
				{[]any{"metadata", "generation"}, 1.0},
				{[]any{"webhooks", 0, "failurePolicy"}, "Fail"},
				{[]any{"webhooks", 0, "matchPolicy"}, "Equivalent"},
				{[]any{"webhooks", 0, "namespaceSelector"}, map[string]any{}},
				{[]any{"webhooks", 0, "objectSelector"}, map[string]any{}},
				{[]any{"webhooks", 0, "timeoutSeconds"}, 10.0},
				{[]any{"webhooks", 0, "reinvocationPolicy"}, "Never"},
				{[]any{"webhooks", 0, "rules", 0, "scope"}, "*"},
				{[]any{"webhooks", 0, "clientConfig", "service", "port"}, 443.0},
			}},
		{"validating webhook", adm("validatingwebhookconfigurations"),
			map[string]any{"metadata": map[string]any{"name": "vw"}, "webhooks": []any{hook}},
			[]check{
				{[]any{"webhooks", 0, "timeoutSeconds"}, 10.0},
				{[]any{"webhooks", 0, "reinvocationPolicy"}, nil},
			}},
		{"policy", adm("validatingadmissionpolicies"),
			map[string]any{"metadata": map[string]any{"name": "pol"}, "spec": map[string]any{
				"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{"operations": []any{"*"},
					"apiGroups": []any{"apps"}, "apiVersions": []any{"v1"}, "resources": []any{"deployments"}}}},
				"validations": []any{map[string]any{"expression": "true"}},
			}, "status": map[string]any{"observedGeneration": 7}},
			[]check{
				{[]any{"metadata", "generation"}, 1.0},
				{[]any{"spec", "failurePolicy"}, "Fail"},
				{[]any{"spec", "matchConstraints", "matchPolicy"}, "Equivalent"},
				{[]any{"spec", "matchConstraints", "namespaceSelector"}, map[string]any{}},
				{[]any{"spec", "matchConstraints", "resourceRules", 0, "scope"}, "*"},
				{[]any{"status"}, map[string]any{}},
			}},
		{"binding", adm("validatingadmissionpolicybindings"),
			map[string]any{"metadata": map[string]any{"name": "bind"}, "spec": map[string]any{
				"policyName": "pol", "validationActions": []any{"Deny", "Audit"}, "matchResources": map[string]any{}}},
			[]check{
				{[]any{"spec", "matchResources", "matchPolicy"}, "Equivalent"},
				{[]any{"spec", "matchResources", "objectSelector"}, map[string]any{}},
				{[]any{"spec", "paramRef"}, nil},
			}},
		{"level unset shares", fc("prioritylevelconfigurations"),
			map[string]any{"metadata": map[string]any{"name": "pl-default"}, "spec": map[string]any{"type": "Limited",
				"limited": map[string]any{"limitResponse": map[string]any{"type": "Queue", "queuing": map[string]any{"queues": 16}}}}},
			[]check{
				{[]any{"spec", "limited", "nominalConcurrencyShares"}, 30.0},
				{[]any{"spec", "limited", "lendablePercent"}, 0.0},
				{[]any{"spec", "limited", "limitResponse", "queuing"}, map[string]any{"queues": 16.0, "handSize": 8.0, "queueLengthLimit": 50.0}},
				{[]any{"status"}, map[string]any{}},
			}},
		{"level zero shares", fc("prioritylevelconfigurations"),
			map[string]any{"metadata": map[string]any{"name": "pl-zero"}, "spec": map[string]any{"type": "Limited",
				"limited": map[string]any{"nominalConcurrencyShares": 0, "limitResponse": map[string]any{"type": "Reject"}}}},
			[]check{
				{[]any{"spec", "limited", "nominalConcurrencyShares"}, 0.0},
				{[]any{"spec", "limited", "lendablePercent"}, 0.0},
			}},
		{"flow schema", fc("flowschemas"),
			map[string]any{"metadata": map[string]any{"name": "fs"}, "spec": map[string]any{
				"priorityLevelConfiguration": map[string]any{"name": "pl-default"}},
				"status": map[string]any{"conditions": []any{map[string]any{"type": "Dangling", "status": "True"}}}},
			[]check{
				{[]any{"metadata", "generation"}, 1.0},
				{[]any{"spec", "matchingPrecedence"}, 1000.0},
				{[]any{"spec", "distinguisherMethod"}, nil},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { mustStore(t, e, tt.path, tt.body, tt.checks) })
	}
	// The status a client sends with a flow schema is dropped; the
	// server's own Dangling condition comes after.
	if st := at(e.do("GET", fc("flowschemas")+"/fs", nil).mustCode(t, 200).obj(t), "status"); !reflect.DeepEqual(st, map[string]any{}) {
		if c, _ := at(st.(map[string]any), "conditions", 0).(map[string]any); c == nil || c["status"] != "False" || c["reason"] != "Found" {
			t.Errorf("fs: status %v, want none or the server's Dangling condition", st)
		}
	}
	eventually(t, "fs's Dangling condition", func() bool {
		c, _ := at(e.do("GET", fc("flowschemas")+"/fs", nil).mustCode(t, 200).obj(t), "status", "conditions", 0).(map[string]any)
		return c != nil && c["status"] == "False" && c["reason"] == "Found"
	})
}

// TestAdmissionFlowControlRejectInvalid checks that each type answers a
// broken object with 422 and upstream's causes.
func TestAdmissionFlowControlRejectInvalid(t *testing.T) {
	t.Parallel()
	e := start(t)
	ag, fg := platBrand.Group("admissionregistration"), platBrand.Group("flowcontrol.apiserver")
	tests := []struct {
		name, resource, group string
		body                  map[string]any
		kind                  string
		causes                []string
	}{
		{"webhook", "validatingwebhookconfigurations", ag,
			map[string]any{"metadata": map[string]any{"name": "w"}, "webhooks": []any{map[string]any{
				"name": "hook", "clientConfig": map[string]any{"url": "http://example.com/x"}}}},
			"ValidatingWebhookConfiguration." + ag, []string{
				`webhooks[0].name: Invalid value: "hook": should be a domain with at least three segments separated by dots`,
				`webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun`,
				`webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
				`webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1`,
			}},
		{"policy", "validatingadmissionpolicies", ag,
			map[string]any{"metadata": map[string]any{"name": "p"}, "spec": map[string]any{}},
			"ValidatingAdmissionPolicy." + ag, []string{
				`spec.matchConstraints: Required value`,
				`spec.validations: Required value: validations or auditAnnotations must contain at least one item`,
				`spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item`,
			}},
		{"binding", "validatingadmissionpolicybindings", ag,
			map[string]any{"metadata": map[string]any{"name": "b"}, "spec": map[string]any{"validationActions": []any{"Warn", "Warn"}}},
			"ValidatingAdmissionPolicyBinding." + ag, []string{
				`spec.policyName: Required value`,
				`spec.validationActions[1]: Duplicate value: "Warn"`,
			}},
		{"level", "prioritylevelconfigurations", fg,
			map[string]any{"metadata": map[string]any{"name": "l"}, "spec": map[string]any{"type": "Limited", "limited": map[string]any{
				"nominalConcurrencyShares": -1, "limitResponse": map[string]any{"type": "Queue", "queuing": map[string]any{"queues": 2, "handSize": 3}}}}},
			"PriorityLevelConfiguration." + fg, []string{
				`spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer`,
				`spec.limited.limitResponse.queuing.handSize: Invalid value: 3: should not be greater than queues (2)`,
			}},
		{"schema", "flowschemas", fg,
			map[string]any{"metadata": map[string]any{"name": "s"}, "spec": map[string]any{"matchingPrecedence": 1,
				"priorityLevelConfiguration": map[string]any{"name": "l"}, "rules": []any{map[string]any{
					"subjects": []any{map[string]any{"kind": "User"}}, "nonResourceRules": []any{map[string]any{"verbs": []any{"get"}, "nonResourceURLs": []any{"healthz"}}}}}}},
			"FlowSchema." + fg, []string{
				`spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1`,
				`spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'`,
				`spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "healthz": must start with slash`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustRefuse(t, e, groupPath(tt.group, "v1", "", tt.resource), tt.body, tt.kind, tt.causes)
		})
	}
}

// TestAdmissionFlowControlStatusSplit checks that the main resource keeps
// status and bumps the generation on spec changes, and that the status
// subresource keeps spec and checks only status.
func TestAdmissionFlowControlStatusSplit(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := groupPath(platBrand.Group("flowcontrol.apiserver"), "v1", "", "flowschemas")
	e.do("POST", base, map[string]any{"metadata": map[string]any{"name": "fs"}, "spec": map[string]any{
		"matchingPrecedence": 500, "priorityLevelConfiguration": map[string]any{"name": "pl"}}}).mustCode(t, 201)

	// The server writes the schema's Dangling condition itself: the test
	// writes after it, the condition the server would, so that the two
	// do not race.
	var cur map[string]any
	eventually(t, "the server's Dangling condition", func() bool {
		cur = e.do("GET", base+"/fs", nil).mustCode(t, 200).obj(t)
		return at(cur, "status", "conditions") != nil
	})
	cond := map[string]any{"type": "Dangling", "status": "True", "reason": "NotFound", "lastTransitionTime": "2026-01-02T03:04:05Z",
		"message": `This FlowSchema references the PriorityLevelConfiguration object named "pl" but there is no such object`}
	cur["status"] = map[string]any{"conditions": []any{cond}}
	cur["spec"].(map[string]any)["matchingPrecedence"] = 600
	st := e.do("PUT", base+"/fs/status", cur).mustCode(t, 200).obj(t)
	if at(st, "status", "conditions", 0, "reason") != "NotFound" || at(st, "spec", "matchingPrecedence") != 500.0 || at(st, "metadata", "generation") != 1.0 {
		t.Errorf("status write: status %v, spec %v, generation %v", st["status"], st["spec"], at(st, "metadata", "generation"))
	}

	st["spec"].(map[string]any)["matchingPrecedence"] = 700
	st["status"] = map[string]any{}
	up := e.do("PUT", base+"/fs", st).mustCode(t, 200).obj(t)
	if at(up, "spec", "matchingPrecedence") != 700.0 || at(up, "status", "conditions", 0, "type") != "Dangling" || at(up, "metadata", "generation") != 2.0 {
		t.Errorf("main write: spec %v, status %v, generation %v", up["spec"], up["status"], at(up, "metadata", "generation"))
	}

	// A status write is checked by the status rules only: a spec that
	// would be refused does not matter, a nameless condition does.
	up["spec"] = map[string]any{"matchingPrecedence": -1}
	up["status"] = map[string]any{"conditions": []any{cond, cond}}
	bad := e.do("PUT", base+"/fs/status", up).mustCode(t, 422).obj(t)
	if want := `FlowSchema.` + platBrand.Group("flowcontrol.apiserver") + ` "fs" is invalid: status.conditions[1].type: Duplicate value: "Dangling"`; bad["message"] != want {
		t.Errorf("bad status:\n got  %v\n want %s", bad["message"], want)
	}

	// A policy's type-checking status goes through its subresource too.
	pol := groupPath(platBrand.Group("admissionregistration"), "v1", "", "validatingadmissionpolicies")
	e.do("POST", pol, map[string]any{"metadata": map[string]any{"name": "p"}, "spec": map[string]any{
		"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{"operations": []any{"*"},
			"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"pods"}}}},
		"validations": []any{map[string]any{"expression": "true"}}}}).mustCode(t, 201)
	p := e.do("GET", pol+"/p", nil).mustCode(t, 200).obj(t)
	p["status"] = map[string]any{"observedGeneration": 1, "typeChecking": map[string]any{"expressionWarnings": []any{
		map[string]any{"fieldRef": "spec.validations[0].expression", "warning": "no type"}}}}
	got := e.do("PUT", pol+"/p/status", p).mustCode(t, 200).obj(t)
	if at(got, "status", "typeChecking", "expressionWarnings", 0, "warning") != "no type" || at(got, "status", "observedGeneration") != 1.0 {
		t.Errorf("policy status: %v", got["status"])
	}
	p = got
	p["status"] = map[string]any{"typeChecking": map[string]any{"expressionWarnings": []any{map[string]any{}}}}
	bad = e.do("PUT", pol+"/p/status", p).mustCode(t, 422).obj(t)
	if want := "ValidatingAdmissionPolicy." + platBrand.Group("admissionregistration") + ` "p" is invalid: [status.typeChecking.expressionWarnings[0].warning: Required value, status.typeChecking.expressionWarnings[0].fieldRef: Required value]`; bad["message"] != want {
		t.Errorf("bad policy status:\n got  %v\n want %s", bad["message"], want)
	}
}

// bootstrapFlowControl creates the bootstrap flow control objects, levels
// first, through the API; an object that already exists (the server may
// create them itself) is written again, so each one passes its type's
// rules either way.
func bootstrapFlowControl(t *testing.T, b config.Brand, do func(method, path string, body []byte) (int, []byte)) {
	t.Helper()
	levels, schemas := builtin.FlowControlBootstrap(b)
	g := b.Group("flowcontrol.apiserver")
	for _, set := range []struct {
		resource string
		objs     []map[string]any
	}{{"prioritylevelconfigurations", levels}, {"flowschemas", schemas}} {
		base := groupPath(g, "v1", "", set.resource)
		for _, o := range set.objs {
			name := at(o, "metadata", "name").(string)
			body, _ := json.Marshal(o)
			code, out := do("POST", base, body)
			if code == http.StatusConflict {
				// The server may write a schema's status meanwhile: a
				// conflicting update is read and tried again.
				for attempt := 0; ; attempt++ {
					_, cur := do("GET", base+"/"+name, nil)
					var stored map[string]any
					if err := json.Unmarshal(cur, &stored); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					o["metadata"].(map[string]any)["resourceVersion"] = at(stored, "metadata", "resourceVersion")
					body, _ = json.Marshal(o)
					if code, out = do("PUT", base+"/"+name, body); code != http.StatusConflict || attempt == 10 {
						break
					}
				}
				if code != http.StatusOK {
					t.Errorf("%s %s: update %d: %s", set.resource, name, code, out)
				}
				continue
			}
			if code != http.StatusCreated {
				t.Errorf("%s %s: create %d: %s", set.resource, name, code, out)
			}
		}
	}
}

// TestFlowControlBootstrapOverHTTP creates every bootstrap object through
// the API and reads back that each was stored as given.
func TestFlowControlBootstrapOverHTTP(t *testing.T) {
	t.Parallel()
	e := start(t)
	bootstrapFlowControl(t, platBrand, func(method, path string, body []byte) (int, []byte) {
		var b any
		if body != nil {
			b = body
		}
		r := e.do(method, path, b, "Content-Type", "application/json")
		return r.code, r.body
	})
	levels, schemas := builtin.FlowControlBootstrap(platBrand)
	g := platBrand.Group("flowcontrol.apiserver")
	for resource, objs := range map[string][]map[string]any{"prioritylevelconfigurations": levels, "flowschemas": schemas} {
		list := e.do("GET", groupPath(g, "v1", "", resource), nil).mustCode(t, 200).obj(t)
		if items, _ := list["items"].([]any); len(items) != len(objs) {
			t.Errorf("%s: %d stored, want %d", resource, len(items), len(objs))
		}
		for _, o := range objs {
			name := at(o, "metadata", "name").(string)
			got := e.do("GET", groupPath(g, "v1", "", resource)+"/"+name, nil).mustCode(t, 200).obj(t)
			want, _ := json.Marshal(o["spec"])
			var wantSpec any
			_ = json.Unmarshal(want, &wantSpec)
			if !reflect.DeepEqual(got["spec"], wantSpec) {
				g, _ := json.Marshal(got["spec"])
				t.Errorf("%s %s: stored spec\n %s\nwant\n %s", resource, name, g, want)
			}
			if v := at(got, "metadata", "annotations", "apf."+platBrand.LongDomain+"/autoupdate-spec"); v != "true" {
				t.Errorf("%s %s: annotation %v", resource, name, v)
			}
		}
	}
	// The mandatory catch-all level keeps its fixed spec.
	pl := e.do("GET", groupPath(g, "v1", "", "prioritylevelconfigurations")+"/catch-all", nil).mustCode(t, 200).obj(t)
	pl["spec"].(map[string]any)["limited"].(map[string]any)["nominalConcurrencyShares"] = 50
	st := e.do("PUT", groupPath(g, "v1", "", "prioritylevelconfigurations")+"/catch-all", pl).mustCode(t, 422).obj(t)
	if !strings.HasSuffix(st["message"].(string), "spec of 'catch-all' must equal the fixed value") {
		t.Errorf("catch-all change: %v", st["message"])
	}
}

// TestAdmissionFlowControlProtobuf reads admission and flow control
// objects as protobuf and writes those bytes back: the round trip keeps
// every field.
func TestAdmissionFlowControlProtobuf(t *testing.T) {
	t.Parallel()
	e := start(t)
	pb := platBrand.ProtobufMediaType
	levels, schemas := builtin.FlowControlBootstrap(platBrand)
	fc := platBrand.Group("flowcontrol.apiserver")
	adm := platBrand.Group("admissionregistration")
	objs := []struct {
		path string
		obj  map[string]any
	}{
		{groupPath(fc, "v1", "", "prioritylevelconfigurations"), levels[7]},
		{groupPath(fc, "v1", "", "flowschemas"), schemas[2]},
		{groupPath(adm, "v1", "", "mutatingwebhookconfigurations"), map[string]any{"metadata": map[string]any{"name": "m"},
			"webhooks": []any{map[string]any{"name": "a.example.com", "sideEffects": "NoneOnDryRun", "admissionReviewVersions": []any{"v1", "v1beta1"},
				"clientConfig":    map[string]any{"url": "https://hook.example.com/m", "caBundle": "Y2E="},
				"matchConditions": []any{map[string]any{"name": "c", "expression": "true"}}}}}},
		{groupPath(adm, "v1", "", "validatingadmissionpolicybindings"), map[string]any{"metadata": map[string]any{"name": "b"},
			"spec": map[string]any{"policyName": "p", "validationActions": []any{"Audit"},
				"paramRef": map[string]any{"name": "x", "parameterNotFoundAction": "Deny"}}}},
	}
	for _, o := range objs {
		// The server writes the bootstrap objects itself: round-trip
		// copies under other names.
		o.obj["metadata"].(map[string]any)["name"] = "copy-" + at(o.obj, "metadata", "name").(string)
		name := at(o.obj, "metadata", "name").(string)
		created := e.do("POST", o.path, o.obj).mustCode(t, 201).obj(t)
		if created["kind"] == "FlowSchema" {
			// The server writes the schema's Dangling condition: read
			// after it.
			eventually(t, name+"'s Dangling condition", func() bool {
				return at(e.do("GET", o.path+"/"+name, nil).mustCode(t, 200).obj(t), "status", "conditions") != nil
			})
		}
		raw := e.do("GET", o.path+"/"+name, nil, "Accept", pb).mustCode(t, 200)
		if ct := raw.header.Get("Content-Type"); ct != pb {
			t.Fatalf("%s: content type %q", name, ct)
		}
		e.do("PUT", o.path+"/"+name, raw.body, "Content-Type", pb).mustCode(t, 200)
		got := e.do("GET", o.path+"/"+name, nil).mustCode(t, 200).obj(t)
		for _, m := range []map[string]any{created, got} {
			delete(m["metadata"].(map[string]any), "resourceVersion")
			delete(m["metadata"].(map[string]any), "managedFields")
			if m["kind"] == "FlowSchema" {
				delete(m, "status") // the server writes its Dangling condition meanwhile
			}
		}
		if !reflect.DeepEqual(created, got) {
			c, _ := json.Marshal(created)
			g, _ := json.Marshal(got)
			t.Errorf("%s: protobuf round trip changed the object:\n before %s\n after  %s", name, c, g)
		}
	}
}
