// Package rest serves the resource verbs (get, list, watch, create, update,
// patch, delete, deletecollection) for every registered descriptor.
package rest

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"platd/bolt"
	"platd/config"
	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/request"
	"platd/server/schema"
)

// tooLargeResourceVersionWait is how long a read asking for a revision the
// store has not reached yet waits before answering 504: long enough to
// cover a write in flight, short enough that a confused client learns
// quickly (the upstream watch cache waits the same 3 s).
const tooLargeResourceVersionWait = 3 * time.Second

// maxBodyBytes is the largest request body accepted, as upstream.
const maxBodyBytes = 3 << 20

// Handler serves resource requests. It is safe for concurrent use.
type Handler struct {
	store Storage
	reg   *registry.Registry
	brand config.Brand
	log   *slog.Logger
	now   func() time.Time
	// tooLargeWait is tooLargeResourceVersionWait, shortened in tests.
	tooLargeWait time.Duration
	// stamp writes a revision into stored bytes (the store's Stamper).
	stamp bolt.Stamper
	// bookmarkInterval is bookmarkInterval, shortened in tests.
	bookmarkInterval time.Duration
	// shutdown is closed when the server stops: open watches end.
	shutdown <-chan struct{}
	// kinds looks up the schema of a kind that is not a served resource
	// (DeleteOptions, Scale, Binding, Eviction).
	kinds func(group, version, kind string) *schema.Schema
	// events shares encoded watch events between watchers.
	events *eventCache
	// conversions shares the conversions of watch events between watchers.
	conversions *conversionCache
	// protos keeps the protobuf messages of listed objects.
	protos *protoCache
	// reads keeps the served forms the in-process reads decoded.
	reads readCache
	// storageProbe checks the storage for component statuses.
	storageProbe registry.Probe
	// fieldMgrs are the field managers of the resources written so far.
	fieldMgrs fieldManagers
	// answers are the kinds answering subresources reply with.
	answers answerKinds
	// noWatchList is Config.WatchListDisabled.
	noWatchList bool
	// compression is Config.Compression.
	compression Compression
	// cbor is Config.CBOR.
	cbor bool
	// watchEvents is Config.WatchEvents.
	watchEvents func(group, version, kind string) EventCounter
	// requestedDeprecated is Config.RequestedDeprecated.
	requestedDeprecated func(group, version, resource, subresource, removedRelease string)
	// unsafeDelete and authz are Config.UnsafeDelete and Config.Authorizer.
	unsafeDelete bool
	authz        security.Authorizer
	// keyPrefix is Config.KeyPrefix.
	keyPrefix string
	// policies and mutating are Config.Policies and Config.Mutating.
	policies PolicyAdmission
	mutating MutatingAdmission
	// admission says which of the handler's own admission plugins run.
	admission config.AdmissionPluginsOff
}

// Compression says which get and list responses may be gzip-compressed
// (codec.GzipWriter decides from the request and the size).
type Compression uint8

const (
	// CompressAll compresses for every client that asks, as upstream with
	// the APIResponseCompression gate on.
	CompressAll Compression = iota
	// CompressRemote leaves responses to loopback clients as they are
	// (--compress-loopback-responses=false).
	CompressRemote
	// CompressNone never compresses (the gate off).
	CompressNone
)

// Config is what a Handler needs.
type Config struct {
	Store    Storage
	Registry *registry.Registry
	Brand    config.Brand
	Log      *slog.Logger
	// Shutdown is closed when the server starts shutting down: open
	// watches end.
	Shutdown <-chan struct{}
	// TooLargeWait overrides the too-large-resourceVersion wait (tests).
	TooLargeWait time.Duration
	// BookmarkInterval overrides the period of watch bookmarks (tests).
	BookmarkInterval time.Duration
	// Kinds looks up the schema of a kind by group, version and kind
	// (schema.Catalog.ByGVK); it describes the request and response kinds
	// that are not resources, such as DeleteOptions and Scale.
	Kinds func(group, version, kind string) *schema.Schema
	// StorageProbe checks the storage for the resources that report on
	// it (component statuses); nil reads the default namespace.
	StorageProbe registry.Probe
	// WatchListDisabled is the WatchList feature gate off: watches refuse
	// sendInitialEvents, so that clients fall back to list and watch.
	WatchListDisabled bool
	// Compression limits response compression; the zero value is
	// upstream's default.
	Compression Compression
	// CBOR is the CBORServingAndStorage feature gate: CBOR request and
	// response bodies and CBOR sequence watches are served.
	CBOR bool
	// WatchEvents, when set, returns what a watch of a kind counts its
	// events with (apiserver_watch_events_total and _sizes).
	WatchEvents func(group, version, kind string) EventCounter
	// RequestedDeprecated, when set, is told of each request to a
	// deprecated version (apiserver_requested_deprecated_apis);
	// removedRelease is "" when no removal is planned.
	RequestedDeprecated func(group, version, resource, subresource, removedRelease string)
	// UnsafeDelete is the AllowUnsafeMalformedObjectDeletion gate: DELETE
	// honours ignoreStoreReadErrorWithClusterBreakingPotential, and reads
	// of unreadable objects name their storage keys.
	UnsafeDelete bool
	// KeyPrefix is put before a storage key that an error names, which
	// upstream names as etcd holds it ("/registry/configmaps/ns/name").
	KeyPrefix string
	// Authorizer decides the extra verb an unsafe delete needs; nil
	// refuses every unsafe delete.
	Authorizer security.Authorizer
	// Admission says which of the admission plugins the handler runs
	// itself (NamespaceLifecycle, ResourceQuota, and those types name in
	// ForbidDeletePlugin) are on; the zero value is upstream's default.
	Admission config.AdmissionPluginsOff
	// Policies is the admission every create, update and delete of every
	// resource passes once it is valid (the ValidatingAdmissionPolicies
	// and validating webhooks); nil admits everything.
	Policies PolicyAdmission
	// Mutating is the mutating admission every create, update and
	// delete passes after the type's own (the mutating webhooks); nil
	// changes nothing.
	Mutating MutatingAdmission
}

