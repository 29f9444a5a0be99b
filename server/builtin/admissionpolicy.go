package builtin

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"platd/server/apierr"
	"platd/server/cel"
	"platd/server/registry"
	"platd/server/validation"
)

// validatingAdmissionPolicies: CEL rules and the resources they match.
// Status (type checking results) is written through its subresource.
func validatingAdmissionPolicies(group string) *registry.Descriptor {
	d := groupType(group, "validatingadmissionpolicies", "validatingadmissionpolicy", "ValidatingAdmissionPolicy", false)
	d.Categories = admissionCategories
	d.Strategy.NoPolicyAdmission = true
	d.Strategy.NoWebhookAdmission = true
	d.Subresources = []registry.Subresource{{
		Name: "status", Verbs: statusVerbs,
		Validate: func(obj, _ registry.Object) apierr.FieldErrors { return validatePolicyStatus(mapAt(obj, "status")) },
	}}
	d.Strategy.Default = func(obj registry.Object) {
		spec := child(obj, "spec")
		setDefault(spec, "failurePolicy", failurePolicyFail)
		if mr := mapAt(spec, "matchConstraints"); mr != nil {
			defaultMatchResources(mr)
		}
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		resetStatus(obj)
		startGeneration(obj)
	}
	d.Strategy.PrepareForUpdate = bumpGenerationOnSpec(d)
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return validatePolicySpec(str(obj, "metadata", "name"), mapAt(obj, "spec"), nil)
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		oldSpec := mapAt(old, "spec")
		if oldSpec == nil {
			oldSpec = map[string]any{}
		}
		return validatePolicySpec(str(obj, "metadata", "name"), mapAt(obj, "spec"), oldSpec)
	}
	return d
}

// validatingAdmissionPolicyBindings: which policy applies, to what, with
// which parameters and actions.
func validatingAdmissionPolicyBindings(group string) *registry.Descriptor {
	d := groupType(group, "validatingadmissionpolicybindings", "validatingadmissionpolicybinding", "ValidatingAdmissionPolicyBinding", false)
	d.Categories = admissionCategories
	d.Strategy.NoPolicyAdmission = true
	d.Strategy.NoWebhookAdmission = true
	d.Strategy.Default = func(obj registry.Object) {
		if mr := mapAt(obj, "spec", "matchResources"); mr != nil {
			defaultMatchResources(mr)
		}
	}
	d.Strategy.PrepareForCreate = startGeneration
	d.Strategy.PrepareForUpdate = bumpGenerationOnSpec(d)
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors { return validateBindingSpec(mapAt(obj, "spec")) }
	return d
}

// defaultMatchResources sets the v1 defaults of a MatchResources.
func defaultMatchResources(mr map[string]any) {
	setDefault(mr, "matchPolicy", matchPolicyEquivalent)
	setDefault(mr, "namespaceSelector", map[string]any{})
	setDefault(mr, "objectSelector", map[string]any{})
	for _, key := range []string{"resourceRules", "excludeResourceRules"} {
		for _, rule := range mapsOf(mr[key]) {
			setDefault(rule, "scope", ruleScopeAll)
		}
	}
}

