package builtin

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/validation"
)

// flowControlV1 serves API priority and fairness configuration. The
// objects are stored and validated; platd does not yet classify or queue
// requests by them.
func flowControlV1(b config.Brand) []*registry.Descriptor {
	g := b.Group("flowcontrol.apiserver")
	mandatoryLevels, mandatorySchemas := mandatoryFlowControl(b)
	// v1beta3 marked a stored zero of nominalConcurrencyShares with this
	// annotation; it never belongs on an object.
	zeroSharesKey := b.Group("flowcontrol") + "/v1beta3-preserve-zero-concurrency-shares"
	return []*registry.Descriptor{flowSchemas(g, mandatorySchemas), priorityLevelConfigurations(g, mandatoryLevels, zeroSharesKey)}
}

// Names, values and defaults of the flow control types.
const (
	flowSchemaMaxPrecedence     = 10000
	flowSchemaDefaultPrecedence = 1000
	priorityLevelExempt         = "exempt"
	priorityLevelCatchAll       = "catch-all"
	flowSchemaExempt            = "exempt"
	flowSchemaCatchAll          = "catch-all"
	levelTypeExempt             = "Exempt"
	levelTypeLimited            = "Limited"
	limitResponseQueue          = "Queue"
	limitResponseReject         = "Reject"
	defaultNominalShares        = 30
	defaultQueues               = 64
	defaultHandSize             = 8
	defaultQueueLengthLimit     = 50
	// queuesMax bounds the queues of a level (10^7).
	queuesMax = 10 * 1000 * 1000
	// shuffleShardingMaxHashBits is the hash width shuffle sharding deals
	// hands from; a hand must not need more entropy than that.
	shuffleShardingMaxHashBits = 60
	flowNameAll                = "*"
	// flowNamespaceIntro starts the message of a bad namespace in a rule.
	flowNamespaceIntro = "each member of this list must be '*' or a DNS-1123 label; "
)

// The closed sets of flow control values, sorted.
var (
	distinguisherMethods = []string{"ByNamespace", "ByUser"}
	flowRuleVerbs        = []string{"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"}
	flowSubjectKinds     = []string{"Group", "ServiceAccount", "User"}
	levelTypes           = []string{levelTypeExempt, levelTypeLimited}
	limitResponseTypes   = []string{limitResponseQueue, limitResponseReject}
)

// flowSchemas: how requests are classified to priority levels. The
// mandatory schemas' specs are fixed.
func flowSchemas(group string, mandatory map[string]registry.Object) *registry.Descriptor {
	d := groupType(group, "flowschemas", "flowschema", "FlowSchema", false)
	d.Subresources = []registry.Subresource{{
		Name: "status", Verbs: statusVerbs,
		Validate: func(obj, _ registry.Object) apierr.FieldErrors { return validateFlowStatus(mapAt(obj, "status")) },
	}}
	d.Strategy.Default = func(obj registry.Object) {
		spec := child(obj, "spec")
		if intAt(spec, "matchingPrecedence") == 0 {
			spec["matchingPrecedence"] = int64(flowSchemaDefaultPrecedence)
		}
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		resetStatus(obj)
		startGeneration(obj)
	}
	d.Strategy.PrepareForUpdate = bumpGenerationOnSpec(d)
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		name := str(obj, "metadata", "name")
		errs := validateFlowSchemaSpec(name, mapAt(obj, "spec"))
		if fixed, ok := mandatory[name]; ok && !sameMember(d.Schema, obj, fixed, "spec") {
			errs = append(errs, apierr.Invalid("spec", goSyntax("flowcontrol.FlowSchemaSpec{...}"), fmt.Sprintf("spec of '%s' must equal the fixed value", name)))
		}
		return append(errs, validateFlowStatus(mapAt(obj, "status"))...)
	}
	return d
}

