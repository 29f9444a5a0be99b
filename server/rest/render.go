package rest

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"platd/codec"
	"platd/server/apierr"
	"platd/server/protobuf"
	"platd/server/registry"
	"platd/server/schema"
)

// renderer turns stored objects of one resource into the negotiated form
// of one response (or one watch). It keeps scratch buffers between
// objects, so it is used by one goroutine at a time.
type renderer struct {
	h *Handler
	d *registry.Descriptor
	// rows is the descriptor whose objects Table rows read (rowForm).
	rows *registry.Descriptor
	out  output
	// include is the Table rows' object: includeNone, includeMetadata or
	// includeObject.
	include string
	now     time.Time
	scratch []byte
	// item holds a list item with its type prefixed (ListItemsTyped).
	item []byte
}

// Values of the includeObject parameter of Tables.
const (
	includeNone     = "None"
	includeMetadata = "Metadata"
	includeObject   = "Object"
)

// newRenderer prepares the rendering of d's objects for r.
func (h *Handler) newRenderer(r *http.Request, d *registry.Descriptor, out output) (*renderer, error) {
	rd := &renderer{h: h, d: d, rows: rowForm(d), out: out, now: h.now(), include: includeMetadata}
	if out.as == asTable {
		switch v := r.URL.Query().Get("includeObject"); v {
		case "", includeMetadata:
		case includeNone, includeObject:
			rd.include = v
		default:
			return nil, apierr.BadRequest(fmt.Sprintf("Unable to convert to Table as requested: includeObject: Invalid value: %q: must be 'Metadata', 'Object', 'None', or empty", v))
		}
	}
	return rd, nil
}

// metaGroupVersion is the apiVersion of the conversion targets.
func (rd *renderer) metaGroupVersion() string {
	return rd.h.brand.MetaGroup() + "/" + rd.out.asVersion
}

// served returns stored bytes in the resource's served form.
func (rd *renderer) served(stored []byte) ([]byte, error) {
	if rd.d.Storage == nil && !stale(rd.d, stored) {
		return stored, nil
	}
	b, err := servedJSON(rd.scratch, rd.d, stored)
	if err == nil {
		rd.scratch = b
	}
	return b, err
}

// listItem returns one list item's JSON: the served bytes, with kind and
// apiVersion when the descriptor's list items carry them. The result is
// valid until the next call.
func (rd *renderer) listItem(stored []byte) ([]byte, error) {
	if rd.d.ListItemsTyped && converter(rd.d) != nil {
		// Cut the version member as the item is copied, not before.
		if start, end, ok := servedSpan(rd.d, stored); ok && start > 1 {
			rd.item = typePrefix(rd.item[:0], rd.d.Kind, rd.d.GroupVersion())
			rd.item = append(rd.item, stored[1:start]...)
			rd.item = append(rd.item, stored[end:]...)
			return rd.item, nil
		}
	}
	b, err := rd.served(stored)
	if err != nil || !rd.d.ListItemsTyped {
		return b, err
	}
	rd.item = objectJSON(rd.item[:0], rd.d, b)
	return rd.item, nil
}

// objectJSON appends the JSON of one object with its kind and apiVersion.
func (rd *renderer) objectJSON(dst, stored []byte) ([]byte, error) {
	b, err := rd.served(stored)
	if err != nil {
		return dst, err
	}
	return objectJSON(dst, rd.d, b), nil
}

// objectProto appends the protobuf message of one object (no envelope).
func (rd *renderer) objectProto(dst, stored []byte) ([]byte, error) {
	if rd.d.Storage == nil {
		// Stored bytes are the served form: transcode them.
		if out, err := protobuf.Transcode(dst, stored, rd.d.Schema); err == nil {
			return out, nil
		}
	}
	return rd.decodeProto(dst, stored)
}

// decodeProto is objectProto by decoding the object and marshalling it:
// for converted resources and whatever the transcoder declines.
func (rd *renderer) decodeProto(dst, stored []byte) ([]byte, error) {
	obj, err := decodeTransient(rd.d, stored)
	if err != nil {
		return dst, err
	}
	return protobuf.Marshal(dst, obj, rd.d.Schema)
}

