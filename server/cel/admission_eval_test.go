package cel

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"platd/security"
)

func TestAdmissionEval(t *testing.T) {
	t.Parallel()
	in := AdmissionInput{
		Object: map[string]any{"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
			"spec": map[string]any{"replicas": int64(6), "ratio": 0.5}},
		Request: map[string]any{"operation": "CREATE", "name": "web", "namespace": "ns",
			"userInfo": map[string]any{"username": "alice", "groups": []any{"devs"}}},
		Namespace: map[string]any{"metadata": map[string]any{"name": "ns", "labels": map[string]any{"env": "prod"}}},
		Params:    map[string]any{"data": map[string]any{"max": "5"}},
	}
	decls := AdmissionDecls{Params: true, Authorizer: true}
	tests := []struct {
		name string
		vars [][2]string
		expr string
		want AdmissionResult
		in   *AdmissionInput
		out  any
		err  string
	}{
		{name: "int field", expr: "object.spec.replicas <= 5", out: false},
		{name: "int arithmetic", expr: "object.spec.replicas + 1 == 7", out: true},
		{name: "double field", expr: "object.spec.ratio < 1.0", out: true},
		{name: "old object null", expr: "oldObject == null", out: true},
		{name: "request", expr: "request.operation == 'CREATE' && request.userInfo.username == 'alice' && 'devs' in request.userInfo.groups", out: true},
		{name: "namespace", expr: "namespaceObject.metadata.labels['env'] == 'prod'", out: true},
		{name: "namespace null", expr: "namespaceObject == null", in: &AdmissionInput{Request: in.Request}, out: true},
		{name: "params", expr: "object.spec.replicas <= int(params.data.max)", out: false},
		{name: "params null", expr: "params == null", in: &AdmissionInput{Request: in.Request}, out: true},
		{name: "message", expr: "'replicas ' + string(object.spec.replicas)", want: ResultString, out: "replicas 6"},
		{name: "null", expr: "null", want: ResultStringOrNull, out: nil},
		{name: "variables", vars: [][2]string{{"r", "object.spec.replicas"}, {"big", "variables.r > 5"}}, expr: "!variables.big", out: false},
		{name: "variable fails", vars: [][2]string{{"x", "object.spec.missing"}}, expr: "variables.x == 1",
			err: `expression 'variables.x == 1' resulted in error: composited variable "x" fails to evaluate: no such key: missing`},
		{name: "variable does not compile", vars: [][2]string{{"x", "object."}}, expr: "variables.x == 1",
			err: "expression 'variables.x == 1' resulted in error: composited variable \"x\" fails to compile: compilation failed: ERROR: <input>:1:8: Syntax error: no viable alternative at input '.'\n | object.\n | .......^"},
		{name: "runtime error", expr: "object.spec.missing == 1", err: "expression 'object.spec.missing == 1' resulted in error: no such key: missing"},
		{name: "compile error", expr: "1", err: "compilation error: must evaluate to bool but got int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewAdmissionCompiler(len(tt.vars) > 0)
			var vars []NamedProgram
			for _, v := range tt.vars {
				vars = append(vars, NamedProgram{Name: v[0], Program: c.VariableProgram(v[0], v[1], decls)})
			}
			p := c.Program(tt.expr, tt.want, decls)
			input := in
			if tt.in != nil {
				input = *tt.in
			}
			e := NewAdmissionEvaluation(context.Background(), input, vars, RuntimeAdmissionBudget)
			out, err := e.Eval(p)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out != tt.out {
				t.Fatalf("got %#v, want %#v", out, tt.out)
			}
		})
	}
}

func TestAdmissionEvalBudget(t *testing.T) {
	t.Parallel()
	c := NewAdmissionCompiler(false)
	p := c.Program("[1,2,3,4,5,6,7,8,9,10].all(x, [1,2,3,4,5,6,7,8,9,10].all(y, x*y > 0))", ResultBool, AdmissionDecls{})
	e := NewAdmissionEvaluation(context.Background(), AdmissionInput{}, nil, 50)
	_, err := e.Eval(p)
	var ee *AdmissionEvalError
	if !errors.As(err, &ee) || !ee.OutOfBudget || ee.Detail != outOfBudgetDetail {
		t.Fatalf("error %v, want running out of budget", err)
	}
	if e.Budget() >= 0 {
		t.Fatalf("budget %d left after running out", e.Budget())
	}
}

