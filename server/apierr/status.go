// Package apierr maps every failure to the Status object the API returns:
// the one place where code, reason and message are decided.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
)

// Reason is the machine-readable Status reason.
type Reason string

// The Status reasons of the API.
const (
	ReasonUnknown              Reason = ""
	ReasonNotFound             Reason = "NotFound"
	ReasonAlreadyExists        Reason = "AlreadyExists"
	ReasonConflict             Reason = "Conflict"
	ReasonInvalid              Reason = "Invalid"
	ReasonBadRequest           Reason = "BadRequest"
	ReasonUnauthorized         Reason = "Unauthorized"
	ReasonForbidden            Reason = "Forbidden"
	ReasonMethodNotAllowed     Reason = "MethodNotAllowed"
	ReasonNotAcceptable        Reason = "NotAcceptable"
	ReasonUnsupportedMediaType Reason = "UnsupportedMediaType"
	ReasonGone                 Reason = "Gone"
	ReasonExpired              Reason = "Expired"
	ReasonTimeout              Reason = "Timeout"
	ReasonServerTimeout        Reason = "ServerTimeout"
	ReasonTooLarge             Reason = "RequestEntityTooLarge"
	ReasonTooManyRequests      Reason = "TooManyRequests"
	ReasonInternalError        Reason = "InternalError"
	ReasonServiceUnavailable   Reason = "ServiceUnavailable"
	// ReasonStoreReadError is a list over stored objects that could not
	// be read back (500).
	ReasonStoreReadError Reason = "StorageReadError"
)

