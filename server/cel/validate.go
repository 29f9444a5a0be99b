package cel

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"

	"platd/server/apierr"
)

// rootPath is how errors name the object's root (upstream's nil path).
const rootPath = "<nil>"

func childPath(p, name string) string {
	if p == "" {
		return name
	}
	return p + "." + name
}

func errPath(p string) string {
	if p == "" {
		return rootPath
	}
	return p
}

// HasRules reports whether the schema holds any rule: upstream evaluates,
// and reports rules as not checked, only for such schemas.
func (v *Validator) HasRules() bool { return v != nil && v.root != nil }

// Validate evaluates every rule against obj, the object in its generic
// decoded form (map[string]any, []any, string, int64, float64, bool,
// nil), defaulted and pruned. old is the stored object on update and nil
// on create: transition rules (those reading oldSelf) run only where an
// old value correlates (same property, same map key, same list-map key);
// rules with optionalOldSelf run always. As upstream's ratcheting, a rule
// that does not read oldSelf and fails on a value unchanged from old does
// not fail the write. The cost of all rules is bounded by
// RuntimeCostBudget, each by PerCallLimit. A nil Validator accepts
// everything. Safe for concurrent use.
func (v *Validator) Validate(ctx context.Context, obj, old map[string]any) apierr.FieldErrors {
	errs, _ := v.ValidateWithWarnings(ctx, obj, old)
	return errs
}

// ValidateWithWarnings is Validate that also returns, as upstream's
// response warnings, the failures ratcheting let pass (the error texts).
func (v *Validator) ValidateWithWarnings(ctx context.Context, obj, old map[string]any) (apierr.FieldErrors, []string) {
	if v == nil || v.root == nil || obj == nil {
		return nil, nil
	}
	var oldV any
	if old != nil {
		oldV = old
	}
	ctx, cancel := context.WithTimeout(ctx, maxValidateTime)
	defer cancel()
	w := &walk{ctx: ctx}
	errs, _ := v.root.validate(w, "", obj, oldV, old != nil, nil, RuntimeCostBudget)
	return errs, w.warnings
}

// maxValidateTime bounds the wall time of one Validate call. The cost
// budget is meant to allow about a second of evaluation, but cel-go's
// cost tracker slows quadratically with a comprehension's length, so a
// rule over a list of 100,000 items can take half a minute within
// budget. Past this time validation stops as if the budget were spent.
const maxValidateTime = 5 * time.Second

// walk is the state of one Validate call.
type walk struct {
	ctx      context.Context
	warnings []string
}

// ratchet tracks, along the walk, whether the value at a node equals its
// old value: a failing rule that does not read oldSelf is ignored when
// the node (or, where it has no old value, its nearest ancestor that has
// one) is unchanged, as upstream's CRD validation ratcheting.
type ratchet struct {
	obj, old any
	parent   *ratchet // nearest ancestor with an old value
	eq       int8     // 0 unknown, 1 equal, 2 different
}

func (r *ratchet) unchanged() bool {
	if r == nil {
		return false
	}
	if r.eq == 0 {
		r.eq = 2
		if reflect.DeepEqual(r.obj, r.old) {
			r.eq = 1
		}
	}
	return r.eq == 1
}

