package cel

import (
	"testing"
)

func TestAdmissionCompile(t *testing.T) {
	t.Parallel()
	authz := AdmissionDecls{Authorizer: true}
	params := AdmissionDecls{Params: true, Authorizer: true}
	tests := []struct {
		name   string
		expr   string
		want   AdmissionResult
		decls  AdmissionDecls
		stored bool
		err    string // "" when it compiles
	}{
		{name: "syntax error", expr: "object.spec.replicas <= ", err: "compilation failed: ERROR: <input>:1:25: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n" +
			" | object.spec.replicas <= \n" +
			" | ........................^"},
		{name: "bool", expr: "object.spec.replicas <= 5 && oldObject == null"},
		{name: "int for bool", expr: "1", err: "must evaluate to bool but got int"},
		{name: "dyn for bool", expr: "object.spec.paused", err: "must evaluate to bool but got dyn"},
		{name: "string", expr: "'replicas: ' + string(object.spec.replicas)", want: ResultString},
		{name: "bool for string", expr: "true", want: ResultString, err: "must evaluate to string but got bool"},
		{name: "string or null: string", expr: "'x'", want: ResultStringOrNull},
		{name: "string or null: null", expr: "null", want: ResultStringOrNull},
		{name: "string or null: int", expr: "1", want: ResultStringOrNull, err: "must evaluate to one of [string null_type] but got int"},
		{name: "any", expr: "[object.metadata.name]", want: ResultAny},
		{name: "request fields", expr: "request.operation == 'CREATE' && request.userInfo.groups.exists(g, g == 'admins') && request.kind.group == '' && !request.dryRun"},
		{name: "request extra", expr: "request.userInfo.extra['scopes'].size() > 0 && request.options.x == 1"},
		{name: "request unknown field", expr: "request.user == 'a'", err: "compilation failed: ERROR: <input>:1:8: undefined field 'user'\n | request.user == 'a'\n | .......^"},
		{name: "request field type", expr: "request.name == 1", err: "compilation failed: ERROR: <input>:1:14: found no matching overload for '_==_' applied to '(string, int)'\n | request.name == 1\n | .............^"},
		{name: "namespace", expr: "namespaceObject.metadata.labels['env'] == 'prod' && namespaceObject.status.conditions.all(c, c.lastTransitionTime < timestamp('2030-01-01T00:00:00Z'))"},
		{name: "params undeclared", expr: "params.max > 1", err: "compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.max > 1\n | ^"},
		{name: "params", expr: "params.max > 1", decls: params},
		{name: "authorizer undeclared", expr: "authorizer.path('/healthz').check('get').allowed()", err: "compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer' (in container '')\n | authorizer.path('/healthz').check('get').allowed()\n | ^"},
		{name: "authorizer", decls: authz, expr: "authorizer.group('apps').resource('deployments').subresource('scale').namespace('ns').name('n').check('update').allowed() || authorizer.path('/healthz').check('get').errored()"},
		{name: "authorizer service account", decls: authz, expr: "authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('get').reason() == ''", want: ResultBool},
		{name: "request resource", decls: authz, expr: "authorizer.requestResource.check('delete').error()", want: ResultString},
		{name: "authorizer selectors", decls: authz, expr: "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n').labelSelector('a=b').check('list').allowed()"},
		{name: "authorizer wrong receiver", decls: authz, expr: "authorizer.group('apps').check('get').allowed()", err: "compilation failed: ERROR: <input>:1:31: found no matching overload for 'check' applied to 'kubernetes.authorization.GroupCheck.(string)'\n | authorizer.group('apps').check('get').allowed()\n | ..............................^"},
		{name: "libraries", expr: "quantity('1Gi').isGreaterThan(quantity('1Mi')) && isIP('10.0.0.1') && cidr('10.0.0.0/8').containsIP(ip('10.1.2.3')) && url('https://a/b').getHost() == 'a' && 'abc'.matches('^a') && [1, 2].isSorted() && sets.contains([1, 2], [1]) && 'A'.lowerAscii() == 'a' && !format.dns1123Label().validate('abc').hasValue() && object.?spec.orValue(1) == 1"},
		{name: "two-variable comprehension, new", expr: "{'a': 1}.all(k, v, v > 0)", err: "compilation failed: ERROR: <input>:1:13: undeclared reference to 'all' (in container '')\n" +
			" | {'a': 1}.all(k, v, v > 0)\n | ............^\n" +
			"ERROR: <input>:1:14: undeclared reference to 'k' (in container '')\n | {'a': 1}.all(k, v, v > 0)\n | .............^\n" +
			"ERROR: <input>:1:17: undeclared reference to 'v' (in container '')\n | {'a': 1}.all(k, v, v > 0)\n | ................^\n" +
			"ERROR: <input>:1:20: undeclared reference to 'v' (in container '')\n | {'a': 1}.all(k, v, v > 0)\n | ...................^"},
		{name: "two-variable comprehension, stored", expr: "{'a': 1}.all(k, v, v > 0)", stored: true},
		{name: "no variables", expr: "variables.x", err: "compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in container '')\n | variables.x\n | ^"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := NewAdmissionCompiler(false).Compile(tt.expr, tt.want, tt.decls, tt.stored)
			switch {
			case err == nil && tt.err != "":
				t.Errorf("compiled, want %q", tt.err)
			case err != nil && err.Detail != tt.err:
				t.Errorf("got  %q\nwant %q", err.Detail, tt.err)
			case err != nil && err.Internal:
				t.Errorf("internal error %q", err.Detail)
			}
		})
	}
}