// metadataJSON appends a PartialObjectMetadata of one stored object.
func (rd *renderer) metadataJSON(dst, stored []byte) ([]byte, error) {
	m, err := storedMetadata(stored)
	if err != nil {
		return dst, err
	}
	return rd.appendMetadataJSON(dst, m), nil
}

// appendMetadataJSON appends a PartialObjectMetadata of the metadata m.
func (rd *renderer) appendMetadataJSON(dst, m []byte) []byte {
	dst = typePrefix(dst, "PartialObjectMetadata", rd.metaGroupVersion())
	dst = append(dst, `"metadata":`...)
	dst = append(dst, m...)
	return append(dst, '}')
}

// metadataProto appends the PartialObjectMetadata message of one object.
func (rd *renderer) metadataProto(dst, stored []byte) ([]byte, error) {
	m, err := storedMetadata(stored)
	if err != nil {
		return dst, err
	}
	return rd.appendMetadataProto(dst, m)
}

// appendMetadataProto appends the PartialObjectMetadata message of the
// stored metadata m.
func (rd *renderer) appendMetadataProto(dst, m []byte) ([]byte, error) {
	if out, err := protobuf.AppendPartialObjectMetadataJSON(dst, m, rd.metaSchema()); err == nil {
		return out, nil
	}
	return rd.decodeMetadataProto(dst, m)
}

// decodeMetadataProto is metadataProto by decoding the metadata m and
// marshalling it, for whatever the transcoder declines.
func (rd *renderer) decodeMetadataProto(dst, m []byte) ([]byte, error) {
	md, err := decodeServed(rd.d, append(append([]byte(`{"metadata":`), m...), '}'))
	if err != nil {
		return dst, err
	}
	meta, err := protobuf.Marshal(nil, md["metadata"].(map[string]any), rd.metaSchema())
	if err != nil {
		return dst, err
	}
	return protobuf.AppendPartialObjectMetadata(dst, meta), nil
}

// metaSchema is the ObjectMeta schema.
func (rd *renderer) metaSchema() *schema.Schema {
	return rd.d.Schema.Field("metadata").Schema
}

// internalType names the resource's Go type as upstream's messages do:
// "*core.ConfigMap", "*apps.DeploymentList".
func internalType(d *registry.Descriptor, list bool) string {
	k := d.Kind
	if list {
		k = d.ListKind
	}
	return "*" + internalPackage(d.Group) + "." + k
}

// writeObject answers with one stored object in the negotiated form.
func (h *Handler) writeObject(w http.ResponseWriter, r *http.Request, out output, code int, d *registry.Descriptor, stored []byte) {
	rd, err := h.newRenderer(r, d, out)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if head := rd.partsJSONHead(stored); head != nil {
		// The stored bytes are written as they are, behind their type.
		h.sendParts(w, r, code, mediaJSON, head, stored[1:], newline)
		return
	}
	body, err := rd.single(stored)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeRendered(w, r, out, code, d.Schema, false, body)
}

// writeRendered writes a body rendered for out: an object, or a list
// when list is set, of the type sch describes.
func (h *Handler) writeRendered(w http.ResponseWriter, r *http.Request, out output, code int, sch *schema.Schema, list bool, body []byte) {
	switch {
	case out.format == formatProtobuf:
		h.writeProtobuf(w, r, code, body)
	case out.format == formatCBOR && out.as == asObject:
		h.writeCBOR(w, r, code, body, sch, list)
	default:
		h.writeJSON(w, r, out, code, body)
	}
}

// largeObjectBytes is the stored size from which an object is large:
// its decoded strings share the stored bytes (decodeCurrent).
const largeObjectBytes = 64 << 10

// partsObjectBytes is the stored size from which a JSON object response
// is written in parts (type prefix, stored bytes, newline) instead of
// joined into one body: the parts are copied into the connection's
// buffer anyway, and joining them first costs an allocation and a copy
// of the whole object for the sake of its 60-byte type prefix. Smaller
// objects are joined, one write being cheaper than three.
const partsObjectBytes = 1 << 10

var newline = []byte{'\n'}

// partsJSONHead returns the type prefix of a compact JSON response of a
// stored object served as stored and written in parts, or nil for any
// other response.
func (rd *renderer) partsJSONHead(stored []byte) []byte {
	if len(stored) < partsObjectBytes || rd.out.format != formatJSON || rd.out.pretty || rd.out.as != asObject ||
		rd.d.Storage != nil || stale(rd.d, stored) || stored[0] != '{' {
		return nil
	}
	return typePrefix(nil, rd.d.Kind, rd.d.GroupVersion())
}

