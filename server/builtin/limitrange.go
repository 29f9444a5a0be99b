package builtin

import (
	"fmt"
	"slices"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
	"platd/server/validation"
)

// Limit types a LimitRange item may name without a domain.
const (
	limitTypePod       = "Pod"
	limitTypeContainer = "Container"
	limitTypePVC       = "PersistentVolumeClaim"
)

// Resource name prefixes with a meaning of their own.
const (
	hugePagesPrefix         = "hugepages-"
	requestsHugePagesPrefix = "requests.hugepages-"
	requestsPrefix          = "requests."
)

// standardResources are the resource names known without a domain.
var standardResources = []string{
	"cpu", "memory", "ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage",
	"limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
	"persistentvolumeclaims", "storage", "requests.storage",
	"services.nodeports", "services.loadbalancers",
}

// standardContainerResources are the resources a container may request.
var standardContainerResources = []string{"cpu", "memory", "ephemeral-storage"}

// resourceNames holds the resource-name rules, which depend on the brand:
// names under its long domain are native.
type resourceNames struct{ nativePrefix string }

func newResourceNames(b config.Brand) resourceNames {
	return resourceNames{nativePrefix: b.Label("")}
}

func isStandardResourceName(s string) bool {
	return slices.Contains(standardResources, s) ||
		strings.HasPrefix(s, hugePagesPrefix) || strings.HasPrefix(s, requestsHugePagesPrefix)
}

func isStandardContainerResourceName(s string) bool {
	return slices.Contains(standardContainerResources, s) || strings.HasPrefix(s, hugePagesPrefix)
}

// isNative reports whether a resource is in the brand's own namespace of
// names; a name without a domain is.
func (r resourceNames) isNative(s string) bool {
	return !strings.Contains(s, "/") || strings.Contains(s, r.nativePrefix)
}

// isExtended reports whether a resource is a valid extended resource: not
// native, not a quota "requests." name, and a qualified name once
// prefixed as a quota name.
func (r resourceNames) isExtended(s string) bool {
	if r.isNative(s) || strings.HasPrefix(s, requestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(requestsPrefix+s)) == 0
}

// overcommitAllowed reports whether a request may be below its limit.
func (r resourceNames) overcommitAllowed(s string) bool {
	return r.isNative(s) && !strings.HasPrefix(s, hugePagesPrefix)
}