// New returns a Handler.
func New(c Config) *Handler {
	h := &Handler{
		store: c.Store, reg: c.Registry, brand: c.Brand, log: c.Log,
		now: time.Now, tooLargeWait: tooLargeResourceVersionWait, stamp: Stamp, bookmarkInterval: bookmarkInterval,
		shutdown: c.Shutdown, kinds: c.Kinds, storageProbe: c.StorageProbe, noWatchList: c.WatchListDisabled,
		compression:         c.Compression,
		cbor:                c.CBOR,
		requestedDeprecated: c.RequestedDeprecated,
		watchEvents:         c.WatchEvents,
		unsafeDelete:        c.UnsafeDelete, authz: c.Authorizer, keyPrefix: c.KeyPrefix,
		policies: c.Policies, mutating: c.Mutating, admission: c.Admission,
	}
	h.protos = newProtoCache(c.Store, c.Shutdown)
	h.events = newEventCache()
	h.conversions = newConversionCache()
	if h.storageProbe == nil {
		h.storageProbe = h.probeStorage
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if c.TooLargeWait > 0 {
		h.tooLargeWait = c.TooLargeWait
	}
	if c.BookmarkInterval > 0 {
		h.bookmarkInterval = c.BookmarkInterval
	}
	return h
}

// scope is what one request addresses, resolved against its descriptor.
type scope struct {
	d    *registry.Descriptor
	info *request.Info
	// ns is the namespace of the addressed objects; "" for cluster-scoped
	// resources and all-namespaces lists.
	ns   string
	name string
	sub  string
	// manager is the field manager the write is recorded as; trackAs,
	// when set, the subresource it is recorded under (a scale writes the
	// main resource); applying says the write is a server-side apply,
	// whose merge records ownership itself.
	manager  string
	trackAs  string
	applying bool
	// warnings are what the type's Warnings and ValidateAdmission hooks
	// said of the write.
	warnings []string
	// generatedName says a create's name came from its generateName, so
	// a taken one may be generated again.
	generatedName bool
	// dryRun says an update will not be stored (admission is told).
	dryRun bool
	// admittedElsewhere says the write is part of a request admitted as
	// a whole (an eviction's deletion): the policies do not see it.
	admittedElsewhere bool
	// collectionItem says a deletion is one item of a deletecollection,
	// which admission sees as upstream's does: the item's old state
	// under the collection's empty name.
	collectionItem bool
	// options are the members of the write's options object as the
	// request gave them (writeOptions.given, deleteOptions.given), as
	// the policy admission sees them.
	options map[string]any
	// alsoAccepts are apiVersions besides the descriptor's that a request
	// body may name (registry.Subresource.AlsoAccepts).
	alsoAccepts []string
}

// acceptsVersion reports whether a request body naming apiVersion is
// decoded as s's kind: its own version, or one it also accepts.
func (s *scope) acceptsVersion(apiVersion string) bool {
	return apiVersion == "" || apiVersion == s.d.GroupVersion() || slices.Contains(s.alsoAccepts, apiVersion)
}

// ServeHTTP dispatches a resource request to its verb.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info := request.InfoFrom(r.Context())
	if info == nil {
		info = request.Parse(r.Method, r.URL)
	}
	if !info.IsResource || !h.reg.HasGroupVersion(info.Group, info.Version) {
		http.NotFound(w, r)
		return
	}
	// The proxy verb's path form names a route no v1.32 server has.
	if info.VerbFromPath && info.Verb == "proxy" {
		h.writeError(w, r, apierr.RouteNotFound())
		return
	}
	s, err := h.resolve(info)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if s.d.DeprecatedIn != "" || s.d.Deprecation != "" {
		h.deprecated(w, r, s)
	}
	if s.serve() != registry.ServeObject || s.d.Computed != nil {
		h.serveSpecial(w, r, s)
		return
	}
	switch info.Verb {
	case registry.VerbGet:
		h.get(w, r, s)
	case registry.VerbList:
		h.list(w, r, s)
	case registry.VerbWatch:
		h.watch(w, r, s)
	case registry.VerbCreate:
		h.create(w, r, s)
	case registry.VerbUpdate:
		h.update(w, r, s)
	case registry.VerbPatch:
		h.patch(w, r, s)
	case registry.VerbDelete:
		h.delete(w, r, s)
	case registry.VerbDeleteCollection:
		h.deleteCollection(w, r, s)
	default:
		h.writeError(w, r, apierr.MethodNotAllowed())
	}
}

