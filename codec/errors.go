package codec

import "errors"

// Sentinel errors. Errors returned by this package wrap one of them (test
// with errors.Is) while keeping the upstream-compatible message text.
var (
	// ErrContentType reports a Content-Type header that cannot be parsed.
	ErrContentType = errors.New("invalid content type")
	// ErrYAML reports YAML that cannot be converted to JSON, or JSON that
	// cannot be converted to YAML.
	ErrYAML = errors.New("invalid yaml")
	// ErrProtobuf reports a body that is not a well-formed protobuf envelope.
	ErrProtobuf = errors.New("invalid protobuf envelope")
	// ErrCBOR reports CBOR that cannot be decoded, or a value that cannot
	// be encoded as CBOR.
	ErrCBOR = errors.New("invalid cbor")
)

// wrapped pairs a sentinel with an error whose text must reach the client
// unchanged: Error returns only the inner text, errors.Is sees both.
type wrapped struct {
	sentinel error
	err      error
}

func (w *wrapped) Error() string   { return w.err.Error() }
func (w *wrapped) Unwrap() []error { return []error{w.sentinel, w.err} }

func wrap(sentinel, err error) error { return &wrapped{sentinel: sentinel, err: err} }