// Cause is one StatusCause.
type Cause struct {
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// Details is StatusDetails.
type Details struct {
	Name              string  `json:"name,omitempty"`
	Group             string  `json:"group,omitempty"`
	Kind              string  `json:"kind,omitempty"`
	UID               string  `json:"uid,omitempty"`
	Causes            []Cause `json:"causes,omitempty"`
	RetryAfterSeconds int32   `json:"retryAfterSeconds,omitempty"`
}

// ListMeta is the metadata of a Status.
type ListMeta struct {
	SelfLink           string `json:"selfLink,omitempty"`
	ResourceVersion    string `json:"resourceVersion,omitempty"`
	Continue           string `json:"continue,omitempty"`
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty"`
}

// Status is the API's Status object; its JSON field order is the wire order.
type Status struct {
	Kind       string   `json:"kind"`
	APIVersion string   `json:"apiVersion"`
	Metadata   ListMeta `json:"metadata"`
	Status     string   `json:"status,omitempty"`
	Message    string   `json:"message,omitempty"`
	Reason     Reason   `json:"reason,omitempty"`
	Details    *Details `json:"details,omitempty"`
	Code       int32    `json:"code,omitempty"`
}

// Status values.
const (
	StatusSuccess = "Success"
	StatusFailure = "Failure"
)

// Error is an error that renders as a Status.
type Error struct{ Status Status }

func (e *Error) Error() string { return e.Status.Message }

// New builds a failure Status error.
func New(code int, reason Reason, message string, details *Details) *Error {
	return &Error{Status: Status{
		Kind: "Status", APIVersion: "v1", Status: StatusFailure,
		Message: message, Reason: reason, Details: details, Code: int32(code),
	}}
}

// FromError maps any error to its Status: Status errors as they are, other
// errors as a 500 without reason carrying the raw text (as upstream does for
// errors that are not API errors).
func FromError(err error) *Error {
	var se *Error
	if errors.As(err, &se) {
		return se
	}
	return New(http.StatusInternalServerError, ReasonUnknown, err.Error(), nil)
}

// Code returns the HTTP status of err.
func Code(err error) int { return int(FromError(err).Status.Code) }

// ReasonOf returns the Status reason of err; "" for a nil error.
func ReasonOf(err error) Reason {
	if err == nil {
		return ""
	}
	return FromError(err).Status.Reason
}

// NotFound is 404 `<gr> "<name>" not found`.
func NotFound(group, resource, name string) *Error {
	return New(http.StatusNotFound, ReasonNotFound, fmt.Sprintf("%s %q not found", qualified(resource, group), name),
		&Details{Name: name, Group: group, Kind: resource})
}

// AlreadyExists is 409 `<gr> "<name>" already exists`.
func AlreadyExists(group, resource, name string) *Error {
	return New(http.StatusConflict, ReasonAlreadyExists, fmt.Sprintf("%s %q already exists", qualified(resource, group), name),
		&Details{Name: name, Group: group, Kind: resource})
}

// Conflict is 409 `Operation cannot be fulfilled on <gr> "<name>": <msg>`.
func Conflict(group, resource, name, msg string) *Error {
	return New(http.StatusConflict, ReasonConflict, fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", qualified(resource, group), name, msg),
		&Details{Name: name, Group: group, Kind: resource})
}

// ConflictModified is the stale-resourceVersion Conflict.
func ConflictModified(group, resource, name string) *Error {
	return Conflict(group, resource, name, "the object has been modified; please apply your changes to the latest version and try again")
}

// NewInvalid is 422 `<gk> "<name>" is invalid: <errs>`.
func NewInvalid(group, kind, name string, errs FieldErrors) *Error {
	causes := make([]Cause, 0, len(errs))
	for _, e := range errs {
		causes = append(causes, Cause{Type: string(e.Type), Message: e.Body(), Field: e.Field})
	}
	return New(http.StatusUnprocessableEntity, ReasonInvalid,
		fmt.Sprintf("%s %q is invalid: %s", qualified(kind, group), name, errs.Error()),
		&Details{Name: name, Group: group, Kind: kind, Causes: causes})
}

// BadRequest is 400 with free text and no details.
func BadRequest(msg string) *Error { return New(http.StatusBadRequest, ReasonBadRequest, msg, nil) }

// Unauthorized is the 401 every authentication failure returns.
func Unauthorized() *Error {
	return New(http.StatusUnauthorized, ReasonUnauthorized, "Unauthorized", nil)
}

// NewForbidden is 403 with an already rendered message.
func NewForbidden(group, resource, name, msg string) *Error {
	return New(http.StatusForbidden, ReasonForbidden, msg, &Details{Name: name, Group: group, Kind: resource})
}

// MethodNotAllowed is the router's 405.
func MethodNotAllowed() *Error {
	return New(http.StatusMethodNotAllowed, ReasonMethodNotAllowed, "the server does not allow this method on the requested resource", &Details{})
}

// MethodNotSupported is 405 `<action> is not supported on resources of kind "<gr>"`.
func MethodNotSupported(group, resource, action string) *Error {
	return New(http.StatusMethodNotAllowed, ReasonMethodNotAllowed,
		fmt.Sprintf("%s is not supported on resources of kind %q", action, qualified(resource, group)),
		&Details{Group: group, Kind: resource})
}

// RouteNotFound is the 404 for an unknown path under a served group-version.
func RouteNotFound() *Error {
	return New(http.StatusNotFound, ReasonNotFound, "the server could not find the requested resource", &Details{})
}

// Expired is 410 Expired with no details.
func Expired(msg string) *Error { return New(http.StatusGone, ReasonExpired, msg, nil) }

// Timeout is 504 `Timeout: <msg>` asking the client to retry after the given
// seconds.
func Timeout(msg string, retryAfter int32, causes ...Cause) *Error {
	return New(http.StatusGatewayTimeout, ReasonTimeout, "Timeout: "+msg, &Details{Causes: causes, RetryAfterSeconds: retryAfter})
}

// InternalError is 500 `Internal error occurred: <err>`.
func InternalError(err error) *Error {
	return New(http.StatusInternalServerError, ReasonInternalError, "Internal error occurred: "+err.Error(),
		&Details{Causes: []Cause{{Message: err.Error()}}})
}

// NotAcceptable is 406 with the given message.
func NotAcceptable(msg string, details *Details) *Error {
	return New(http.StatusNotAcceptable, ReasonNotAcceptable, msg, details)
}

// UnsupportedMediaType is 415 with the given message.
func UnsupportedMediaType(msg string, details *Details) *Error {
	return New(http.StatusUnsupportedMediaType, ReasonUnsupportedMediaType, msg, details)
}

// TooLarge is 413 for a body over the limit.
func TooLarge(limit int) *Error {
	return New(http.StatusRequestEntityTooLarge, ReasonTooLarge, fmt.Sprintf("Request entity too large: limit is %d", limit), nil)
}

// TooManyRequests is 429 with the given message, asking the client to
// retry after the given seconds (0: no hint), with causes.
func TooManyRequests(msg string, retryAfter int32, causes ...Cause) *Error {
	return New(http.StatusTooManyRequests, ReasonTooManyRequests, msg, &Details{Causes: causes, RetryAfterSeconds: retryAfter})
}

// ServiceUnavailable is 503 with a retry hint.
func ServiceUnavailable(msg string, retryAfter int32) *Error {
	var d *Details
	if retryAfter > 0 {
		d = &Details{RetryAfterSeconds: retryAfter}
	}
	return New(http.StatusServiceUnavailable, ReasonServiceUnavailable, msg, d)
}

func qualified(name, group string) string {
	if group == "" {
		return name
	}
	return name + "." + group
}