// TestAdmissionVariables: each variable sees those before it, typed as
// their results; one that does not compile reads as dyn.
func TestAdmissionVariables(t *testing.T) {
	t.Parallel()
	c := NewAdmissionCompiler(true)
	decls := AdmissionDecls{Authorizer: true}
	steps := []struct {
		variable string // "" for an expression that wants bool
		expr     string
		err      string
	}{
		{"count", "object.spec.replicas + 1", ""},
		{"limit", "5", ""},
		{"later", "variables.future", "compilation failed: ERROR: <input>:1:10: undefined field 'future'\n | variables.future\n | .........^"},
		{"self", "variables.self", "compilation failed: ERROR: <input>:1:10: undefined field 'self'\n | variables.self\n | .........^"},
		{"names", "['a', 'b']", ""},
		{"labels", "{'a': 1}", ""},
		{"broken", "object.", "compilation failed: ERROR: <input>:1:8: Syntax error: no viable alternative at input '.'\n | object.\n | .......^"},
		{"", "variables.count <= variables.limit && variables.names.exists(n, n == 'a') && variables.labels['a'] > 0", ""},
		{"", "variables.broken.x == 1", ""},
		{"", "variables.limit", "must evaluate to bool but got int"},
		{"", "variables.limit == 'five'", "compilation failed: ERROR: <input>:1:17: found no matching overload for '_==_' applied to '(int, string)'\n | variables.limit == 'five'\n | ................^"},
		{"", "variables.names[0] == 1", "compilation failed: ERROR: <input>:1:20: found no matching overload for '_==_' applied to '(string, int)'\n | variables.names[0] == 1\n | ...................^"},
		{"", "variables.future", "compilation failed: ERROR: <input>:1:10: undefined field 'future'\n | variables.future\n | .........^"},
	}
	for i, s := range steps {
		var err *AdmissionError
		if s.variable != "" {
			err = c.CompileVariable(s.variable, s.expr, decls, false)
		} else {
			err = c.Compile(s.expr, ResultBool, decls, false)
		}
		got := ""
		if err != nil {
			got = err.Detail
		}
		if got != s.err {
			t.Errorf("step %d %q:\n got  %q\n want %q", i, s.expr, got, s.err)
		}
	}
	// Other compilers do not see these variables.
	if err := NewAdmissionCompiler(true).Compile("variables.limit == 5", ResultBool, decls, false); err == nil {
		t.Error("a new compiler saw another's variables")
	}
}

func TestVariableType(t *testing.T) {
	t.Parallel()
	c := NewAdmissionCompiler(true)
	for expr, want := range map[string]string{
		"1":                                 "int",
		"'a'":                               "string",
		"[1]":                               "list(int)",
		"{'a': ['b']}":                      "map(string, list(string))",
		"request":                           "dyn",
		"[request]":                         "list(dyn)",
		"optional.of(1)":                    "dyn",
		"duration('1s')":                    "google.protobuf.Duration",
		"object.metadata":                   "dyn",
		"null":                              "null_type",
		"url('https://x')":                  "dyn",
		"{1: 2.0}":                          "map(int, double)",
		"b'x'":                              "bytes",
		"type(1)":                           "dyn",
		"1u":                                "uint",
		"timestamp('2020-01-01T00:00:00Z')": "google.protobuf.Timestamp",
	} {
		c.CompileVariable("v", expr, AdmissionDecls{}, false)
		if got := c.variables["v"].String(); got != want {
			t.Errorf("%s: variable type %s, want %s", expr, got, want)
		}
	}
}
