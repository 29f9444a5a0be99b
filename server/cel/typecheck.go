package cel

import (
	"fmt"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"platd/server/jsonschema"
)

// PolicyTypeCheck type-checks a ValidatingAdmissionPolicy's expressions
// with object and oldObject typed by one resource's schema, as upstream's
// policy status controller does to warn of expressions that cannot work
// on the resources a policy matches (admission itself checks them with
// object dyn). Upstream's checking environment: the stored expressions'
// environment, request and namespaceObject typed, params typed by the
// paramKind's schema (dyn where the schema is unknown), authorizer (but
// not authorizer.requestResource, which upstream's checker leaves
// undeclared) and `variables`, always declared, each variable typed as
// its expression's result. The result type of an expression is not
// checked. A PolicyTypeCheck is for one goroutine.
type PolicyTypeCheck struct {
	env       *cel.Env
	variables map[string]*types.Type
}

// NewPolicyTypeCheck returns the checker of expressions over objects of
// the kind whose schema is object. params is the paramKind's schema, nil
// when it is unknown; hasParams declares params (a policy with a
// paramKind). kind and paramKind name the object types, made unique per
// checker as upstream's are, so expressions cannot depend on them.
func NewPolicyTypeCheck(object *jsonschema.Props, kind string, params *jsonschema.Props, paramKind string, hasParams bool) (*PolicyTypeCheck, error) {
	b, err := admissionBase(true)
	if err != nil {
		return nil, err
	}
	objects := map[string]*declType{}
	objectType := typedRoot(object, kind, objects)
	if objectType == nil {
		objectType = types.DynType
	}
	c := &PolicyTypeCheck{variables: map[string]*types.Type{}}
	structs := admissionStructs()
	structs[variablesTypeName] = c.variables
	p := &structProvider{Provider: &provider{Provider: b.CELTypeProvider(), objects: objects}, structs: structs}
	opts := []cel.EnvOption{
		cel.CustomTypeProvider(p),
		cel.Variable(objectVarName, objectType),
		cel.Variable(oldObjectVarName, objectType),
		cel.Variable(namespaceVarName, cel.ObjectType(namespaceTypeName)),
		cel.Variable(requestVarName, cel.ObjectType(requestTypeName)),
		cel.Variable(authorizerVarName, authorizerType),
		cel.Variable(variablesVarName, cel.ObjectType(variablesTypeName)),
	}
	if hasParams {
		paramsType := typedRoot(params, paramKind, objects)
		if paramsType == nil {
			paramsType = types.DynType
		}
		opts = append(opts, cel.Variable(paramsVarName, paramsType))
	}
	if c.env, err = b.Extend(opts...); err != nil {
		return nil, fmt.Errorf("building the CEL type-checking environment: %w", err)
	}
	return c, nil
}

// typedRoot is the CEL type of a resource root of schema s, its object
// types named after kind and recorded in objects; nil when s is nil or
// not readable by rules.
func typedRoot(s *jsonschema.Props, kind string, objects map[string]*declType) *types.Type {
	if s == nil {
		return nil
	}
	d := schemaDeclType(s, true)
	if d == nil {
		return nil
	}
	d.assignNames(fmt.Sprintf("%s%d", kind, time.Now().Nanosecond()))
	d.collectObjects(objects)
	return d.celType()
}

// Variable compiles a variable's expression and adds it to `variables`
// for the expressions checked after it: typed as its result, dyn when it
// does not compile.
func (c *PolicyTypeCheck) Variable(name, expr string) {
	var out *types.Type
	if ast, iss := c.env.Compile(expr); iss == nil || iss.Err() == nil {
		out = ast.OutputType()
	}
	c.variables[name] = variableType(out)
}

// Check compiles expr and returns the compiler's issues as upstream
// prints them, "" when it compiles.
func (c *PolicyTypeCheck) Check(expr string) string {
	_, iss := c.env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return iss.String()
	}
	return ""
}