// validateResourceName checks a compute resource name.
func validateResourceName(name string, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, apierr.Invalid(p.String(), name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(name, "/") && !isStandardResourceName(name) {
		errs = append(errs, apierr.Invalid(p.String(), name, "must be a standard resource type or fully qualified"))
	}
	return errs
}

// validateContainerResourceName checks a resource name a container (or a
// pod) may use.
func (r resourceNames) validateContainerResourceName(name string, p fieldPath) apierr.FieldErrors {
	errs := validateResourceName(name, p)
	if !strings.Contains(name, "/") {
		if !isStandardContainerResourceName(name) {
			errs = append(errs, apierr.Invalid(p.String(), name, "must be a standard resource for containers"))
		}
	} else if !r.isNative(name) && !r.isExtended(name) {
		errs = append(errs, apierr.Invalid(p.String(), name, "doesn't follow extended resource name standard"))
	}
	return errs
}

func (r resourceNames) validateLimitResourceName(limitType, name string, p fieldPath) apierr.FieldErrors {
	if limitType == limitTypePod || limitType == limitTypeContainer {
		return r.validateContainerResourceName(name, p)
	}
	return validateResourceName(name, p)
}

func validateLimitTypeName(t, field string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, msg := range validation.IsQualifiedName(t) {
		errs = append(errs, apierr.Invalid(field, t, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(t, "/") && t != limitTypePod && t != limitTypeContainer && t != limitTypePVC {
		errs = append(errs, apierr.Invalid(field, t, "must be a standard limit type or fully qualified"))
	}
	return errs
}

// limitRangeLists are the members of a LimitRange item that hold amounts.
var limitRangeLists = []string{"max", "min", "default", "defaultRequest", "maxLimitRequestRatio"}

// defaultLimitRange applies upstream's defaults to each item: a Container
// item's default limit is its max, and its default request its default
// limit, else its min, wherever they are not given; every amount is
// rounded up to a whole thousandth.
func defaultLimitRange(obj registry.Object) {
	for _, item := range mapsOf(mapOf(obj["spec"])["limits"]) {
		if strOf(item["type"]) == limitTypeContainer {
			limit := fillFrom(item, "default", mapOf(item["max"]))
			fillFrom(item, "defaultRequest", limit)
			fillFrom(item, "defaultRequest", mapOf(item["min"]))
		}
		for _, member := range limitRangeLists {
			roundResourceList(mapOf(item[member]))
		}
	}
}

// fillFrom gives item[member] each amount of from it lacks, and returns
// the member. A member left empty is not written, as upstream omits one.
func fillFrom(item map[string]any, member string, from map[string]any) map[string]any {
	m := mapOf(item[member])
	for k, v := range from {
		if _, ok := m[k]; ok {
			continue
		}
		if m == nil {
			m = map[string]any{}
			item[member] = m
		}
		m[k] = v
	}
	return m
}

// sortedKeys returns the keys of a decoded map in order, so that errors
// come out in a stable order.
func sortedKeys(m map[string]any) []string {
	if len(m) == 0 {
		return nil
	}
	// Sized once: collecting an iterator grows the slice key by key.
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// validateLimitRange applies the upstream LimitRange rules: known limit
// types, one item per type, resource names per type, no defaults for
// pods, a storage bound for claims, min ≤ defaultRequest ≤ default ≤ max,
// and a maxLimitRequestRatio of at least 1 and at most max/min.
func (r resourceNames) validateLimitRange(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	spec, _ := obj["spec"].(map[string]any)
	items, _ := spec["limits"].([]any)
	seenTypes := map[string]bool{}
	for i, it := range items {
		item, _ := it.(map[string]any)
		idx := fmt.Sprintf("spec.limits[%d]", i)
		t, _ := item["type"].(string)
		errs = append(errs, validateLimitTypeName(t, idx+".type")...)
		if seenTypes[t] {
			errs = append(errs, apierr.Duplicate(idx+".type", t))
		}
		seenTypes[t] = true

		sets := map[string]map[string]schema.Amount{}
		keys := map[string]bool{}
		collect := func(member string) {
			m, _ := item[member].(map[string]any)
			sets[member] = map[string]schema.Amount{}
			for _, k := range sortedKeys(m) {
				errs = append(errs, r.validateLimitResourceName(t, k, pathOf(idx+"."+member+"["+k+"]"))...)
				keys[k] = true
				if q, ok := schema.AmountOf(m[k]); ok {
					sets[member][k] = q
				}
			}
		}
		collect("max")
		collect("min")
		if t == limitTypePod {
			for _, member := range []string{"default", "defaultRequest"} {
				if m, _ := item[member].(map[string]any); len(m) > 0 {
					errs = append(errs, apierr.Forbidden(idx+"."+member, "may not be specified when `type` is 'Pod'"))
				}
			}
		} else {
			collect("default")
			collect("defaultRequest")
		}
		if t == limitTypePVC {
			minM, _ := item["min"].(map[string]any)
			maxM, _ := item["max"].(map[string]any)
			_, hasMin := minM["storage"]
			_, hasMax := maxM["storage"]
			if !hasMin && !hasMax {
				errs = append(errs, apierr.Required(idx+".limits", "either minimum or maximum storage value is required, but neither was provided"))
			}
		}
		collect("maxLimitRequestRatio")

		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			errs = append(errs, r.compareLimits(idx, k, sets)...)
		}
	}
	return errs
}

// compareLimits checks the order of one resource's bounds in one item.
func (r resourceNames) compareLimits(idx, k string, sets map[string]map[string]schema.Amount) apierr.FieldErrors {
	var errs apierr.FieldErrors
	lo, hasMin := sets["min"][k]
	hi, hasMax := sets["max"][k]
	def, hasDef := sets["default"][k]
	req, hasReq := sets["defaultRequest"][k]
	ratio, hasRatio := sets["maxLimitRequestRatio"][k]
	path := func(member string) string { return idx + "." + member + "[" + k + "]" }

	if hasMin && hasMax && lo.Cmp(hi) > 0 {
		errs = append(errs, apierr.Invalid(path("min"), badQuantity(lo), fmt.Sprintf("min value %s is greater than max value %s", lo.String(), hi.String())))
	}
	if hasReq && hasMin && lo.Cmp(req) > 0 {
		errs = append(errs, apierr.Invalid(path("defaultRequest"), badQuantity(req), fmt.Sprintf("min value %s is greater than default request value %s", lo.String(), req.String())))
	}
	if hasReq && hasMax && req.Cmp(hi) > 0 {
		errs = append(errs, apierr.Invalid(path("defaultRequest"), badQuantity(req), fmt.Sprintf("default request value %s is greater than max value %s", req.String(), hi.String())))
	}
	if hasReq && hasDef && req.Cmp(def) > 0 {
		errs = append(errs, apierr.Invalid(path("defaultRequest"), badQuantity(req), fmt.Sprintf("default request value %s is greater than default limit value %s", req.String(), def.String())))
	}
	if hasDef && hasMin && lo.Cmp(def) > 0 {
		errs = append(errs, apierr.Invalid(path("default"), badQuantity(lo), fmt.Sprintf("min value %s is greater than default value %s", lo.String(), def.String())))
	}
	if hasDef && hasMax && def.Cmp(hi) > 0 {
		errs = append(errs, apierr.Invalid(path("default"), badQuantity(hi), fmt.Sprintf("default value %s is greater than max value %s", def.String(), hi.String())))
	}
	if hasRatio && ratio.Cmp(quantityOne) < 0 {
		errs = append(errs, apierr.Invalid(path("maxLimitRequestRatio"), badQuantity(ratio), fmt.Sprintf("ratio %s is less than 1", ratio.String())))
	}
	if hasRatio && hasMin && hasMax {
		// As upstream: whole units, or thousandths when every value is
		// small enough for them to fit 64 bits, compared as floats.
		ratioValue := float64(ratio.Value())
		minValue, maxValue := lo.Value(), hi.Value()
		if ratio.Value() < maxMilliValue && minValue < maxMilliValue && maxValue < maxMilliValue {
			ratioValue = float64(ratio.MilliValue()) / 1000
			minValue, maxValue = lo.MilliValue(), hi.MilliValue()
		}
		limit := float64(maxValue) / float64(minValue)
		if ratioValue > limit {
			errs = append(errs, apierr.Invalid(path("maxLimitRequestRatio"), badQuantity(ratio), fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), limit)))
		}
	}
	if !r.overcommitAllowed(k) && hasDef && hasReq && def.Cmp(req) != 0 {
		errs = append(errs, apierr.Invalid(path("defaultRequest"), badQuantity(req), fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", def.String(), req.String(), k)))
	}
	return errs
}

var quantityOne, _ = schema.AmountOf("1")
