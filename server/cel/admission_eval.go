package cel

import (
	"context"
	"fmt"
	"math"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
)

// RuntimeAdmissionBudget is the most the expressions of one policy may
// cost together in one evaluation (for one binding and parameter), as
// upstream's runtime budget.
const RuntimeAdmissionBudget = RuntimeCostBudget

// RuntimeMatchConditionsBudget is the most the match conditions of one
// policy may cost together in one evaluation, a budget of their own
// apart from the validations', as upstream's.
const RuntimeMatchConditionsBudget = 2500000

// outOfBudgetDetail is upstream's text of an evaluation that ran out of
// its budget.
const outOfBudgetDetail = "validation failed due to running out of cost budget, no further validation rules will be run"

// AdmissionProgram is one admission expression compiled for evaluation
// in the environment of stored expressions, as upstream compiles the
// policies it enforces. A program whose expression does not compile
// keeps the failure and fails each evaluation with it. Safe for
// concurrent use.
type AdmissionProgram struct {
	// Expr is the expression as written.
	Expr string
	prog cel.Program
	err  *AdmissionError
}

// Err is the compile failure, nil for a program that compiled.
func (p *AdmissionProgram) Err() *AdmissionError { return p.err }

// Program compiles expr, which must evaluate to want, into a program
// seeing the variables of decls (and `variables` as compiled so far).
func (c *AdmissionCompiler) Program(expr string, want AdmissionResult, decls AdmissionDecls) *AdmissionProgram {
	env, ast, _, err := c.check(expr, want, decls, true)
	return c.program(expr, env, ast, err)
}

// VariableProgram is CompileVariable for evaluation: it compiles a
// variable's expression and declares it for the expressions after it.
func (c *AdmissionCompiler) VariableProgram(name, expr string, decls AdmissionDecls) *AdmissionProgram {
	env, ast, out, err := c.check(expr, ResultAny, decls, true)
	if c.variables != nil {
		c.variables[name] = variableType(out)
	}
	return c.program(expr, env, ast, err)
}

func (c *AdmissionCompiler) program(expr string, env *cel.Env, ast *cel.Ast, err *AdmissionError) *AdmissionProgram {
	p := &AdmissionProgram{Expr: expr, err: err}
	if err != nil {
		return p
	}
	prog, perr := env.Program(ast, programOptions(&costEstimator{})...)
	if perr != nil {
		p.err = &AdmissionError{Detail: "program instantiation failed: " + perr.Error()}
		return p
	}
	p.prog = prog
	return p
}

// AdmissionInput is what the expressions of one evaluation see. Objects
// are in the generic decoded form (map[string]any, []any, string, int64,
// float64, bool, nil); a nil map is null.
type AdmissionInput struct {
	Object, OldObject map[string]any
	// Params is the binding's parameter object; nil is null.
	Params map[string]any
	// Request is the admission request (kind, resource, name, namespace,
	// operation, userInfo, ...), as upstream's AdmissionRequest's JSON.
	Request map[string]any
	// Namespace is the namespace of a namespaced object; nil is null.
	Namespace map[string]any
	// Authorizer backs `authorizer` and `authorizer.requestResource`;
	// nil leaves them unset, and expressions reading them fail.
	Authorizer *AdmissionAuthorizer
}

// NamedProgram is a compiled variable.
type NamedProgram struct {
	Name    string
	Program *AdmissionProgram
}

// AdmissionEvaluation evaluates the expressions of one policy against
// one input: they share one cost budget, and the policy's variables,
// each evaluated at most once, when an expression first reads it. It is
// for one goroutine.
type AdmissionEvaluation struct {
	ctx    context.Context
	act    *admissionActivation
	budget int64
	// varCost is what variables evaluated since the last charge cost.
	varCost int64
}

// NewAdmissionEvaluation starts an evaluation of in with the policy's
// variables and budget to spend.
func NewAdmissionEvaluation(ctx context.Context, in AdmissionInput, vars []NamedProgram, budget int64) *AdmissionEvaluation {
	e := &AdmissionEvaluation{ctx: ctx, budget: budget}
	e.act = &admissionActivation{in: in}
	if len(vars) > 0 {
		lv := &lazyVariables{e: e, byName: make(map[string]*lazyVariable, len(vars))}
		for _, v := range vars {
			lv.byName[v.Name] = &lazyVariable{prog: v.Program, name: v.Name}
		}
		e.act.vars = lv
	}
	return e
}

// Budget is what is left of the evaluation's budget.
func (e *AdmissionEvaluation) Budget() int64 { return e.budget }