// validate checks one value and its children; hasOld says an old value
// correlates here (old itself may still be nil: a null). It returns the
// budget left, negative when exhausted.
func (n *node) validate(w *walk, path string, obj, old any, hasOld bool, parent *ratchet, budget int64) (apierr.FieldErrors, int64) {
	if old == nil {
		hasOld = false
	}
	r := parent
	if hasOld {
		r = &ratchet{obj: obj, old: old, parent: parent}
	}
	errs, budget := n.validateRules(w, path, obj, old, hasOld, r, budget)
	if budget < 0 {
		return errs, budget
	}
	switch x := obj.(type) {
	case map[string]any:
		oldMap, oldIsMap := old.(map[string]any)
		correlates := hasOld && oldIsMap && !n.mapAtomic
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			var child *node
			var p string
			if n.values != nil {
				child, p = n.values, errPathKey(path, k)
			} else if c, ok := n.props[k]; ok {
				child, p = c, childPath(path, k)
			}
			if child == nil {
				continue
			}
			var ov any
			has := false
			cr := r
			if correlates {
				ov, has = oldMap[k]
			} else if prev, ok := oldMap[k]; ok && hasOld && oldIsMap {
				// An atomic map's members have no oldSelf, but ratchet
				// against their old values all the same, as upstream
				// correlates them for ratcheting.
				cr = &ratchet{obj: x[k], old: prev, parent: r}
			}
			var e apierr.FieldErrors
			e, budget = child.validate(w, p, x[k], ov, has, cr, budget)
			errs = append(errs, e...)
			if budget < 0 {
				return errs, budget
			}
		}
	case []any:
		if n.items == nil {
			break
		}
		oldList, _ := old.([]any)
		var byKey map[string]any
		if hasOld && n.listType == "map" && len(n.mapKeys) > 0 {
			byKey = make(map[string]any, len(oldList))
			for _, e := range oldList {
				if k, ok := n.listMapKey(e); ok {
					byKey[k] = e
				}
			}
		}
		for i, e := range x {
			var ov any
			has := false
			if byKey != nil {
				if k, ok := n.listMapKey(e); ok {
					ov, has = byKey[k]
				}
			}
			var es apierr.FieldErrors
			es, budget = n.items.validate(w, fmt.Sprintf("%s[%d]", path, i), e, ov, has, r, budget)
			errs = append(errs, es...)
			if budget < 0 {
				return errs, budget
			}
		}
	}
	return errs, budget
}

func errPathKey(p, k string) string { return p + "[" + k + "]" }

// listMapKey renders the x-kubernetes-list-map-keys values of a list
// item, for correlating old and new items.
func (n *node) listMapKey(item any) (string, bool) {
	m, ok := item.(map[string]any)
	if !ok {
		return "", false
	}
	var b strings.Builder
	for _, k := range n.mapKeys {
		fmt.Fprintf(&b, "%T:%v;", m[k], m[k])
	}
	return b.String(), true
}

// ruleText is the rule as messages quote it: its message when it has one.
func ruleText(r *compiledRule) string {
	if r.rule.Message != "" {
		return strings.TrimSpace(r.rule.Message)
	}
	return strings.TrimSpace(r.rule.Rule)
}

func defaultMessage(r *compiledRule) string {
	if r.rule.Message == "" {
		return "failed rule: " + ruleText(r)
	}
	return strings.TrimSpace(r.rule.Message)
}

// reasonError is the error a failed rule reports, by its reason.
func reasonError(path, typeName, detail string, reason *string) *apierr.FieldError {
	if reason != nil {
		switch *reason {
		case "FieldValueForbidden":
			return apierr.Forbidden(path, detail)
		case "FieldValueRequired":
			return apierr.Required(path, detail)
		case "FieldValueDuplicate":
			return apierr.Duplicate(path, typeName)
		}
	}
	return apierr.Invalid(path, typeName, detail)
}

const outOfBudget = "validation failed due to running out of cost budget, no further validation rules will be run"

