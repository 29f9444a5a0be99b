package cel

import (
	"strings"
	"testing"

	"platd/server/jsonschema"
)

func TestPolicyTypeCheck(t *testing.T) {
	t.Parallel()
	deployment := mustSchema(t, `{"type":"object","properties":{
		"apiVersion":{"type":"string"},"kind":{"type":"string"},
		"metadata":{"type":"object","properties":{"name":{"type":"string"},"generateName":{"type":"string"},
			"labels":{"type":"object","additionalProperties":{"type":"string"}},
			"creationTimestamp":{"type":"string","format":"date-time"}}},
		"spec":{"type":"object","properties":{
			"replicas":{"type":"integer"},
			"maxSurge":{"x-kubernetes-int-or-string":true},
			"containers":{"type":"array","items":{"type":"object","properties":{"image":{"type":"string"}}}}}}}}`)
	configMap := mustSchema(t, `{"type":"object","properties":{"data":{"type":"object","additionalProperties":{"type":"string"}}}}`)
	type check struct {
		expr string
		// want is a part of the issues, "" for none.
		want string
	}
	for _, tc := range []struct {
		name      string
		params    *jsonschema.Props
		hasParams bool
		variables [][2]string
		checks    []check
	}{{
		name: "object is typed by its schema",
		checks: []check{
			{"object.spec.replicas > 1", ""},
			{"object.spec.replicas > '1'", "found no matching overload for '_>_' applied to '(int, string)'"},
			{"'wants replicas > 1, got ' + object.spec.replicas", "found no matching overload for '_+_' applied to '(string, int)'"},
			{"object.spec.nosuch == 1", "undefined field 'nosuch'"},
			{"oldObject.spec.containers.all(c, c.image != '')", ""},
			{"object.metadata.creationTimestamp < timestamp('2026-01-01T00:00:00Z')", ""},
			{"object.spec.maxSurge == 1 || object.spec.maxSurge == '25%'", ""},
			// The result type is not checked.
			{"object.spec.replicas", ""},
			// The stored expressions' environment: two-variable comprehensions.
			{"object.metadata.labels.all(k, v, v != '')", ""},
			{"request.operation == 'CREATE' && namespaceObject.metadata.name != ''", ""},
			{"authorizer.group('apps').resource('deployments').check('get').allowed()", ""},
			// Upstream's checker declares authorizer only.
			{"authorizer.requestResource.check('get').allowed()", "ERROR: <input>:1:"},
			{"params == null", "undeclared reference to 'params'"},
			{"variables.any == 1", "undefined field 'any'"},
			{"object.spec.replicas >", "Syntax error"},
		},
	}, {
		name:      "params typed by the paramKind's schema",
		params:    configMap,
		hasParams: true,
		checks: []check{
			{"params.data['x'] == 'y'", ""},
			{"params.nosuch == 1", "undefined field 'nosuch'"},
			{"params.data['x'] == 1", "found no matching overload for '_==_' applied to '(string, int)'"},
		},
	}, {
		name:      "params dyn when the paramKind's schema is unknown",
		hasParams: true,
		checks:    []check{{"params.anything.at.all == 1", ""}},
	}, {
		name:      "variables typed by their results",
		variables: [][2]string{{"r", "object.spec.replicas"}, {"twice", "variables.r * 2"}, {"broken", "object.nosuch"}, {"spec", "object.spec"}},
		checks: []check{
			{"variables.twice > 1", ""},
			{"variables.r > '1'", "found no matching overload for '_>_' applied to '(int, string)'"},
			// A variable that does not compile, or yields an object, is dyn.
			{"variables.broken > '1' && variables.spec.whatever", ""},
			{"variables.other == 1", "undefined field 'other'"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewPolicyTypeCheck(deployment, "Deployment", tc.params, "ConfigMap", tc.hasParams)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range tc.variables {
				c.Variable(v[0], v[1])
			}
			for _, ch := range tc.checks {
				got := c.Check(ch.expr)
				switch {
				case ch.want == "" && got != "":
					t.Errorf("%s: unexpected issues:\n%s", ch.expr, got)
				case ch.want != "" && !strings.Contains(got, ch.want):
					t.Errorf("%s: issues %q, want them to contain %q", ch.expr, got, ch.want)
				}
			}
		})
	}
}

// An object type no rule can read (no type at its root) leaves object dyn.
func TestPolicyTypeCheckUnreadableSchema(t *testing.T) {
	t.Parallel()
	c, err := NewPolicyTypeCheck(mustSchema(t, `{}`), "Thing", nil, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Check("object.anything > '1'"); got != "" {
		t.Errorf("issues %q, want none for a dyn object", got)
	}
}
