package builtin

import (
	"fmt"
	"slices"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/quota"
	"platd/server/registry"
	"platd/server/schema"
)

// Quota scopes.
const (
	scopeTerminating               = "Terminating"
	scopeNotTerminating            = "NotTerminating"
	scopeBestEffort                = "BestEffort"
	scopeNotBestEffort             = "NotBestEffort"
	scopePriorityClass             = "PriorityClass"
	scopeCrossNamespacePodAffinity = "CrossNamespacePodAffinity"
)

// Scope selector operators.
const (
	scopeOpIn           = "In"
	scopeOpNotIn        = "NotIn"
	scopeOpExists       = "Exists"
	scopeOpDoesNotExist = "DoesNotExist"
)

const msgInvalidQuotaResource = "must be a standard resource for quota"

var (
	quotaScopes = []string{scopeTerminating, scopeNotTerminating, scopeBestEffort, scopeNotBestEffort,
		scopePriorityClass, scopeCrossNamespacePodAffinity}
	// standardQuotaResources are the names a quota may limit without a
	// domain, besides huge pages.
	standardQuotaResources = []string{
		"cpu", "memory", "ephemeral-storage",
		"requests.cpu", "requests.memory", "requests.storage", "requests.ephemeral-storage",
		"limits.cpu", "limits.memory", "limits.ephemeral-storage",
		"pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
		"persistentvolumeclaims", "configmaps", "services.nodeports", "services.loadbalancers",
	}
	// podComputeQuotaResources are what pod scopes other than BestEffort
	// may limit, with the pod count.
	podComputeQuotaResources = []string{"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"}
	// conflictingScopes are the pairs no quota may combine.
	conflictingScopes = [][2]string{{scopeBestEffort, scopeNotBestEffort}, {scopeTerminating, scopeNotTerminating}}
)

func isStandardQuotaResource(name string) bool {
	return slices.Contains(standardQuotaResources, name) ||
		strings.HasPrefix(name, hugePagesPrefix) || strings.HasPrefix(name, requestsHugePagesPrefix)
}

// scopeAllowsResource reports whether a quota of the scope may limit the
// standard resource: pod scopes count pods and their compute resources.
func scopeAllowsResource(scope, resource string) bool {
	switch scope {
	case scopeTerminating, scopeNotTerminating, scopeNotBestEffort, scopePriorityClass, scopeCrossNamespacePodAffinity:
		return resource == "pods" || slices.Contains(podComputeQuotaResources, resource)
	case scopeBestEffort:
		return resource == "pods"
	}
	return true
}

// quotaRules holds the quantity rules quotas share with pods.
type quotaRules struct{ pods podRules }

func resourceQuotas(b config.Brand) *registry.Descriptor {
	d := core("resourcequotas", "resourcequota", "ResourceQuota", true, "quota")
	d.IsQuota = true
	d.Quota = quota.Count("", "resourcequotas", "resourcequotas")
	d.ReturnDeleted = true // upstream answers DELETE with the removed object
	r := quotaRules{pods: newPodRules(b)}
	d.Subresources = []registry.Subresource{{Name: "status", Verbs: statusVerbs, Keep: keepSpec, Validate: r.validateStatusUpdate, RequireResourceVersion: true}}
	d.Strategy.Default = func(obj registry.Object) {
		roundResourceList(mapAt(obj, "spec", "hard"))
		roundResourceList(mapAt(obj, "status", "hard"))
		roundResourceList(mapAt(obj, "status", "used"))
	}
	d.Strategy.Validate = func(obj registry.Object) apierr.FieldErrors {
		return append(r.validateSpec(mapOf(obj["spec"])), r.validateStatusUpdate(obj, nil)...)
	}
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		spec := mapOf(obj["spec"])
		errs := r.validateSpec(spec)
		scopes, oldScopes := listOf(spec["scopes"]), listOf(mapOf(old["spec"])["scopes"])
		if !sameStringSet(stringList(scopes), stringList(oldScopes)) {
			errs = append(errs, apierr.Invalid("spec.scopes", scopesSyntax(spec), fieldImmutable))
		}
		return errs
	}
	return d
}

// sameStringSet compares two lists as sets.
func sameStringSet(a, b []string) bool {
	sa, sb := slices.Clone(a), slices.Clone(b)
	slices.Sort(sa)
	slices.Sort(sb)
	return slices.Equal(slices.Compact(sa), slices.Compact(sb))
}

// validateQuotaList checks the resource names and amounts of a quota's
// hard or used list.
func (r quotaRules) validateQuotaList(m map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, k := range sortedKeys(m) {
		kp := p.key(k)
		errs = append(errs, validateResourceName(k, kp)...)
		if !strings.Contains(k, "/") && !isStandardQuotaResource(k) {
			errs = append(errs, apierr.Invalid(kp.String(), k, msgInvalidQuotaResource))
		}
		if q, ok := schema.AmountOf(m[k]); ok {
			errs = append(errs, r.pods.validateQuantityValue(k, q, kp)...)
		}
	}
	return errs
}

