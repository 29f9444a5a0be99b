package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"platd/codec"
	"platd/server/apierr"
	"platd/server/audit"
	"platd/server/protobuf"
	"platd/server/registry"
	"platd/server/request"
	"platd/server/schema"
)

// Responses are written by shape: the caller knows whether it answers with
// one stored object, a list, a Status or an object of another kind, and
// each shape has its writer. JSON is produced first only where the
// negotiated form is JSON or YAML.

// writeJSON writes a compact JSON body in the negotiated JSON, YAML or
// CBOR form (pretty when asked).
func (h *Handler) writeJSON(w http.ResponseWriter, r *http.Request, out output, code int, body []byte) {
	if out.format == formatCBOR {
		h.writeCBOR(w, r, code, body, nil, false)
		return
	}
	if out.format == formatYAML {
		y, err := codec.JSONToYAML(body)
		if err != nil {
			h.writeError(w, r, apierr.InternalError(err))
			return
		}
		h.send(w, r, code, mediaYAML, y)
		return
	}
	if out.pretty {
		body = codec.Indent(make([]byte, 0, len(body)+len(body)/2), trimNewline(body))
	} else if len(body) == 0 || body[len(body)-1] != '\n' {
		body = append(body, '\n')
	}
	h.send(w, r, code, mediaJSON, body)
}

// writeProtobuf writes a protobuf envelope.
func (h *Handler) writeProtobuf(w http.ResponseWriter, r *http.Request, code int, body []byte) {
	h.send(w, r, code, h.brand.ProtobufMediaType, body)
}

// send writes an encoded body with its Content-Type, compressed when the
// client and the size call for it.
func (h *Handler) send(w http.ResponseWriter, r *http.Request, code int, contentType string, body []byte) {
	h.sendParts(w, r, code, contentType, body)
}

// sendParts is send of a body given in consecutive parts, written one
// after the other instead of joined.
//
// No Content-Length is set: net/http frames the response as it does
// upstream's, whose bodies are written whole. A body that fits its
// buffer (2 KiB on HTTP/1.1, 4 KiB on HTTP/2) by the handler's end gets a
// Content-Length, a longer one is chunked on HTTP/1.1 (no content-length
// on HTTP/2); the parts are buffered together, so the framing is that of
// the whole body. A HEAD request's body goes to net/http, which discards
// it but frames the answer as for GET.
func (h *Handler) sendParts(w http.ResponseWriter, r *http.Request, code int, contentType string, parts ...[]byte) {
	w.Header().Set("Content-Type", contentType)
	gw, finish := h.gzipWriter(w, r)
	if gw != w && len(parts) > 1 {
		// Compression is decided on the first write's size, and costs far
		// more than joining the parts.
		parts = [][]byte{bytes.Join(parts, nil)}
	}
	gw.WriteHeader(code)
	for _, body := range parts {
		var err error
		switch {
		case r.ProtoMajor == 2 && gw == w:
			// Record-sized frames, as lists are streamed (writeFramed).
			_, err = writeFramed(w, body)
		default:
			_, err = gw.Write(body)
		}
		if err != nil {
			break
		}
	}
	if err := finish(); err != nil {
		h.log.Debug("response write failed", "err", err)
	}
}

// writeStatus writes a Status object (an error, or a delete's success).
func (h *Handler) writeStatus(w http.ResponseWriter, r *http.Request, out output, code int, st *apierr.Status) {
	audit.LogResponseStatus(r.Context(), st)
	if out.format == formatProtobuf {
		h.writeProtobuf(w, r, code, codec.WrapProtobuf(nil, "v1", "Status", protobuf.MarshalStatus(nil, st)))
		return
	}
	body, _ := json.Marshal(st)
	h.writeJSON(w, r, out, code, body)
}