// single renders one object as a whole response body: JSON (for JSON and
// YAML output) or a protobuf envelope.
func (rd *renderer) single(stored []byte) ([]byte, error) {
	proto := rd.out.format == formatProtobuf
	switch rd.out.as {
	case asMetadataList:
		return nil, apierr.NotAcceptable(fmt.Sprintf("you requested PartialObjectMetadataList, but the requested object is not a list (%s)", internalType(rd.d, false)), nil)
	case asMetadata:
		if converter(rd.d) != nil {
			// The metadata as served: a conversion may set labels and
			// annotations.
			var err error
			if stored, err = inVersion(rd.d, stored); err != nil {
				return nil, err
			}
		}
		if proto {
			raw, err := rd.metadataProto(nil, stored)
			if err != nil {
				return nil, internalErr(err)
			}
			return codec.WrapProtobuf(nil, rd.metaGroupVersion(), "PartialObjectMetadata", raw), nil
		}
		b, err := rd.metadataJSON(nil, stored)
		return b, internalErr(err)
	case asTable:
		rv, _ := storedResourceVersion(stored)
		t := rd.newTable(listMeta{rv: rv})
		if err := t.addRow(stored); err != nil {
			return nil, internalErr(err)
		}
		return t.finish(), nil
	}
	if proto {
		raw, err := rd.objectProto(nil, stored)
		if err != nil {
			return nil, internalErr(err)
		}
		return codec.WrapProtobuf(nil, rd.d.GroupVersion(), rd.d.Kind, raw), nil
	}
	b, err := rd.objectJSON(make([]byte, 0, len(stored)+64), stored)
	return b, internalErr(err)
}

// internalErr is the answer to a failure to read or render a stored
// object: a Status error as it is (a conversion's), any other as an
// internal error.
func internalErr(err error) error {
	if err == nil {
		return nil
	}
	var se *apierr.Error
	if errors.As(err, &se) {
		return se
	}
	return apierr.InternalError(err)
}

// errNoMetadata means stored bytes do not start with their metadata, as
// every stored object does.
var errNoMetadata = errors.New("stored object does not start with metadata")

var metadataKey = []byte(`{"metadata":`)

// storedMetadata returns the metadata object of stored bytes (which
// always come first): a subslice of stored.
func storedMetadata(stored []byte) ([]byte, error) {
	if !bytes.HasPrefix(stored, metadataKey) {
		return nil, errNoMetadata
	}
	v := stored[len(metadataKey):]
	end, err := objectEnd(v)
	if err != nil {
		return nil, err
	}
	return v[:end], nil
}

// objectEnd returns the length of the compact JSON object v starts with.
func objectEnd(v []byte) (int, error) {
	if len(v) == 0 || v[0] != '{' {
		return 0, errNoMetadata
	}
	return containerEnd(v)
}

// containerEnd returns the length of the compact JSON object or array v
// starts with. Strings, most of the bytes, are passed over by searching
// for their closing quote rather than byte by byte.
func containerEnd(v []byte) (int, error) {
	depth := 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			end, ok := stringEnd(v, i)
			if !ok {
				return 0, errNoMetadata
			}
			i = end
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
	}
	return 0, errNoMetadata
}

// stringEnd is the index of the quote that closes the JSON string whose
// opening quote is v[open]: the first one after it not escaped by an odd
// number of backslashes.
func stringEnd(v []byte, open int) (int, bool) {
	for at := open + 1; ; at++ {
		k := bytes.IndexByte(v[at:], '"')
		if k < 0 {
			return 0, false
		}
		at += k
		n := 0
		for b := at - 1; b > open && v[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return at, true
		}
	}
}

// storedResourceVersion reads the resourceVersion of stored bytes.
func storedResourceVersion(stored []byte) (string, bool) {
	i := bytes.Index(stored, rvKey)
	if i < 0 {
		return "", false
	}
	rest := stored[i+len(rvKey):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return "", false
	}
	if _, err := strconv.ParseInt(string(rest[:end]), 10, 64); err != nil {
		return "", false
	}
	return string(rest[:end]), true
}