// validatePolicySpec checks a policy: failure policy, parameter kind,
// match constraints with at least one resource rule, match conditions,
// variables, and at least one validation or audit annotation; every CEL
// expression must compile. oldSpec is the stored spec on update, nil on
// create.
func validatePolicySpec(name string, spec, oldSpec map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	stored := policyStoredExprs(oldSpec)
	// Unchanged match conditions are not checked again, as upstream
	// skips recompiling what it accepted before.
	skipMatchConditions := oldSpec != nil && reflect.DeepEqual(spec["paramKind"], oldSpec["paramKind"]) &&
		reflect.DeepEqual(spec["matchConditions"], oldSpec["matchConditions"])
	// Expressions see params when the policy has a paramKind, and the
	// variables when it has any.
	hasParams := mapAt(spec, "paramKind") != nil
	decls := cel.AdmissionDecls{Params: hasParams, Authorizer: true}
	compiler := cel.NewAdmissionCompiler(len(listAt(spec, "variables")) > 0)
	if !present(spec, "failurePolicy") {
		errs = append(errs, apierr.Required("spec.failurePolicy", ""))
	} else {
		errs = append(errs, closedValue(spec, "failurePolicy", failurePolicies, "spec")...)
	}
	if pk := mapAt(spec, "paramKind"); pk != nil {
		errs = append(errs, validateParamKind(pk, "spec.paramKind")...)
	}
	if mc := mapAt(spec, "matchConstraints"); mc == nil {
		errs = append(errs, apierr.Required("spec.matchConstraints", ""))
	} else {
		errs = append(errs, validateMatchResources(mc, "spec.matchConstraints")...)
		if len(listAt(mc, "resourceRules")) == 0 {
			errs = append(errs, apierr.Required("spec.matchConstraints.resourceRules", ""))
		}
	}
	if !skipMatchConditions {
		errs = append(errs, validateMatchConditions(listAt(spec, "matchConditions"), "spec.matchConditions", decls, stored.matchConditions)...)
	}
	for i, v := range mapsOf(spec["variables"]) {
		// Upstream looks a variable up among the stored validations.
		errs = append(errs, validateVariable(compiler, v, index("spec.variables", i), decls, stored.validations)...)
	}
	validations, annotations := listAt(spec, "validations"), listAt(spec, "auditAnnotations")
	if len(validations) == 0 && len(annotations) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		return append(errs, apierr.Required("spec.validations", msg), apierr.Required("spec.auditAnnotations", msg))
	}
	for i, v := range mapsOf(validations) {
		errs = append(errs, validatePolicyValidation(compiler, v, index("spec.validations", i), hasParams, stored)...)
	}
	if len(annotations) > auditAnnotationsMax {
		errs = append(errs, apierr.Invalid("spec.auditAnnotations", goSyntax(fmt.Sprintf("[]admissionregistration.AuditAnnotation{...%d items}", len(annotations))),
			fmt.Sprintf("must not have more than %d auditAnnotations", auditAnnotationsMax)))
	}
	keys := map[string]bool{}
	for i, a := range mapsOf(annotations) {
		p := index("spec.auditAnnotations", i)
		errs = append(errs, validateAuditAnnotation(compiler, name, a, p, decls, stored.auditValues)...)
		if key := str(a, "key"); keys[key] {
			errs = append(errs, apierr.Duplicate(p+".key", key))
		} else {
			keys[key] = true
		}
	}
	return errs
}

