package builtin

import (
	"platd/server/apierr"
	"platd/server/cel"
)

// storedExprs are the CEL expressions the stored object holds, per kind
// of field. On update, an expression found there compiles in the
// environment of stored expressions, so that an object written by a
// newer server (with newer CEL features) stays writable. On create all
// are empty.
type storedExprs struct {
	matchConditions map[string]bool
	validations     map[string]bool
	messages        map[string]bool
	auditValues     map[string]bool
}

// policyStoredExprs collects the expressions of a stored policy's spec.
func policyStoredExprs(oldSpec map[string]any) storedExprs {
	s := storedExprs{matchConditions: map[string]bool{}, validations: map[string]bool{}, messages: map[string]bool{}, auditValues: map[string]bool{}}
	for _, c := range mapsOf(oldSpec["matchConditions"]) {
		s.matchConditions[str(c, "expression")] = true
	}
	for _, v := range mapsOf(oldSpec["validations"]) {
		s.validations[str(v, "expression")] = true
		if me := str(v, "messageExpression"); me != "" {
			s.messages[me] = true
		}
	}
	for _, a := range mapsOf(oldSpec["auditAnnotations"]) {
		s.auditValues[str(a, "valueExpression")] = true
	}
	return s
}

// webhookStoredExprs collects the match conditions of stored webhooks.
func webhookStoredExprs(oldHooks []any) storedExprs {
	s := storedExprs{matchConditions: map[string]bool{}}
	for _, h := range mapsOf(oldHooks) {
		for _, c := range mapsOf(h["matchConditions"]) {
			s.matchConditions[str(c, "expression")] = true
		}
	}
	return s
}

// celFieldError turns a refused expression into the field error at p:
// an invalid value (the expression as value shows it) or an internal
// error.
func celFieldError(p, value string, err *cel.AdmissionError) *apierr.FieldError {
	if err.Internal {
		return &apierr.FieldError{Type: apierr.FieldInternal, Field: p, Detail: err.Detail}
	}
	return apierr.Invalid(p, value, err.Detail)
}
