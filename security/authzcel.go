package security

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"

	"platd/config"
)

// celSARSpec is the `request` variable of authorization match conditions:
// the v1 SubjectAccessReviewSpec the webhook would be sent. Absent
// attributes are nil, so has(request.resourceAttributes) tells the kinds
// of request apart.
type celSARSpec struct {
	User                  string                    `cel:"user"`
	Groups                []string                  `cel:"groups"`
	UID                   string                    `cel:"uid"`
	Extra                 map[string][]string       `cel:"extra"`
	ResourceAttributes    *sarResourceAttributes    `cel:"resourceAttributes"`
	NonResourceAttributes *sarNonResourceAttributes `cel:"nonResourceAttributes"`
}

// AuthzCompiler compiles authorization webhook match conditions. Built
// once per server; safe for concurrent use.
type AuthzCompiler struct{ env *cel.Env }

// NewAuthzCompiler builds the `request` environment with the same
// libraries as the authentication configuration's expressions, and libs.
func NewAuthzCompiler(libs []cel.EnvOption) (*AuthzCompiler, error) {
	opts := append(celBaseOptions(libs),
		ext.NativeTypes(reflect.TypeFor[celSARSpec](), ext.ParseStructTags(true)),
		cel.Variable("request", cel.ObjectType("security.celSARSpec")))
	env, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, fmt.Errorf("building the authorization CEL environment: %w", err)
	}
	return &AuthzCompiler{env: env}, nil
}

// compile checks expr; the error text is upstream's field detail.
func (c *AuthzCompiler) compile(expr string) (*compiledExpr, error) {
	checked, iss := c.env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, errors.New("compilation failed: " + iss.String())
	}
	if !checked.OutputType().IsExactType(cel.BoolType) {
		return nil, fmt.Errorf("must evaluate to bool but got %v", checked.OutputType())
	}
	prog, err := c.env.Program(checked, cel.CostLimit(jwtCELPerCallLimit), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, fmt.Errorf("program instantiation failed: %w", err)
	}
	return &compiledExpr{expr: expr, prog: prog, ast: checked}, nil
}

// Check is a config.MatchConditionChecker: nil when expr compiles to a
// bool, else the Invalid field error.
func (c *AuthzCompiler) Check(expr string) *config.FieldError {
	if _, err := c.compile(expr); err != nil {
		return &config.FieldError{Type: config.FieldInvalid, Value: expr, Detail: err.Error()}
	}
	return nil
}

// celRequest is the match-condition view of a request.
func celRequest(spec *sarSpec) *celSARSpec {
	r := &celSARSpec{User: spec.User, Groups: spec.Groups, UID: spec.UID, Extra: spec.Extra}
	if r.Groups == nil {
		r.Groups = spec.Group
	}
	if r.Groups == nil {
		r.Groups = []string{}
	}
	if r.Extra == nil {
		r.Extra = map[string][]string{}
	}
	r.ResourceAttributes, r.NonResourceAttributes = spec.ResourceAttributes, spec.NonResourceAttributes
	return r
}
