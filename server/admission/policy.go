package admission

import (
	"fmt"

	"platd/server/cel"
	"platd/server/registry"
	"platd/server/selector"
)

// The failure policies, validation actions and parameter-not-found
// actions, as upstream names them.
const (
	failurePolicyIgnore = "Ignore"
	failurePolicyFail   = "Fail"
	actionDeny          = "Deny"
	actionWarn          = "Warn"
	actionAudit         = "Audit"
	matchPolicyExact    = "Exact"
)

// policy is one ValidatingAdmissionPolicy, compiled. Immutable once
// built; safe for concurrent use.
type policy struct {
	name       string
	uid        string
	generation int64
	// failurePolicy is Fail or Ignore (or a value upstream does not
	// know, which fails every request it applies to).
	failurePolicy string
	// paramKind is the apiVersion and kind of the parameters; nil
	// without.
	paramKind *paramKind
	// match are the policy's matchConstraints; nil matches nothing.
	match       *matchResources
	conditions  []namedCondition
	variables   []cel.NamedProgram
	validations []validation
	audits      []auditAnnotation
}

type paramKind struct {
	apiVersion, kind string
	group, version   string
}

// String is the kind as upstream prints a GroupVersionKind.
func (p *paramKind) String() string {
	return fmt.Sprintf("%s/%s, Kind=%s", p.group, p.version, p.kind)
}

type namedCondition struct {
	name string
	prog *cel.AdmissionProgram
}

type validation struct {
	expr    string
	prog    *cel.AdmissionProgram
	message string
	msgProg *cel.AdmissionProgram // nil without messageExpression
	reason  string
}

type auditAnnotation struct {
	key  string
	prog *cel.AdmissionProgram
}

// binding is one ValidatingAdmissionPolicyBinding. Immutable once built.
type binding struct {
	name, policyName string
	// match are the binding's matchResources; nil matches everything the
	// policy matches.
	match    *matchResources
	paramRef *paramRef
	actions  []string
}

type paramRef struct {
	name, namespace string
	// selector is set when the reference selects (selectorErr when it
	// does not parse).
	selector    *selector.Labels
	selectorErr error
	denyMissing bool
}

// compilePolicy compiles a ValidatingAdmissionPolicy in its decoded form.
// Expressions that do not compile are kept with their failure, which
// each evaluation reports, as upstream.
func compilePolicy(obj registry.Object) *policy {
	meta := mapAt(obj, "metadata")
	spec := mapAt(obj, "spec")
	p := &policy{
		name:          str(meta, "name"),
		uid:           str(meta, "uid"),
		generation:    registry.Int64(meta["generation"]),
		failurePolicy: str(spec, "failurePolicy"),
	}
	if p.failurePolicy == "" {
		p.failurePolicy = failurePolicyFail
	}
	if pk := mapAt(spec, "paramKind"); pk != nil {
		k := &paramKind{apiVersion: str(pk, "apiVersion"), kind: str(pk, "kind")}
		k.group, k.version = splitAPIVersion(k.apiVersion)
		p.paramKind = k
	}
	if mc := mapAt(spec, "matchConstraints"); mc != nil {
		p.match = parseMatchResources(mc)
	}
	decls := cel.AdmissionDecls{Params: p.paramKind != nil, Authorizer: true}
	c := cel.NewAdmissionCompiler(len(mapsOf(spec["variables"])) > 0)
	for _, v := range mapsOf(spec["variables"]) {
		name := str(v, "name")
		p.variables = append(p.variables, cel.NamedProgram{Name: name, Program: c.VariableProgram(name, str(v, "expression"), decls)})
	}
	for _, mc := range mapsOf(spec["matchConditions"]) {
		p.conditions = append(p.conditions, namedCondition{name: str(mc, "name"), prog: c.Program(str(mc, "expression"), cel.ResultBool, decls)})
	}
	msgDecls := cel.AdmissionDecls{Params: decls.Params}
	for _, v := range mapsOf(spec["validations"]) {
		val := validation{expr: str(v, "expression"), message: str(v, "message"), reason: str(v, "reason")}
		val.prog = c.Program(val.expr, cel.ResultBool, decls)
		if me := str(v, "messageExpression"); me != "" {
			val.msgProg = c.Program(me, cel.ResultString, msgDecls)
		}
		p.validations = append(p.validations, val)
	}
	for _, a := range mapsOf(spec["auditAnnotations"]) {
		p.audits = append(p.audits, auditAnnotation{key: str(a, "key"), prog: c.Program(str(a, "valueExpression"), cel.ResultStringOrNull, decls)})
	}
	return p
}

// parseBinding reads a ValidatingAdmissionPolicyBinding in its decoded
// form.
func parseBinding(obj registry.Object) *binding {
	spec := mapAt(obj, "spec")
	b := &binding{name: str(mapAt(obj, "metadata"), "name"), policyName: str(spec, "policyName")}
	if mr := mapAt(spec, "matchResources"); mr != nil {
		b.match = parseMatchResources(mr)
	}
	for _, a := range listAt(spec, "validationActions") {
		if s, ok := a.(string); ok {
			b.actions = append(b.actions, s)
		}
	}
	if pr := mapAt(spec, "paramRef"); pr != nil {
		ref := &paramRef{name: str(pr, "name"), namespace: str(pr, "namespace"),
			denyMissing: str(pr, "parameterNotFoundAction") == actionDeny}
		if sel, ok := pr["selector"].(map[string]any); ok {
			l, err := selector.FromLabelSelector(sel)
			ref.selector, ref.selectorErr = &l, err
		}
		b.paramRef = ref
	}
	return b
}

// splitAPIVersion splits "group/version" ("v1" is the core group's).
func splitAPIVersion(apiVersion string) (group, version string) {
	for i := len(apiVersion) - 1; i >= 0; i-- {
		if apiVersion[i] == '/' {
			return apiVersion[:i], apiVersion[i+1:]
		}
	}
	return "", apiVersion
}

func mapAt(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	return v
}

func listAt(m map[string]any, key string) []any {
	v, _ := m[key].([]any)
	return v
}

func mapsOf(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func stringsAt(m map[string]any, key string) []string {
	var out []string
	for _, v := range listAt(m, key) {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