// priorityLevelConfigurations: the concurrency shares and queuing of each
// level. The catch-all level's spec is fixed; of the exempt level only
// the exempt settings may change.
func priorityLevelConfigurations(group string, mandatory map[string]registry.Object, zeroSharesKey string) *registry.Descriptor {
	d := groupType(group, "prioritylevelconfigurations", "prioritylevelconfiguration", "PriorityLevelConfiguration", false)
	d.Subresources = []registry.Subresource{{
		Name: "status", Verbs: statusVerbs,
		Validate: func(obj, _ registry.Object) apierr.FieldErrors { return validateFlowStatus(mapAt(obj, "status")) },
	}}
	d.Strategy.Default = defaultPriorityLevel
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		resetStatus(obj)
		startGeneration(obj)
	}
	d.Strategy.PrepareForUpdate = bumpGenerationOnSpec(d)
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		name := str(obj, "metadata", "name")
		var errs apierr.FieldErrors
		if present(mapAt(obj, "metadata", "annotations"), zeroSharesKey) {
			errs = append(errs, apierr.Forbidden("metadata.annotations", fmt.Sprintf("annotation '%s' is forbidden", zeroSharesKey)))
		}
		errs = append(errs, validatePriorityLevelSpec(name, mapAt(obj, "spec"))...)
		if fixed, ok := mandatory[name]; ok && !samePriorityLevelSpec(d, name, obj, fixed) {
			errs = append(errs, apierr.Invalid("spec", goSyntax("flowcontrol.PriorityLevelConfigurationSpec{...}"), fixedPriorityLevelMessage(name)))
		}
		return append(errs, validateFlowStatus(mapAt(obj, "status"))...)
	}
	return d
}

// fixedPriorityLevelMessage words the refusal of a mandatory level whose
// spec is not its fixed value: the exempt level's names the part that
// may change.
func fixedPriorityLevelMessage(name string) string {
	if name == priorityLevelExempt {
		return fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", name)
	}
	return fmt.Sprintf("spec of '%s' must equal the fixed value", name)
}

// samePriorityLevelSpec compares a mandatory level's spec with its fixed
// value; the exempt level's own settings are the administrator's.
func samePriorityLevelSpec(d *registry.Descriptor, name string, obj, fixed registry.Object) bool {
	if name != priorityLevelExempt {
		return sameMember(d.Schema, obj, fixed, "spec")
	}
	strip := func(o registry.Object) registry.Object {
		spec := map[string]any{}
		for k, v := range mapAt(o, "spec") {
			if k != "exempt" {
				spec[k] = v
			}
		}
		return registry.Object{"spec": spec}
	}
	return sameMember(d.Schema, strip(obj), strip(fixed), "spec")
}

// defaultPriorityLevel sets the v1 defaults: shares, lendable percent and
// queuing. An explicit zero of nominalConcurrencyShares stays zero.
func defaultPriorityLevel(obj registry.Object) {
	if ex := mapAt(obj, "spec", "exempt"); ex != nil {
		setDefault(ex, "nominalConcurrencyShares", int64(0))
		setDefault(ex, "lendablePercent", int64(0))
	}
	lim := mapAt(obj, "spec", "limited")
	if lim == nil {
		return
	}
	setDefault(lim, "nominalConcurrencyShares", int64(defaultNominalShares))
	setDefault(lim, "lendablePercent", int64(0))
	if q := mapAt(lim, "limitResponse", "queuing"); q != nil {
		for key, def := range map[string]int64{"handSize": defaultHandSize, "queues": defaultQueues, "queueLengthLimit": defaultQueueLengthLimit} {
			if intAt(q, key) == 0 {
				q[key] = def
			}
		}
	}
}