func (n *node) validateRules(w *walk, path string, obj, old any, hasOld bool, rt *ratchet, budget int64) (apierr.FieldErrors, int64) {
	// Only non-null values are checked: a rule about a null or absent
	// value belongs on the enclosing schema.
	if obj == nil || len(n.rules) == 0 {
		return nil, budget
	}
	ep := errPath(path)
	if budget <= 0 {
		return apierr.FieldErrors{apierr.Invalid(ep, n.typeName, outOfBudget)}, -1
	}
	self := toVal(obj, n.decl)
	var oldVal any = types.OptionalNone
	vars := map[string]any{scopedVarName: self}
	if hasOld {
		o := toVal(old, n.decl)
		vars[oldScopedVarName] = o
		oldVal = types.OptionalOf(o)
	}
	act, _ := interpreter.NewActivation(vars)
	optAct, _ := interpreter.NewActivation(map[string]any{scopedVarName: self, oldScopedVarName: oldVal})
	var errs apierr.FieldErrors
	for _, r := range n.rules {
		if r.prog == nil {
			continue
		}
		if r.usesOldSelf && !hasOld && !r.optionalOldSelf {
			continue
		}
		a := act
		if r.optionalOldSelf {
			a = optAct
		}
		val, det, err := r.prog.ContextEval(w.ctx, a)
		if det == nil || det.ActualCost() == nil {
			errs = append(errs, apierr.Invalid(ep, n.typeName, fmt.Sprintf("runtime cost could not be calculated for validation rule: %v, no further validation rules will be run", ruleText(r))))
			return errs, -1
		}
		cost := *det.ActualCost()
		if cost > math.MaxInt64 || int64(cost) > budget {
			errs = append(errs, apierr.Invalid(ep, n.typeName, outOfBudget))
			return errs, -1
		}
		budget -= int64(cost)
		if err != nil {
			msg := err.Error()
			if w.ctx.Err() != nil {
				errs = append(errs, apierr.Invalid(ep, n.typeName, outOfBudget))
				return errs, -1
			}
			switch {
			case strings.HasPrefix(msg, "no such overload"):
				errs = append(errs, apierr.Invalid(ep, n.typeName, fmt.Sprintf("'%v': call arguments did not match a supported operator, function or macro signature for rule: %v", msg, ruleText(r))))
			case strings.HasPrefix(msg, "operation cancelled: actual cost limit exceeded"):
				errs = append(errs, apierr.Invalid(ep, n.typeName, fmt.Sprintf("'%v': no further validation rules will be run due to call cost exceeds limit for rule: %v", msg, ruleText(r))))
				return errs, -1
			default:
				errs = append(errs, apierr.Invalid(ep, n.typeName, fmt.Sprintf("%v evaluating rule: %v", msg, ruleText(r))))
			}
			continue
		}
		if val == types.True {
			continue
		}
		// Ratcheting: a value the rule already rejected, left as it was,
		// does not block the write.
		ratcheted := !r.usesOldSelf && rt.unchanged()
		add := func(e *apierr.FieldError) {
			if ratcheted {
				w.warnings = append(w.warnings, e.Error())
				return
			}
			errs = append(errs, e)
		}
		fp := ep
		if r.fieldPath != "" {
			switch {
			case path == "":
				fp = r.fieldPath
			case strings.HasPrefix(r.fieldPath, "["):
				fp = path + r.fieldPath
			default:
				fp = path + "." + r.fieldPath
			}
		}
		if r.msgProg == nil {
			add(reasonError(fp, n.typeName, defaultMessage(r), r.rule.Reason))
			continue
		}
		// As upstream, messageExpression sees the plain activation.
		msg, left, kind := evalMessage(w.ctx, r, act, budget)
		switch kind {
		case msgOK:
			add(reasonError(fp, n.typeName, msg, r.rule.Reason))
			budget = left
		case msgFallback:
			add(reasonError(fp, n.typeName, defaultMessage(r), r.rule.Reason))
			budget = left
		case msgFatal:
			add(apierr.Invalid(fp, n.typeName, msg))
			return errs, -1
		case msgInternal:
			add(&apierr.FieldError{Type: apierr.FieldInternal, Field: fp, Detail: msg})
			return errs, -1
		}
	}
	return errs, budget
}

type msgResult int

const (
	msgOK       msgResult = iota
	msgFallback           // the expression failed: the rule's message stands
	msgFatal              // out of budget: stop validating
	msgInternal
)

// evalMessage evaluates a rule's messageExpression.
func evalMessage(ctx context.Context, r *compiledRule, a interpreter.Activation, budget int64) (string, int64, msgResult) {
	val, det, err := r.msgProg.ContextEval(ctx, a)
	if det == nil || det.ActualCost() == nil {
		return fmt.Sprintf("runtime cost could not be calculated for messageExpression: %q", r.rule.MessageExpression), -1, msgInternal
	}
	cost := *det.ActualCost()
	if cost > math.MaxInt64 || int64(cost) > budget {
		return "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run", -1, msgFatal
	}
	if err != nil {
		if strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded") {
			return fmt.Sprintf("no further validation rules will be run due to call cost exceeds limit for messageExpression: %q", r.rule.MessageExpression), -1, msgFatal
		}
		return "", budget - int64(cost), msgFallback
	}
	s, ok := val.Value().(string)
	s = strings.TrimSpace(s)
	if !ok || len(s) > maxMessageExpressionLength || strings.Contains(s, "\n") || s == "" {
		return "", budget - int64(cost), msgFallback
	}
	return s, budget - int64(cost), msgOK
}
