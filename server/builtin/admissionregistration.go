package builtin

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/cel"
	"platd/server/registry"
	"platd/server/validation"
)

// admissionRegistrationV1 serves the v1 admission configuration types
// (the admission package enforces them). Their CEL expressions (match
// conditions, validations, messageExpressions, variables, audit
// annotations) are compiled and type-checked at write time, as upstream.
func admissionRegistrationV1(b config.Brand) []*registry.Descriptor {
	g := b.Group("admissionregistration")
	return []*registry.Descriptor{
		webhookConfigurations(g, "mutatingwebhookconfigurations", "mutatingwebhookconfiguration", "MutatingWebhookConfiguration", true),
		webhookConfigurations(g, "validatingwebhookconfigurations", "validatingwebhookconfiguration", "ValidatingWebhookConfiguration", false),
		validatingAdmissionPolicies(g),
		validatingAdmissionPolicyBindings(g),
	}
}

// admissionCategories are the categories every admission type lists.
var admissionCategories = []string{"api-extensions"}

// Values of the admission types and their v1 defaults.
const (
	failurePolicyFail       = "Fail"
	matchPolicyEquivalent   = "Equivalent"
	reinvocationPolicyNever = "Never"
	ruleScopeAll            = "*"
	webhookServicePort      = 443
	webhookTimeoutDefault   = 10
	webhookTimeoutMin       = 1
	webhookTimeoutMax       = 30
	matchConditionsMax      = 64
	auditAnnotationsMax     = 20
	auditAnnotationExprMax  = 5 * 1024
	operationAll            = "*"
	admissionValidationDeny = "Deny"
	admissionValidationWarn = "Warn"
)

// The closed sets of admission values, sorted as upstream lists them.
var (
	failurePolicies       = []string{"Fail", "Ignore"}
	matchPolicies         = []string{"Equivalent", "Exact"}
	sideEffectClasses     = []string{"None", "NoneOnDryRun", "Some", "Unknown"}
	noSideEffectClasses   = []string{"None", "NoneOnDryRun"}
	admissionOperations   = []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}
	reinvocationPolicies  = []string{"IfNeeded", "Never"}
	ruleScopes            = []string{"*", "Cluster", "Namespaced"}
	validationReasons     = []string{"Forbidden", "Invalid", "RequestEntityTooLarge"}
	validationActions     = []string{"Audit", "Deny", "Warn"}
	paramNotFoundActions  = []string{"Deny", "Allow"}
	admissionReviewAccept = []string{"v1", "v1beta1"}
)

// webhookConfigurations: a list of webhooks, each defaulted and checked on
// its own; a change of the list bumps the generation.
func webhookConfigurations(group, resource, singular, kind string, mutating bool) *registry.Descriptor {
	d := groupType(group, resource, singular, kind, false)
	d.Categories = admissionCategories
	d.Strategy.NoWebhookAdmission = true
	d.Strategy.Default = func(obj registry.Object) {
		for _, hook := range mapsOf(obj["webhooks"]) {
			defaultWebhook(hook, mutating)
		}
	}
	d.Strategy.PrepareForCreate = startGeneration
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, _ string) {
		if !sameMember(d.Schema, obj, old, "webhooks") {
			bumpGeneration(obj, old)
		}
	}
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return validateWebhooks(listAt(obj, "webhooks"), mutating, strictWebhookRules)
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		return validateWebhooks(listAt(obj, "webhooks"), mutating, webhookRulesAfter(listAt(obj, "webhooks"), listAt(old, "webhooks")))
	}
	return d
}

