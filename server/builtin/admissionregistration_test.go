package builtin

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"platd/server/registry"
)

// apiTypeDescriptor returns a descriptor of the admission or flow
// control groups with its schema, as Register builds it.
func apiTypeDescriptor(t *testing.T, kind string) *registry.Descriptor {
	t.Helper()
	cat, err := loadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range slices.Concat(admissionRegistrationV1(brand), flowControlV1(brand)) {
		if d.Kind == kind {
			d.Schema = cat.ByGVK(d.Group, d.Version, d.Kind)
			if d.Schema == nil {
				t.Fatalf("no schema for %s", kind)
			}
			return d
		}
	}
	t.Fatalf("no descriptor for %s", kind)
	return nil
}

// webhook is a valid webhook with the given members changed (nil
// removes one).
func webhook(changes map[string]any) map[string]any {
	h := map[string]any{
		"name":                    "check.example.com",
		"clientConfig":            map[string]any{"service": map[string]any{"name": "hook", "namespace": "ns"}},
		"sideEffects":             "None",
		"admissionReviewVersions": []any{"v1"},
		"rules": []any{map[string]any{
			"operations": []any{"CREATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"pods"}}},
	}
	for k, v := range changes {
		if v == nil {
			delete(h, k)
		} else {
			h[k] = v
		}
	}
	return h
}

func webhookConfig(hooks ...any) registry.Object {
	return registry.Object{"metadata": map[string]any{"name": "cfg"}, "webhooks": hooks}
}

func TestWebhookDefaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		kind     string
		mutating bool
	}{{"MutatingWebhookConfiguration", true}, {"ValidatingWebhookConfiguration", false}} {
		d := apiTypeDescriptor(t, tt.kind)
		if !slices.Equal(d.Categories, []string{"api-extensions"}) || d.Namespaced || len(d.ShortNames) > 0 {
			t.Errorf("%s: categories %v, namespaced %v, short names %v", tt.kind, d.Categories, d.Namespaced, d.ShortNames)
		}
		got := mustCreate(t, d, webhookConfig(webhook(nil)))
		hook := listAt(got, "webhooks")[0].(map[string]any)
		want := map[string]any{
			"failurePolicy": "Fail", "matchPolicy": "Equivalent", "timeoutSeconds": int64(10),
			"namespaceSelector": map[string]any{}, "objectSelector": map[string]any{},
		}
		if tt.mutating {
			want["reinvocationPolicy"] = "Never"
		}
		for k, v := range want {
			if !reflect.DeepEqual(hook[k], v) {
				t.Errorf("%s: %s = %#v, want %#v", tt.kind, k, hook[k], v)
			}
		}
		if !tt.mutating && present(hook, "reinvocationPolicy") {
			t.Errorf("%s has a reinvocation policy", tt.kind)
		}
		if s := str(hook, "rules"); s != "" || valueAt(listAt(hook, "rules")[0].(map[string]any), "scope") != "*" {
			t.Errorf("%s: rule scope not defaulted: %v", tt.kind, hook["rules"])
		}
		if p := valueAt(hook, "clientConfig", "service", "port"); p != int64(443) {
			t.Errorf("%s: service port %v", tt.kind, p)
		}
		if g := valueAt(got, "metadata", "generation"); g != int64(1) {
			t.Errorf("%s: generation %v", tt.kind, g)
		}
	}
}

func TestWebhookValidation(t *testing.T) {
	t.Parallel()
	d := apiTypeDescriptor(t, "MutatingWebhookConfiguration")
	tests := []struct {
		name  string
		hooks []any
		want  []string
	}{
		{"valid", []any{webhook(nil)}, nil},
		{"name", []any{webhook(map[string]any{"name": "example.com"}), webhook(map[string]any{"name": "Bad_Name"}), webhook(map[string]any{"name": ""})}, []string{
			`webhooks[0].name: Invalid value: "example.com": should be a domain with at least three segments separated by dots`,
			`webhooks[1].name: Invalid value: "Bad_Name": ` + subdomainMsg,
			`webhooks[2].name: Required value`,
		}},
		{"duplicate names", []any{webhook(nil), webhook(nil)}, []string{`webhooks[1].name: Duplicate value: "check.example.com"`}},
		{"side effects", []any{webhook(map[string]any{"sideEffects": nil}), webhook(map[string]any{"name": "b.example.com", "sideEffects": "Some"})}, []string{
			`webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun`,
			`webhooks[1].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`,
		}},
		{"policies", []any{webhook(map[string]any{"failurePolicy": "Maybe", "matchPolicy": "Loose", "timeoutSeconds": int64(31), "reinvocationPolicy": "Always"})}, []string{
			`webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"`,
			`webhooks[0].matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"`,
			`webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds`,
			`webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"`,
		}},
		{"review versions", []any{
			webhook(map[string]any{"admissionReviewVersions": []any{}}),
			webhook(map[string]any{"name": "b.example.com", "admissionReviewVersions": []any{"v2", "v2", "V3"}}),
		}, []string{
			`webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1`,
			`webhooks[1].admissionReviewVersions[1]: Invalid value: "v2": duplicate version`,
			`webhooks[1].admissionReviewVersions[2]: Invalid value: "V3": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
			`webhooks[1].admissionReviewVersions: Invalid value: []string{"v2", "v2", "V3"}: must include at least one of v1, v1beta1`,
		}},
		{"rules", []any{webhook(map[string]any{"rules": []any{
			map[string]any{"operations": []any{"*", "CREATE", "PATCH"}, "apiGroups": []any{"*", "apps"}, "apiVersions": []any{"v1", ""}, "resources": []any{"pods/*", "pods/log"}, "scope": "Global"},
			map[string]any{"resources": []any{"*/*", "pods"}},
			map[string]any{"operations": []any{"DELETE"}, "apiGroups": []any{""}, "apiVersions": []any{"*"}, "resources": []any{"*", "pods", "*/status", "deployments/status", ""}},
		}})}, []string{
			`webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE", "PATCH"}: if '*' is present, must not specify other operations`,
			`webhooks[0].rules[0].operations[2]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"`,
			`webhooks[0].rules[0].apiGroups: Invalid value: []string{"*", "apps"}: if '*' is present, must not specify other API groups`,
			`webhooks[0].rules[0].apiVersions[1]: Required value`,
			`webhooks[0].rules[0].resources[1]: Invalid value: "pods/log": if 'pods/*' is present, must not specify pods/log`,
			`webhooks[0].rules[0].scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"`,
			`webhooks[0].rules[1].operations: Required value`,
			`webhooks[0].rules[1].apiGroups: Required value`,
			`webhooks[0].rules[1].apiVersions: Required value`,
			`webhooks[0].rules[1].resources: Invalid value: []string{"*/*", "pods"}: if '*/*' is present, must not specify other resources`,
			`webhooks[0].rules[2].resources[3]: Invalid value: "deployments/status": if '*/status' is present, must not specify deployments/status`,
			`webhooks[0].rules[2].resources[4]: Required value`,
			`webhooks[0].rules[2].resources: Invalid value: []string{"*", "pods", "*/status", "deployments/status", ""}: if '*' is present, must not specify other resources without subresources`,
		}},
		{"client config", []any{
			webhook(map[string]any{"clientConfig": map[string]any{}}),
			webhook(map[string]any{"name": "b.example.com", "clientConfig": map[string]any{"url": "http://u:p@/x?q=1#f"}}),
			webhook(map[string]any{"name": "c.example.com", "clientConfig": map[string]any{"service": map[string]any{"port": int64(0), "path": "a//B/"}}}),
		}, []string{
			`webhooks[0].clientConfig: Required value: exactly one of url or service is required`,
			`webhooks[1].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
			`webhooks[1].clientConfig.url: Invalid value: "": host must be provided; desired format: https://host[/path]`,
			`webhooks[1].clientConfig.url: Invalid value: "u:p": user information is not permitted in the URL`,
			`webhooks[1].clientConfig.url: Invalid value: "f": fragments are not permitted in the URL`,
			`webhooks[1].clientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL`,
			`webhooks[2].clientConfig.service.name: Required value: service name is required`,
			`webhooks[2].clientConfig.service.namespace: Required value: service namespace is required`,
			`webhooks[2].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive`,
			`webhooks[2].clientConfig.service.path: Invalid value: "a//B/": must start with a '/'`,
			`webhooks[2].clientConfig.service.path: Invalid value: "a//B/": segment[0] may not be empty`,
			`webhooks[2].clientConfig.service.path: Invalid value: "a//B/": segment[1] may not be empty`,
			`webhooks[2].clientConfig.service.path: Invalid value: "a//B/": segment[2]: ` + subdomainMsg,
		}},
		{"unparsable url", []any{webhook(map[string]any{"clientConfig": map[string]any{"url": "https://x/%zz"}})}, []string{
			`webhooks[0].clientConfig.url: Required value: url must be a valid URL: parse "https://x/%zz": invalid URL escape "%zz"; desired format: https://host[/path]`,
		}},
		{"both client configs", []any{webhook(map[string]any{"clientConfig": map[string]any{"url": "https://x", "service": map[string]any{"name": "s", "namespace": "n"}}})}, []string{
			`webhooks[0].clientConfig: Required value: exactly one of url or service is required`,
		}},
		{"match conditions", []any{webhook(map[string]any{"matchConditions": []any{
			map[string]any{"name": "a", "expression": " "},
			map[string]any{"name": "a", "expression": "true"},
			map[string]any{"expression": "true"},
		}})}, []string{
			`webhooks[0].matchConditions[0].expression: Required value`,
			`webhooks[0].matchConditions[1].name: Duplicate value: "a"`,
			`webhooks[0].matchConditions[2].name: Required value`,
		}},
		{"match condition expressions", []any{webhook(map[string]any{"matchConditions": []any{
			map[string]any{"name": "a", "expression": "object.metadata.name"},
			map[string]any{"name": "b", "expression": "  params.x == 1 "},
			map[string]any{"name": "c", "expression": "request.operation == 'CREATE' && authorizer.requestResource.check('get').allowed()"},
			map[string]any{"name": "d", "expression": "{'a': 1}.all(k, v, v > 0)"},
		}})}, []string{
			`webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name": must evaluate to bool but got dyn`,
			"webhooks[0].matchConditions[1].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^",
			"webhooks[0].matchConditions[3].expression: Invalid value: \"{'a': 1}.all(k, v, v > 0)\": " + twoVarErr(twoVar),
		}},
		{"selectors", []any{webhook(map[string]any{"namespaceSelector": map[string]any{"matchExpressions": []any{
			map[string]any{"key": "k", "operator": "In"}}}})}, []string{
			"webhooks[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, webhookConfig(tt.hooks...))
		checkErrs(t, tt.name, errs, tt.want)
	}
}

func TestWebhookUpdateKeepsStoredShape(t *testing.T) {
	t.Parallel()
	d := apiTypeDescriptor(t, "ValidatingWebhookConfiguration")
	stored := mustCreate(t, d, webhookConfig(webhook(nil)))
	// Objects stored under older rules stay writable: side effects Some,
	// an unknown review version and repeated names.
	old := copyObj(stored)
	h := listAt(old, "webhooks")[0].(map[string]any)
	h["sideEffects"], h["admissionReviewVersions"] = "Some", []any{"v9"}
	old["webhooks"] = []any{h, copyObj(h)}
	next, errs := update(d, old, old, "")
	checkErrs(t, "relaxed", errs, nil)
	if g := valueAt(next, "metadata", "generation"); g != int64(1) {
		t.Errorf("unchanged webhooks moved the generation to %v", g)
	}
	next, errs = update(d, webhookConfig(webhook(map[string]any{"timeoutSeconds": int64(5)})), stored, "")
	checkErrs(t, "change", errs, nil)
	if g := valueAt(next, "metadata", "generation"); g != int64(2) {
		t.Errorf("changed webhooks: generation %v, want 2", g)
	}
	_, errs = update(d, webhookConfig(webhook(map[string]any{"sideEffects": "Some"})), stored, "")
	checkErrs(t, "strict", errs, []string{`webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`})

	// Match conditions an update leaves as stored are not checked again;
	// changed ones are.
	conds := []any{map[string]any{"name": "no good", "expression": "true"}}
	withConds := copyObj(stored)
	listAt(withConds, "webhooks")[0].(map[string]any)["matchConditions"] = conds
	_, errs = update(d, withConds, withConds, "")
	checkErrs(t, "kept conditions", errs, nil)
	_, errs = update(d, withConds, stored, "")
	checkErrs(t, "new conditions", errs, qualifiedNameErrs("webhooks[0].matchConditions[0].name", "no good"))

	// A condition the stored webhooks already have compiles with what
	// newer servers added (here two-variable comprehensions), also when
	// another condition changed; a new one does not.
	withTwoVar := copyObj(stored)
	listAt(withTwoVar, "webhooks")[0].(map[string]any)["matchConditions"] = []any{map[string]any{"name": "a", "expression": twoVar}}
	changed := copyObj(withTwoVar)
	listAt(changed, "webhooks")[0].(map[string]any)["matchConditions"] = []any{
		map[string]any{"name": "a", "expression": twoVar}, map[string]any{"name": "b", "expression": "true"}}
	_, errs = update(d, changed, withTwoVar, "")
	checkErrs(t, "stored expression", errs, nil)
	_, errs = update(d, changed, stored, "")
	checkErrs(t, "new expression", errs, []string{`webhooks[0].matchConditions[0].expression: Invalid value: "{'a': 1}.all(k, v, v > 0)": ` + twoVarErr(twoVar)})
}

// twoVar is an expression that needs two-variable comprehensions.
const twoVar = "{'a': 1}.all(k, v, v > 0)"

// twoVarErr is the compile error, where two-variable comprehensions are
// not declared, of expr: one that starts as "{'a': 1}.all(k, v, v > ".
func twoVarErr(expr string) string {
	var b strings.Builder
	b.WriteString("compilation failed: ")
	for i, ref := range []struct {
		name string
		col  int
	}{{"all", 13}, {"k", 14}, {"v", 17}, {"v", 20}} {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "ERROR: <input>:1:%d: undeclared reference to '%s' (in container '')\n | %s\n | %s^", ref.col, ref.name, expr, strings.Repeat(".", ref.col-1))
	}
	return b.String()
}

// policy is a valid policy with the spec members changed (nil removes
// one).
func policy(changes map[string]any) registry.Object {
	spec := map[string]any{
		"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
			"operations": []any{"CREATE"}, "apiGroups": []any{"apps"}, "apiVersions": []any{"v1"}, "resources": []any{"deployments"}}}},
		"validations": []any{map[string]any{"expression": "object.spec.replicas <= 5"}},
	}
	for k, v := range changes {
		if v == nil {
			delete(spec, k)
		} else {
			spec[k] = v
		}
	}
	return registry.Object{"metadata": map[string]any{"name": "pol"}, "spec": spec}
}

