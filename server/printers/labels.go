package printers

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// none is what a cell shows for an empty list, map or selector.
const none = "<none>"

// formatLabels renders a label map as "k=v" pairs sorted by key, or
// "<none>" when empty.
func formatLabels(m map[string]string) string {
	if len(m) == 0 {
		return none
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// errSelector marks a label selector that cannot become a selector.
var errSelector = errors.New("invalid label selector")

// requirement is one term of a selector in its printed form.
type requirement struct {
	key, text string
}

// selectorText renders a decoded LabelSelector as a selector string:
// requirements sorted by key, matchLabels as "k=v", expressions as
// "k in (a,b)", "k notin (a)", "k" and "!k". A null or empty selector
// renders as "". An unknown operator or malformed key or value is an error
// wrapping errSelector, as upstream refuses to build such a selector.
func selectorText(sel map[string]any) (string, error) {
	var reqs []requirement
	labels := stringMap(sel, "matchLabels")
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if err := checkRequirement(k, []string{labels[k]}); err != nil {
			return "", err
		}
		reqs = append(reqs, requirement{k, k + "=" + labels[k]})
	}
	for _, e := range list(sel, "matchExpressions") {
		key, op := str(e, "key"), str(e, "operator")
		values := stringList(e, "values")
		var text string
		switch op {
		case "In", "NotIn":
			if len(values) == 0 {
				return "", fmt.Errorf("%w: %s needs values", errSelector, op)
			}
			word := " in "
			if op == "NotIn" {
				word = " notin "
			}
			text = key + word + "(" + strings.Join(slices.Sorted(slices.Values(values)), ",") + ")"
		case "Exists", "DoesNotExist":
			if len(values) != 0 {
				return "", fmt.Errorf("%w: %s takes no values", errSelector, op)
			}
			text = key
			if op == "DoesNotExist" {
				text = "!" + key
			}
		default:
			return "", fmt.Errorf("%w: %q is not a valid label selector operator", errSelector, op)
		}
		if err := checkRequirement(key, values); err != nil {
			return "", err
		}
		reqs = append(reqs, requirement{key, text})
	}
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].key < reqs[j].key })
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = r.text
	}
	return strings.Join(parts, ","), nil
}

// formatSelector is the selector cell of most workloads: the selector
// text, "<none>" when it selects by nothing and "<error>" when malformed.
func formatSelector(sel map[string]any) string {
	s, err := selectorText(sel)
	switch {
	case err != nil:
		return "<error>"
	case s == "":
		return none
	}
	return s
}

// Label syntax, as label keys and values are validated on write; compiled
// at the first label selector, not at every start.
var labelREs = sync.OnceValue(func() [3]*regexp.Regexp {
	return [3]*regexp.Regexp{
		regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`),
		regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`),
		regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`),
	}
})

// Length limits of label keys and values.
const (
	maxLabelName   = 63
	maxLabelPrefix = 253
	maxLabelValue  = 63
)

func checkRequirement(key string, values []string) error {
	res := labelREs()
	labelNameRE, labelValueRE, subdomainRE := res[0], res[1], res[2]
	name := key
	if prefix, rest, ok := strings.Cut(key, "/"); ok {
		if prefix == "" || len(prefix) > maxLabelPrefix || !subdomainRE.MatchString(prefix) {
			return fmt.Errorf("%w: key %q", errSelector, key)
		}
		name = rest
	}
	if len(name) > maxLabelName || !labelNameRE.MatchString(name) {
		return fmt.Errorf("%w: key %q", errSelector, key)
	}
	for _, v := range values {
		if len(v) > maxLabelValue || !labelValueRE.MatchString(v) {
			return fmt.Errorf("%w: value %q", errSelector, v)
		}
	}
	return nil
}

// selectorStruct renders a decoded LabelSelector the way upstream's
// generated Go type prints itself, which is what a policy binding's
// selector-based paramRef cell shows.
func selectorStruct(sel map[string]any) string {
	var b strings.Builder
	b.WriteString("&LabelSelector{MatchLabels:map[string]string{")
	labels := stringMap(sel, "matchLabels")
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		fmt.Fprintf(&b, "%s: %s,", k, labels[k])
	}
	b.WriteString("},MatchExpressions:[]LabelSelectorRequirement{")
	for _, e := range list(sel, "matchExpressions") {
		fmt.Fprintf(&b, "LabelSelectorRequirement{Key:%s,Operator:%s,Values:[%s],},",
			str(e, "key"), str(e, "operator"), strings.Join(stringList(e, "values"), " "))
	}
	b.WriteString("},}")
	return b.String()
}
