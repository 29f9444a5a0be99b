package cel

import (
	"fmt"
	"sort"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
)

// Limits of rule evaluation, as upstream's.
const (
	// PerCallLimit is the most one rule (or messageExpression) may cost
	// in one evaluation.
	PerCallLimit = 1000000
	// RuntimeCostBudget is the most all rules together may cost while
	// validating one object.
	RuntimeCostBudget = 10000000
	// StaticEstimatedCostLimit is the most one rule's estimated cost
	// (times how often it can run) may be at CRD write time.
	StaticEstimatedCostLimit = 10000000
	// StaticEstimatedCRDCostLimit is the most all rules of one schema may
	// be estimated to cost together.
	StaticEstimatedCRDCostLimit = 100000000
	// checkFrequency is how many comprehension steps run between checks
	// for cancellation.
	checkFrequency = 100
	// maxMessageExpressionLength bounds an evaluated messageExpression.
	maxMessageExpressionLength = 5 * 1024
)

// The variable names rules see.
const (
	scopedVarName    = "self"
	oldScopedVarName = "oldSelf"
)

var (
	baseOnce sync.Once
	baseEnv  *cel.Env
	baseErr  error
)

// baseOptions are the libraries and options of upstream's v1.32 base
// environment, less the two-variable comprehensions, which v1.32 offers
// only to expressions already stored (see admission.go).
func baseOptions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		urlsLib(),
		regexLib(),
		listsLib(),
		cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		quantityLib(),
		cel.ASTValidators(
			cel.ValidateDurationLiterals(),
			cel.ValidateTimestampLiterals(),
			cel.ValidateRegexLiterals(),
			cel.ValidateHomogeneousAggregateLiterals(),
		),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		netLib(),
		formatLib(),
	}
}

// base is the environment every rule compiles in before self and oldSelf
// are declared: the libraries and options of upstream's v1.32 base
// environment for CRD rules. Built once; cel.Env is safe for concurrent
// use and Extend copies.
func base() (*cel.Env, error) {
	baseOnce.Do(func() {
		baseEnv, baseErr = cel.NewEnv(append(baseOptions(), ext.TwoVarComprehensions())...)
		if baseErr != nil {
			baseErr = fmt.Errorf("building the CEL base environment: %w", baseErr)
		}
	})
	return baseEnv, baseErr
}

// Prewarm builds the shared base environment (about 10 ms) so that the
// first CRD with rules does not wait for it. Safe to call any number of
// times, from any goroutine.
func Prewarm() error {
	_, err := base()
	return err
}

// programOptions are the options of every rule's program.
func programOptions(est interpreter.ActualCostEstimator) []cel.ProgramOption {
	return []cel.ProgramOption{
		cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost),
		cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false)),
		cel.CostLimit(PerCallLimit),
		cel.CostTracking(est),
		cel.InterruptCheckFrequency(checkFrequency),
	}
}

// provider adds a schema's object types to the base type provider.
type provider struct {
	types.Provider
	objects map[string]*declType
}

func (p *provider) FindStructType(name string) (*types.Type, bool) {
	if _, ok := p.objects[name]; ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Provider.FindStructType(name)
}

func (p *provider) FindStructFieldNames(name string) ([]string, bool) {
	d, ok := p.objects[name]
	if !ok {
		return p.Provider.FindStructFieldNames(name)
	}
	out := make([]string, 0, len(d.fields))
	for n := range d.fields {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, true
}

func (p *provider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	d, ok := p.objects[name]
	if !ok {
		return p.Provider.FindStructFieldType(name, field)
	}
	f, ok := d.fields[field]
	if !ok {
		return nil, false
	}
	return &types.FieldType{
		Type: f.typ.celType(),
		IsSet: func(target any) bool {
			m, ok := target.(map[string]any)
			if !ok {
				return false
			}
			_, has := m[f.name]
			return has
		},
		GetFrom: func(target any) (any, error) {
			m, ok := target.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("no such key: %s", field)
			}
			v, has := m[f.name]
			if !has {
				return nil, fmt.Errorf("no such key: %s", field)
			}
			return toVal(v, f.typ), nil
		},
	}, true
}

func (p *provider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if _, ok := p.objects[name]; ok {
		return types.NewErr("cannot construct values of type %s", name)
	}
	return p.Provider.NewValue(name, fields)
}

// ruleEnvs extends the base environment with self (and oldSelf) typed as
// the schema node d: one environment with oldSelf of d's type, one with
// oldSelf optional (for rules with optionalOldSelf).
func ruleEnvs(d *declType) (plain, optional *cel.Env, err error) {
	b, err := base()
	if err != nil {
		return nil, nil, err
	}
	objects := map[string]*declType{}
	d.collectObjects(objects)
	p := &provider{Provider: b.CELTypeProvider(), objects: objects}
	t := d.celType()
	plain, err = b.Extend(cel.CustomTypeProvider(p), cel.Variable(scopedVarName, t), cel.Variable(oldScopedVarName, t))
	if err != nil {
		return nil, nil, err
	}
	optional, err = b.Extend(cel.CustomTypeProvider(p), cel.Variable(scopedVarName, t), cel.Variable(oldScopedVarName, cel.OptionalType(t)))
	if err != nil {
		return nil, nil, err
	}
	return plain, optional, nil
}