// defaultWebhook sets the v1 defaults of one webhook.
func defaultWebhook(hook map[string]any, mutating bool) {
	setDefault(hook, "failurePolicy", failurePolicyFail)
	setDefault(hook, "matchPolicy", matchPolicyEquivalent)
	setDefault(hook, "namespaceSelector", map[string]any{})
	setDefault(hook, "objectSelector", map[string]any{})
	setDefault(hook, "timeoutSeconds", int64(webhookTimeoutDefault))
	if mutating {
		setDefault(hook, "reinvocationPolicy", reinvocationPolicyNever)
	}
	for _, rule := range mapsOf(hook["rules"]) {
		setDefault(rule, "scope", ruleScopeAll)
	}
	if svc := mapAt(hook, "clientConfig", "service"); svc != nil {
		setDefault(svc, "port", int64(webhookServicePort))
	}
}

// webhookRules are the rules that may relax on update so that objects
// stored under older rules stay writable.
type webhookRules struct {
	// requireNoSideEffects limits sideEffects to None and NoneOnDryRun.
	requireNoSideEffects bool
	// requireKnownReviewVersion wants an AdmissionReview version this
	// server speaks in every webhook.
	requireKnownReviewVersion bool
	requireUniqueNames        bool
	allowBadSelectorValues    bool
	// skipMatchConditions skips match conditions an update left as stored.
	skipMatchConditions bool
	// stored are the expressions of the stored webhooks.
	stored storedExprs
}

var strictWebhookRules = webhookRules{requireNoSideEffects: true, requireKnownReviewVersion: true, requireUniqueNames: true}

// webhookRulesAfter relaxes each rule the stored webhooks already break.
func webhookRulesAfter(hooks, old []any) webhookRules {
	r := webhookRules{requireNoSideEffects: true, requireKnownReviewVersion: true, requireUniqueNames: true, stored: webhookStoredExprs(old)}
	names := map[string]bool{}
	for _, h := range mapsOf(old) {
		if !slices.Contains(noSideEffectClasses, str(h, "sideEffects")) {
			r.requireNoSideEffects = false
		}
		versions := stringsOf(listAt(h, "admissionReviewVersions"))
		if len(versions) > 0 && !slices.ContainsFunc(versions, func(v string) bool { return slices.Contains(admissionReviewAccept, v) }) {
			r.requireKnownReviewVersion = false
		}
		name := str(h, "name")
		if names[name] {
			r.requireUniqueNames = false
		}
		names[name] = true
		for _, sel := range []string{"namespaceSelector", "objectSelector"} {
			if selectorHasBadValue(mapAt(h, sel)) {
				r.allowBadSelectorValues = true
			}
		}
	}
	if len(hooks) == len(old) {
		r.skipMatchConditions = true
		oldHooks := mapsOf(old)
		for i, h := range mapsOf(hooks) {
			if !reflect.DeepEqual(h["matchConditions"], oldHooks[i]["matchConditions"]) {
				r.skipMatchConditions = false
			}
		}
	}
	return r
}

// validateWebhooks checks each webhook, its review versions and that
// names are unique.
func validateWebhooks(hooks []any, mutating bool, r webhookRules) apierr.FieldErrors {
	var errs apierr.FieldErrors
	names := map[string]bool{}
	for i, hook := range mapsOf(hooks) {
		p := index("webhooks", i)
		errs = append(errs, validateWebhook(hook, mutating, r, p)...)
		errs = append(errs, validateReviewVersions(listAt(hook, "admissionReviewVersions"), admissionReviewAccept, r.requireKnownReviewVersion,
			p+".admissionReviewVersions", "must specify one of "+strings.Join(admissionReviewAccept, ", "))...)
		if name := str(hook, "name"); r.requireUniqueNames && name != "" {
			if names[name] {
				errs = append(errs, apierr.Duplicate(p+".name", name))
			}
			names[name] = true
		}
	}
	return errs
}

