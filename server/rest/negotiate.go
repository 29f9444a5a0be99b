package rest

import (
	"net/http"
	"strings"

	"platd/codec"
	"platd/server/apierr"
	"platd/server/registry"
)

// Output formats a response can take.
type format int

const (
	formatJSON format = iota
	formatYAML
	formatProtobuf
	formatCBOR
)

const (
	mediaJSON = "application/json"
	mediaYAML = "application/yaml"
)

// target is the kind a response is converted to on request (the Accept
// parameter as=): the object itself, a Table, or its metadata alone.
type target int

const (
	asObject target = iota
	asTable
	asMetadata
	asMetadataList
)

// Conversion targets as Accept names them.
var targetNames = map[string]target{
	"Table":                     asTable,
	"PartialObjectMetadata":     asMetadata,
	"PartialObjectMetadataList": asMetadataList,
}

// Versions of the meta group the conversion targets exist in.
const (
	metaV1      = "v1"
	metaV1beta1 = "v1beta1"
)

// producedTypes are the media types resource endpoints can write, in
// upstream's serializer order (CBOR, when on, is registered last).
func (h *Handler) producedTypes() []string {
	if h.cbor {
		return []string{mediaJSON, mediaYAML, h.brand.ProtobufMediaType, codec.CBORMediaType}
	}
	return []string{mediaJSON, mediaYAML, h.brand.ProtobufMediaType}
}

// producedWatchTypes are the media types of a watch stream. A CBOR watch
// is a CBOR sequence, which has its own media type rather than the
// stream=watch parameter.
func (h *Handler) producedWatchTypes() []string {
	if h.cbor {
		return []string{mediaJSON + ";stream=watch", h.brand.ProtobufMediaType + ";stream=watch", codec.CBORSeqMediaType}
	}
	return []string{mediaJSON + ";stream=watch", h.brand.ProtobufMediaType + ";stream=watch"}
}

// textTypes are the media types of a type without a protobuf form
// (custom resources).
func (h *Handler) textTypes() []string {
	if h.cbor {
		return []string{mediaJSON, mediaYAML, codec.CBORMediaType}
	}
	return []string{mediaJSON, mediaYAML}
}

// output is the negotiated form of one response.
type output struct {
	format format
	pretty bool
	// as is the kind the response is converted to, in version asVersion of
	// the meta group.
	as        target
	asVersion string
}

// negotiate picks the response encoding and conversion from Accept;
// collection says whether the route is a collection's (list or watch),
// whose router stage also offers the watch media types. A nil error
// output is always usable.
func (h *Handler) negotiate(r *http.Request, watch bool) (output, error) {
	return h.negotiateFor(r, nil, watch)
}

// negotiateFor is negotiate for a response of d's objects: a type without
// a protobuf form (custom resources) is served in JSON or YAML only, but
// as object metadata.
func (h *Handler) negotiateFor(r *http.Request, d *registry.Descriptor, watch bool) (output, error) {
	protobuf := d == nil || d.Schema == nil || d.Schema.ProtoMessage != ""
	accept := r.Header.Get("Accept")
	pretty := func(params map[string]string) bool {
		return codec.WantPretty(r.URL.Query(), r.UserAgent(), params)
	}
	if accept == "" {
		return output{format: formatJSON, pretty: pretty(nil) && !watch}, nil
	}
	produced := h.producedTypes()
	if collectionRead(r) {
		produced = append(produced, h.producedWatchTypes()...)
	}
	if !codec.RouterAcceptable(accept, produced) {
		return output{}, routerNotAcceptable(produced)
	}
	for _, m := range codec.ParseAccept(accept) {
		if s, ok := m.Params["stream"]; ok && s != "watch" {
			continue
		}
		var f format
		switch strings.ToLower(m.Type + "/" + m.Subtype) {
		case "*/*", "application/*", mediaJSON:
			f = formatJSON
		case mediaYAML:
			if watch {
				continue
			}
			f = formatYAML
		case strings.ToLower(h.brand.ProtobufMediaType):
			if !protobuf && m.Params["as"] == "" {
				continue
			}
			f = formatProtobuf
		case codec.CBORMediaType:
			if !h.cbor {
				continue
			}
			f = formatCBOR
		default:
			continue
		}
		out := output{format: f, pretty: f == formatJSON && pretty(m.Params) && !watch}
		if as, ok := m.Params["as"]; ok {
			if !h.conversionTarget(&out, as, m.Params) {
				continue
			}
		}
		return out, nil
	}
	if watch {
		return output{format: formatYAML}, apierr.NotAcceptable("only the following media types are accepted: "+strings.Join(h.producedWatchTypes(), ", "), nil)
	}
	if !protobuf {
		return output{}, apierr.NotAcceptable("only the following media types are accepted: "+strings.Join(h.textTypes(), ", "), nil)
	}
	return output{}, apierr.NotAcceptable("only the following media types are accepted: "+strings.Join(h.producedTypes(), ", "), nil)
}

// conversionTarget fills out's conversion from an Accept clause's as, g and
// v parameters and reports whether the server can produce it in out's
// format: Tables in JSON and YAML only (upstream's rule, which predates
// CBOR and was not widened for it), metadata in every format.
func (h *Handler) conversionTarget(out *output, as string, params map[string]string) bool {
	t, ok := targetNames[as]
	if !ok || params["g"] != h.brand.MetaGroup() {
		return false
	}
	switch v := params["v"]; v {
	case metaV1, metaV1beta1:
		out.asVersion = v
	default:
		return false
	}
	if t == asTable && (out.format == formatProtobuf || out.format == formatCBOR) {
		return false
	}
	out.as = t
	return true
}

// collectionRead reports whether r reads a collection (list or watch),
// whose routes also produce the watch media types.
func collectionRead(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	info := requestInfo(r)
	return info != nil && (info.Name == "" || info.NameFromSelector) && info.Subresource == ""
}

// routerNotAcceptable is the 406 of an Accept header no produced type
// matches at all.
func routerNotAcceptable(produced []string) error {
	return apierr.NotAcceptable("406: Not Acceptable\n\nAvailable representations: "+strings.Join(produced, ", "), &apierr.Details{})
}
