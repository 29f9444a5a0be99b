package patch

import (
	"errors"
	"fmt"
	"net/http"

	"platd/server/apierr"
)

// Sentinel errors of the package. Every returned error wraps one of them;
// the errors that carry a Status also unwrap to an *apierr.Error, so
// apierr.FromError renders them as the API does.
var (
	// ErrMalformed reports a patch document that cannot be decoded or whose
	// directives are badly formed (400 BadRequest).
	ErrMalformed = errors.New("malformed patch")
	// ErrTooManyOperations reports a JSON patch over the operation limit
	// (413 RequestEntityTooLarge).
	ErrTooManyOperations = errors.New("too many JSON patch operations")
	// ErrRejected reports a well-formed patch that cannot be applied to the
	// object: a failed test, a missing path, a list of lists (422 Invalid).
	ErrRejected = errors.New("patch rejected")
	// ErrDocument reports an original object that is not a JSON object;
	// stored objects always are, so this is a caller's bug (500, or 400
	// "invalid JSON document" from StrategicMergeBytes, as upstream).
	ErrDocument = errors.New("original is not a JSON object")
	// ErrStrategic reports any other failure of a strategic merge patch;
	// such errors carry upstream's text and no Status, so they render as a
	// 500 without reason, as upstream's do.
	ErrStrategic = errors.New("strategic merge patch")
)

// rejectedMessage is the generic text of a 422 for a patch that failed to
// apply; upstream hides the operation's own error.
const rejectedMessage = "the server rejected our request due to an error in our request"

// statusError is a sentinel, the Status it renders as, and the underlying
// cause (for logs and errors.Is against library errors).
type statusError struct {
	kind   error
	status *apierr.Error
	cause  error
}

func (e *statusError) Error() string { return e.status.Error() }

func (e *statusError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind, e.status}
	}
	return []error{e.kind, e.status, e.cause}
}

// plainError carries upstream's text while matching a sentinel.
type plainError struct {
	msg  string
	kind error
}

func (e *plainError) Error() string { return e.msg }
func (e *plainError) Unwrap() error { return e.kind }

func badRequest(msg string, cause error) error {
	return &statusError{kind: ErrMalformed, status: apierr.BadRequest(msg), cause: cause}
}

func rejected(cause error) error {
	return &statusError{
		kind:   ErrRejected,
		status: apierr.New(http.StatusUnprocessableEntity, apierr.ReasonInvalid, rejectedMessage, &apierr.Details{}),
		cause:  cause,
	}
}

func tooMany(n int) error {
	msg := fmt.Sprintf("Request entity too large: The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, n)
	return &statusError{kind: ErrTooManyOperations, status: apierr.New(http.StatusRequestEntityTooLarge, apierr.ReasonTooLarge, msg, nil)}
}

func strategicErr(format string, args ...any) error {
	return &plainError{msg: fmt.Sprintf(format, args...), kind: ErrStrategic}
}

// The strategic merge patch format errors, with upstream's texts and codes.

func errBadJSONDoc() error {
	return &statusError{kind: ErrDocument, status: apierr.BadRequest("invalid JSON document")}
}
func errBadPrimitiveList() error { return badRequest("invalid patch format of primitive list", nil) }
func errBadRetainKeys() error    { return badRequest("invalid patch format of retainKeys", nil) }
func errBadSetElementOrder() error {
	return badRequest("invalid patch format of setElementOrder list", nil)
}
func errNoListOfLists() error { return rejected(errors.New("lists of lists are not supported")) }
