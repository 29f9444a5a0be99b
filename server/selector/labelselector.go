package selector

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// FromLabelSelector converts a LabelSelector object (matchLabels and
// matchExpressions, in its decoded JSON form) into a selector, as the
// server renders one into a string (a scale's status.selector, say). A
// nil object selects everything.
func FromLabelSelector(ls map[string]any) (Labels, error) {
	var parts []string
	if ml, ok := ls["matchLabels"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(ml)) {
			v, _ := ml[k].(string)
			parts = append(parts, k+"="+v)
		}
	}
	exprs, _ := ls["matchExpressions"].([]any)
	for _, e := range exprs {
		m, _ := e.(map[string]any)
		key, _ := m["key"].(string)
		op, _ := m["operator"].(string)
		var vals []string
		l, _ := m["values"].([]any)
		for _, v := range l {
			s, _ := v.(string)
			vals = append(vals, s)
		}
		switch op {
		case "In":
			parts = append(parts, key+" in ("+strings.Join(vals, ",")+")")
		case "NotIn":
			parts = append(parts, key+" notin ("+strings.Join(vals, ",")+")")
		case "Exists":
			parts = append(parts, key)
		case "DoesNotExist":
			parts = append(parts, "!"+key)
		default:
			return Labels{}, fmt.Errorf("%q is not a valid label selector operator", op)
		}
	}
	return ParseLabels(strings.Join(parts, ","))
}

// FromSet is the selector that matches every label of a set exactly (a
// replication controller's selector).
func FromSet(set map[string]any) (Labels, error) {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(set)) {
		v, _ := set[k].(string)
		parts = append(parts, k+"="+v)
	}
	return ParseLabels(strings.Join(parts, ","))
}
