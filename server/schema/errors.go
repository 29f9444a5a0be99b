package schema

import "errors"

// Sentinel errors of the package; returned errors wrap them with %w.
var (
	// ErrCatalog reports a malformed embedded catalog.
	ErrCatalog = errors.New("schema catalog")
	// ErrSyntax reports malformed JSON input.
	ErrSyntax = errors.New("json syntax")
	// ErrType reports a JSON value of the wrong type for its field.
	ErrType = errors.New("json type")
	// ErrQuantity reports a string that is not a quantity.
	ErrQuantity = errors.New("quantity")
)

// wrapped carries upstream's error text while matching a sentinel.
type wrapped struct {
	msg  string
	kind error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.kind }
