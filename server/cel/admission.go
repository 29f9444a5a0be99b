package cel

import (
	"fmt"
	"sort"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
)

// The variables admission expressions see, as upstream names them.
const (
	objectVarName          = "object"
	oldObjectVarName       = "oldObject"
	requestVarName         = "request"
	namespaceVarName       = "namespaceObject"
	paramsVarName          = "params"
	authorizerVarName      = "authorizer"
	requestResourceVarName = "authorizer.requestResource"
	variablesVarName       = "variables"
)

// The object types of admission expressions, named as upstream's.
const (
	requestTypeName   = "kubernetes.AdmissionRequest"
	namespaceTypeName = "kubernetes.Namespace"
	variablesTypeName = "kubernetes.variables"
)

// AdmissionResult is the type an admission expression must evaluate to.
type AdmissionResult int

// The results the admission fields want.
const (
	// ResultBool: validations and match conditions.
	ResultBool AdmissionResult = iota
	// ResultString: a validation's messageExpression.
	ResultString
	// ResultStringOrNull: an audit annotation's valueExpression.
	ResultStringOrNull
	// ResultAny: a variable.
	ResultAny
)

// AdmissionDecls are the optional variables an admission expression
// sees besides object, oldObject, request and namespaceObject.
type AdmissionDecls struct {
	// Params declares params (a policy with a paramKind).
	Params bool
	// Authorizer declares authorizer and authorizer.requestResource.
	Authorizer bool
}

// AdmissionError is an admission expression the compiler refuses.
// Detail is upstream's text. Internal marks a failure of the environment
// rather than of the expression (an internal error, not an invalid
// value).
type AdmissionError struct {
	Internal bool
	Detail   string
}

func (e *AdmissionError) Error() string { return e.Detail }

// AdmissionCompiler type-checks the CEL expressions of one admission
// object (a ValidatingAdmissionPolicy, or a webhook configuration's match
// conditions) as upstream's v1.32 API server does at write time.
//
// Expressions compile in one of two environments: new expressions in
// that of v1.32's compatibility version (v1.31: no two-variable
// comprehensions), expressions the stored object already had in the
// full v1.32 environment, so that an object written by a newer server
// stays writable. object, oldObject and params are dyn; request and
// namespaceObject have upstream's field types.
//
// A compiler made with variables declares `variables`, an object whose
// fields are the variables compiled so far (CompileVariable), each typed
// as its expression's result. The environments are built on first use
// and shared by all compilers; an AdmissionCompiler itself is for one
// goroutine.
type AdmissionCompiler struct {
	variables map[string]*types.Type // nil without variables
	envs      map[admissionKey]*cel.Env
}

type admissionKey struct {
	decls  AdmissionDecls
	stored bool
}

// NewAdmissionCompiler returns a compiler for one object's expressions;
// withVariables declares `variables` (a policy that has variables).
func NewAdmissionCompiler(withVariables bool) *AdmissionCompiler {
	c := &AdmissionCompiler{}
	if withVariables {
		c.variables = map[string]*types.Type{}
		c.envs = map[admissionKey]*cel.Env{}
	}
	return c
}

// Compile type-checks expr, which must evaluate to want, with the
// variables of decls; stored selects the environment of expressions the
// object already had. It returns nil when expr compiles.
func (c *AdmissionCompiler) Compile(expr string, want AdmissionResult, decls AdmissionDecls, stored bool) *AdmissionError {
	_, err := c.compile(expr, want, decls, stored)
	return err
}

// CompileVariable compiles a variable's expression (of any type) and,
// in a compiler with variables, adds it to `variables` for the
// expressions compiled after it: typed as its result, or dyn when it
// does not compile.
func (c *AdmissionCompiler) CompileVariable(name, expr string, decls AdmissionDecls, stored bool) *AdmissionError {
	out, err := c.compile(expr, ResultAny, decls, stored)
	if c.variables != nil {
		c.variables[name] = variableType(out)
	}
	return err
}

func (c *AdmissionCompiler) compile(expr string, want AdmissionResult, decls AdmissionDecls, stored bool) (*types.Type, *AdmissionError) {
	_, _, out, err := c.check(expr, want, decls, stored)
	return out, err
}

// check compiles expr and checks its result type; it returns the
// environment and the checked expression with the result type, which is
// known (and returned) also when it is not the one wanted.
func (c *AdmissionCompiler) check(expr string, want AdmissionResult, decls AdmissionDecls, stored bool) (*cel.Env, *cel.Ast, *types.Type, *AdmissionError) {
	env, err := c.env(decls, stored)
	if err != nil {
		return nil, nil, nil, &AdmissionError{Internal: true, Detail: fmt.Sprintf("unexpected error loading CEL environment: %v", err)}
	}
	ast, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, nil, nil, &AdmissionError{Detail: "compilation failed: " + iss.String()}
	}
	out := ast.OutputType()
	if err := resultError(out, want); err != nil {
		return nil, nil, out, err
	}
	return env, ast, out, nil
}

