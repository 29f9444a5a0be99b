package openapi

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"platd/codec"
)

// Media types of the v2 document. Upstream answers both spellings of the
// protobuf type with the dotted one; kubectl asks with the "@" one.
const (
	mediaV2Protobuf      = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	mediaV2ProtobufAlias = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
)

// Compression of the v2 document, as upstream's handler does it.
const (
	// v2GzipMinSize is upstream's threshold: smaller bodies go as they are.
	v2GzipMinSize         = 1400
	v2GzipLevel           = gzip.DefaultCompression
	encodingGzip          = "gzip"
	headerAcceptEncoding  = "Accept-Encoding"
	headerContentEncoding = "Content-Encoding"
	headerRange           = "Range"
)

// The forms the v2 document is served in.
const (
	formJSON v2Form = iota
	formProtobuf
	numV2Forms
)

// v2Form is one representation of the v2 document.
type v2Form int

func (f v2Form) contentType() string {
	if f == formProtobuf {
		return mediaV2Protobuf
	}
	return mediaJSON
}

// v2Offers lists, in upstream's order of preference among equally
// acceptable types, the media types the v2 document is served as.
var v2Offers = []struct {
	typ, subtype string
	form         v2Form
}{
	{"application", "json", formJSON},
	{"application", strings.TrimPrefix(mediaV2ProtobufAlias, "application/"), formProtobuf},
	{"application", strings.TrimPrefix(mediaV2Protobuf, "application/"), formProtobuf},
}

// negotiateV2 picks the form for an Accept header as upstream does: the
// clauses in order of preference, each against the offers in order, exact
// (case-sensitive) or "*" matches, quality values only ordering the
// clauses. An empty header accepts anything.
func negotiateV2(accept string) (v2Form, bool) {
	if accept == "" {
		accept = mediaAny
	}
	for _, c := range codec.ParseAccept(accept) {
		for _, o := range v2Offers {
			if (c.Type == o.typ || c.Type == "*") && (c.Subtype == o.subtype || c.Subtype == "*") {
				return o.form, true
			}
		}
	}
	return 0, false
}

// v2Doc is the served v2 document with the representations derived from
// its JSON, each built on the first request that needs it. All forms share
// the JSON's ETag and Last-Modified: Vary tells caches they differ.
type v2Doc struct {
	*servedDoc
	protobuf lazyBody
	gzipped  [numV2Forms]lazyBody
}

// lazyBody is a body computed once.
type lazyBody struct {
	once sync.Once
	body []byte
	err  error
}

func (l *lazyBody) get(build func() ([]byte, error)) ([]byte, error) {
	l.once.Do(func() { l.body, l.err = build() })
	return l.body, l.err
}

// bodyOf returns the document in form f.
func (d *v2Doc) bodyOf(f v2Form) ([]byte, error) {
	if f == formJSON {
		return d.servedDoc.body, nil
	}
	return d.protobuf.get(func() ([]byte, error) { return encodeV2Protobuf(d.servedDoc.body) })
}

// gzipOf returns the document in form f, gzip-compressed.
func (d *v2Doc) gzipOf(f v2Form) ([]byte, error) {
	return d.gzipped[f].get(func() ([]byte, error) {
		plain, err := d.bodyOf(f)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, v2GzipLevel)
		if err != nil {
			return nil, fmt.Errorf("openapi: gzip: %w", err)
		}
		if _, err := zw.Write(plain); err != nil {
			return nil, fmt.Errorf("openapi: gzip: %w", err)
		}
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("openapi: gzip: %w", err)
		}
		return buf.Bytes(), nil
	})
}

// serveV2 writes the v2 document as JSON or protobuf. Like upstream it
// varies on Accept and Accept-Encoding (406 with an empty body when no
// offer is acceptable) and compresses for clients that accept gzip (not
// for loopback clients when the server is told so). The
// APIResponseCompression gate does not apply: upstream's OpenAPI handler
// compresses on its own.
func (h *Handler) serveV2(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Add(headerVary, headerAcceptEncoding)
	hdr.Add(headerVary, "Accept")
	form, ok := negotiateV2(r.Header.Get("Accept"))
	if !ok {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	doc := h.currentV2()
	body, err := doc.bodyOf(form)
	if err == nil && len(body) >= v2GzipMinSize && wantsGzip(r) && !(h.noLoopbackGzip && codec.IsLoopback(r.RemoteAddr)) {
		if body, err = doc.gzipOf(form); err == nil {
			hdr.Set(headerContentEncoding, encodingGzip)
		}
	}
	if err != nil {
		// Only a document the encoder cannot represent gets here: a defect,
		// answered as upstream answers a document it cannot convert.
		slog.Error("openapi v2 document", "form", form.contentType(), "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	hdr.Set(headerContentType, form.contentType())
	hdr.Set(headerETag, strconv.Quote(doc.hash))
	hdr.Set(headerCacheControl, cacheRevalidate)
	http.ServeContent(w, r, "", doc.modified, bytes.NewReader(body))
}

// wantsGzip reports whether the response to r is compressed: the client
// gives gzip a non-zero quality in Accept-Encoding, and asks for no byte
// range (ranges address the uncompressed body).
func wantsGzip(r *http.Request) bool {
	if r.Header.Get(headerRange) != "" {
		return false
	}
	q := 0.0
	for coding := range strings.SplitSeq(r.Header.Get(headerAcceptEncoding), ",") {
		name, params, _ := strings.Cut(coding, ";")
		if !strings.EqualFold(strings.TrimSpace(name), encodingGzip) {
			continue
		}
		// The last mention counts; a malformed quality refuses.
		q = 1
		for p := range strings.SplitSeq(params, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
				q, _ = strconv.ParseFloat(v, 64)
			}
		}
	}
	return q > 0
}