// writeKind writes obj, an object of another kind than the addressed
// resource's (a Scale, say), described by sch. Conversions (Tables,
// metadata) do not apply to such objects.
func (h *Handler) writeKind(w http.ResponseWriter, r *http.Request, out output, code int, apiVersion, kind string, obj Object, sch *schema.Schema) {
	if out.format == formatProtobuf {
		raw, err := protobuf.Marshal(nil, obj, sch)
		if err != nil {
			h.writeError(w, r, apierr.InternalError(err))
			return
		}
		h.writeProtobuf(w, r, code, codec.WrapProtobuf(nil, apiVersion, kind, raw))
		return
	}
	obj["kind"], obj["apiVersion"] = kind, apiVersion
	if out.format == formatCBOR {
		h.writeCBOR(w, r, code, schema.Encode(nil, obj, sch), sch, false)
		return
	}
	h.writeJSON(w, r, out, code, schema.Encode(nil, obj, sch))
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	return b
}

// writeError writes err as a Status negotiated to the request's Accept.
// Errors that cannot be negotiated themselves are written as indented JSON.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	h.writeErrorIn(w, r, err, h.cbor)
}

// writeErrorIn is writeError with CBOR among the encodings or not.
func (h *Handler) writeErrorIn(w http.ResponseWriter, r *http.Request, err error, cbor bool) {
	se := apierr.FromError(h.toStatus(err))
	watch := requestWatch(r)
	var d *registry.Descriptor
	if info := request.InfoFrom(r.Context()); info != nil && info.IsResource {
		d = h.reg.Lookup(info.Group, info.Version, info.Resource)
	}
	out, nerr := h.negotiateFor(r, d, watch)
	if nerr == nil && out.format == formatCBOR && !cbor {
		out, nerr = h.negotiateWithoutCBOR(r, d, watch)
	}
	if nerr != nil {
		if se.Status.Reason == apierr.ReasonNotAcceptable && watch {
			// A watch asked for YAML: the 406 itself is YAML.
			out = output{format: formatYAML}
		} else {
			out = output{format: formatJSON, pretty: true}
		}
	}
	if se.Status.Details != nil && se.Status.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(se.Status.Details.RetryAfterSeconds)))
	}
	if se.Status.Code == http.StatusForbidden {
		w.Header().Set("X-Content-Type-Options", "nosniff")
	}
	code := int(se.Status.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	h.writeStatus(w, r, out, code, &se.Status)
}

// WriteError writes err as a Status, for the layers outside this package
// (filters, routes). Those errors never come in CBOR: upstream writes them
// with the server-wide serializer, which CBOR is not part of (it is added
// to each API group's), so a client asking for CBOR alone gets JSON.
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	h.writeErrorIn(w, r, err, false)
}

// negotiateWithoutCBOR negotiates r's Accept with its CBOR clauses left
// out, as a serializer without CBOR reads it: nothing left is a 406.
func (h *Handler) negotiateWithoutCBOR(r *http.Request, d *registry.Descriptor, watch bool) (output, error) {
	var kept []string
	for clause := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		mt, _, _ := strings.Cut(clause, ";")
		if !strings.EqualFold(strings.TrimSpace(mt), codec.CBORMediaType) {
			kept = append(kept, clause)
		}
	}
	if len(kept) == 0 {
		return output{}, apierr.NotAcceptable("", nil)
	}
	r2 := r.Clone(r.Context())
	r2.Header.Set("Accept", strings.Join(kept, ","))
	return h.negotiateFor(r2, d, watch)
}

// requestInfo returns what r addresses.
func requestInfo(r *http.Request) *request.Info {
	if info := request.InfoFrom(r.Context()); info != nil {
		return info
	}
	return request.Parse(r.Method, r.URL)
}

func requestWatch(r *http.Request) bool {
	q := r.URL.Query()
	v := q.Get("watch")
	return v == "1" || v == "true" || strings.Contains(r.URL.Path, "/watch/")
}

// gzipWriter wraps w for compression as codec.GzipWriter decides, within
// what the server's Compression allows.
func (h *Handler) gzipWriter(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func() error) {
	switch h.compression {
	case CompressNone:
		return w, noFinish
	case CompressRemote:
		if codec.IsLoopback(r.RemoteAddr) {
			return w, noFinish
		}
	}
	return codec.GzipWriter(w, r)
}

func noFinish() error { return nil }
