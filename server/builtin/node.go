package builtin

import (
	"fmt"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
	"platd/server/validation"
)

func nodeV1(b config.Brand) []*registry.Descriptor {
	return []*registry.Descriptor{runtimeClasses(b)}
}

// runtimeClasses: the handler names a runtime configured on nodes and
// never changes.
func runtimeClasses(b config.Brand) *registry.Descriptor {
	d := groupType(b.Group("node"), "runtimeclasses", "runtimeclass", "RuntimeClass", false)
	r := newResourceNames(b)
	d.Strategy.Validate = r.validateRuntimeClass
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		errs := r.validateRuntimeClass(obj)
		if h := str(obj, "handler"); h != str(old, "handler") {
			errs = append(errs, apierr.Invalid("handler", h, fieldImmutable))
		}
		return errs
	}
	return d
}

func (r resourceNames) validateRuntimeClass(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	handler := str(obj, "handler")
	for _, msg := range validation.IsDNS1123Label(handler) {
		errs = append(errs, apierr.Invalid("handler", handler, msg))
	}
	if overhead := mapAt(obj, "overhead"); overhead != nil {
		errs = append(errs, r.validatePodFixed(mapAt(overhead, "podFixed"))...)
	}
	if sched := mapAt(obj, "scheduling"); sched != nil {
		if sel := mapAt(sched, "nodeSelector"); sel != nil {
			errs = append(errs, validateLabels(sel, "scheduling.nodeSelector")...)
		}
		tols := listAt(sched, "tolerations")
		errs = append(errs, validateTolerations(tols, pathOf("scheduling.tolerations"))...)
		errs = append(errs, validateUniqueTolerations(tols, "scheduling.tolerations")...)
	}
	return errs
}

// validatePodFixed checks the overhead a runtime adds to each pod with the
// rules of container limits, under the paths upstream reports them.
func (r resourceNames) validatePodFixed(fixed map[string]any) apierr.FieldErrors {
	const path = "overhead"
	var errs apierr.FieldErrors
	cpuOrMemory, hugePages := false, false
	for _, name := range sortedKeys(fixed) {
		p := keyed(path+".limits", name)
		errs = append(errs, r.validateContainerResourceName(name, pathOf(p))...)
		q, ok := schema.AmountOf(fixed[name])
		if !ok {
			continue
		}
		if q.Sign() < 0 {
			errs = append(errs, apierr.Invalid(p, q.String(), negativeMsg))
		}
		if r.isExtended(name) && q.MilliValue()%1000 != 0 {
			errs = append(errs, apierr.Invalid(p, badQuantity(q), "must be an integer"))
		}
		if strings.HasPrefix(name, hugePagesPrefix) {
			hugePages = true
			if !hugePageMultiple(name, q) {
				errs = append(errs, apierr.Invalid(p, q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), name)))
			}
		}
		if name == "cpu" || name == "memory" {
			cpuOrMemory = true
		}
	}
	if hugePages && !cpuOrMemory {
		errs = append(errs, apierr.Forbidden(path, "HugePages require cpu or memory"))
	}
	return errs
}

// hugePageMultiple reports whether q is a whole number of the pages its
// resource name states ("hugepages-2Mi").
func hugePageMultiple(name string, q schema.Amount) bool {
	page, ok := schema.AmountOf(strings.TrimPrefix(name, hugePagesPrefix))
	if !ok || page.Sign() <= 0 || q.Sign() < 0 {
		return false
	}
	return q.Value()%page.Value() == 0
}

// Toleration operators and taint effects.
const (
	tolerationOpEqual  = "Equal"
	tolerationOpExists = "Exists"
	taintNoExecute     = "NoExecute"
	taintNoSchedule    = "NoSchedule"
)

// validateUniqueTolerations checks that no two tolerations share key,
// operator, value and effect, which a runtime class's must not.
func validateUniqueTolerations(tols []any, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	seen := map[[4]string]bool{}
	for i, x := range tols {
		t, _ := x.(map[string]any)
		k := [4]string{str(t, "key"), str(t, "operator"), str(t, "value"), str(t, "effect")}
		if seen[k] {
			errs = append(errs, apierr.Duplicate(index(path, i), tolerationValue(t)))
		}
		seen[k] = true
	}
	return errs
}

// tolerationValue spells a toleration as upstream's bad value; a set
// tolerationSeconds prints by value.
func tolerationValue(t map[string]any) goSyntax {
	secs := "(*int64)(nil)"
	if n, ok := intOf(t["tolerationSeconds"]); ok {
		secs = fmt.Sprintf("&%d", n)
	}
	return goSyntax(fmt.Sprintf("core.Toleration{Key:%q, Operator:%q, Value:%q, Effect:%q, TolerationSeconds:%s}",
		str(t, "key"), str(t, "operator"), str(t, "value"), str(t, "effect"), secs))
}