// validateParamKind checks the apiVersion and kind of a policy's
// parameter objects.
func validateParamKind(pk map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	av := str(pk, "apiVersion")
	switch {
	case av == "":
		errs = append(errs, apierr.Required(p+".apiVersion", ""))
	case strings.Count(av, "/") > 1:
		errs = append(errs, apierr.Invalid(p+".apiVersion", av, "unexpected GroupVersion string: "+av))
	default:
		group, version, ok := strings.Cut(av, "/")
		if !ok {
			group, version = "", av
		}
		if group != "" {
			if msgs := validation.IsDNS1123Subdomain(group); len(msgs) > 0 {
				errs = append(errs, apierr.Invalid(p+".apiVersion", group, strings.Join(msgs, ",")))
			}
		}
		if version == "" {
			errs = append(errs, apierr.Invalid(p+".apiVersion", av, "version must be specified"))
		} else if msgs := isDNS1035Label(version); len(msgs) > 0 {
			errs = append(errs, apierr.Invalid(p+".apiVersion", version, strings.Join(msgs, ",")))
		}
	}
	kind := str(pk, "kind")
	if kind == "" {
		errs = append(errs, apierr.Required(p+".kind", ""))
	} else if msgs := isDNS1035Label(strings.ToLower(kind)); len(msgs) > 0 {
		errs = append(errs, apierr.Invalid(p+".kind", kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

// validateMatchResources checks what a policy or binding matches; its
// selectors are checked strictly (the type is newer than the relaxed
// label-value rule).
func validateMatchResources(mr map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if !present(mr, "matchPolicy") {
		errs = append(errs, apierr.Required(p+".matchPolicy", ""))
	} else {
		errs = append(errs, closedValue(mr, "matchPolicy", matchPolicies, p)...)
	}
	for _, sel := range []string{"namespaceSelector", "objectSelector"} {
		if !present(mr, sel) {
			errs = append(errs, apierr.Required(p+"."+sel, ""))
		} else {
			errs = append(errs, validateLabelSelector(mapAt(mr, sel), false, p+"."+sel)...)
		}
	}
	for _, key := range []string{"resourceRules", "excludeResourceRules"} {
		for i, rule := range mapsOf(mr[key]) {
			errs = append(errs, validateNamedRule(rule, index(p+"."+key, i))...)
		}
	}
	return errs
}

// validateNamedRule checks a rule limited to named objects.
func validateNamedRule(rule map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	seen := map[string]bool{}
	for i, n := range stringsOf(listAt(rule, "resourceNames")) {
		np := index(p+".resourceNames", i)
		for _, msg := range validation.IsPathSegment(n) {
			errs = append(errs, apierr.Invalid(np, n, msg))
		}
		if seen[n] {
			errs = append(errs, apierr.Duplicate(np, n))
		}
		seen[n] = true
	}
	return append(errs, validateRuleWithOperations(rule, p)...)
}

// celIdentRe and celReserved define a CEL identifier, which a variable
// name must be.
var (
	celIdentRe  = lazyRegexp("^[_a-zA-Z][_a-zA-Z0-9]*$")
	celReserved = []string{"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
		"function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"}
)

// validateVariable checks a variable's name and compiles its expression,
// which later expressions then see as variables.<name>.
func validateVariable(c *cel.AdmissionCompiler, v map[string]any, p string, decls cel.AdmissionDecls, stored map[string]bool) apierr.FieldErrors {
	var errs apierr.FieldErrors
	name := str(v, "name")
	if strings.TrimSpace(name) == "" {
		errs = append(errs, apierr.Required(p+".name", "name is not specified"))
	} else if !celIdentRe().MatchString(name) || slices.Contains(celReserved, name) {
		errs = append(errs, apierr.Invalid(p+".name", name, "name is not a valid CEL identifier"))
	}
	if expr := str(v, "expression"); strings.TrimSpace(expr) == "" {
		errs = append(errs, apierr.Required(p+".expression", "expression is not specified"))
	} else if err := c.CompileVariable(name, expr, decls, stored[expr]); err != nil {
		errs = append(errs, celFieldError(p+".expression", expr, err))
	}
	return errs
}

// lineBreakRe finds the line breaks CEL's grammar knows.
var lineBreakRe = lazyRegexp(`[\n\r]+`)

// validatePolicyValidation checks one validation: its expression must
// compile to a bool, its messageExpression to a string (without the
// authorizer, as upstream declares it there).
func validatePolicyValidation(c *cel.AdmissionCompiler, v map[string]any, p string, hasParams bool, stored storedExprs) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if expr := str(v, "expression"); strings.TrimSpace(expr) == "" {
		errs = append(errs, apierr.Required(p+".expression", "expression is not specified"))
	} else if err := c.Compile(expr, cel.ResultBool, cel.AdmissionDecls{Params: hasParams, Authorizer: true}, stored.validations[expr]); err != nil {
		errs = append(errs, celFieldError(p+".expression", expr, err))
	}
	if me := str(v, "messageExpression"); me != "" && strings.TrimSpace(me) == "" {
		errs = append(errs, apierr.Invalid(p+".messageExpression", me, "must be non-empty if specified"))
	} else if me != "" {
		// Compiled untrimmed, so that error columns match the field.
		if err := c.Compile(me, cel.ResultString, cel.AdmissionDecls{Params: hasParams}, stored.messages[me]); err != nil {
			errs = append(errs, celFieldError(p+".messageExpression", me, err))
		}
	}
	msg := str(v, "message")
	trimmed := strings.TrimSpace(msg)
	if msg != "" && trimmed == "" {
		errs = append(errs, apierr.Invalid(p+".message", msg, "message must be non-empty if specified"))
	} else if lineBreakRe().MatchString(trimmed) {
		errs = append(errs, apierr.Invalid(p+".message", msg, "message must not contain line breaks"))
	}
	return append(errs, closedValue(v, "reason", validationReasons, p)...)
}

// validateAuditAnnotation checks an audit annotation: its key, prefixed
// by the policy name, must be a qualified name, and its value expression,
// trimmed, must compile to a string or null.
func validateAuditAnnotation(c *cel.AdmissionCompiler, policy string, a map[string]any, p string, decls cel.AdmissionDecls, stored map[string]bool) apierr.FieldErrors {
	var errs apierr.FieldErrors
	key := str(a, "key")
	if policy != "" {
		errs = append(errs, validateLabelName(policy+"/"+key, p+".key")...)
	} else {
		errs = append(errs, apierr.Invalid(p+".key", key, "requires metadata.name be non-empty"))
	}
	raw := str(a, "valueExpression")
	expr := strings.TrimSpace(raw)
	switch {
	case expr == "":
		errs = append(errs, apierr.Required(p+".valueExpression", "valueExpression is not specified"))
	case len(expr) > auditAnnotationExprMax:
		errs = append(errs, apierr.Required(p+".valueExpression", fmt.Sprintf("must not exceed %d bytes in length", auditAnnotationExprMax)))
	default:
		// The stored form and the error's value are the field as written.
		if err := c.Compile(expr, cel.ResultStringOrNull, decls, stored[raw]); err != nil {
			errs = append(errs, celFieldError(p+".valueExpression", raw, err))
		}
	}
	return errs
}

// validatePolicyStatus checks what a type checker writes: warnings with a
// field reference and text, and standard conditions. The field reference
// is not parsed as JSONPath.
func validatePolicyStatus(status map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for i, w := range mapsOf(valueAt(status, "typeChecking", "expressionWarnings")) {
		p := index("status.typeChecking.expressionWarnings", i)
		if str(w, "warning") == "" {
			errs = append(errs, apierr.Required(p+".warning", ""))
		}
		if strings.TrimSpace(str(w, "fieldRef")) == "" {
			errs = append(errs, apierr.Required(p+".fieldRef", ""))
		}
	}
	return append(errs, validateConditions(listAt(status, "conditions"), "status.conditions")...)
}

// validateBindingSpec checks a binding: a policy name, its parameter
// reference, what it matches and its actions.
func validateBindingSpec(spec map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if name := str(spec, "policyName"); name == "" {
		errs = append(errs, apierr.Required("spec.policyName", ""))
	} else {
		errs = append(errs, invalidEach(pathOf("spec.policyName"), name, validation.IsDNS1123Subdomain(name))...)
	}
	if ref := mapAt(spec, "paramRef"); ref != nil {
		errs = append(errs, validateParamRef(ref, "spec.paramRef")...)
	}
	if mr := mapAt(spec, "matchResources"); mr != nil {
		// Upstream misspells this path; clients see it so.
		errs = append(errs, validateMatchResources(mr, "spec.matchResouces")...)
	}
	return append(errs, validateValidationActions(listAt(spec, "validationActions"), "spec.validationActions")...)
}

func validateParamRef(ref map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	name, hasSel := str(ref, "name"), present(ref, "selector")
	const exclusive = "name and selector are mutually exclusive"
	if name != "" {
		errs = append(errs, invalidEach(pathOf(p+".name"), name, validation.IsPathSegment(name))...)
		if hasSel {
			errs = append(errs, apierr.Forbidden(p+".name", exclusive))
		}
	}
	if hasSel {
		errs = append(errs, validateLabelSelector(mapAt(ref, "selector"), false, p+".selector")...)
		if name != "" {
			errs = append(errs, apierr.Forbidden(p+".selector", exclusive))
		}
	}
	if name == "" && !hasSel {
		errs = append(errs, apierr.Required(p, "one of name or selector must be specified"))
	}
	if action := str(ref, "parameterNotFoundAction"); action == "" {
		errs = append(errs, apierr.Required(p+".parameterNotFoundAction", ""))
	} else if !slices.Contains(paramNotFoundActions, action) {
		errs = append(errs, apierr.NotSupported(p+".parameterNotFoundAction", action, paramNotFoundActions))
	}
	return errs
}

// validateValidationActions checks a binding's actions: known, unique,
// not both Deny and Warn, at least one.
func validateValidationActions(actions []any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	seen := map[string]bool{}
	for i, a := range stringsOf(actions) {
		if !slices.Contains(validationActions, a) {
			errs = append(errs, apierr.NotSupported(index(p, i), a, validationActions))
		}
		if seen[a] {
			errs = append(errs, apierr.Duplicate(index(p, i), a))
		}
		seen[a] = true
	}
	if seen[admissionValidationDeny] && seen[admissionValidationWarn] {
		errs = append(errs, apierr.Invalid(p, goStrings("admissionregistration.ValidationAction", actions),
			"must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(seen) == 0 {
		errs = append(errs, apierr.Required(p, "at least one validation action is required"))
	}
	return errs
}
