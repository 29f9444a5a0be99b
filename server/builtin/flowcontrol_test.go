package builtin

import (
	"reflect"
	"testing"

	"platd/server/registry"
)

func flowSchema(name string, spec map[string]any) registry.Object {
	return registry.Object{"metadata": map[string]any{"name": name}, "spec": spec}
}

// flowRule matches every request of group g.
func flowRule(changes map[string]any) map[string]any {
	r := map[string]any{
		"subjects":      []any{map[string]any{"kind": "Group", "group": map[string]any{"name": "g"}}},
		"resourceRules": []any{map[string]any{"verbs": []any{"*"}, "apiGroups": []any{"*"}, "resources": []any{"*"}, "clusterScope": true}},
	}
	for k, v := range changes {
		if v == nil {
			delete(r, k)
		} else {
			r[k] = v
		}
	}
	return r
}

func TestFlowSchema(t *testing.T) {
	t.Parallel()
	d := apiTypeDescriptor(t, "FlowSchema")
	got := mustCreate(t, d, flowSchema("fs", map[string]any{"priorityLevelConfiguration": map[string]any{"name": "pl"}}))
	if p := valueAt(got, "spec", "matchingPrecedence"); p != int64(1000) {
		t.Errorf("matchingPrecedence = %#v, want 1000", p)
	}
	if present(mapAt(got, "spec"), "distinguisherMethod") {
		t.Errorf("distinguisherMethod defaulted: %v", got["spec"])
	}
	tests := []struct {
		name, obj string
		spec      map[string]any
		want      []string
	}{
		{"precedence one", "fs", map[string]any{"matchingPrecedence": int64(1), "priorityLevelConfiguration": map[string]any{"name": "pl"}}, []string{
			`spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1`,
		}},
		{"precedence range", "fs", map[string]any{"matchingPrecedence": int64(10001), "priorityLevelConfiguration": map[string]any{}}, []string{
			`spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000`,
			`spec.priorityLevelConfiguration.name: Required value: must reference a priority level`,
		}},
		{"negative precedence", "fs", map[string]any{"matchingPrecedence": int64(-3), "priorityLevelConfiguration": map[string]any{"name": "PL"},
			"distinguisherMethod": map[string]any{"type": "ByGroup"}}, []string{
			`spec.matchingPrecedence: Invalid value: -3: must be a positive value`,
			`spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:"ByGroup"}: supported values: "ByNamespace", "ByUser"`,
			`spec.priorityLevelConfiguration.name: Invalid value: "PL": ` + subdomainMsg,
		}},
		{"subjects", "fs", map[string]any{"priorityLevelConfiguration": map[string]any{"name": "pl"}, "rules": []any{
			flowRule(map[string]any{"subjects": []any{
				map[string]any{"kind": "User", "group": map[string]any{"name": "g"}},
				map[string]any{"kind": "ServiceAccount", "serviceAccount": map[string]any{"name": "*"}, "user": map[string]any{"name": "u"}},
				map[string]any{"kind": "Group", "group": map[string]any{}},
				map[string]any{"kind": "Robot"},
				map[string]any{"kind": "ServiceAccount", "serviceAccount": map[string]any{"name": "Sa", "namespace": "a.b"}},
			}}),
			flowRule(map[string]any{"subjects": []any{}, "resourceRules": nil}),
		}}, []string{
			`spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'`,
			`spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group'`,
			`spec.rules[0].subjects[1].serviceAccount.namespace: Required value: must specify namespace for service account`,
			`spec.rules[0].subjects[1].user: Forbidden: user is forbidden when subject kind is not 'User'`,
			`spec.rules[0].subjects[2].group.name: Required value`,
			`spec.rules[0].subjects[3].kind: Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"`,
			`spec.rules[0].subjects[4].serviceAccount.name: Invalid value: "Sa": ` + subdomainMsg,
			`spec.rules[0].subjects[4].serviceAccount.namespace: Invalid value: "a.b": must not contain dots`,
			`spec.rules[1].subjects: Required value: subjects must contain at least one value`,
			`spec.rules[1]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty`,
		}},
		{"rules", "fs", map[string]any{"priorityLevelConfiguration": map[string]any{"name": "pl"}, "rules": []any{flowRule(map[string]any{
			"resourceRules": []any{
				map[string]any{"verbs": []any{"get", "*"}, "apiGroups": []any{}, "resources": []any{"*", "pods"}},
				map[string]any{"verbs": []any{"get", "fly"}, "apiGroups": []any{"*", "apps"}, "resources": []any{"pods"}, "namespaces": []any{"*", "a"}},
				map[string]any{"verbs": []any{}, "apiGroups": []any{""}, "resources": []any{}, "namespaces": []any{"A"}},
			},
			"nonResourceRules": []any{
				map[string]any{"verbs": []any{"get"}, "nonResourceURLs": []any{"", "x", "/a b", "/a//b", "/a*", "/a/*"}},
				map[string]any{"verbs": []any{"get"}, "nonResourceURLs": []any{"*", "/b"}},
				map[string]any{"verbs": []any{"get"}},
			},
		})}}, []string{
			`spec.rules[0].resourceRules[0].verbs: Invalid value: []string{"get", "*"}: if '*' is present, must not specify other verbs`,
			`spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group`,
			`spec.rules[0].resourceRules[0].resources: Invalid value: []string{"*", "pods"}: if '*' is present, must not specify other resources`,
			`spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace`,
			`spec.rules[0].resourceRules[1].verbs: Unsupported value: []string{"get", "fly"}: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"`,
			`spec.rules[0].resourceRules[1].apiGroups: Invalid value: []string{"*", "apps"}: if '*' is present, must not specify other api groups`,
			`spec.rules[0].resourceRules[1].namespaces: Invalid value: []string{"*", "a"}: if '*' is present, must not specify other namespaces`,
			`spec.rules[0].resourceRules[2].verbs: Required value: verbs must contain at least one value`,
			`spec.rules[0].resourceRules[2].resources: Required value: resource rules must supply at least one resource`,
			`spec.rules[0].resourceRules[2].namespaces[0]: Invalid value: "A": each member of this list must be '*' or a DNS-1123 label; ` + labelMsg,
			`spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "": must not be empty`,
			`spec.rules[0].nonResourceRules[0].nonResourceURLs[1]: Invalid value: "x": must start with slash`,
			`spec.rules[0].nonResourceRules[0].nonResourceURLs[2]: Invalid value: "/a b": must not contain white-space`,
			`spec.rules[0].nonResourceRules[0].nonResourceURLs[3]: Invalid value: "/a//b": must not contain double slash`,
			`spec.rules[0].nonResourceRules[0].nonResourceURLs[4]: Invalid value: "/a*": wildcard can only do suffix matching`,
			`spec.rules[0].nonResourceRules[1].nonResourceURLs: Invalid value: []string{"*", "/b"}: if '*' is present, must not specify other non-resource URLs`,
			`spec.rules[0].nonResourceRules[2].nonResourceURLs: Required value: nonResourceURLs must contain at least one value`,
		}},
		{"mandatory", "catch-all", map[string]any{"matchingPrecedence": int64(10000), "priorityLevelConfiguration": map[string]any{"name": "catch-all"},
			"rules": []any{flowRule(nil)}}, []string{
			`spec: Invalid value: flowcontrol.FlowSchemaSpec{...}: spec of 'catch-all' must equal the fixed value`,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, flowSchema(tt.obj, tt.spec))
		checkErrs(t, tt.name, errs, tt.want)
	}
	status := d.Subresource("status").Validate
	checkErrs(t, "status", status(registry.Object{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Dangling"}, map[string]any{"type": "Dangling"}, map[string]any{"status": "True"},
	}}}, got), []string{
		`status.conditions[1].type: Duplicate value: "Dangling"`,
		`status.conditions[2].type: Required value: must not be empty`,
	})
}

