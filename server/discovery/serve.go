package discovery

import (
	"net/http"
	"net/netip"

	"platd/codec"
	"platd/server/audit"
)

// Response headers of discovery.
const (
	headerContentType  = "Content-Type"
	headerETag         = "ETag"
	headerVary         = "Vary"
	headerCacheControl = "Cache-Control"
	headerIfNoneMatch  = "If-None-Match"
	// aggregatedCacheControl lets shared caches keep aggregated documents;
	// clients revalidate them with If-None-Match.
	aggregatedCacheControl = "public"
)

// negotiate picks the representation r asks for.
func (h *Handler) negotiate(r *http.Request, aggregated bool) outcome {
	return negotiate(r.Header.Get("Accept"), aggregated, h.brand.DiscoveryGroup(), h.brand.ProtobufMediaType)
}

func (h *Handler) serveAPI(w http.ResponseWriter, r *http.Request, s *snapshot) {
	o := h.negotiate(r, true)
	if o.format == formatAggregated {
		h.serveAggregated(w, r, s.aggregatedAPI, o)
		return
	}
	h.writeLegacy(w, r, o, mustMarshal(newAPIVersions(s.coreVersions, h.serverAddresses(r))))
}

// serverAddresses are where APIVersions tells the client of r to reach the
// server, as upstream: ServerAddress for every client, then ServiceAddress
// when the client's address (the first one X-Forwarded-For, X-Real-Ip or
// the connection names) is in the service range.
func (h *Handler) serverAddresses(r *http.Request) []serverAddressByClientCIDR {
	addr := h.opts.ServerAddress
	if addr == "" {
		addr = r.Host
	}
	out := []serverAddressByClientCIDR{{ClientCIDR: allClientsCIDR, ServerAddress: addr}}
	cidr := h.opts.ServiceCIDR
	if !cidr.IsValid() || h.opts.ServiceAddress == "" {
		return out
	}
	if ips := audit.SourceIPs(r); len(ips) > 0 {
		if ip, err := netip.ParseAddr(ips[0]); err == nil && cidr.Contains(ip.Unmap()) {
			out = append(out, serverAddressByClientCIDR{ClientCIDR: cidr.Masked().String(), ServerAddress: h.opts.ServiceAddress})
		}
	}
	return out
}

func (h *Handler) serveAPIs(w http.ResponseWriter, r *http.Request, s *snapshot) {
	o := h.negotiate(r, true)
	if o.format == formatAggregated {
		h.serveAggregated(w, r, s.aggregatedAll, o)
		return
	}
	h.writeLegacy(w, r, o, s.groupList)
}

func (h *Handler) serveGroup(w http.ResponseWriter, r *http.Request, s *snapshot, group string) {
	body, ok := s.groups[group]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.writeLegacy(w, r, h.negotiate(r, false), body)
}

func (h *Handler) serveResourceList(w http.ResponseWriter, r *http.Request, s *snapshot, group, version string) {
	body, ok := s.resourceLists[group][version]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.writeLegacy(w, r, h.negotiate(r, false), body)
}

// serveAggregated answers with the aggregated document: 304 when the
// client's If-None-Match names the current ETag.
func (h *Handler) serveAggregated(w http.ResponseWriter, r *http.Request, doc aggregatedDoc, o outcome) {
	media := mediaJSON
	if o.protobuf {
		media = h.brand.ProtobufMediaType
	}
	hdr := w.Header()
	hdr.Set(headerContentType, media+";"+paramGroup+"="+h.brand.DiscoveryGroup()+";"+
		paramVersion+"="+o.version+";"+paramAs+"="+aggregatedAs)
	// The ETag is the JSON document's whatever the encoding, as
	// upstream's: Vary tells caches apart.
	hdr.Set(headerETag, doc.etag)
	hdr.Set(headerVary, "Accept")
	hdr.Set(headerCacheControl, aggregatedCacheControl)
	if r.Header.Get(headerIfNoneMatch) == doc.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if o.protobuf {
		h.writeProtobuf(w, r, doc.bodies[o.version], h.aggregatedSchema(o.version))
		return
	}
	h.writeJSON(w, r, o, doc.bodies[o.version])
}

// writeLegacy writes a legacy document (compact JSON) as o asks.
func (h *Handler) writeLegacy(w http.ResponseWriter, r *http.Request, o outcome, compact []byte) {
	switch o.format {
	case formatYAML:
		y, err := codec.JSONToYAML(compact)
		if err != nil {
			writeStatus(w, errInternal(err))
			return
		}
		w.Header().Set(headerContentType, mediaYAML)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(y)
	case formatJSON:
		w.Header().Set(headerContentType, mediaJSON)
		h.writeJSON(w, r, o, compact)
	case formatProtobuf:
		w.Header().Set(headerContentType, h.brand.ProtobufMediaType)
		h.writeProtobuf(w, r, compact, h.metaSchema(compact))
	default:
		writeStatus(w, errNotAcceptable(h.brand.ProtobufMediaType))
	}
}

// writeJSON writes compact as the body: indented without a trailing
// newline when pretty output is wanted, else compact with one, as the
// server's JSON encoder does. The Content-Type must already be set.
func (h *Handler) writeJSON(w http.ResponseWriter, r *http.Request, o outcome, compact []byte) {
	var body []byte
	if o.params["pretty"] == "1" || h.wantPretty(r) {
		body = codec.Indent(nil, compact)
	} else {
		body = append(append(make([]byte, 0, len(compact)+1), compact...), '\n')
	}
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