// resultError refuses a result type that is not what want asks for.
func resultError(out *types.Type, want AdmissionResult) *AdmissionError {
	var wants []*types.Type
	switch want {
	case ResultBool:
		wants = []*types.Type{types.BoolType}
	case ResultString:
		wants = []*types.Type{types.StringType}
	case ResultStringOrNull:
		wants = []*types.Type{types.StringType, types.NullType}
	default:
		return nil
	}
	for _, w := range wants {
		if out.IsExactType(w) {
			return nil
		}
	}
	if len(wants) == 1 {
		return &AdmissionError{Detail: fmt.Sprintf("must evaluate to %v but got %v", wants[0], out)}
	}
	return &AdmissionError{Detail: fmt.Sprintf("must evaluate to one of %v but got %v", wants, out)}
}

// env is the environment of decls, with `variables` when c has them.
func (c *AdmissionCompiler) env(decls AdmissionDecls, stored bool) (*cel.Env, error) {
	shared, err := admissionEnv(decls, stored)
	if err != nil || c.variables == nil {
		return shared, err
	}
	k := admissionKey{decls, stored}
	if e, ok := c.envs[k]; ok {
		return e, nil
	}
	p := &structProvider{Provider: shared.CELTypeProvider(), structs: map[string]map[string]*types.Type{variablesTypeName: c.variables}}
	e, err := shared.Extend(cel.CustomTypeProvider(p), cel.Variable(variablesVarName, cel.ObjectType(variablesTypeName)))
	if err != nil {
		return nil, err
	}
	c.envs[k] = e
	return e, nil
}

// variableType is the type `variables` gives a variable whose expression
// yields t: scalars as they are, lists and maps with their parameters so
// converted, anything else (objects, optionals, types, a failed compile)
// dyn.
func variableType(t *types.Type) *types.Type {
	if t == nil {
		return types.DynType
	}
	switch t.Kind() {
	case types.AnyKind:
		return types.AnyType
	case types.BoolKind:
		return types.BoolType
	case types.BytesKind:
		return types.BytesType
	case types.DoubleKind:
		return types.DoubleType
	case types.DurationKind:
		return types.DurationType
	case types.IntKind:
		return types.IntType
	case types.NullTypeKind:
		return types.NullType
	case types.StringKind:
		return types.StringType
	case types.TimestampKind:
		return types.TimestampType
	case types.UintKind:
		return types.UintType
	}
	if t.HasTrait(traits.ContainerType) && t.HasTrait(traits.IndexerType) {
		switch ps := t.Parameters(); len(ps) {
		case 1:
			return types.NewListType(variableType(ps[0]))
		case 2:
			return types.NewMapType(variableType(ps[0]), variableType(ps[1]))
		}
	}
	return types.DynType
}

// The shared admission environments, built on first use: the base of
// new and of stored expressions, and each base with the variables of
// every AdmissionDecls.
var (
	admissionBases [2]lazyEnv       // [stored]
	admissionEnvs  [2][2][2]lazyEnv // [stored][params][authorizer]
)

