package selector

import "errors"

// Sentinel errors. Every error returned by ParseLabels wraps
// ErrInvalidLabelSelector and every error returned by ParseFields or
// UnescapeFieldValue wraps ErrInvalidFieldSelector; errors.Is tells them
// apart while Error() stays the exact upstream message.
var (
	ErrInvalidLabelSelector = errors.New("invalid label selector")
	ErrInvalidFieldSelector = errors.New("invalid field selector")
)

// parseError carries the upstream message verbatim and unwraps to the
// sentinel of the selector language it came from.
type parseError struct {
	kind error
	msg  string
}

func (e *parseError) Error() string { return e.msg }
func (e *parseError) Unwrap() error { return e.kind }

func labelError(msg string) error { return &parseError{kind: ErrInvalidLabelSelector, msg: msg} }
func fieldError(msg string) error { return &parseError{kind: ErrInvalidFieldSelector, msg: msg} }
