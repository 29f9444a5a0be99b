package protobuf

import "errors"

// Sentinel errors of the package; returned errors wrap them with %w and add
// the member path.
var (
	// ErrNoProtobuf reports a schema that has no protobuf form (custom
	// resources, Table, or an Any value of unknown message).
	ErrNoProtobuf = errors.New("type has no protobuf form")
	// ErrMalformed reports wire bytes that are not a valid message of the
	// schema: truncated fields, a known field with the wrong wire type, or
	// nesting deeper than maxDepth.
	ErrMalformed = errors.New("malformed protobuf message")
	// ErrValue reports a value that cannot be converted: an unparsable
	// time, duration, quantity or base64 string, an IntOrString of unknown
	// type, or raw JSON that does not parse.
	ErrValue = errors.New("invalid value")
	// ErrRawNotJSON reports raw extension bytes that are not JSON.
	ErrRawNotJSON = errors.New("raw extension is not JSON")
	// ErrType reports a generic value of the wrong Go type for its schema
	// when marshalling (a string where an integer belongs, ...).
	ErrType = errors.New("value of wrong type")
	// ErrUnsupported reports input Transcode leaves to Marshal: members
	// that occur twice, nesting deeper than maxTapeDepth, messages it has
	// no fast form for. Marshal of the decoded object gives the answer.
	ErrUnsupported = errors.New("not supported by the transcoder")
)

// maxDepth bounds message nesting on decode and encode. Hostile input can
// nest a cyclic schema (JSONSchemaProps) arbitrarily deep; protobuf-go
// stops at the same depth by default.
const maxDepth = 10000