func priorityLevel(name string, spec map[string]any) registry.Object {
	return registry.Object{"metadata": map[string]any{"name": name}, "spec": spec}
}

func TestPriorityLevelDefaults(t *testing.T) {
	t.Parallel()
	d := apiTypeDescriptor(t, "PriorityLevelConfiguration")
	tests := []struct {
		name string
		spec map[string]any
		want map[string]any
	}{
		{"unset shares", map[string]any{"type": "Limited", "limited": map[string]any{"limitResponse": map[string]any{"type": "Queue", "queuing": map[string]any{}}}},
			map[string]any{"type": "Limited", "limited": map[string]any{"nominalConcurrencyShares": int64(30), "lendablePercent": int64(0),
				"limitResponse": map[string]any{"type": "Queue", "queuing": map[string]any{"queues": int64(64), "handSize": int64(8), "queueLengthLimit": int64(50)}}}}},
		{"explicit zero shares", map[string]any{"type": "Limited", "limited": map[string]any{"nominalConcurrencyShares": int64(0), "limitResponse": map[string]any{"type": "Reject"}}},
			map[string]any{"type": "Limited", "limited": map[string]any{"nominalConcurrencyShares": int64(0), "lendablePercent": int64(0),
				"limitResponse": map[string]any{"type": "Reject"}}}},
	}
	for _, tt := range tests {
		got := mustCreate(t, d, priorityLevel("pl", tt.spec))
		if !reflect.DeepEqual(got["spec"], tt.want) {
			t.Errorf("%s: spec %#v\n want %#v", tt.name, got["spec"], tt.want)
		}
	}
	got := mustCreate(t, d, priorityLevel("exempt", map[string]any{"type": "Exempt", "exempt": map[string]any{"lendablePercent": int64(10)}}))
	if want := map[string]any{"nominalConcurrencyShares": int64(0), "lendablePercent": int64(10)}; !reflect.DeepEqual(mapAt(got, "spec", "exempt"), want) {
		t.Errorf("exempt: %#v", got["spec"])
	}
}