// validateSpec checks the hard limits, the scopes and the scope selector.
func (r quotaRules) validateSpec(spec map[string]any) apierr.FieldErrors {
	p := pathOf("spec")
	hard := mapOf(spec["hard"])
	errs := r.validateQuotaList(hard, p.child("hard"))
	limited := sortedKeys(hard)

	if scopes := stringList(listOf(spec["scopes"])); len(scopes) > 0 {
		sp := p.child("scopes")
		for _, scope := range scopes {
			if !slices.Contains(quotaScopes, scope) {
				errs = append(errs, apierr.Invalid(sp.String(), scopesSyntax(spec), "unsupported scope"))
			}
			for _, k := range limited {
				if isStandardQuotaResource(k) && !scopeAllowsResource(scope, k) {
					errs = append(errs, apierr.Invalid(sp.String(), scopesSyntax(spec), "unsupported scope applied to resource"))
				}
			}
		}
		errs = append(errs, conflictErrs(scopes, sp, spec)...)
	}

	sel := mapOf(spec["scopeSelector"])
	if !present(spec, "scopeSelector") {
		return errs
	}
	mp := p.child("scopeSelector", "matchExpressions")
	var named []string
	for _, req := range mapsOf(sel["matchExpressions"]) {
		scope, op := strOf(req["scopeName"]), strOf(req["operator"])
		if !slices.Contains(quotaScopes, scope) {
			errs = append(errs, apierr.Invalid(mp.child("scopeName").String(), scope, "unsupported scope"))
		}
		for _, k := range limited {
			if isStandardQuotaResource(k) && !scopeAllowsResource(scope, k) {
				errs = append(errs, apierr.Invalid(mp.String(), scopeSelectorSyntax(sel), "unsupported scope applied to resource"))
			}
		}
		switch scope {
		case scopeBestEffort, scopeNotBestEffort, scopeTerminating, scopeNotTerminating, scopeCrossNamespacePodAffinity:
			if op != scopeOpExists {
				errs = append(errs, apierr.Invalid(mp.child("operator").String(), op,
					"must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
			}
		}
		values := listOf(req["values"])
		switch op {
		case scopeOpIn, scopeOpNotIn:
			if len(values) == 0 {
				errs = append(errs, apierr.Required(mp.child("values").String(), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
			}
		case scopeOpExists, scopeOpDoesNotExist:
			if len(values) != 0 {
				errs = append(errs, apierr.Invalid(mp.child("values").String(), goStrings("string", values), "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
			}
		default:
			errs = append(errs, apierr.Invalid(mp.child("operator").String(), op, "not a valid selector operator"))
		}
		named = append(named, scope)
	}
	// Upstream shows the scopes list here, not the selector.
	return append(errs, conflictErrs(named, mp, spec)...)
}

// conflictErrs reports each conflicting pair among scopes.
func conflictErrs(scopes []string, p fieldPath, spec map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, pair := range conflictingScopes {
		if slices.Contains(scopes, pair[0]) && slices.Contains(scopes, pair[1]) {
			errs = append(errs, apierr.Invalid(p.String(), scopesSyntax(spec), "conflicting scopes"))
		}
	}
	return errs
}

// scopesSyntax prints spec.scopes as upstream's messages show the Go
// value.
func scopesSyntax(spec map[string]any) goSyntax {
	if !present(spec, "scopes") {
		return "[]core.ResourceQuotaScope(nil)"
	}
	return goStrings("core.ResourceQuotaScope", listOf(spec["scopes"]))
}

// scopeSelectorSyntax prints a scope selector as upstream's messages show
// the Go value.
func scopeSelectorSyntax(sel map[string]any) goSyntax {
	var b strings.Builder
	b.WriteString("core.ScopeSelector{MatchExpressions:")
	if !present(sel, "matchExpressions") {
		b.WriteString("[]core.ScopedResourceSelectorRequirement(nil)}")
		return goSyntax(b.String())
	}
	b.WriteString("[]core.ScopedResourceSelectorRequirement{")
	for i, req := range mapsOf(sel["matchExpressions"]) {
		if i > 0 {
			b.WriteString(", ")
		}
		values := "[]string(nil)"
		if present(req, "values") {
			values = string(goStrings("string", listOf(req["values"])))
		}
		fmt.Fprintf(&b, "core.ScopedResourceSelectorRequirement{ScopeName:%q, Operator:%q, Values:%s}", strOf(req["scopeName"]), strOf(req["operator"]), values)
	}
	b.WriteString("}}")
	return goSyntax(b.String())
}

// validateStatusUpdate checks the hard and used lists of a quota's status.
func (r quotaRules) validateStatusUpdate(obj, _ registry.Object) apierr.FieldErrors {
	st := mapOf(obj["status"])
	errs := r.validateQuotaList(mapOf(st["hard"]), pathOf("status.hard"))
	return append(errs, r.validateQuotaList(mapOf(st["used"]), pathOf("status.used"))...)
}
