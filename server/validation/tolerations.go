package validation

import (
	"slices"
	"strings"
)

// TaintEffects are the effects a taint or toleration may name.
var TaintEffects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}

// tolerationOperators are the operators a toleration may name.
var tolerationOperators = []string{"Equal", "Exists"}

// Toleration is what the rules of a toleration read: its members, and
// whether it sets tolerationSeconds.
type Toleration struct {
	Key, Operator, Value, Effect string
	HasSeconds                   bool
}

// TolerationProblem is one problem of a toleration, as upstream reports
// it: under Member (key, operator or effect), the offending Value (the
// whole toleration when Whole is set) with Message, or, when Supported
// is set, a value outside it.
type TolerationProblem struct {
	Member, Value, Message string
	Whole                  bool
	Supported              []string
}

// TolerationProblems returns the problems of t, in upstream's order:
// key, operator and value together, tolerationSeconds only with
// NoExecute, and the effect.
func TolerationProblems(t Toleration) []TolerationProblem {
	var out []TolerationProblem
	if t.Key != "" {
		for _, msg := range IsQualifiedName(t.Key) {
			out = append(out, TolerationProblem{Member: "key", Value: t.Key, Message: msg})
		}
	}
	if t.Key == "" && t.Operator != "Exists" {
		out = append(out, TolerationProblem{Member: "operator", Value: t.Operator,
			Message: "operator must be Exists when `key` is empty, which means \"match all values and all keys\""})
	}
	if t.HasSeconds && t.Effect != "NoExecute" {
		out = append(out, TolerationProblem{Member: "effect", Value: t.Effect, Message: "effect must be 'NoExecute' when `tolerationSeconds` is set"})
	}
	switch t.Operator {
	case "Equal", "":
		if msgs := IsValidLabelValue(t.Value); len(msgs) > 0 {
			out = append(out, TolerationProblem{Member: "operator", Value: t.Value, Message: strings.Join(msgs, ";")})
		}
	case "Exists":
		if t.Value != "" {
			out = append(out, TolerationProblem{Member: "operator", Whole: true, Message: "value must be empty when `operator` is 'Exists'"})
		}
	default:
		out = append(out, TolerationProblem{Member: "operator", Value: t.Operator, Supported: tolerationOperators})
	}
	if t.Effect != "" && !slices.Contains(TaintEffects, t.Effect) {
		out = append(out, TolerationProblem{Member: "effect", Value: t.Effect, Supported: TaintEffects})
	}
	return out
}
