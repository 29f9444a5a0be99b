package rbacpolicy

import (
	"reflect"
	"slices"

	"platd/config"
	"platd/security/rbac"
	"platd/server/registry"
	"platd/server/schema"
)

// Result is what reconciling one stored object with its default says.
type Result struct {
	// Object is what the stored object should become (a changed copy);
	// nil when nothing changes or the object is protected.
	Object registry.Object
	// Recreate says a binding's roleRef differs: the stored one is
	// deleted and the default created, since roleRef cannot change.
	Recreate bool
	// Protected says the stored object has autoupdate "false" and would
	// have changed: it is left alone.
	Protected bool
	// Missing are the default's rules the stored role did not cover,
	// one verb on one resource (or URL) each, as they are added.
	Missing []Rule
}

// ReconcileRole reconciles a stored role or cluster role with its default,
// as upstream's bootstrap does: labels and annotations the stored one
// lacks are added, rules it does not cover are added (none is removed), and
// missing aggregation selectors are added; an aggregation rule the default
// has none of is dropped.
func ReconcileRole(b config.Brand, have, want registry.Object) Result {
	missing := missingRules(RulesOf(have), RulesOf(want))
	wantAgg, haveAgg := selectors(want), selectors(have)
	dropAgg := want["aggregationRule"] == nil && have["aggregationRule"] != nil
	var missingAgg []any
	if want["aggregationRule"] != nil {
		for _, s := range wantAgg {
			if !slices.ContainsFunc(haveAgg, func(h any) bool { return reflect.DeepEqual(h, s) }) {
				missingAgg = append(missingAgg, s)
			}
		}
	}
	// A start finds most objects as wanted: they are compared, not copied.
	if len(missing) == 0 && !dropAgg && len(missingAgg) == 0 && !lacksMeta(have, want) {
		return Result{}
	}
	out := schema.DeepCopy(have).(map[string]any)
	changed := mergeMeta(out, want)
	res := Result{Missing: missing}
	if len(res.Missing) > 0 {
		rules, _ := out["rules"].([]any)
		out["rules"] = append(rules, rulesValue(res.Missing)...)
		changed = true
	}
	switch {
	case dropAgg:
		delete(out, "aggregationRule")
		changed = true
	case len(missingAgg) > 0:
		added := slices.Clone(haveAgg)
		for _, s := range missingAgg {
			added = append(added, schema.DeepCopy(s))
		}
		out["aggregationRule"] = map[string]any{"clusterRoleSelectors": added}
		changed = true
	}
	return finish(b, have, out, changed, res)
}

// ReconcileBinding reconciles a stored role binding or cluster role
// binding with its default: a different roleRef recreates it; otherwise
// labels, annotations and subjects it lacks are added.
func ReconcileBinding(b config.Brand, have, want registry.Object) Result {
	if !reflect.DeepEqual(roleRef(have), roleRef(want)) {
		return finish(b, have, want, false, Result{Recreate: true})
	}
	haveSubs := subjects(have)
	var missing []subject
	for _, s := range subjects(want) {
		if !slices.Contains(haveSubs, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 && !lacksMeta(have, want) {
		return Result{}
	}
	out := schema.DeepCopy(have).(map[string]any)
	changed := mergeMeta(out, want)
	subs, _ := out["subjects"].([]any)
	for _, s := range missing {
		subs = append(subs, s.value())
		changed = true
	}
	if len(subs) > 0 {
		out["subjects"] = subs
	}
	return finish(b, have, out, changed, Result{})
}

func finish(b config.Brand, have, out registry.Object, changed bool, res Result) Result {
	if !changed && !res.Recreate {
		return Result{}
	}
	if stringMap(have, "annotations")[b.RBACAutoUpdateAnnotation()] == "false" {
		res.Protected, res.Recreate = true, false
		return res
	}
	if !res.Recreate {
		res.Object = out
	}
	return res
}

// lacksMeta reports whether obj lacks a label or annotation key of want:
// whether mergeMeta would change it.
func lacksMeta(obj, want registry.Object) bool {
	md, _ := obj["metadata"].(map[string]any)
	for _, field := range []string{"labels", "annotations"} {
		m, _ := md[field].(map[string]any)
		for k := range stringMap(want, field) {
			if _, ok := m[k]; !ok {
				return true
			}
		}
	}
	return false
}

// mergeMeta adds the labels and annotations of want that obj lacks; the
// values obj has win. It reports whether obj changed.
func mergeMeta(obj, want registry.Object) bool {
	changed := false
	md, _ := obj["metadata"].(map[string]any)
	for _, field := range []string{"labels", "annotations"} {
		add := stringMap(want, field)
		if len(add) == 0 {
			continue
		}
		m, ok := md[field].(map[string]any)
		if !ok {
			m = map[string]any{}
		}
		for k, v := range add {
			if _, ok := m[k]; !ok {
				m[k] = v
				changed = true
			}
		}
		md[field] = m
	}
	return changed
}

func selectors(obj registry.Object) []any {
	agg, _ := obj["aggregationRule"].(map[string]any)
	l, _ := agg["clusterRoleSelectors"].([]any)
	return l
}

func roleRef(obj registry.Object) [3]string {
	ref, _ := obj["roleRef"].(map[string]any)
	var out [3]string
	for i, k := range []string{"apiGroup", "kind", "name"} {
		out[i], _ = ref[k].(string)
	}
	return out
}

// subject is a binding's subject as compared: every field.
type subject struct{ kind, apiGroup, name, namespace string }

func (s subject) value() map[string]any {
	m := map[string]any{"kind": s.kind, "name": s.name}
	if s.apiGroup != "" {
		m["apiGroup"] = s.apiGroup
	}
	if s.namespace != "" {
		m["namespace"] = s.namespace
	}
	return m
}

func subjects(obj registry.Object) []subject {
	l, _ := obj["subjects"].([]any)
	out := make([]subject, 0, len(l))
	for _, v := range l {
		m, _ := v.(map[string]any)
		s := func(k string) string { x, _ := m[k].(string); return x }
		out = append(out, subject{s("kind"), s("apiGroup"), s("name"), s("namespace")})
	}
	return out
}

// missingRules breaks want into one verb on one resource (with one name)
// or one URL each, and returns those no rule of have covers.
func missingRules(have, want []Rule) []Rule {
	_, missing := rbac.Covers(have, want)
	return missing
}