func TestPriorityLevelValidation(t *testing.T) {
	t.Parallel()
	d := apiTypeDescriptor(t, "PriorityLevelConfiguration")
	queuing := func(q map[string]any) map[string]any {
		return map[string]any{"type": "Limited", "limited": map[string]any{"limitResponse": map[string]any{"type": "Queue", "queuing": q}}}
	}
	tests := []struct {
		name, obj string
		spec      map[string]any
		want      []string
	}{
		{"exempt name", "pl", map[string]any{"type": "Exempt", "limited": map[string]any{}}, []string{
			`spec.type: Invalid value: "Exempt": type must be 'Exempt' if and only if name is 'exempt'`,
			`spec.limited: Forbidden: must be nil if the type is not Limited`,
		}},
		{"limited without settings", "exempt", map[string]any{"type": "Limited", "exempt": map[string]any{}}, []string{
			`spec.type: Invalid value: "Limited": type must be 'Exempt' if and only if name is 'exempt'`,
			`spec.exempt: Forbidden: must be nil if the type is Limited`,
			`spec.limited: Required value: must not be empty when type is Limited`,
			`spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{...}: spec of 'exempt' except the 'spec.exempt' field must equal the fixed value`,
		}},
		{"exempt spec beyond exempt", "exempt", map[string]any{"type": "Exempt", "exempt": map[string]any{"lendablePercent": int64(5)}, "limited": map[string]any{"limitResponse": map[string]any{"type": "Reject"}}}, []string{
			`spec.limited: Forbidden: must be nil if the type is not Limited`,
			`spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{...}: spec of 'exempt' except the 'spec.exempt' field must equal the fixed value`,
		}},
		{"type", "pl", map[string]any{"type": "Open"}, []string{
			`spec.type: Unsupported value: "Open": supported values: "Exempt", "Limited"`,
		}},
		{"shares", "pl", map[string]any{"type": "Limited", "limited": map[string]any{"nominalConcurrencyShares": int64(-1), "lendablePercent": int64(101),
			"borrowingLimitPercent": int64(-2), "limitResponse": map[string]any{"type": "Reject", "queuing": map[string]any{}}}}, []string{
			`spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer`,
			`spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited`,
			`spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive`,
			`spec.limited.borrowingLimitPercent: Invalid value: -2: if specified, must be a non-negative integer`,
		}},
		{"exempt shares", "exempt", map[string]any{"type": "Exempt", "exempt": map[string]any{"nominalConcurrencyShares": int64(-1), "lendablePercent": int64(-1)}}, []string{
			`spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer`,
			`spec.exempt.lendablePercent: Invalid value: -1: must be between 0 and 100, inclusive`,
		}},
		{"limit response", "pl", map[string]any{"type": "Limited", "limited": map[string]any{"limitResponse": map[string]any{"type": "Queue"}}}, []string{
			`spec.limited.limitResponse.queuing: Required value: must not be empty if limited.limitResponse.type is Limited`,
		}},
		{"limit response type", "pl", map[string]any{"type": "Limited", "limited": map[string]any{}}, []string{
			`spec.limited.limitResponse.type: Unsupported value: "": supported values: "Queue", "Reject"`,
		}},
		{"hand larger than deck", "pl", queuing(map[string]any{"queues": int64(4), "handSize": int64(5), "queueLengthLimit": int64(-1)}), []string{
			`spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -1: must be positive`,
			`spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)`,
		}},
		{"entropy", "pl", queuing(map[string]any{"queues": int64(128), "handSize": int64(9)}), []string{
			`spec.limited.limitResponse.queuing.handSize: Invalid value: 9: required entropy bits of deckSize 128 and handSize 9 should not be greater than 60`,
		}},
		{"too many queues", "pl", queuing(map[string]any{"queues": int64(10000001), "handSize": int64(-1)}), []string{
			`spec.limited.limitResponse.queuing.queues: Invalid value: 10000001: must not be greater than 10000000`,
			`spec.limited.limitResponse.queuing.handSize: Invalid value: -1: must be positive`,
		}},
		{"catch-all fixed", "catch-all", map[string]any{"type": "Limited", "limited": map[string]any{"nominalConcurrencyShares": int64(50), "limitResponse": map[string]any{"type": "Reject"}}}, []string{
			`spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{...}: spec of 'catch-all' must equal the fixed value`,
		}},
		{"catch-all as fixed", "catch-all", map[string]any{"type": "Limited", "limited": map[string]any{"nominalConcurrencyShares": int64(5), "limitResponse": map[string]any{"type": "Reject"}}}, nil},
		{"exempt settings free", "exempt", map[string]any{"type": "Exempt", "exempt": map[string]any{"nominalConcurrencyShares": int64(7), "lendablePercent": int64(20)}}, nil},
	}
	for _, tt := range tests {
		_, errs := create(d, priorityLevel(tt.obj, tt.spec))
		checkErrs(t, tt.name, errs, tt.want)
	}
	key := brand.Group("flowcontrol") + "/v1beta3-preserve-zero-concurrency-shares"
	marked := priorityLevel("pl", map[string]any{"type": "Limited", "limited": map[string]any{"limitResponse": map[string]any{"type": "Reject"}}})
	child(marked, "metadata")["annotations"] = map[string]any{key: ""}
	_, errs := create(d, marked)
	checkErrs(t, "round-trip annotation", errs, []string{"metadata.annotations: Forbidden: annotation '" + key + "' is forbidden"})
}

