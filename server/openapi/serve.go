package openapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"platd/codec"
)

// Caching policy of the documents.
const (
	// hashedLifetime is how long a response fetched by its ?hash= URL may
	// be cached: the URL names the content, so it never changes.
	hashedLifetime     = 365 * 24 * time.Hour
	cacheImmutable     = "public, immutable"
	cacheRevalidate    = "no-cache, private"
	indexContentType   = "text/plain; charset=utf-8"
	queryHash          = "hash"
	headerCacheControl = "Cache-Control"
	headerContentType  = "Content-Type"
	headerETag         = "ETag"
	headerExpires      = "Expires"
	headerVary         = "Vary"
)

// serveIndex writes the v3 index. Like upstream it carries no ETag and
// reports its JSON as text/plain; its Last-Modified moves when the
// group-versions it lists change (indexModified).
func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	set := h.currentV3()
	index, modified := set.index, set.modified
	if h.remote != nil {
		keys := h.remote()
		index, modified = withRemoteKeys(index, set, keys), h.indexModified(set, keys)
	}
	w.Header().Set(headerContentType, indexContentType)
	w.Header().Set(headerCacheControl, cacheRevalidate)
	http.ServeContent(w, r, "", modified, bytes.NewReader(index))
}

// withRemoteKeys is index with the keys the set does not serve added,
// each at its path without a hash: the extension server's document may
// change at any time.
func withRemoteKeys(index []byte, set *v3Set, keys []string) []byte {
	var doc struct {
		Paths map[string]map[string]string `json:"paths"`
	}
	added := false
	for _, k := range keys {
		if _, ok := set.docs[k]; ok {
			continue
		}
		if !added {
			if err := json.Unmarshal(index, &doc); err != nil {
				return index
			}
			added = true
		}
		doc.Paths[k] = map[string]string{"serverRelativeURL": pathV3Prefix + k}
	}
	if !added {
		return index
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return index
	}
	return out
}

// Media types of the v3 documents. Upstream answers both spellings of the
// protobuf type with the dotted one.
const (
	mediaV3Protobuf      = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"
	mediaV3ProtobufAlias = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"
)

// v3Offers lists, in upstream's order of preference among equally
// acceptable types, the media types a v3 document is served as; protobuf
// says whether the type is the protobuf form.
var v3Offers = []struct {
	typ, subtype string
	protobuf     bool
}{
	{"application", "json", false},
	{"application", strings.TrimPrefix(mediaV3Protobuf, "application/"), true},
	{"application", strings.TrimPrefix(mediaV3ProtobufAlias, "application/"), true},
}

// v3Doc is a served v3 document with its protobuf form, built on the
// first request that asks for it. Both forms share the JSON's ETag and
// Last-Modified: Vary tells caches they differ.
type v3Doc struct {
	*servedDoc
	protobuf lazyBody
}

// v3Negotiation is the outcome of negotiating a v3 document's form.
type v3Negotiation int

const (
	v3JSON v3Negotiation = iota
	v3Protobuf
	// v3NoClause: the Accept header names no media range at all.
	v3NoClause
	// v3NotAcceptable: no offer matches any media range.
	v3NotAcceptable
)

// negotiateV3 picks the form for an Accept header as upstream does: the
// clauses in order of preference (quality values only order them), each
// against the offers in order, exact (case-sensitive) or "*" matches. An
// empty header accepts anything.
func negotiateV3(accept string) v3Negotiation {
	if accept == "" {
		accept = mediaAny
	}
	clauses := codec.ParseAccept(accept)
	if len(clauses) == 0 {
		return v3NoClause
	}
	for _, c := range clauses {
		for _, o := range v3Offers {
			if (c.Type == o.typ || c.Type == "*") && (c.Subtype == o.subtype || c.Subtype == "*") {
				if o.protobuf {
					return v3Protobuf
				}
				return v3JSON
			}
		}
	}
	return v3NotAcceptable
}

// serveV3 writes one v3 document, as JSON or protobuf. A group-version
// that is not served gets a 404 without a body, as upstream's aggregator
// answers it. As upstream: an Accept header without any media range gets
// an empty 200, one that admits neither form a 406 without a body; a
// ?hash= that is not the current one redirects (301) to the current URL,
// with the document's headers and no body, and a matching one makes the
// response cacheable for a year.
func (h *Handler) serveV3(w http.ResponseWriter, r *http.Request, key string) {
	set := h.currentV3()
	doc, ok := set.docs[key]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	hdr := w.Header()
	hdr.Set(headerVary, "Accept")
	contentType, body := mediaJSON, doc.body
	switch negotiateV3(r.Header.Get("Accept")) {
	case v3NoClause:
		return
	case v3NotAcceptable:
		w.WriteHeader(http.StatusNotAcceptable)
		return
	case v3Protobuf:
		var err error
		body, err = doc.protobuf.get(func() ([]byte, error) { return encodeV3Protobuf(doc.body) })
		if err != nil {
			// Only a document the encoder cannot represent gets here: a
			// defect, answered as upstream answers a document it cannot
			// convert, with nothing.
			slog.Error("openapi v3 document", "path", key, "form", mediaV3Protobuf, "err", err)
			return
		}
		contentType = mediaV3Protobuf
	}
	hdr.Set(headerContentType, contentType)
	hdr.Set(headerETag, `"`+doc.hash+`"`)
	if hash := r.URL.Query().Get(queryHash); hash != "" {
		if hash != doc.hash {
			// With a Content-Type set, the redirect is written without
			// its HTML body.
			http.Redirect(w, r, pathV3Prefix+key+"?"+queryHash+"="+doc.hash, http.StatusMovedPermanently)
			return
		}
		hdr.Set(headerCacheControl, cacheImmutable)
		hdr.Set(headerExpires, h.now().Add(hashedLifetime).UTC().Format(time.RFC1123))
	} else {
		hdr.Set(headerCacheControl, cacheRevalidate)
	}
	http.ServeContent(w, r, "", doc.modified, bytes.NewReader(body))
}