func validateWebhook(hook map[string]any, mutating bool, r webhookRules, p string) apierr.FieldErrors {
	errs := fullyQualifiedName(str(hook, "name"), p+".name")
	for i, rule := range mapsOf(hook["rules"]) {
		errs = append(errs, validateRuleWithOperations(rule, index(p+".rules", i))...)
	}
	errs = append(errs, closedValue(hook, "failurePolicy", failurePolicies, p)...)
	errs = append(errs, closedValue(hook, "matchPolicy", matchPolicies, p)...)
	allowed := sideEffectClasses
	if r.requireNoSideEffects {
		allowed = noSideEffectClasses
	}
	if !present(hook, "sideEffects") {
		errs = append(errs, apierr.Required(p+".sideEffects", "must specify one of "+strings.Join(allowed, ", ")))
	} else if s := str(hook, "sideEffects"); !slices.Contains(allowed, s) {
		errs = append(errs, apierr.NotSupported(p+".sideEffects", s, allowed))
	}
	if present(hook, "timeoutSeconds") {
		if n := intAt(hook, "timeoutSeconds"); n > webhookTimeoutMax || n < webhookTimeoutMin {
			errs = append(errs, apierr.Invalid(p+".timeoutSeconds", n, "the timeout value must be between 1 and 30 seconds"))
		}
	}
	errs = append(errs, validateLabelSelector(mapAt(hook, "namespaceSelector"), r.allowBadSelectorValues, p+".namespaceSelector")...)
	errs = append(errs, validateLabelSelector(mapAt(hook, "objectSelector"), r.allowBadSelectorValues, p+".objectSelector")...)
	if mutating {
		errs = append(errs, closedValue(hook, "reinvocationPolicy", reinvocationPolicies, p)...)
	}
	errs = append(errs, validateClientConfig(mapAt(hook, "clientConfig"), p+".clientConfig")...)
	if !r.skipMatchConditions {
		// A webhook's conditions see no params.
		decls := cel.AdmissionDecls{Authorizer: true}
		errs = append(errs, validateMatchConditions(listAt(hook, "matchConditions"), p+".matchConditions", decls, r.stored.matchConditions)...)
	}
	return errs
}

// closedValue checks an optional member that takes one of valid.
func closedValue(m map[string]any, key string, valid []string, p string) apierr.FieldErrors {
	if !present(m, key) {
		return nil
	}
	if v := str(m, key); !slices.Contains(valid, v) {
		return apierr.FieldErrors{apierr.NotSupported(p+"."+key, v, valid)}
	}
	return nil
}

// fullyQualifiedName checks a webhook name: a DNS subdomain of at least
// three labels.
func fullyQualifiedName(name, p string) apierr.FieldErrors {
	if name == "" {
		return apierr.FieldErrors{apierr.Required(p, "")}
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return apierr.FieldErrors{apierr.Invalid(p, name, strings.Join(msgs, ","))}
	}
	if len(strings.Split(name, ".")) < 3 {
		return apierr.FieldErrors{apierr.Invalid(p, name, "should be a domain with at least three segments separated by dots")}
	}
	return nil
}