// TestFlowControlBootstrapIsValid passes every bootstrap object through
// its type's create rules: each must be accepted and already be in its
// defaulted form.
func TestFlowControlBootstrapIsValid(t *testing.T) {
	t.Parallel()
	levels, schemas := FlowControlBootstrap(brand)
	if len(levels) != 8 || len(schemas) != 13 {
		t.Fatalf("%d levels and %d schemas, want 8 and 13", len(levels), len(schemas))
	}
	names := map[string]bool{}
	for _, l := range levels {
		names[str(l, "metadata", "name")] = true
	}
	for kind, objs := range map[string][]registry.Object{"PriorityLevelConfiguration": levels, "FlowSchema": schemas} {
		d := apiTypeDescriptor(t, kind)
		for _, o := range objs {
			name := str(o, "metadata", "name")
			if str(o, "kind") != kind || str(o, "apiVersion") != d.GroupVersion() {
				t.Errorf("%s: kind %q apiVersion %q", name, o["kind"], o["apiVersion"])
			}
			if v := valueAt(o, "metadata", "annotations", "apf."+brand.LongDomain+"/autoupdate-spec"); v != "true" {
				t.Errorf("%s: auto-update annotation %v", name, v)
			}
			got := mustCreate(t, d, o)
			if !sameMember(d.Schema, got, o, "spec") {
				t.Errorf("%s: defaulting changed the spec:\n got  %v\n want %v", name, got["spec"], o["spec"])
			}
			if pl := str(o, "spec", "priorityLevelConfiguration", "name"); kind == "FlowSchema" && !names[pl] {
				t.Errorf("%s names the missing level %q", name, pl)
			}
		}
	}
	// Each call returns objects of its own.
	again, _ := FlowControlBootstrap(brand)
	child(again[0], "metadata")["name"] = "changed"
	if str(levels[0], "metadata", "name") != "exempt" {
		t.Error("bootstrap objects are shared between calls")
	}
}