// AdmissionEvalError is an expression's failure, worded as upstream's.
// OutOfBudget says the evaluation's budget is spent: no further
// expression of it runs.
type AdmissionEvalError struct {
	Detail      string
	OutOfBudget bool
}

func (e *AdmissionEvalError) Error() string { return e.Detail }

// Eval evaluates p and returns its value in the generic form (a bool, a
// string, nil for null). The failure of an expression that does not
// compile or fails at run time is an *AdmissionEvalError; one with
// OutOfBudget set ends the evaluation.
func (e *AdmissionEvaluation) Eval(p *AdmissionProgram) (any, error) {
	if p.err != nil {
		return nil, &AdmissionEvalError{Detail: "compilation error: " + p.err.Detail}
	}
	val, det, err := p.prog.ContextEval(e.ctx, e.act)
	if err := e.charge(); err != nil {
		return nil, err
	}
	if det == nil || det.ActualCost() == nil {
		return nil, &AdmissionEvalError{Detail: fmt.Sprintf("runtime cost could not be calculated for expression: %v, no further expression will be run", p.Expr), OutOfBudget: true}
	}
	if cost := *det.ActualCost(); cost > math.MaxInt64 || int64(cost) > e.budget {
		e.budget = -1
		return nil, &AdmissionEvalError{Detail: outOfBudgetDetail, OutOfBudget: true}
	} else {
		e.budget -= int64(cost)
	}
	if err != nil {
		return nil, &AdmissionEvalError{Detail: fmt.Sprintf("expression '%v' resulted in error: %v", p.Expr, err)}
	}
	if val == types.NullValue {
		return nil, nil
	}
	return val.Value(), nil
}

// charge takes what the variables read by the last expression cost from
// the budget.
func (e *AdmissionEvaluation) charge() error {
	c := e.varCost
	e.varCost = 0
	if c > e.budget {
		e.budget = -1
		return &AdmissionEvalError{Detail: outOfBudgetDetail, OutOfBudget: true}
	}
	e.budget -= c
	return nil
}

// admissionActivation resolves the admission variables of one input.
type admissionActivation struct {
	in   AdmissionInput
	vars *lazyVariables
}

func nullable(m map[string]any) any {
	if m == nil {
		return types.NullValue
	}
	return m
}

func (a *admissionActivation) ResolveName(name string) (any, bool) {
	switch name {
	case objectVarName:
		return nullable(a.in.Object), true
	case oldObjectVarName:
		return nullable(a.in.OldObject), true
	case paramsVarName:
		return nullable(a.in.Params), true
	case requestVarName:
		return a.in.Request, true
	case namespaceVarName:
		return nullable(a.in.Namespace), true
	case authorizerVarName:
		if a.in.Authorizer == nil {
			return nil, false
		}
		return a.in.Authorizer.authorizer(), true
	case requestResourceVarName:
		if a.in.Authorizer == nil {
			return nil, false
		}
		return a.in.Authorizer.requestResource(), true
	case variablesVarName:
		if a.vars == nil {
			return nil, false
		}
		return a.vars, true
	}
	return nil, false
}

func (a *admissionActivation) Parent() interpreter.Activation { return nil }

// lazyVariables is the value of `variables`: each variable is evaluated
// when first read, its cost charged to the evaluation.
type lazyVariables struct {
	e      *AdmissionEvaluation
	byName map[string]*lazyVariable
}

type lazyVariable struct {
	name  string
	prog  *AdmissionProgram
	done  bool
	value ref.Val
}

func (l *lazyVariables) has(name string) bool {
	_, ok := l.byName[name]
	return ok
}

func (l *lazyVariables) field(name string) (any, error) {
	v, ok := l.byName[name]
	if !ok {
		return nil, fmt.Errorf("no such key: %s", name)
	}
	if !v.done {
		v.done = true
		v.value = l.evaluate(v)
	}
	return v.value, nil
}

// evaluate runs a variable's program; its failure is the value, so that
// the expression reading it fails with it.
func (l *lazyVariables) evaluate(v *lazyVariable) ref.Val {
	if v.prog.err != nil {
		return types.NewErr("composited variable %q fails to compile: %v", v.name, v.prog.err.Detail)
	}
	val, det, err := v.prog.prog.ContextEval(l.e.ctx, l.e.act)
	if det == nil || det.ActualCost() == nil {
		return types.NewErr("unable to calculate cost of variable %q", v.name)
	}
	cost := *det.ActualCost()
	if cost > math.MaxInt64 {
		cost = math.MaxInt64
	}
	l.e.varCost = addCapped(l.e.varCost, int64(cost))
	if err != nil {
		return types.NewErr("composited variable %q fails to evaluate: %v", v.name, err)
	}
	return val
}

func addCapped(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