// validateReviewVersions checks the review versions a webhook speaks:
// DNS-1035 labels, no repeats, and one of accepted, the versions this
// server sends (when requireKnown). empty is the detail of the error for
// an empty list.
func validateReviewVersions(versions []any, accepted []string, requireKnown bool, p, empty string) apierr.FieldErrors {
	if len(versions) == 0 {
		return apierr.FieldErrors{apierr.Required(p, empty)}
	}
	var errs apierr.FieldErrors
	seen := map[string]bool{}
	known := false
	for i, v := range stringsOf(versions) {
		if seen[v] {
			errs = append(errs, apierr.Invalid(index(p, i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range isDNS1035Label(v) {
			errs = append(errs, apierr.Invalid(index(p, i), v, msg))
		}
		if slices.Contains(accepted, v) {
			known = true
		}
	}
	if requireKnown && !known {
		errs = append(errs, apierr.Invalid(p, goStrings("string", versions), "must include at least one of "+strings.Join(accepted, ", ")))
	}
	return errs
}

// validateRuleWithOperations checks a rule and the operations it matches.
func validateRuleWithOperations(rule map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	ops := listAt(rule, "operations")
	if len(ops) == 0 {
		errs = append(errs, apierr.Required(p+".operations", ""))
	}
	if len(ops) > 1 && slices.Contains(stringsOf(ops), operationAll) {
		errs = append(errs, apierr.Invalid(p+".operations", goStrings("admissionregistration.OperationType", ops), "if '*' is present, must not specify other operations"))
	}
	for i, op := range stringsOf(ops) {
		if !slices.Contains(admissionOperations, op) {
			errs = append(errs, apierr.NotSupported(index(p+".operations", i), op, admissionOperations))
		}
	}
	return append(errs, validateRule(rule, p)...)
}

// validateRule checks the groups, versions, resources and scope a rule
// matches.
func validateRule(rule map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	groups := listAt(rule, "apiGroups")
	if len(groups) == 0 {
		errs = append(errs, apierr.Required(p+".apiGroups", ""))
	}
	if len(groups) > 1 && slices.Contains(stringsOf(groups), "*") {
		errs = append(errs, apierr.Invalid(p+".apiGroups", goStrings("string", groups), "if '*' is present, must not specify other API groups"))
	}
	versions := listAt(rule, "apiVersions")
	if len(versions) == 0 {
		errs = append(errs, apierr.Required(p+".apiVersions", ""))
	}
	if len(versions) > 1 && slices.Contains(stringsOf(versions), "*") {
		errs = append(errs, apierr.Invalid(p+".apiVersions", goStrings("string", versions), "if '*' is present, must not specify other API versions"))
	}
	for i, v := range stringsOf(versions) {
		if v == "" {
			errs = append(errs, apierr.Required(index(p+".apiVersions", i), ""))
		}
	}
	errs = append(errs, validateRuleResources(listAt(rule, "resources"), p+".resources")...)
	return append(errs, closedValue(rule, "scope", ruleScopes, p)...)
}

// validateRuleResources checks "resource[/subresource]" entries and their
// wildcards: "*/*" alone, "*" with subresource forms only, and no entry a
// wildcard of its resource or subresource already covers.
func validateRuleResources(resources []any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if len(resources) == 0 {
		errs = append(errs, apierr.Required(p, ""))
	}
	wildSub := map[string]bool{} // "x/*"
	wildRes := map[string]bool{} // "*/x"
	doubleWild, singleWild, plain := false, false, false
	for i, rs := range stringsOf(resources) {
		if rs == "" {
			errs = append(errs, apierr.Required(index(p, i), ""))
			continue
		}
		doubleWild = doubleWild || rs == "*/*"
		singleWild = singleWild || rs == "*"
		res, sub, ok := strings.Cut(rs, "/")
		if !ok {
			// As upstream, the last entry without a subresource decides.
			plain = rs != "*"
			continue
		}
		if wildSub[res] {
			errs = append(errs, apierr.Invalid(index(p, i), rs, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs)))
		}
		if wildRes[sub] {
			errs = append(errs, apierr.Invalid(index(p, i), rs, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs)))
		}
		if sub == "*" {
			wildSub[res] = true
		}
		if res == "*" {
			wildRes[sub] = true
		}
	}
	if len(resources) > 1 && doubleWild {
		errs = append(errs, apierr.Invalid(p, goStrings("string", resources), "if '*/*' is present, must not specify other resources"))
	}
	if singleWild && plain {
		errs = append(errs, apierr.Invalid(p, goStrings("string", resources), "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

// webhookURLForm ends the texts of a bad webhook URL.
const webhookURLForm = "; desired format: https://host[/path]"

// validateClientConfig checks how a webhook is reached: exactly one of an
// https URL without credentials, fragment or query, or a service.
func validateClientConfig(cc map[string]any, p string) apierr.FieldErrors {
	hasURL, hasSvc := present(cc, "url"), present(cc, "service")
	switch {
	case hasURL == hasSvc:
		return apierr.FieldErrors{apierr.Required(p, "exactly one of url or service is required")}
	case hasURL:
		return validateWebhookURL(str(cc, "url"), p+".url")
	}
	return validateWebhookService(mapAt(cc, "service"), p+".service")
}

func validateWebhookURL(raw, p string) apierr.FieldErrors {
	u, err := url.Parse(raw)
	if err != nil {
		return apierr.FieldErrors{apierr.Required(p, "url must be a valid URL: "+err.Error()+webhookURLForm)}
	}
	var errs apierr.FieldErrors
	if u.Scheme != "https" {
		errs = append(errs, apierr.Invalid(p, u.Scheme, "'https' is the only allowed URL scheme"+webhookURLForm))
	}
	if u.Host == "" {
		errs = append(errs, apierr.Invalid(p, u.Host, "host must be provided"+webhookURLForm))
	}
	if u.User != nil {
		errs = append(errs, apierr.Invalid(p, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, apierr.Invalid(p, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, apierr.Invalid(p, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

// validateWebhookService checks a service reference: name, namespace, a
// port, and a path of DNS subdomain segments.
func validateWebhookService(svc map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if str(svc, "name") == "" {
		errs = append(errs, apierr.Required(p+".name", "service name is required"))
	}
	if str(svc, "namespace") == "" {
		errs = append(errs, apierr.Required(p+".namespace", "service namespace is required"))
	}
	if port := intAt(svc, "port"); port < 1 || port > portMax {
		errs = append(errs, apierr.Invalid(p+".port", port, "port is not valid: "+inclusiveRange(1, portMax)))
	}
	if !present(svc, "path") {
		return errs
	}
	path := str(svc, "path")
	if path == "/" || path == "" {
		return errs
	}
	if path == "//" {
		return append(errs, apierr.Invalid(p+".path", path, "segment[0] may not be empty"))
	}
	if !strings.HasPrefix(path, "/") {
		errs = append(errs, apierr.Invalid(p+".path", path, "must start with a '/'"))
	}
	rest := strings.TrimSuffix(path[1:], "/")
	for i, seg := range strings.Split(rest, "/") {
		if seg == "" {
			errs = append(errs, apierr.Invalid(p+".path", path, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(seg) {
			errs = append(errs, apierr.Invalid(p+".path", path, fmt.Sprintf("segment[%d]: %s", i, msg)))
		}
	}
	return errs
}

// validateMatchConditions checks names and expressions of match
// conditions: each expression, trimmed, must compile to a bool with the
// variables of decls (in the environment of stored expressions when
// stored has it).
func validateMatchConditions(conds []any, p string, decls cel.AdmissionDecls, stored map[string]bool) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if len(conds) > matchConditionsMax {
		errs = append(errs, tooMany(p, len(conds), matchConditionsMax))
	}
	names := map[string]bool{}
	// Conditions never see variables.
	compiler := cel.NewAdmissionCompiler(false)
	for i, c := range mapsOf(conds) {
		cp := index(p, i)
		if expr := strings.TrimSpace(str(c, "expression")); expr == "" {
			errs = append(errs, apierr.Required(cp+".expression", ""))
		} else if err := compiler.Compile(expr, cel.ResultBool, decls, stored[expr]); err != nil {
			errs = append(errs, celFieldError(cp+".expression", expr, err))
		}
		name := str(c, "name")
		if name == "" {
			errs = append(errs, apierr.Required(cp+".name", ""))
		} else {
			errs = append(errs, validateLabelName(name, cp+".name")...)
			if names[name] {
				errs = append(errs, apierr.Duplicate(cp+".name", name))
			}
			names[name] = true
		}
	}
	return errs
}

// stringsOf returns the strings of a decoded list; other values read "".
func stringsOf(l []any) []string {
	out := make([]string, len(l))
	for i, v := range l {
		out[i] = strOf(v)
	}
	return out
}
