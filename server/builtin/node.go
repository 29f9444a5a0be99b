package builtin

import (
	"fmt"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
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
		errs = append(errs, validateTolerations(listAt(sched, "tolerations"), "scheduling.tolerations")...)
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
		errs = append(errs, r.validateContainerResourceName(name, p)...)
		q, ok := parseQuantity(fixed[name])
		if !ok {
			continue
		}
		if q.nanos.Sign() < 0 {
			errs = append(errs, apierr.Invalid(p, q.text, negativeMsg))
		}
		if r.isExtended(name) && q.milliValue()%1000 != 0 {
			errs = append(errs, apierr.Invalid(p, q.bad(), "must be an integer"))
		}
		if strings.HasPrefix(name, hugePagesPrefix) {
			hugePages = true
			if !hugePageMultiple(name, q) {
				errs = append(errs, apierr.Invalid(p, q.text, fmt.Sprintf("%s is not positive integer multiple of %s", q.text, name)))
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
func hugePageMultiple(name string, q quantity) bool {
	page, ok := parseQuantity(strings.TrimPrefix(name, hugePagesPrefix))
	if !ok || page.nanos.Sign() <= 0 || q.nanos.Sign() < 0 {
		return false
	}
	return q.value()%page.value() == 0
}

// Toleration operators and taint effects.
const (
	tolerationOpEqual  = "Equal"
	tolerationOpExists = "Exists"
	taintNoExecute     = "NoExecute"
)

var taintEffects = []string{"NoSchedule", "PreferNoSchedule", taintNoExecute}

// validateTolerations checks tolerations as pods carry them, and that no
// two share key, operator, value and effect.
func validateTolerations(tols []any, path string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for i, x := range tols {
		t, _ := x.(map[string]any)
		p := index(path, i)
		key, op, value, effect := str(t, "key"), str(t, "operator"), str(t, "value"), str(t, "effect")
		if key != "" {
			errs = append(errs, validateLabelName(key, p+".key")...)
		}
		if key == "" && op != tolerationOpExists {
			errs = append(errs, apierr.Invalid(p+".operator", op, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if present(t, "tolerationSeconds") && effect != taintNoExecute {
			errs = append(errs, apierr.Invalid(p+".effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch op {
		case tolerationOpEqual, "":
			if msgs := validation.IsValidLabelValue(value); len(msgs) > 0 {
				errs = append(errs, apierr.Invalid(p+".operator", value, strings.Join(msgs, ";")))
			}
		case tolerationOpExists:
			if value != "" {
				errs = append(errs, apierr.Invalid(p+".operator", tolerationValue(t), "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, apierr.NotSupported(p+".operator", op, []string{tolerationOpEqual, tolerationOpExists}))
		}
		if effect != "" && effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != taintNoExecute {
			errs = append(errs, apierr.NotSupported(p+".effect", effect, taintEffects))
		}
	}
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
