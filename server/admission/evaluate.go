package admission

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"platd/server/apierr"
	"platd/server/cel"
)

// maxMessageLength bounds an evaluated messageExpression, as upstream.
const maxMessageLength = 5 * 1024

// result is what one evaluation of a policy (for one binding and
// parameter) says: a decision per validation, or one decision for a
// failure of the whole evaluation, and the audit annotations.
type result struct {
	decisions   []decision
	annotations []annotation
}

// annotation is an audit annotation to publish, or the failure (err) of
// one under failurePolicy Fail.
type annotation struct {
	key, value string
	err        string
}

// failed is the decision of a failure: it denies under failurePolicy
// Fail (and an unknown one), and admits under Ignore.
func (pol *policy) failed(message string) decision {
	return decision{deny: pol.failurePolicy != failurePolicyIgnore, err: true, message: message}
}

// validate evaluates the policy for one input: its match conditions,
// then its validations (with their messages) and audit annotations, each
// group with upstream's runtime budget. The match conditions see the
// input as upstream's matcher gives it: with condRequest as `request`
// and no namespaceObject.
func (pol *policy) validate(ctx context.Context, in cel.AdmissionInput, condRequest map[string]any) result {
	if len(pol.conditions) > 0 {
		cin := in
		cin.Request, cin.Namespace = condRequest, nil
		match, err := pol.matchConditions(ctx, cin)
		if err != nil {
			return result{decisions: []decision{pol.failed(err.Error())}}
		}
		if !match {
			return result{}
		}
	}
	ev := cel.NewAdmissionEvaluation(ctx, in, pol.variables, cel.RuntimeAdmissionBudget)
	outs := make([]any, len(pol.validations))
	errs := make([]error, len(pol.validations))
	for i, v := range pol.validations {
		outs[i], errs[i] = ev.Eval(v.prog)
		if isOutOfBudget(errs[i]) {
			return result{decisions: []decision{pol.failed(errs[i].Error())}}
		}
	}
	// Every messageExpression is evaluated, with what the validations
	// left of the budget; running out fails every validation that did
	// not fail on its own.
	messages := make([]any, len(pol.validations))
	var msgBudgetErr error
	for i, v := range pol.validations {
		if v.msgProg == nil || msgBudgetErr != nil {
			continue
		}
		out, err := ev.Eval(v.msgProg)
		if isOutOfBudget(err) {
			msgBudgetErr = err
			continue
		}
		if err == nil {
			messages[i] = out
		}
	}
	res := result{decisions: make([]decision, len(pol.validations))}
	for i, v := range pol.validations {
		switch {
		case errs[i] != nil:
			res.decisions[i] = pol.failed(errs[i].Error())
		case msgBudgetErr != nil:
			res.decisions[i] = pol.failed(fmt.Sprintf("failed messageExpression: %s", msgBudgetErr))
		case outs[i] != true:
			reason := apierr.Reason(v.reason)
			if reason == "" {
				reason = apierr.ReasonInvalid
			}
			res.decisions[i] = decision{deny: true, message: v.failureMessage(messages[i]), reason: reason}
		}
	}
	ann := cel.NewAdmissionEvaluation(ctx, in, pol.variables, cel.RuntimeAdmissionBudget)
	for _, a := range pol.audits {
		out, err := ann.Eval(a.prog)
		if isOutOfBudget(err) {
			return result{decisions: []decision{pol.failed(err.Error())}}
		}
		if err != nil {
			if pol.failurePolicy != failurePolicyIgnore {
				res.annotations = append(res.annotations, annotation{key: a.key, err: err.Error()})
			}
			continue
		}
		if s, ok := out.(string); ok {
			if s = strings.TrimSpace(s); s != "" {
				res.annotations = append(res.annotations, annotation{key: a.key, value: truncate(s, maxAuditAnnotationValueLength)})
			}
		}
	}
	return res
}

// failureMessage is the message of a failed validation: its
// messageExpression's value when usable, else its message, else the
// expression.
func (v *validation) failureMessage(evaluated any) string {
	if s, ok := evaluated.(string); ok {
		s = strings.TrimSpace(s)
		if len(s) <= maxMessageLength && !strings.Contains(s, "\n") && s != "" {
			return s
		}
	}
	if m := strings.TrimSpace(v.message); m != "" {
		return m
	}
	return fmt.Sprintf("failed expression: %v", strings.TrimSpace(v.expr))
}

// matchConditions evaluates the match conditions, all of them in order
// with their own budget, as upstream: running out of it is the result
// whatever the conditions before said; else any false condition stops
// the match, and errors (when none is false) are the result.
func (pol *policy) matchConditions(ctx context.Context, in cel.AdmissionInput) (bool, error) {
	ev := cel.NewAdmissionEvaluation(ctx, in, pol.variables, cel.RuntimeMatchConditionsBudget)
	var errs []error
	matched := true
	for _, c := range pol.conditions {
		out, err := ev.Eval(c.prog)
		if isOutOfBudget(err) {
			return false, err
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if out == false {
			matched = false
		}
	}
	if !matched {
		return false, nil
	}
	switch len(errs) {
	case 0:
		return true, nil
	case 1:
		return false, errs[0]
	}
	texts := make([]string, len(errs))
	for i, e := range errs {
		texts[i] = e.Error()
	}
	return false, errors.New("[" + strings.Join(texts, ", ") + "]")
}

func isOutOfBudget(err error) bool {
	var e *cel.AdmissionEvalError
	return errors.As(err, &e) && e.OutOfBudget
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