func TestValidatingAdmissionPolicy(t *testing.T) {
	t.Parallel()
	d := apiTypeDescriptor(t, "ValidatingAdmissionPolicy")
	if d.Subresource("status") == nil {
		t.Fatal("no status subresource")
	}
	got := mustCreate(t, d, policy(nil))
	mc := mapAt(got, "spec", "matchConstraints")
	if str(got, "spec", "failurePolicy") != "Fail" || str(mc, "matchPolicy") != "Equivalent" ||
		!reflect.DeepEqual(mc["namespaceSelector"], map[string]any{}) || !reflect.DeepEqual(mc["objectSelector"], map[string]any{}) ||
		valueAt(listAt(mc, "resourceRules")[0].(map[string]any), "scope") != "*" {
		t.Errorf("defaults: %v", got["spec"])
	}
	tests := []struct {
		name    string
		changes map[string]any
		want    []string
	}{
		{"nothing to check", map[string]any{"validations": nil, "matchConstraints": nil, "failurePolicy": "Never"}, []string{
			`spec.failurePolicy: Unsupported value: "Never": supported values: "Fail", "Ignore"`,
			`spec.matchConstraints: Required value`,
			`spec.validations: Required value: validations or auditAnnotations must contain at least one item`,
			`spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item`,
		}},
		{"no resource rules", map[string]any{"matchConstraints": map[string]any{"matchPolicy": "Exact"}}, []string{
			`spec.matchConstraints.resourceRules: Required value`,
		}},
		{"param kind", map[string]any{"paramKind": map[string]any{"apiVersion": "a/b/c", "kind": "My_Kind"}}, []string{
			`spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`,
			`spec.paramKind.kind: Invalid value: "My_Kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
		}},
		{"param kind version", map[string]any{"paramKind": map[string]any{"apiVersion": "example.com/", "kind": "K"}}, []string{
			`spec.paramKind.apiVersion: Invalid value: "example.com/": version must be specified`,
		}},
		{"validations", map[string]any{"validations": []any{
			map[string]any{"expression": " ", "messageExpression": "  ", "message": "two\nlines", "reason": "NotFound"},
		}}, []string{
			`spec.validations[0].expression: Required value: expression is not specified`,
			`spec.validations[0].messageExpression: Invalid value: "  ": must be non-empty if specified`,
			`spec.validations[0].message: Invalid value: "two\nlines": message must not contain line breaks`,
			`spec.validations[0].reason: Unsupported value: "NotFound": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"`,
		}},
		{"variables", map[string]any{"variables": []any{map[string]any{"name": "in", "expression": "1"}, map[string]any{"name": " "}}}, []string{
			`spec.variables[0].name: Invalid value: "in": name is not a valid CEL identifier`,
			`spec.variables[1].name: Required value: name is not specified`,
			`spec.variables[1].expression: Required value: expression is not specified`,
		}},
		{"audit annotations", map[string]any{"validations": nil, "auditAnnotations": []any{
			map[string]any{"key": "a", "valueExpression": "'x'"},
			map[string]any{"key": "a", "valueExpression": ""},
			map[string]any{"key": "b/c", "valueExpression": "'y'"},
		}}, []string{
			`spec.auditAnnotations[1].valueExpression: Required value: valueExpression is not specified`,
			`spec.auditAnnotations[1].key: Duplicate value: "a"`,
			`spec.auditAnnotations[2].key: Invalid value: "pol/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
		}},
		{"expressions", map[string]any{
			"matchConditions": []any{map[string]any{"name": "m", "expression": "params.x == 1"}},
			"validations": []any{
				map[string]any{"expression": "object.spec.replicas <= ", "messageExpression": "1"},
				map[string]any{"expression": "object.spec.paused"},
				map[string]any{"expression": "request.user == ''", "messageExpression": "authorizer.path('/x').check('get').reason()"},
				map[string]any{"expression": "authorizer.requestResource.check('scale').allowed()", "messageExpression": " 'replicas: ' + string(object.spec.replicas)"},
			},
			"auditAnnotations": []any{
				map[string]any{"key": "a", "valueExpression": " 1 "},
				map[string]any{"key": "b", "valueExpression": "object.spec.replicas > 1 ? 'many' : 'few'"},
				map[string]any{"key": "c", "valueExpression": "null"},
			},
		}, []string{
			"spec.matchConditions[0].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^",
			"spec.validations[0].expression: Invalid value: \"object.spec.replicas <= \": compilation failed: ERROR: <input>:1:25: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | object.spec.replicas <= \n | ........................^",
			`spec.validations[0].messageExpression: Invalid value: "1": must evaluate to string but got int`,
			`spec.validations[1].expression: Invalid value: "object.spec.paused": must evaluate to bool but got dyn`,
			"spec.validations[2].expression: Invalid value: \"request.user == ''\": compilation failed: ERROR: <input>:1:8: undefined field 'user'\n | request.user == ''\n | .......^",
			"spec.validations[2].messageExpression: Invalid value: \"authorizer.path('/x').check('get').reason()\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer' (in container '')\n | authorizer.path('/x').check('get').reason()\n | ^",
			`spec.auditAnnotations[0].valueExpression: Invalid value: " 1 ": must evaluate to one of [string null_type] but got int`,
		}},
		{"expressions with params", map[string]any{
			"paramKind":        map[string]any{"apiVersion": "v1", "kind": "ConfigMap"},
			"matchConditions":  []any{map[string]any{"name": "m", "expression": "params.data.enabled == 'true'"}},
			"validations":      []any{map[string]any{"expression": "object.spec.replicas <= int(params.data.max)", "messageExpression": "'at most ' + params.data.max"}},
			"auditAnnotations": []any{map[string]any{"key": "a", "valueExpression": "'max ' + params.data.max"}},
		}, nil},
		{"variables", map[string]any{
			"matchConditions": []any{map[string]any{"name": "m", "expression": "variables.max > 1"}},
			"variables": []any{
				map[string]any{"name": "replicas", "expression": "object.spec.replicas"},
				map[string]any{"name": "max", "expression": "5"},
				map[string]any{"name": "early", "expression": "variables.later"},
				map[string]any{"name": "later", "expression": "1"},
			},
			"validations": []any{
				map[string]any{"expression": "variables.replicas <= variables.max && variables.later == 1", "messageExpression": "'max ' + string(variables.max)"},
				map[string]any{"expression": "variables.max == 'five'"},
			},
			"auditAnnotations": []any{map[string]any{"key": "a", "valueExpression": "variables.max"}},
		}, []string{
			"spec.matchConditions[0].expression: Invalid value: \"variables.max > 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in container '')\n | variables.max > 1\n | ^",
			"spec.variables[2].expression: Invalid value: \"variables.later\": compilation failed: ERROR: <input>:1:10: undefined field 'later'\n | variables.later\n | .........^",
			"spec.validations[1].expression: Invalid value: \"variables.max == 'five'\": compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(int, string)'\n | variables.max == 'five'\n | ..............^",
			`spec.auditAnnotations[0].valueExpression: Invalid value: "variables.max": must evaluate to one of [string null_type] but got int`,
		}},
		{"no variables", map[string]any{"validations": []any{map[string]any{"expression": "variables.x"}}}, []string{
			"spec.validations[0].expression: Invalid value: \"variables.x\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in container '')\n | variables.x\n | ^",
		}},
		{"match constraints", map[string]any{"matchConstraints": map[string]any{
			"matchPolicy": "Fuzzy",
			"resourceRules": []any{map[string]any{"operations": []any{"CREATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"},
				"resources": []any{"pods"}, "resourceNames": []any{"a", "a", "b/c"}}},
			"excludeResourceRules": []any{map[string]any{}},
		}}, []string{
			`spec.matchConstraints.matchPolicy: Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact"`,
			`spec.matchConstraints.resourceRules[0].resourceNames[1]: Duplicate value: "a"`,
			`spec.matchConstraints.resourceRules[0].resourceNames[2]: Invalid value: "b/c": may not contain '/'`,
			`spec.matchConstraints.excludeResourceRules[0].operations: Required value`,
			`spec.matchConstraints.excludeResourceRules[0].apiGroups: Required value`,
			`spec.matchConstraints.excludeResourceRules[0].apiVersions: Required value`,
			`spec.matchConstraints.excludeResourceRules[0].resources: Required value`,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, policy(tt.changes))
		checkErrs(t, tt.name, errs, tt.want)
	}

	// Expressions the stored policy has compile with what newer servers
	// added (two-variable comprehensions); new ones do not. Variables are
	// looked up among the stored validations, as upstream does.
	const twoVarText = twoVar + " ? 'y' : 'n'"
	withTwoVar := policy(map[string]any{
		"matchConditions":  []any{map[string]any{"name": "m", "expression": twoVar}},
		"variables":        []any{map[string]any{"name": "v", "expression": twoVar}},
		"validations":      []any{map[string]any{"expression": twoVar, "messageExpression": twoVarText}},
		"auditAnnotations": []any{map[string]any{"key": "a", "valueExpression": twoVarText}},
	})
	_, errs := create(d, withTwoVar)
	checkErrs(t, "new two-variable comprehensions", errs, []string{
		`spec.matchConditions[0].expression: Invalid value: "{'a': 1}.all(k, v, v > 0)": ` + twoVarErr(twoVar),
		`spec.variables[0].expression: Invalid value: "{'a': 1}.all(k, v, v > 0)": ` + twoVarErr(twoVar),
		`spec.validations[0].expression: Invalid value: "{'a': 1}.all(k, v, v > 0)": ` + twoVarErr(twoVar),
		`spec.validations[0].messageExpression: Invalid value: "{'a': 1}.all(k, v, v > 0) ? 'y' : 'n'": ` + twoVarErr(twoVarText),
		`spec.auditAnnotations[0].valueExpression: Invalid value: "{'a': 1}.all(k, v, v > 0) ? 'y' : 'n'": ` + twoVarErr(twoVarText),
	})
	changed := copyObj(withTwoVar)
	mapAt(changed, "spec")["matchConditions"] = []any{
		map[string]any{"name": "m", "expression": twoVar}, map[string]any{"name": "n", "expression": "true"}}
	_, errs = update(d, changed, withTwoVar, "")
	checkErrs(t, "stored two-variable comprehensions", errs, nil)
	const otherTwoVar = "{'a': 1}.all(k, v, v > 1)"
	changed = copyObj(withTwoVar)
	mapAt(changed, "spec")["variables"] = []any{map[string]any{"name": "v", "expression": otherTwoVar}}
	mapAt(changed, "spec")["validations"] = []any{map[string]any{"expression": otherTwoVar, "messageExpression": twoVarText}}
	_, errs = update(d, changed, withTwoVar, "")
	checkErrs(t, "changed expressions", errs, []string{
		`spec.variables[0].expression: Invalid value: "{'a': 1}.all(k, v, v > 1)": ` + twoVarErr(otherTwoVar),
		`spec.validations[0].expression: Invalid value: "{'a': 1}.all(k, v, v > 1)": ` + twoVarErr(otherTwoVar),
	})
	// A stored variable alone is not enough.
	varOnly := copyObj(withTwoVar)
	mapAt(varOnly, "spec")["validations"] = []any{map[string]any{"expression": "true"}}
	_, errs = update(d, varOnly, varOnly, "")
	checkErrs(t, "stored variable", errs, []string{`spec.variables[0].expression: Invalid value: "{'a': 1}.all(k, v, v > 0)": ` + twoVarErr(twoVar)})

	status := d.Subresource("status").Validate
	bad := registry.Object{"status": map[string]any{
		"typeChecking": map[string]any{"expressionWarnings": []any{map[string]any{"fieldRef": " "}}},
		"conditions":   []any{map[string]any{"type": "Ready", "status": "Maybe", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "R"}},
	}}
	checkErrs(t, "status", status(bad, got), []string{
		`status.typeChecking.expressionWarnings[0].warning: Required value`,
		`status.typeChecking.expressionWarnings[0].fieldRef: Required value`,
		`status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"`,
	})
}

func TestValidatingAdmissionPolicyBinding(t *testing.T) {
	t.Parallel()
	d := apiTypeDescriptor(t, "ValidatingAdmissionPolicyBinding")
	binding := func(spec map[string]any) registry.Object {
		return registry.Object{"metadata": map[string]any{"name": "b"}, "spec": spec}
	}
	got := mustCreate(t, d, binding(map[string]any{"policyName": "pol", "validationActions": []any{"Deny"},
		"matchResources": map[string]any{}}))
	if mr := mapAt(got, "spec", "matchResources"); str(mr, "matchPolicy") != "Equivalent" || mr["objectSelector"] == nil {
		t.Errorf("match resources not defaulted: %v", mr)
	}
	if present(mapAt(got, "spec"), "paramRef") {
		t.Errorf("paramRef defaulted in v1: %v", got["spec"])
	}
	tests := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"empty", map[string]any{}, []string{
			`spec.policyName: Required value`,
			`spec.validationActions: Required value: at least one validation action is required`,
		}},
		{"actions", map[string]any{"policyName": "Pol", "validationActions": []any{"Deny", "Warn", "Deny", "Block"}}, []string{
			`spec.policyName: Invalid value: "Pol": ` + subdomainMsg,
			`spec.validationActions[2]: Duplicate value: "Deny"`,
			`spec.validationActions[3]: Unsupported value: "Block": supported values: "Audit", "Deny", "Warn"`,
			`spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn", "Deny", "Block"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)`,
		}},
		{"param ref", map[string]any{"policyName": "p", "validationActions": []any{"Audit"},
			"paramRef": map[string]any{"name": "a/b", "selector": map[string]any{}, "parameterNotFoundAction": "Ignore"}}, []string{
			`spec.paramRef.name: Invalid value: "a/b": may not contain '/'`,
			`spec.paramRef.name: Forbidden: name and selector are mutually exclusive`,
			`spec.paramRef.selector: Forbidden: name and selector are mutually exclusive`,
			`spec.paramRef.parameterNotFoundAction: Unsupported value: "Ignore": supported values: "Deny", "Allow"`,
		}},
		{"param ref empty", map[string]any{"policyName": "p", "validationActions": []any{"Warn"}, "paramRef": map[string]any{}}, []string{
			`spec.paramRef: Required value: one of name or selector must be specified`,
			`spec.paramRef.parameterNotFoundAction: Required value`,
		}},
		{"match resources path", map[string]any{"policyName": "p", "validationActions": []any{"Deny"},
			"matchResources": map[string]any{"matchPolicy": "Near"}}, []string{
			`spec.matchResouces.matchPolicy: Unsupported value: "Near": supported values: "Equivalent", "Exact"`,
		}},
	}
	for _, tt := range tests {
		_, errs := create(d, binding(tt.spec))
		checkErrs(t, tt.name, errs, tt.want)
	}
}
