package apierr

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// FieldErrorType is the reason a field failed validation. Its value is the
// StatusCause reason on the wire.
type FieldErrorType string

// The field error types of the API; each renders with its own text.
const (
	FieldNotFound     FieldErrorType = "FieldValueNotFound"
	FieldRequired     FieldErrorType = "FieldValueRequired"
	FieldDuplicate    FieldErrorType = "FieldValueDuplicate"
	FieldInvalid      FieldErrorType = "FieldValueInvalid"
	FieldNotSupported FieldErrorType = "FieldValueNotSupported"
	FieldForbidden    FieldErrorType = "FieldValueForbidden"
	FieldTooLong      FieldErrorType = "FieldValueTooLong"
	FieldTooMany      FieldErrorType = "FieldValueTooMany"
	FieldInternal     FieldErrorType = "InternalError"
	FieldTypeInvalid  FieldErrorType = "FieldValueTypeInvalid"
)

func (t FieldErrorType) text() string {
	switch t {
	case FieldNotFound:
		return "Not found"
	case FieldRequired:
		return "Required value"
	case FieldDuplicate:
		return "Duplicate value"
	case FieldInvalid, FieldTypeInvalid:
		return "Invalid value"
	case FieldNotSupported:
		return "Unsupported value"
	case FieldForbidden:
		return "Forbidden"
	case FieldTooLong:
		return "Too long"
	case FieldTooMany:
		return "Too many"
	case FieldInternal:
		return "Internal error"
	}
	return string(t)
}

// omitValue reports whether the bad value is never printed for this type.
func (t FieldErrorType) omitValue() bool {
	switch t {
	case FieldRequired, FieldForbidden, FieldTooLong, FieldInternal:
		return true
	}
	return false
}

// omittedValue is the type of OmitValue.
type omittedValue struct{}

// OmitValue, as a bad value, leaves the value out of the message ("Invalid
// value: <detail>"), as upstream does where no single value is at fault.
var OmitValue any = omittedValue{}

// FieldError is one validation failure at a field path such as
// "metadata.labels" or "spec.limits[0].type".
type FieldError struct {
	Type   FieldErrorType
	Field  string
	Value  any
	Detail string
}

// Body is the error without its field path: the StatusCause message.
func (e *FieldError) Body() string {
	var b strings.Builder
	b.WriteString(e.Type.text())
	if _, omit := e.Value.(omittedValue); !omit && !e.Type.omitValue() {
		b.WriteString(": ")
		b.WriteString(FormatValue(e.Value))
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Error renders "<field>: <body>".
func (e *FieldError) Error() string { return e.Field + ": " + e.Body() }

// FormatValue renders a bad value the way upstream field errors do: strings
// quoted, numbers and booleans plain, nil (and a nil pointer) as the quoted
// string "null", anything else in Go syntax.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return `"null"`
	case string:
		return strconv.Quote(x)
	case int, int32, int64, float32, float64, bool:
		return fmt.Sprintf("%v", x)
	case uint64:
		return fmt.Sprintf("%#v", x)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return `"null"`
		}
		return FormatValue(rv.Elem().Interface())
	}
	return fmt.Sprintf("%#v", v)
}

// GoSyntax is a bad value upstream prints in Go syntax (its internal
// type's %#v), which no decoded JSON value prints as.
type GoSyntax string

// GoString makes FormatValue print the value as it is.
func (g GoSyntax) GoString() string { return string(g) }

var _ fmt.GoStringer = GoSyntax("")

// FieldErrors is an ordered list of validation failures.
type FieldErrors []*FieldError

// Error joins the distinct errors: one renders plain, several as "[a, b]".
func (l FieldErrors) Error() string {
	seen := map[string]bool{}
	var parts []string
	for _, e := range l {
		s := e.Error()
		if seen[s] {
			continue
		}
		seen[s] = true
		parts = append(parts, s)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Aggregate joins the distinct messages as upstream's error aggregate
// prints them: one alone, several as "[a, b]".
func Aggregate(msgs []string) string {
	var parts []string
	for _, m := range msgs {
		if !slices.Contains(parts, m) {
			parts = append(parts, m)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Required is a FieldRequired error.
func Required(field, detail string) *FieldError {
	return &FieldError{Type: FieldRequired, Field: field, Detail: detail}
}

// Invalid is a FieldInvalid error.
func Invalid(field string, value any, detail string) *FieldError {
	return &FieldError{Type: FieldInvalid, Field: field, Value: value, Detail: detail}
}

// Forbidden is a FieldForbidden error.
func Forbidden(field, detail string) *FieldError {
	return &FieldError{Type: FieldForbidden, Field: field, Detail: detail}
}

// NotSupported is a FieldNotSupported error listing the accepted values.
func NotSupported(field string, value any, valid []string) *FieldError {
	q := make([]string, len(valid))
	for i, v := range valid {
		q[i] = strconv.Quote(v)
	}
	detail := ""
	if len(valid) > 0 {
		detail = "supported values: " + strings.Join(q, ", ")
	}
	return &FieldError{Type: FieldNotSupported, Field: field, Value: value, Detail: detail}
}

// TooLong is a FieldTooLong error.
func TooLong(field string, max int) *FieldError {
	return &FieldError{Type: FieldTooLong, Field: field, Detail: fmt.Sprintf("may not be more than %d bytes", max)}
}

// Duplicate is a FieldDuplicate error.
func Duplicate(field string, value any) *FieldError {
	return &FieldError{Type: FieldDuplicate, Field: field, Value: value}
}

// TypeInvalid is a FieldTypeInvalid error.
func TypeInvalid(field string, value any, detail string) *FieldError {
	return &FieldError{Type: FieldTypeInvalid, Field: field, Value: value, Detail: detail}
}
