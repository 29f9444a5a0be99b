// Package discovery serves the API discovery documents derived from the
// registry: the legacy /api and /apis trees, aggregated discovery
// (apidiscovery v2 and v2beta1) and /version.
package discovery

import (
	"net/http"
	"net/netip"
	"strings"
	"sync"

	"platd/codec"
	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

// Options configures a Handler.
type Options struct {
	// Version is what /version reports.
	Version VersionInfo
	// Pretty decides whether a JSON response is indented. Nil means the
	// server's usual rule (pretty query parameter, then the User-Agent).
	Pretty func(r *http.Request) bool
	// ServerAddress is the serverAddress APIVersions reports for
	// 0.0.0.0/0, every client: the advertised address and the serving
	// port. Empty means the request's Host.
	ServerAddress string
	// ServiceCIDR, when valid, is the service range, and ServiceAddress
	// the API Service's cluster IP and port: a client whose address is
	// in the range is told that address as well, as upstream tells it.
	ServiceCIDR    netip.Prefix
	ServiceAddress string
	// Remote, when set, returns the group-versions APIServices hand to
	// extension servers; it is called per request, so it must be cheap.
	Remote func() []RemoteGroupVersion
	// Schema returns the schema called name, with the brand's spelling,
	// of the built-in types: the documents' protobuf form follows the
	// schemas of their kinds. Nil serves no protobuf (a 500 when asked).
	Schema func(name string) *schema.Schema
}

// Handler serves /api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>
// and /version. It is safe for concurrent use; documents are rebuilt when
// the registry's set of descriptors changes.
type Handler struct {
	reg   *registry.Registry
	brand config.Brand
	opts  Options

	mu   sync.Mutex
	snap *snapshot
}

// New returns a Handler over reg. reg stays owned by the caller and may gain
// descriptors at any time.
func New(reg *registry.Registry, b config.Brand, opts Options) *Handler {
	return &Handler{reg: reg, brand: b, opts: opts}
}

// ServeHTTP routes a discovery request. Paths it does not know, and groups
// or versions the registry does not serve, get the plain-text 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeStatus(w, errMethodNotAllowed())
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	if path == "/version" {
		h.serveVersion(w)
		return
	}
	s := h.current()
	switch {
	case path == "/api":
		h.serveAPI(w, r, s)
	case path == "/apis":
		h.serveAPIs(w, r, s)
	case strings.HasPrefix(path, "/api/"):
		rest := path[len("/api/"):]
		h.serveResourceList(w, r, s, "", rest)
	case strings.HasPrefix(path, "/apis/"):
		group, version, hasVersion := strings.Cut(path[len("/apis/"):], "/")
		if !hasVersion {
			h.serveGroup(w, r, s, group)
			return
		}
		h.serveResourceList(w, r, s, group, version)
	default:
		http.NotFound(w, r)
	}
}

// wantPretty applies Options.Pretty or the default rule.
func (h *Handler) wantPretty(r *http.Request) bool {
	if h.opts.Pretty != nil {
		return h.opts.Pretty(r)
	}
	return codec.WantPretty(r.URL.Query(), r.UserAgent(), nil)
}

// current returns the documents for the registry as it is now, rebuilding
// them when a descriptor was added or replaced, or the remote
// group-versions changed, since the last call.
func (h *Handler) current() *snapshot {
	gen := h.reg.Generation()
	var remote []RemoteGroupVersion
	if h.opts.Remote != nil {
		remote = h.opts.Remote()
	}
	key := remoteKey(remote)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.snap == nil || h.snap.state.Generation != gen || h.snap.remoteKey != key {
		h.snap = buildSnapshot(h.reg.Snapshot(), h.brand, remote, h.reg.PriorityOf)
		h.snap.remoteKey = key
	}
	return h.snap
}
