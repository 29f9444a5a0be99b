package codec

import (
	"encoding/binary"
	"errors"
	"io"
	"net/http"

	"google.golang.org/protobuf/encoding/protowire"
)

// Watch event types, as they appear in the "type" field of every event.
const (
	EventAdded    = "ADDED"
	EventModified = "MODIFIED"
	EventDeleted  = "DELETED"
	EventBookmark = "BOOKMARK"
	EventError    = "ERROR"
)

// Field numbers of meta/v1 WatchEvent and of the RawExtension it embeds.
const (
	watchEventType   protowire.Number = 1
	watchEventObject protowire.Number = 2
	rawExtensionRaw  protowire.Number = 1
)

// frameLengthSize is the size of the big-endian length that precedes each
// protobuf watch event.
const frameLengthSize = 4

// WatchEncoder writes watch events to one response body, one event per
// frame. JSON frames are the compact event document followed by "\n";
// protobuf frames are a 4-byte big-endian length and a WatchEvent message.
// A WatchEncoder belongs to one watch and is not safe for concurrent use.
// It reuses one internal buffer, so encoding an event does not allocate
// once the buffer has grown to the largest event.
type WatchEncoder struct {
	w     io.Writer
	proto bool
	cbor  bool
	buf   []byte
}

// NewJSONFrameWriter returns a WatchEncoder writing JSON events to w.
func NewJSONFrameWriter(w io.Writer) *WatchEncoder {
	return &WatchEncoder{w: w}
}

// NewProtobufFrameWriter returns a WatchEncoder writing length-prefixed
// protobuf events to w.
func NewProtobufFrameWriter(w io.Writer) *WatchEncoder {
	return &WatchEncoder{w: w, proto: true}
}

// NewCBORFrameWriter returns a WatchEncoder writing a CBOR sequence to w:
// each event one self-described CBOR data item, with no other framing.
func NewCBORFrameWriter(w io.Writer) *WatchEncoder {
	return &WatchEncoder{w: w, cbor: true}
}

// cborEvent is the shape of a CBOR watch event; its object is already
// encoded (with its own self-described tag, as upstream embeds it).
type cborEvent struct {
	Type   string  `json:"type"`
	Object RawCBOR `json:"object"`
}

// Encode writes one event frame with a single Write. eventType is one of
// the Event constants. object is the event's object already encoded for
// this stream: compact JSON carrying kind and apiVersion for a JSON stream,
// a complete envelope (see WrapProtobuf) for a protobuf stream, one
// self-described CBOR data item for a CBOR stream. object is
// only read. Encode does not flush; call Flush when no event is pending.
func (e *WatchEncoder) Encode(eventType string, object []byte) error {
	switch {
	case e.cbor:
		var err error
		if e.buf, err = AppendCBOR(e.buf[:0], cborEvent{Type: eventType, Object: object}); err != nil {
			return err
		}
	case e.proto:
		e.buf = append(e.buf[:0], 0, 0, 0, 0)
		e.buf = AppendProtobufEvent(e.buf, eventType, object)
		binary.BigEndian.PutUint32(e.buf, uint32(len(e.buf)-frameLengthSize))
	default:
		e.buf = AppendJSONEvent(e.buf[:0], eventType, object)
		e.buf = append(e.buf, '\n')
	}
	_, err := e.w.Write(e.buf)
	return err
}

// Flush pushes buffered frames to the client when the underlying writer
// can flush (an http.ResponseWriter, or one that unwraps to it). A writer
// that cannot flush is not an error.
func (e *WatchEncoder) Flush() error {
	if f, ok := e.w.(interface{ FlushError() error }); ok {
		return f.FlushError()
	}
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
		return nil
	}
	if rw, ok := e.w.(http.ResponseWriter); ok {
		err := http.NewResponseController(rw).Flush()
		if errors.Is(err, http.ErrNotSupported) {
			return nil
		}
		return err
	}
	return nil
}

// AppendJSONEvent appends the compact JSON watch event
// {"type":<eventType>,"object":<object>} to dst. eventType is written as a
// JSON string; object must be a compact JSON document and is copied as is.
func AppendJSONEvent(dst []byte, eventType string, object []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = AppendJSONString(dst, eventType)
	dst = append(dst, `,"object":`...)
	dst = append(dst, object...)
	return append(dst, '}')
}

// AppendProtobufEvent appends a WatchEvent message (no magic prefix, no
// length) to dst: field 1 the type, field 2 a RawExtension whose field 1
// is object, which must be a complete envelope. Both fields are always
// written.
func AppendProtobufEvent(dst []byte, eventType string, object []byte) []byte {
	dst = appendString(dst, watchEventType, eventType)
	dst = protowire.AppendTag(dst, watchEventObject, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(protowire.SizeTag(rawExtensionRaw)+protowire.SizeBytes(len(object))))
	dst = protowire.AppendTag(dst, rawExtensionRaw, protowire.BytesType)
	return protowire.AppendBytes(dst, object)
}