func validateFlowSchemaSpec(name string, spec map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	prec := intAt(spec, "matchingPrecedence")
	if prec <= 0 {
		errs = append(errs, apierr.Invalid("spec.matchingPrecedence", prec, "must be a positive value"))
	}
	if prec > flowSchemaMaxPrecedence {
		errs = append(errs, apierr.Invalid("spec.matchingPrecedence", prec, fmt.Sprintf("must not be greater than %d", flowSchemaMaxPrecedence)))
	}
	if prec == 1 && name != flowSchemaExempt {
		errs = append(errs, apierr.Invalid("spec.matchingPrecedence", prec, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if dm := mapAt(spec, "distinguisherMethod"); dm != nil {
		if t := str(dm, "type"); !slices.Contains(distinguisherMethods, t) {
			errs = append(errs, apierr.NotSupported("spec.distinguisherMethod.type",
				goSyntax(fmt.Sprintf("flowcontrol.FlowDistinguisherMethod{Type:%q}", t)), distinguisherMethods))
		}
	}
	if pl := str(spec, "priorityLevelConfiguration", "name"); pl != "" {
		errs = append(errs, invalidEach(pathOf("spec.priorityLevelConfiguration.name"), pl, validation.IsDNS1123Subdomain(pl))...)
	} else {
		errs = append(errs, apierr.Required("spec.priorityLevelConfiguration.name", "must reference a priority level"))
	}
	for i, rule := range mapsOf(spec["rules"]) {
		errs = append(errs, validateFlowRule(rule, index("spec.rules", i))...)
	}
	return errs
}

// validateFlowRule checks one rule: subjects, and resource or
// non-resource rules.
func validateFlowRule(rule map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	subjects := mapsOf(rule["subjects"])
	if len(subjects) == 0 {
		errs = append(errs, apierr.Required(p+".subjects", "subjects must contain at least one value"))
	}
	for i, s := range subjects {
		errs = append(errs, validateFlowSubject(s, index(p+".subjects", i))...)
	}
	res, nonRes := mapsOf(rule["resourceRules"]), mapsOf(rule["nonResourceRules"])
	if len(res) == 0 && len(nonRes) == 0 {
		errs = append(errs, apierr.Required(p, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i, r := range res {
		errs = append(errs, validateFlowResourceRule(r, index(p+".resourceRules", i))...)
	}
	for i, r := range nonRes {
		errs = append(errs, validateFlowNonResourceRule(r, index(p+".nonResourceRules", i))...)
	}
	return errs
}

// validateFlowSubject checks that a subject carries exactly the member
// its kind names.
func validateFlowSubject(s map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	kind := str(s, "kind")
	forbidOthers := func(keep string) {
		for _, m := range []struct{ key, kind string }{{"serviceAccount", "ServiceAccount"}, {"user", "User"}, {"group", "Group"}} {
			if m.key != keep && present(s, m.key) {
				errs = append(errs, apierr.Forbidden(p+"."+m.key, fmt.Sprintf("%s is forbidden when subject kind is not '%s'", m.key, m.kind)))
			}
		}
	}
	switch kind {
	case "ServiceAccount":
		errs = append(errs, validateFlowServiceAccount(mapAt(s, "serviceAccount"), p+".serviceAccount")...)
		forbidOthers("serviceAccount")
	case "User", "Group":
		key := strings.ToLower(kind)
		if sub := mapAt(s, key); sub == nil {
			errs = append(errs, apierr.Required(p+"."+key, fmt.Sprintf("%s is required when subject kind is '%s'", key, kind)))
		} else if str(sub, "name") == "" {
			errs = append(errs, apierr.Required(p+"."+key+".name", ""))
		}
		forbidOthers(key)
	default:
		errs = append(errs, apierr.NotSupported(p+".kind", kind, flowSubjectKinds))
	}
	return errs
}

func validateFlowServiceAccount(sa map[string]any, p string) apierr.FieldErrors {
	if sa == nil {
		return apierr.FieldErrors{apierr.Required(p, "serviceAccount is required when subject kind is 'ServiceAccount'")}
	}
	var errs apierr.FieldErrors
	if name := str(sa, "name"); name == "" {
		errs = append(errs, apierr.Required(p+".name", ""))
	} else if name != flowNameAll {
		errs = append(errs, invalidEach(pathOf(p+".name"), name, validation.IsDNS1123Subdomain(name))...)
	}
	if ns := str(sa, "namespace"); ns != "" {
		errs = append(errs, invalidEach(pathOf(p+".namespace"), ns, validation.IsDNS1123Label(ns))...)
	} else {
		errs = append(errs, apierr.Required(p+".namespace", "must specify namespace for service account"))
	}
	return errs
}

// validateFlowVerbs checks a rule's verbs: "*" alone, or known verbs.
func validateFlowVerbs(verbs []any, p string) apierr.FieldErrors {
	vs := stringsOf(verbs)
	switch {
	case len(vs) == 0:
		return apierr.FieldErrors{apierr.Required(p, "verbs must contain at least one value")}
	case slices.Contains(vs, "*"):
		if len(vs) > 1 {
			return apierr.FieldErrors{apierr.Invalid(p, goStrings("string", verbs), "if '*' is present, must not specify other verbs")}
		}
	default:
		for _, v := range vs {
			if !slices.Contains(flowRuleVerbs, v) {
				return apierr.FieldErrors{apierr.NotSupported(p, goStrings("string", verbs), flowRuleVerbs)}
			}
		}
	}
	return nil
}

// wildcardAlone refuses "*" next to other entries.
func wildcardAlone(l []any, p, what string) apierr.FieldErrors {
	if len(l) > 1 && slices.Contains(stringsOf(l), "*") {
		return apierr.FieldErrors{apierr.Invalid(p, goStrings("string", l), "if '*' is present, must not specify other "+what)}
	}
	return nil
}

func validateFlowResourceRule(r map[string]any, p string) apierr.FieldErrors {
	errs := validateFlowVerbs(listAt(r, "verbs"), p+".verbs")
	if groups := listAt(r, "apiGroups"); len(groups) == 0 {
		errs = append(errs, apierr.Required(p+".apiGroups", "resource rules must supply at least one api group"))
	} else {
		errs = append(errs, wildcardAlone(groups, p+".apiGroups", "api groups")...)
	}
	if res := listAt(r, "resources"); len(res) == 0 {
		errs = append(errs, apierr.Required(p+".resources", "resource rules must supply at least one resource"))
	} else {
		errs = append(errs, wildcardAlone(res, p+".resources", "resources")...)
	}
	nss := listAt(r, "namespaces")
	switch {
	case len(nss) == 0 && !boolOf(r["clusterScope"]):
		errs = append(errs, apierr.Required(p+".namespaces", "resource rules that are not cluster scoped must supply at least one namespace"))
	case slices.Contains(stringsOf(nss), "*"):
		errs = append(errs, wildcardAlone(nss, p+".namespaces", "namespaces")...)
	default:
		for i, ns := range stringsOf(nss) {
			for _, msg := range validation.IsDNS1123Label(ns) {
				errs = append(errs, apierr.Invalid(index(p+".namespaces", i), ns, flowNamespaceIntro+msg))
			}
		}
	}
	return errs
}

func validateFlowNonResourceRule(r map[string]any, p string) apierr.FieldErrors {
	errs := validateFlowVerbs(listAt(r, "verbs"), p+".verbs")
	urls := listAt(r, "nonResourceURLs")
	switch {
	case len(urls) == 0:
		errs = append(errs, apierr.Required(p+".nonResourceURLs", "nonResourceURLs must contain at least one value"))
	case slices.Contains(stringsOf(urls), "*"):
		errs = append(errs, wildcardAlone(urls, p+".nonResourceURLs", "non-resource URLs")...)
	default:
		for i, u := range stringsOf(urls) {
			if msg := nonResourceURLProblem(u); msg != "" {
				errs = append(errs, apierr.Invalid(index(p+".nonResourceURLs", i), u, msg))
			}
		}
	}
	return errs
}

// nonResourceURLProblem says what is wrong with a non-resource URL path:
// it starts with a slash, has no white-space or double slash, and a
// wildcard only as the last segment.
func nonResourceURLProblem(path string) string {
	switch {
	case path == "":
		return "must not be empty"
	case path == "/":
		return ""
	case !strings.HasPrefix(path, "/"):
		return "must start with slash"
	case strings.Contains(path, " "):
		return "must not contain white-space"
	case strings.Contains(path, "//"):
		return "must not contain double slash"
	}
	if n := strings.Count(path, "*"); n > 1 || n == 1 && !strings.HasSuffix(path, "/*") {
		return "wildcard can only do suffix matching"
	}
	return ""
}

// validatePriorityLevelSpec checks the type (Exempt exactly for the
// level named exempt) and the settings of that type.
func validatePriorityLevelSpec(name string, spec map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	typ := str(spec, "type")
	if (name == priorityLevelExempt) != (typ == levelTypeExempt) {
		errs = append(errs, apierr.Invalid("spec.type", typ, "type must be 'Exempt' if and only if name is 'exempt'"))
	}
	switch typ {
	case levelTypeExempt:
		if present(spec, "limited") {
			errs = append(errs, apierr.Forbidden("spec.limited", "must be nil if the type is not Limited"))
		}
		if ex := mapAt(spec, "exempt"); ex != nil {
			errs = append(errs, validateShares(ex, "spec.exempt")...)
		}
	case levelTypeLimited:
		if present(spec, "exempt") {
			errs = append(errs, apierr.Forbidden("spec.exempt", "must be nil if the type is Limited"))
		}
		if lim := mapAt(spec, "limited"); lim == nil {
			errs = append(errs, apierr.Required("spec.limited", "must not be empty when type is Limited"))
		} else {
			errs = append(errs, validateLimited(lim, "spec.limited")...)
		}
	default:
		errs = append(errs, apierr.NotSupported("spec.type", typ, levelTypes))
	}
	return errs
}

// validateShares checks the shares and lendable percent both level types
// carry.
func validateShares(m map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if n, ok := intOf(m["nominalConcurrencyShares"]); ok && n < 0 {
		errs = append(errs, apierr.Invalid(p+".nominalConcurrencyShares", n, "must be a non-negative integer"))
	}
	if n, ok := intOf(m["lendablePercent"]); ok && (n < 0 || n > 100) {
		errs = append(errs, apierr.Invalid(p+".lendablePercent", n, "must be between 0 and 100, inclusive"))
	}
	return errs
}

func validateLimited(lim map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if n, ok := intOf(lim["nominalConcurrencyShares"]); ok && n < 0 {
		errs = append(errs, apierr.Invalid(p+".nominalConcurrencyShares", n, "must be a non-negative integer"))
	}
	errs = append(errs, validateLimitResponse(mapAt(lim, "limitResponse"), p+".limitResponse")...)
	if n, ok := intOf(lim["lendablePercent"]); ok && (n < 0 || n > 100) {
		errs = append(errs, apierr.Invalid(p+".lendablePercent", n, "must be between 0 and 100, inclusive"))
	}
	if n, ok := intOf(lim["borrowingLimitPercent"]); ok && n < 0 {
		errs = append(errs, apierr.Invalid(p+".borrowingLimitPercent", n, "if specified, must be a non-negative integer"))
	}
	return errs
}

func validateLimitResponse(lr map[string]any, p string) apierr.FieldErrors {
	switch t := str(lr, "type"); t {
	case limitResponseReject:
		if present(lr, "queuing") {
			return apierr.FieldErrors{apierr.Forbidden(p+".queuing", "must be nil if limited.limitResponse.type is not Limited")}
		}
	case limitResponseQueue:
		q := mapAt(lr, "queuing")
		if q == nil {
			return apierr.FieldErrors{apierr.Required(p+".queuing", "must not be empty if limited.limitResponse.type is Limited")}
		}
		return validateQueuing(q, p+".queuing")
	default:
		return apierr.FieldErrors{apierr.NotSupported(p+".type", t, limitResponseTypes)}
	}
	return nil
}

// validateQueuing checks the shuffle-sharding settings: positive counts,
// a hand no larger than the deck, and a deal the hash can pay for.
func validateQueuing(q map[string]any, p string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if n := intAt(q, "queueLengthLimit"); n <= 0 {
		errs = append(errs, apierr.Invalid(p+".queueLengthLimit", n, "must be positive"))
	}
	queues := intAt(q, "queues")
	if queues <= 0 {
		errs = append(errs, apierr.Invalid(p+".queues", queues, "must be positive"))
	} else if queues > queuesMax {
		errs = append(errs, apierr.Invalid(p+".queues", queues, fmt.Sprintf("must not be greater than %d", queuesMax)))
	}
	switch hand := intAt(q, "handSize"); {
	case hand <= 0:
		errs = append(errs, apierr.Invalid(p+".handSize", hand, "must be positive"))
	case hand > queues:
		errs = append(errs, apierr.Invalid(p+".handSize", hand, fmt.Sprintf("should not be greater than queues (%d)", queues)))
	case entropyBits(queues, hand) > shuffleShardingMaxHashBits:
		errs = append(errs, apierr.Invalid(p+".handSize", hand, fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", queues, hand, shuffleShardingMaxHashBits)))
	}
	return errs
}

// entropyBits is the hash width dealing a hand of handSize from deckSize
// cards needs.
func entropyBits(deckSize, handSize int64) int {
	return int(math.Ceil(float64(handSize) * math.Log2(float64(deckSize))))
}

// validateFlowStatus checks the conditions of either type: each with a
// type, no type twice.
func validateFlowStatus(status map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	seen := map[string]bool{}
	for i, c := range mapsOf(status["conditions"]) {
		p := index("status.conditions", i)
		t := str(c, "type")
		if seen[t] {
			errs = append(errs, apierr.Duplicate(p+".type", t))
		}
		seen[t] = true
		if t == "" {
			errs = append(errs, apierr.Required(p+".type", "must not be empty"))
		}
	}
	return errs
}
