// Package openapi serves the OpenAPI v3 documents (index and one document
// per group-version) and the OpenAPI v2 document, each in JSON and in
// gnostic's protobuf form, all generated from the registry's descriptors
// and their schemas.
package openapi

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

// Lookup resolves a schema by its branded name (the schema catalog's
// Schema method). It must be safe for concurrent use.
type Lookup func(name string) *schema.Schema

// Option configures a Handler.
type Option func(*Handler)

// WithSchemas makes the documents take shared schemas (list kinds, Status,
// DeleteOptions, WatchEvent, ListMeta, discovery kinds) from lookup instead
// of the package's own minimal definitions.
func WithSchemas(lookup Lookup) Option { return func(h *Handler) { h.lookup = lookup } }

// KindLookup resolves a kind's schema by its branded group, version and
// kind (the schema catalog's ByGVK). It must be safe for concurrent use.
type KindLookup func(group, version, kind string) *schema.Schema

// WithKinds lets subresources that answer with another kind than their
// resource's (autoscaling/v1 Scale, Binding, Eviction, TokenRequest) be
// documented with that kind's schema; without it they are documented with
// the resource's.
func WithKinds(lookup KindLookup) Option { return func(h *Handler) { h.kinds = lookup } }

// SchemaKinds lists the kinds a named schema is the schema of (the schema
// catalog's KindsOf). It must be safe for concurrent use.
type SchemaKinds func(name string) []schema.GVK

// WithSchemaKinds marks every schema the lookup knows with all of its
// kinds, as upstream's definitions carry them whatever document they are
// in (DeleteOptions lists every group-version); other schemas are marked
// with the kinds the document serves them as.
func WithSchemaKinds(k SchemaKinds) Option { return func(h *Handler) { h.schemaKinds = k } }

// WithoutLoopbackCompression serves the v2 document uncompressed to
// clients on the loopback interface (--compress-loopback-responses=false).
func WithoutLoopbackCompression() Option { return func(h *Handler) { h.noLoopbackGzip = true } }

// WithRemote adds to the v3 index the group-versions extension API
// servers serve: keys returns their index keys ("apis/<group>/<version>")
// per request, so it must be cheap and safe for concurrent use. Their
// documents are the servers' own, which the caller proxies; a key the
// registry serves is left to it.
func WithRemote(keys func() []string) Option { return func(h *Handler) { h.remote = keys } }

// WithCBOR advertises the CBOR media types on built-in resources'
// operations (the CBORServingAndStorage gate), as upstream's routes list
// every serializer of their group.
func WithCBOR() Option { return func(h *Handler) { h.cbor = true } }

// Handler serves /openapi/v3, /openapi/v3/<path> and /openapi/v2. Documents
// are built on the first request that needs them and kept until the
// registry's descriptors change, so creating a Handler costs nothing. It is
// safe for concurrent use.
type Handler struct {
	reg    *registry.Registry
	brand  config.Brand
	lookup Lookup
	kinds  KindLookup
	// schemaKinds is WithSchemaKinds.
	schemaKinds SchemaKinds
	// now is the clock for Last-Modified and Expires.
	now func() time.Time
	// noLoopbackGzip leaves responses to loopback clients uncompressed.
	noLoopbackGzip bool
	// cbor is WithCBOR.
	cbor bool
	// version is WithVersion; issuer is WithIssuerDiscovery.
	version bool
	issuer  *issuerPaths
	// remote is WithRemote.
	remote func() []string

	mu sync.Mutex
	v3 *v3Set
	v2 *v2Doc
	// index is what the last v3 index served was made of.
	index servedIndex
}

// servedIndex is what a served v3 index was made of, and its
// Last-Modified time.
type servedIndex struct {
	set      *v3Set
	remote   string
	modified time.Time
}

// New returns a Handler over reg, which stays owned by the caller and may
// gain descriptors at any time.
func New(reg *registry.Registry, b config.Brand, opts ...Option) *Handler {
	h := &Handler{reg: reg, brand: b, now: time.Now}
	for _, o := range opts {
		o(h)
	}
	return h
}

// URL paths served.
const (
	pathV3       = "/openapi/v3"
	pathV3Prefix = "/openapi/v3/"
	pathV2       = "/openapi/v2"
)

// ServeHTTP routes an OpenAPI request; other paths get the plain-text 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	switch p := r.URL.Path; {
	case p == pathV3 || p == pathV3Prefix:
		h.serveIndex(w, r)
	case strings.HasPrefix(p, pathV3Prefix):
		h.serveV3(w, r, strings.TrimSuffix(p[len(pathV3Prefix):], "/"))
	case p == pathV2:
		h.serveV2(w, r)
	default:
		http.NotFound(w, r)
	}
}

// currentV3 returns the v3 documents of the registry as it is now.
func (h *Handler) currentV3() *v3Set {
	gen := h.reg.Generation()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.v3 == nil || h.v3.state.Generation != gen {
		var prev time.Time
		if h.v3 != nil {
			prev = h.v3.modified
		}
		g := h.newGenerator()
		h.v3 = buildV3(h.reg.Snapshot(), g, g.endpointDocs(h), h.rebuiltAt(prev))
	}
	return h.v3
}

// indexModified is the Last-Modified time of the v3 index of set with
// the remote keys: set's time, moved on (rebuiltAt) whenever the set or
// the keys differ from the last index served, so that a client
// revalidating the index sees a group-version an extension server began
// or stopped serving.
func (h *Handler) indexModified(set *v3Set, keys []string) time.Time {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	remote := strings.Join(keys, "\n")
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.index.set == nil:
		h.index = servedIndex{set: set, remote: remote, modified: set.modified}
	case h.index.set != set || h.index.remote != remote:
		modified := h.rebuiltAt(h.index.modified)
		if set.modified.After(modified) {
			modified = set.modified
		}
		h.index = servedIndex{set: set, remote: remote, modified: modified}
	}
	return h.index.modified
}

// rebuiltAt is the Last-Modified time of documents rebuilt after ones
// stamped prev: now, but a whole second after prev at least. HTTP dates
// count seconds, and the v3 index has no ETag: a client revalidating it
// with If-Modified-Since must not be told a document rebuilt within the
// same second is unchanged.
func (h *Handler) rebuiltAt(prev time.Time) time.Time {
	now := h.now()
	if next := prev.Truncate(time.Second).Add(time.Second); !prev.IsZero() && now.Before(next) {
		return next
	}
	return now
}

// currentV2 returns the v2 document of the registry as it is now.
func (h *Handler) currentV2() *v2Doc {
	gen := h.reg.Generation()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.v2 == nil || h.v2.state.Generation != gen {
		var prev time.Time
		if h.v2 != nil {
			prev = h.v2.modified
		}
		g := h.newGenerator()
		h.v2 = &v2Doc{servedDoc: buildV2(h.reg.Snapshot(), g, g.endpointDocs(h), h.rebuiltAt(prev))}
	}
	return h.v2
}