type lazyEnv struct {
	once sync.Once
	env  *cel.Env
	err  error
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// admissionBase is upstream's v1.32 base environment with the authorizer
// libraries: for new expressions as of v1.31, for stored expressions
// with what v1.32 added (two-variable comprehensions).
func admissionBase(stored bool) (*cel.Env, error) {
	l := &admissionBases[boolIndex(stored)]
	l.once.Do(func() {
		if stored {
			var nw *cel.Env
			if nw, l.err = admissionBase(false); l.err == nil {
				l.env, l.err = nw.Extend(ext.TwoVarComprehensions())
			}
		} else {
			l.env, l.err = cel.NewEnv(append(baseOptions(), authzLib(), authzSelectorsLib())...)
		}
		if l.err != nil {
			l.err = fmt.Errorf("building the CEL admission environment: %w", l.err)
		}
	})
	return l.env, l.err
}

// admissionEnv is admissionBase with the variables of decls declared.
func admissionEnv(decls AdmissionDecls, stored bool) (*cel.Env, error) {
	l := &admissionEnvs[boolIndex(stored)][boolIndex(decls.Params)][boolIndex(decls.Authorizer)]
	l.once.Do(func() {
		b, err := admissionBase(stored)
		if err != nil {
			l.err = err
			return
		}
		p := &structProvider{Provider: b.CELTypeProvider(), structs: admissionStructs()}
		opts := []cel.EnvOption{
			cel.CustomTypeProvider(p),
			cel.Variable(objectVarName, cel.DynType),
			cel.Variable(oldObjectVarName, cel.DynType),
			cel.Variable(namespaceVarName, cel.ObjectType(namespaceTypeName)),
			cel.Variable(requestVarName, cel.ObjectType(requestTypeName)),
		}
		if decls.Params {
			opts = append(opts, cel.Variable(paramsVarName, cel.DynType))
		}
		if decls.Authorizer {
			opts = append(opts, cel.Variable(authorizerVarName, authorizerType), cel.Variable(requestResourceVarName, resourceCheckType))
		}
		l.env, l.err = b.Extend(opts...)
	})
	return l.env, l.err
}

// admissionStructs are the fields of the request and namespace types
// (upstream's: the admission request without its uid and objects, and
// the parts of a namespace policies read).
func admissionStructs() map[string]map[string]*types.Type {
	str, strs := types.StringType, types.NewListType(types.StringType)
	obj := types.NewObjectType
	return map[string]map[string]*types.Type{
		requestTypeName: {
			"kind": obj("kubernetes.GroupVersionKind"), "resource": obj("kubernetes.GroupVersionResource"),
			"subResource": str, "requestKind": obj("kubernetes.GroupVersionKind"),
			"requestResource": obj("kubernetes.GroupVersionResource"), "requestSubResource": str,
			"name": str, "namespace": str, "operation": str, "userInfo": obj("kubernetes.UserInfo"),
			"dryRun": types.BoolType, "options": types.DynType,
		},
		"kubernetes.GroupVersionKind":     {"group": str, "version": str, "kind": str},
		"kubernetes.GroupVersionResource": {"group": str, "version": str, "resource": str},
		"kubernetes.UserInfo": {
			"username": str, "uid": str, "groups": strs, "extra": types.NewMapType(str, strs),
		},
		namespaceTypeName: {
			"metadata": obj("kubernetes.NamespaceMetadata"), "spec": obj("kubernetes.NamespaceSpec"),
			"status": obj("kubernetes.NamespaceStatus"),
		},
		"kubernetes.NamespaceMetadata": {
			"name": str, "generateName": str, "namespace": str,
			"labels": types.NewMapType(str, str), "annotations": types.NewMapType(str, str),
			"UID": str, "creationTimestamp": types.TimestampType, "deletionGracePeriodSeconds": types.IntType,
			"deletionTimestamp": types.TimestampType, "generation": types.IntType, "resourceVersion": str,
			"finalizers": strs,
		},
		"kubernetes.NamespaceSpec": {"finalizers": strs},
		"kubernetes.NamespaceStatus": {
			"conditions": types.NewListType(obj("kubernetes.NamespaceCondition")), "phase": str,
		},
		"kubernetes.NamespaceCondition": {
			"status": str, "type": str, "lastTransitionTime": types.TimestampType, "message": str, "reason": str,
		},
	}
}

// fieldSource is a value of a struct type whose fields are computed on
// access (the lazily evaluated `variables`).
type fieldSource interface {
	has(name string) bool
	field(name string) (any, error)
}

// structProvider adds object types with fixed field types to a type
// provider. Values of these types are decoded JSON objects
// (map[string]any). The field maps are read at each lookup, so a map
// that grows (`variables`) is seen as it is at check time.
type structProvider struct {
	types.Provider
	structs map[string]map[string]*types.Type
}

func (p *structProvider) FindStructType(name string) (*types.Type, bool) {
	if _, ok := p.structs[name]; ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Provider.FindStructType(name)
}

func (p *structProvider) FindStructFieldNames(name string) ([]string, bool) {
	fields, ok := p.structs[name]
	if !ok {
		return p.Provider.FindStructFieldNames(name)
	}
	out := make([]string, 0, len(fields))
	for f := range fields {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, true
}

func (p *structProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	fields, ok := p.structs[name]
	if !ok {
		return p.Provider.FindStructFieldType(name, field)
	}
	t, ok := fields[field]
	if !ok {
		return nil, false
	}
	return &types.FieldType{
		Type: t,
		IsSet: func(target any) bool {
			if fs, ok := target.(fieldSource); ok {
				return fs.has(field)
			}
			m, ok := target.(map[string]any)
			_, has := m[field]
			return ok && has
		},
		GetFrom: func(target any) (any, error) {
			if fs, ok := target.(fieldSource); ok {
				return fs.field(field)
			}
			m, _ := target.(map[string]any)
			v, has := m[field]
			if !has {
				return nil, fmt.Errorf("no such key: %s", field)
			}
			return v, nil
		},
	}, true
}

func (p *structProvider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if _, ok := p.structs[name]; ok {
		return types.NewErr("cannot construct values of type %s", name)
	}
	return p.Provider.NewValue(name, fields)
}
