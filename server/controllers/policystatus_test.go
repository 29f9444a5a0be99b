package controllers

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"testing"

	"platd/server/jsonschema"
	"platd/server/openapi"
)

// servedKinds is a fake registry: "group/version/resource" → kind.
var servedKinds = map[string]string{
	"apps/v1/deployments": "Deployment", "apps/v1/replicasets": "ReplicaSet", "apps/v1/statefulsets": "StatefulSet",
	"/v1/pods": "Pod", "/v1/configmaps": "ConfigMap", "/v1/secrets": "Secret", "/v1/services": "Service",
	"/v1/endpoints": "Endpoints", "/v1/events": "Event", "/v1/nodes": "Node", "/v1/namespaces": "Namespace",
	"/v1/limitranges": "LimitRange", "/v1/podtemplates": "PodTemplate",
}

func policyOf(t *testing.T, js string) *checkedPolicy {
	t.Helper()
	var p checkedPolicy
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

func testTypeChecking() *PolicyTypeChecking {
	return &PolicyTypeChecking{
		Kind: func(g, v, r string) string { return servedKinds[g+"/"+v+"/"+r] },
		Log:  slog.New(slog.DiscardHandler),
	}
}

func TestPolicyKindsToCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, rules string
		want        []gvk
	}{{
		name:  "no rules",
		rules: `[]`,
	}, {
		name:  "sorted by group, version and kind; unserved resources left out",
		rules: `[{"apiGroups":["apps",""],"apiVersions":["v1","v2"],"resources":["replicasets","pods","deployments"]}]`,
		want:  []gvk{{"", "v1", "Pod"}, {"apps", "v1", "Deployment"}, {"apps", "v1", "ReplicaSet"}},
	}, {
		name:  "a wildcard group or version skips the rule",
		rules: `[{"apiGroups":["*"],"apiVersions":["v1"],"resources":["pods"]},{"apiGroups":[""],"apiVersions":["v*"],"resources":["pods"]},{"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}]`,
		want:  []gvk{{"", "v1", "ConfigMap"}},
	}, {
		name:  "wildcard and subresource entries are left out",
		rules: `[{"apiGroups":[""],"apiVersions":["v1"],"resources":["*","pods/status","pods/*","services"]}]`,
		want:  []gvk{{"", "v1", "Service"}},
	}, {
		name: "a rule stops at ten kinds, counting repeats, and ends the search",
		rules: `[{"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps","configmaps"]},
			{"apiGroups":[""],"apiVersions":["v1"],"resources":["pods","configmaps","secrets","services","endpoints","events","nodes","namespaces","limitranges","podtemplates"]},
			{"apiGroups":["apps"],"apiVersions":["v1"],"resources":["deployments"]}]`,
		// Sorted, the second rule resolves configmaps, endpoints, events,
		// limitranges, namespaces, nodes, podtemplates, pods, secrets and
		// services: the tenth stops the search before apps.
		want: []gvk{{"", "v1", "ConfigMap"}, {"", "v1", "Endpoints"}, {"", "v1", "Event"}, {"", "v1", "LimitRange"}, {"", "v1", "Namespace"},
			{"", "v1", "Node"}, {"", "v1", "Pod"}, {"", "v1", "PodTemplate"}, {"", "v1", "Secret"}, {"", "v1", "Service"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p := policyOf(t, `{"spec":{"matchConstraints":{"resourceRules":`+tc.rules+`}}}`)
			if got := testTypeChecking().kindsToCheck(p); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	if got := testTypeChecking().kindsToCheck(policyOf(t, `{"spec":{}}`)); got != nil {
		t.Errorf("no matchConstraints: got %v", got)
	}
}

// TestPolicyTypeCheckWarnings checks the warnings' order, field paths and
// wording, kinds whose schema is unknown being skipped.
func TestPolicyTypeCheckWarnings(t *testing.T) {
	t.Parallel()
	replicated, err := jsonschema.ParseJSON([]byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := testTypeChecking()
	c.Schemas = func() openapi.KindSchemas {
		return func(group, version, kind string) (*jsonschema.Props, error) {
			if kind == "StatefulSet" {
				return nil, fmt.Errorf("kind %s: %w", kind, openapi.ErrSchemaNotFound)
			}
			return replicated, nil
		}
	}
	p := policyOf(t, `{"metadata":{"name":"p","generation":1},"spec":{
		"matchConstraints":{"resourceRules":[{"apiGroups":["apps"],"apiVersions":["v1"],"resources":["statefulsets","replicasets","deployments"]}]},
		"variables":[{"name":"r","expression":"object.spec.replicas"}],
		"validations":[
			{"expression":"object.spec.replicas > 1","messageExpression":"'got ' + string(variables.r)"},
			{"expression":"variables.r > '1'","messageExpression":"'got ' + object.spec.replicas"},
			{"expression":"object.spec.none"}]}}`)
	got := c.check(p)
	want := []any{
		map[string]any{"fieldRef": "spec.validations[1].expression", "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:13: found no matching overload for '_>_' applied to '(int, string)'\n | variables.r > '1'\n | ............^\n" +
			"\napps/v1, Kind=ReplicaSet: ERROR: <input>:1:13: found no matching overload for '_>_' applied to '(int, string)'\n | variables.r > '1'\n | ............^\n"},
		map[string]any{"fieldRef": "spec.validations[1].messageExpression", "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:8: found no matching overload for '_+_' applied to '(string, int)'\n | 'got ' + object.spec.replicas\n | .......^\n" +
			"\napps/v1, Kind=ReplicaSet: ERROR: <input>:1:8: found no matching overload for '_+_' applied to '(string, int)'\n | 'got ' + object.spec.replicas\n | .......^\n"},
		map[string]any{"fieldRef": "spec.validations[2].expression", "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'none'\n | object.spec.none\n | ...........^\n" +
			"\napps/v1, Kind=ReplicaSet: ERROR: <input>:1:12: undefined field 'none'\n | object.spec.none\n | ...........^\n"},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("warnings:\n%s", g)
	}

	// Nothing to check against: no warnings, whatever the expressions.
	none := policyOf(t, `{"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":["apps"],"apiVersions":["v1"],"resources":["statefulsets"]}]},
		"validations":[{"expression":"object.spec.none > '1'"}]}}`)
	if got := c.check(none); got != nil {
		t.Errorf("only unknown schemas: warnings %v", got)
	}
}