func TestAdmissionEvalAuthorizer(t *testing.T) {
	t.Parallel()
	var seen []security.Attributes
	authz := security.AuthorizerFunc(func(_ context.Context, a security.Attributes) (security.Decision, string, error) {
		seen = append(seen, a)
		switch {
		case a.Path == "/broken":
			return security.DecisionNoOpinion, "", errors.New("webhook down")
		case a.User.Name == "alice" && (a.Path == "/healthz" || a.Resource == "pods"):
			return security.DecisionAllow, "alice may", nil
		case a.User.Name == "system:serviceaccount:ns:sa" && a.Resource == "secrets":
			return security.DecisionAllow, "", nil
		}
		return security.DecisionDeny, "no", nil
	})
	alice := &security.User{Name: "alice"}
	in := AdmissionInput{Request: map[string]any{}, Authorizer: &AdmissionAuthorizer{Ctx: context.Background(), Authorizer: authz, User: alice,
		Group: "apps", Version: "v1", Resource: "deployments", Subresource: "scale", Namespace: "ns", Name: "web"}}
	tests := []struct {
		expr  string
		want  any
		attrs security.Attributes
	}{
		{"authorizer.path('/healthz').check('get').allowed()", true, security.Attributes{User: alice, Verb: "get", Path: "/healthz"}},
		{"authorizer.path('/healthz').check('get').reason()", "alice may", security.Attributes{User: alice, Verb: "get", Path: "/healthz"}},
		{"authorizer.path('/broken').check('get').errored() && authorizer.path('/broken').check('get').error() == 'webhook down'", true,
			security.Attributes{User: alice, Verb: "get", Path: "/broken"}},
		{"authorizer.group('').resource('pods').namespace('ns').name('p').subresource('log').check('get').allowed()", true,
			security.Attributes{User: alice, Verb: "get", ResourceRequest: true, APIVersion: "*", Resource: "pods", Subresource: "log", Namespace: "ns", Name: "p"}},
		{"authorizer.serviceAccount('ns', 'sa').group('').resource('secrets').check('list').allowed()", true,
			security.Attributes{User: &security.User{Name: "system:serviceaccount:ns:sa", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns"}},
				Verb: "list", ResourceRequest: true, APIVersion: "*", Resource: "secrets"}},
		{"authorizer.requestResource.check('update').allowed()", false,
			security.Attributes{User: alice, Verb: "update", ResourceRequest: true, APIGroup: "apps", APIVersion: "v1", Resource: "deployments", Subresource: "scale", Namespace: "ns", Name: "web"}},
		{"authorizer.group('').resource('pods').labelSelector('app=web').fieldSelector('spec.nodeName=n1').check('list').allowed()", true,
			security.Attributes{User: alice, Verb: "list", ResourceRequest: true, APIVersion: "*", Resource: "pods",
				LabelSelector: []security.SelectorRequirement{{Key: "app", Operator: "In", Values: []string{"web"}}},
				FieldSelector: []security.SelectorRequirement{{Key: "spec.nodeName", Operator: "In", Values: []string{"n1"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			seen = nil
			want := ResultBool
			if _, ok := tt.want.(string); ok {
				want = ResultString
			}
			p := NewAdmissionCompiler(false).Program(tt.expr, want, AdmissionDecls{Authorizer: true})
			out, err := NewAdmissionEvaluation(context.Background(), in, nil, RuntimeAdmissionBudget).Eval(p)
			if err != nil {
				t.Fatal(err)
			}
			if out != tt.want {
				t.Errorf("got %v, want %v", out, tt.want)
			}
			if len(seen) == 0 || !reflect.DeepEqual(seen[0], tt.attrs) {
				t.Errorf("asked %+v, want %+v", seen, tt.attrs)
			}
		})
	}
}
