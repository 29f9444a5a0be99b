package security

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
)

// jwtCELPerCallLimit is the most one expression may cost in one
// evaluation: upstream's per-call limit, so a hostile token cannot make an
// expression run long.
const jwtCELPerCallLimit = 1000000

// celUserInfo is the `user` variable of userValidationRules.
type celUserInfo struct {
	Username string              `cel:"username"`
	UID      string              `cel:"uid"`
	Groups   []string            `cel:"groups"`
	Extra    map[string][]string `cel:"extra"`
}

// jwtCELEnvs holds the two environments: claims for claim rules and
// mappings, user for user rules. Built once; cel.Env is safe for
// concurrent use.
type jwtCELEnvs struct{ claims, user *cel.Env }

// newJWTCELEnvs builds the claims and user environments with the standard
// library, optional types, cross-type numeric comparison, the strings (v2),
// sets and two-variable comprehension extensions, and libs.
func newJWTCELEnvs(libs []cel.EnvOption) (*jwtCELEnvs, error) {
	base, err := cel.NewEnv(celBaseOptions(libs)...)
	if err != nil {
		return nil, fmt.Errorf("building the JWT CEL environment: %w", err)
	}
	var envs jwtCELEnvs
	if envs.claims, err = base.Extend(cel.Variable("claims", cel.MapType(cel.StringType, cel.DynType))); err != nil {
		return nil, fmt.Errorf("building the JWT claims environment: %w", err)
	}
	if envs.user, err = base.Extend(
		ext.NativeTypes(reflect.TypeFor[celUserInfo](), ext.ParseStructTags(true)),
		cel.Variable("user", cel.ObjectType("security.celUserInfo")),
	); err != nil {
		return nil, fmt.Errorf("building the JWT user environment: %w", err)
	}
	return &envs, nil
}

// celBaseOptions are the environment options every configuration-file
// expression compiles with, libs added.
func celBaseOptions(libs []cel.EnvOption) []cel.EnvOption {
	opts := []cel.EnvOption{
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.TwoVarComprehensions(),
		cel.ASTValidators(
			cel.ValidateDurationLiterals(),
			cel.ValidateTimestampLiterals(),
			cel.ValidateRegexLiterals(),
			cel.ValidateHomogeneousAggregateLiterals(),
		),
	}
	return append(opts, libs...)
}

// compiledExpr is one checked expression ready to run.
type compiledExpr struct {
	expr string
	prog cel.Program
	ast  *cel.Ast
}

// compileJWTExpr compiles expr in the claims or user environment and
// checks its result type; the error text is upstream's field detail.
func (envs *jwtCELEnvs) compile(expr string, user bool, want *cel.Type) (*compiledExpr, error) {
	env := envs.claims
	if user {
		env = envs.user
	}
	checked, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, errors.New("compilation failed: " + iss.String())
	}
	if want != nil && !checked.OutputType().IsExactType(want) {
		return nil, fmt.Errorf("must evaluate to %v", want)
	}
	prog, err := env.Program(checked, cel.CostLimit(jwtCELPerCallLimit), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, fmt.Errorf("program instantiation failed: %w", err)
	}
	return &compiledExpr{expr: expr, prog: prog, ast: checked}, nil
}

func (c *compiledExpr) eval(vars map[string]any) (ref.Val, error) {
	v, _, err := c.prog.Eval(vars)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// selectsClaim reports whether the checked expression reads claims.<name>
// (or claims["name"], claims.?name).
func selectsClaim(c *compiledExpr, name string) bool {
	if c == nil {
		return false
	}
	found := false
	nav := ast.NavigateAST(c.ast.NativeRep())
	ast.MatchDescendants(nav, func(e ast.NavigableExpr) bool {
		switch e.Kind() {
		case ast.SelectKind:
			s := e.AsSelect()
			if s.FieldName() == name && isClaimsIdent(s.Operand()) {
				found = true
			}
		case ast.CallKind:
			call := e.AsCall()
			args := call.Args()
			if (call.FunctionName() == "_[_]" || call.FunctionName() == "_[?_]" || call.FunctionName() == "_?._") && len(args) == 2 &&
				isClaimsIdent(args[0]) && args[1].Kind() == ast.LiteralKind {
				if s, ok := args[1].AsLiteral().Value().(string); ok && s == name {
					found = true
				}
			}
		}
		return false
	})
	return found
}

func isClaimsIdent(e ast.Expr) bool {
	return e.Kind() == ast.IdentKind && e.AsIdent() == "claims"
}

// stringList turns a mapping result into strings: a string is one value
// ("" none), a list must hold strings only (empty ones dropped), null is
// none.
func stringList(v ref.Val) ([]string, error) {
	errShape := errors.New("expression must return a string or a list of strings")
	switch v.Type() {
	case types.StringType:
		s := v.Value().(string)
		if s == "" {
			return nil, nil
		}
		return []string{s}, nil
	case types.NullType:
		return nil, nil
	case types.ListType:
		l, ok := v.(interface {
			Size() ref.Val
			Get(ref.Val) ref.Val
		})
		if !ok {
			return nil, errShape
		}
		n, _ := l.Size().Value().(int64)
		var out []string
		for i := int64(0); i < n; i++ {
			s, ok := l.Get(types.Int(i)).Value().(string)
			if !ok {
				return nil, errShape
			}
			if s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	return nil, errShape
}
