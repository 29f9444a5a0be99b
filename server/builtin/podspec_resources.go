package builtin

import (
	"fmt"
	"strings"

	"platd/server/apierr"
	"platd/server/schema"
)

// integerResources are the standard resources counted in whole units.
var integerResources = []string{
	"pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
	"persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
}

// qosResources are the resources the quality-of-service class and the
// huge page rule look at.
var qosResources = []string{"cpu", "memory"}

// validateResources checks a container's resource requirements (or a
// pod's overhead, passed as limits): names, quantities, requests within
// limits, and huge pages only alongside cpu or memory.
func (r podRules) validateResources(res map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	limPath, reqPath := p.child("limits"), p.child("requests")
	limits, requests := mapOf(res["limits"]), mapOf(res["requests"])
	limQoS, reqQoS, limHuge, reqHuge := false, false, false, false
	for _, name := range sortedKeys(limits) {
		kp := limPath.key(name)
		errs = append(errs, r.res.validateContainerResourceName(name, kp)...)
		q, ok := schema.AmountOf(limits[name])
		if !ok {
			continue
		}
		errs = append(errs, r.validateQuantityValue(name, q, kp)...)
		if strings.HasPrefix(name, hugePagesPrefix) {
			limHuge = true
			errs = append(errs, hugePageValue(name, q, kp)...)
		}
		limQoS = limQoS || contains(qosResources, name)
	}
	for _, name := range sortedKeys(requests) {
		kp := reqPath.key(name)
		errs = append(errs, r.res.validateContainerResourceName(name, kp)...)
		q, ok := schema.AmountOf(requests[name])
		if !ok {
			continue
		}
		errs = append(errs, r.validateQuantityValue(name, q, kp)...)
		if limit, ok := schema.AmountOf(limits[name]); ok && has(limits, name) {
			// Resources that cannot be overcommitted need requests equal
			// to limits; the others requests no larger.
			if q.Cmp(limit) != 0 && !r.res.overcommitAllowed(name) {
				errs = append(errs, apierr.Invalid(reqPath.String(), q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
			} else if q.Cmp(limit) > 0 {
				errs = append(errs, apierr.Invalid(reqPath.String(), q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
			}
		} else if !r.res.overcommitAllowed(name) {
			errs = append(errs, apierr.Required(limPath.String(), "Limit must be set for non overcommitable resources"))
		}
		if strings.HasPrefix(name, hugePagesPrefix) {
			reqHuge = true
			errs = append(errs, hugePageValue(name, q, kp)...)
		}
		reqQoS = reqQoS || contains(qosResources, name)
	}
	if !limQoS && !reqQoS && (limHuge || reqHuge) {
		errs = append(errs, apierr.Forbidden(p.String(), "HugePages require cpu or memory"))
	}
	return errs
}

// validateQuantityValue checks that an amount is not negative, and whole
// for resources counted in units.
func (r podRules) validateQuantityValue(name string, q schema.Amount, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if q.Sign() < 0 {
		errs = append(errs, apierr.Invalid(p.String(), q.String(), msgNegative))
	}
	if (contains(integerResources, name) || r.res.isExtended(name)) && q.MilliValue()%1000 != 0 {
		errs = append(errs, apierr.Invalid(p.String(), badQuantity(q), "must be an integer"))
	}
	return errs
}

// hugePageValue checks that a huge page amount is a whole number of pages
// of the size its name carries ("hugepages-2Mi").
func hugePageValue(name string, q schema.Amount, p fieldPath) apierr.FieldErrors {
	size, ok := schema.AmountOf(strings.TrimPrefix(name, hugePagesPrefix))
	// A page size beyond 64 bits truncates to nothing: no amount divides.
	if ok && size.Sign() > 0 && size.MilliValue()%1000 == 0 && size.Value() > 0 && q.Value()%size.Value() == 0 {
		return nil
	}
	return apierr.FieldErrors{apierr.Invalid(p.String(), q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), name))}
}
