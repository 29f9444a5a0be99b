package config

import (
	"fmt"
	"strings"
)

// FieldErrorType is the kind of a FieldError, spelled as upstream prints it.
type FieldErrorType string

// Field error kinds.
const (
	FieldInvalid   FieldErrorType = "Invalid value"
	FieldRequired  FieldErrorType = "Required value"
	FieldDuplicate FieldErrorType = "Duplicate value"
	FieldTooMany   FieldErrorType = "Too many"
	FieldForbidden FieldErrorType = "Forbidden"
	// FieldNotSupported is a value outside a fixed set.
	FieldNotSupported FieldErrorType = "Unsupported value"
)

// FieldError is one problem of a configuration file at a field path
// (jwt[0].issuer.url), printed as upstream's field errors are.
type FieldError struct {
	Type   FieldErrorType
	Field  string
	Value  any
	Detail string
}

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.Field)
	b.WriteString(": ")
	b.WriteString(string(e.Type))
	switch e.Type {
	case FieldRequired, FieldForbidden:
	default:
		switch v := e.Value.(type) {
		case string:
			fmt.Fprintf(&b, ": %q", v)
		default:
			fmt.Fprintf(&b, ": %v", v)
		}
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// FieldErrors is a list of problems; its text is upstream's aggregate:
// one error alone, several in brackets.
type FieldErrors []*FieldError

func (l FieldErrors) Error() string {
	if len(l) == 1 {
		return l[0].Error()
	}
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Err returns nil for an empty list, else the list.
func (l FieldErrors) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

func invalid(field string, value any, detail string) *FieldError {
	return &FieldError{Type: FieldInvalid, Field: field, Value: value, Detail: detail}
}

func required(field, detail string) *FieldError {
	return &FieldError{Type: FieldRequired, Field: field, Detail: detail}
}

func duplicate(field string, value any) *FieldError {
	return &FieldError{Type: FieldDuplicate, Field: field, Value: value}
}

// notSupported is upstream's NotSupported: the value and the quoted
// supported values.
func notSupported(field string, value any, supported []string) *FieldError {
	q := make([]string, len(supported))
	for i, v := range supported {
		q[i] = fmt.Sprintf("%q", v)
	}
	return &FieldError{Type: FieldNotSupported, Field: field, Value: value, Detail: "supported values: " + strings.Join(q, ", ")}
}
