package server_test

import (
	"reflect"
	"testing"
)

// TestAdmissionCELRefused creates admission objects whose CEL does not
// compile and checks the 422's causes: field, reason and upstream's
// message, one per expression.
func TestAdmissionCELRefused(t *testing.T) {
	t.Parallel()
	e := start(t)
	ag := platBrand.Group("admissionregistration")
	rules := []any{map[string]any{"operations": []any{"CREATE"}, "apiGroups": []any{"apps"}, "apiVersions": []any{"v1"}, "resources": []any{"deployments"}}}
	type cause struct{ field, message string }
	tests := []struct {
		name, resource string
		body           map[string]any
		causes         []cause
	}{
		{"policy", "validatingadmissionpolicies", map[string]any{"metadata": map[string]any{"name": "replicas"}, "spec": map[string]any{
			"matchConstraints": map[string]any{"resourceRules": rules},
			"variables":        []any{map[string]any{"name": "max", "expression": "5"}},
			"validations": []any{
				map[string]any{"expression": "object.spec.replicas <= ", "messageExpression": "variables.max"},
				map[string]any{"expression": "object.spec.replicas <= variables.max", "messageExpression": "'at most ' + string(variables.max)"},
			},
			"auditAnnotations": []any{map[string]any{"key": "replicas", "valueExpression": "object.spec.replicas"}},
		}}, []cause{
			{"spec.validations[0].expression", "Invalid value: \"object.spec.replicas <= \": compilation failed: ERROR: <input>:1:25: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | object.spec.replicas <= \n | ........................^"},
			{"spec.validations[0].messageExpression", `Invalid value: "variables.max": must evaluate to string but got int`},
			{"spec.auditAnnotations[0].valueExpression", `Invalid value: "object.spec.replicas": must evaluate to one of [string null_type] but got dyn`},
		}},
		{"webhook", "validatingwebhookconfigurations", map[string]any{"metadata": map[string]any{"name": "hooks"}, "webhooks": []any{map[string]any{
			"name": "check.example.com", "sideEffects": "None", "admissionReviewVersions": []any{"v1"},
			"clientConfig": map[string]any{"service": map[string]any{"name": "hook", "namespace": "default"}},
			"rules":        rules,
			"matchConditions": []any{
				map[string]any{"name": "ok", "expression": "authorizer.requestResource.check('get').allowed()"},
				map[string]any{"name": "bad", "expression": "request.userName == 'x'"},
			},
		}}}, []cause{
			{"webhooks[0].matchConditions[1].expression", "Invalid value: \"request.userName == 'x'\": compilation failed: ERROR: <input>:1:8: undefined field 'userName'\n | request.userName == 'x'\n | .......^"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := groupPath(ag, "v1", "", tt.resource)
			st := e.do("POST", path, tt.body).mustCode(t, 422).obj(t)
			var got []cause
			causes, _ := at(st, "details", "causes").([]any)
			for _, c := range causes {
				m := c.(map[string]any)
				if m["reason"] != "FieldValueInvalid" {
					t.Errorf("cause %v: reason %v", m["field"], m["reason"])
				}
				f, _ := m["field"].(string)
				msg, _ := m["message"].(string)
				got = append(got, cause{f, msg})
			}
			if !reflect.DeepEqual(got, tt.causes) {
				t.Errorf("causes:\n got  %q\n want %q", got, tt.causes)
			}
			name := tt.body["metadata"].(map[string]any)["name"].(string)
			if e.do("GET", path+"/"+name, nil).code != 404 {
				t.Error("a refused object was stored")
			}
		})
	}
}
