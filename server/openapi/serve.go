package openapi

import (
	"bytes"
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
// reports its JSON as text/plain.
func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	set := h.currentV3()
	w.Header().Set(headerContentType, indexContentType)
	w.Header().Set(headerCacheControl, cacheRevalidate)
	http.ServeContent(w, r, "", set.modified, bytes.NewReader(set.index))
}

// serveV3 writes one v3 document. A group-version that is not served gets
// a 404 without a body, as upstream's aggregator answers it. A ?hash= that
// is not the current one redirects (301) to the current URL, with the
// document's headers and no body, as upstream; a matching one makes the
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
	if !acceptsJSON(r.Header.Get("Accept")) {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	hdr.Set(headerContentType, mediaJSON)
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
	http.ServeContent(w, r, "", doc.modified, bytes.NewReader(doc.body))
}

// acceptsJSON reports whether some clause of accept admits JSON; an empty
// header admits anything.
func acceptsJSON(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, c := range codec.ParseAccept(accept) {
		if c.Q == 0 {
			continue
		}
		switch {
		case c.Type == "*":
			return true
		case strings.EqualFold(c.Type, "application") && (c.Subtype == "*" || strings.EqualFold(c.Subtype, "json")):
			return true
		}
	}
	return false
}