// resolve checks the path shape against the descriptor and the verb.
func (h *Handler) resolve(info *request.Info) (*scope, error) {
	d := h.reg.Lookup(info.Group, info.Version, info.Resource)
	if d == nil {
		return nil, apierr.RouteNotFound()
	}
	s := &scope{d: d, info: info, name: info.Name, sub: info.Subresource}
	switch {
	case d.IsNamespace:
		// /api/v1/namespaces/<name>[/status|/finalize]: the "namespace" of
		// the path is the object's name.
	case d.Namespaced:
		s.ns = info.Namespace
		if s.ns == "" && (info.Name != "" && !info.NameFromSelector) {
			return nil, apierr.RouteNotFound()
		}
	default:
		if info.Namespace != "" {
			return nil, apierr.RouteNotFound()
		}
	}
	if s.sub != "" {
		sr := d.Subresource(s.sub)
		if sr == nil || (len(info.Parts) > 3 && !sr.Proxy) {
			return nil, apierr.RouteNotFound()
		}
		if !slices.Contains(sr.Verbs, info.Verb) {
			return nil, apierr.MethodNotAllowed()
		}
		return s, nil
	}
	if len(info.Parts) > 3 {
		return nil, apierr.RouteNotFound()
	}
	collection := info.Name == "" || info.NameFromSelector
	switch info.Verb {
	case registry.VerbCreate:
		if !collection {
			return nil, apierr.MethodNotAllowed()
		}
		if d.Namespaced && s.ns == "" && !d.IsNamespace {
			return nil, apierr.MethodNotAllowed()
		}
	case registry.VerbUpdate, registry.VerbPatch, registry.VerbDelete, registry.VerbGet:
		if collection {
			return nil, apierr.MethodNotAllowed()
		}
	case registry.VerbDeleteCollection:
		if d.Namespaced && s.ns == "" && !d.IsNamespace {
			return nil, apierr.MethodNotAllowed()
		}
	case registry.VerbList, registry.VerbWatch:
	default:
		return nil, apierr.MethodNotAllowed()
	}
	if !d.HasVerb(info.Verb) {
		return nil, apierr.MethodNotSupported(d.Group, d.Resource, info.Verb)
	}
	return s, nil
}

// kind returns the schema of a kind that is not a served resource, or nil.
func (h *Handler) kind(group, version, kind string) *schema.Schema {
	if h.kinds == nil {
		return nil
	}
	return h.kinds(group, version, kind)
}

// serve is how the addressed resource or subresource is served.
func (s *scope) serve() registry.Serve {
	if s.sub != "" {
		return s.d.Subresource(s.sub).Serve
	}
	return s.d.Serve
}

// key is the storage key of the addressed object.
func (s *scope) key() string { return s.d.Key(s.ns, s.name) }

// prefix is the storage prefix of the addressed collection.
func (s *scope) prefix() string { return s.d.Prefix(s.ns) }

// ProbeStorage checks the storage as component statuses report it (and
// the storage health check does): nil when it answers.
func (h *Handler) ProbeStorage(ctx context.Context) error { return h.storageProbe(ctx) }

// probeStorage reads the default namespace: the store answers when the
// read succeeds or finds nothing.
func (h *Handler) probeStorage(context.Context) error {
	nd := h.reg.Namespaces()
	if nd == nil {
		return nil
	}
	if _, err := h.store.Get(nd.Key("", "default")); err != nil && !errors.Is(err, bolt.ErrNotFound) {
		return err
	}
	return nil
}
