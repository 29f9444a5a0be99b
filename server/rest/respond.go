package rest

import (
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strconv"
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
)

const (
	mediaJSON = "application/json"
	mediaYAML = "application/yaml"
)

// producedTypes are the media types resource endpoints can write.
func (h *Handler) producedTypes() []string {
	return []string{mediaJSON, mediaYAML, h.brand.ProtobufMediaType}
}

// producedWatchTypes are the media types of a watch stream.
func (h *Handler) producedWatchTypes() []string {
	return []string{mediaJSON + ";stream=watch", h.brand.ProtobufMediaType + ";stream=watch"}
}

// output is the negotiated encoding of one response.
type output struct {
	format format
	pretty bool
}

// negotiate picks the response encoding from Accept; a nil error output is
// always usable.
func (h *Handler) negotiate(r *http.Request, watch bool) (output, error) {
	accept := r.Header.Get("Accept")
	pretty := func(params map[string]string) bool {
		return codec.WantPretty(r.URL.Query(), r.UserAgent(), params)
	}
	if accept == "" {
		return output{format: formatJSON, pretty: pretty(nil) && !watch}, nil
	}
	produced := h.producedTypes()
	if watch {
		produced = append(produced, h.producedWatchTypes()...)
	}
	if !codec.RouterAcceptable(accept, produced) {
		return output{}, routerNotAcceptable(produced)
	}
	for _, m := range codec.ParseAccept(accept) {
		if _, ok := m.Params["as"]; ok {
			continue
		}
		if s, ok := m.Params["stream"]; ok && s != "watch" {
			continue
		}
		t := strings.ToLower(m.Type + "/" + m.Subtype)
		switch t {
		case "*/*", "application/*", mediaJSON:
			return output{format: formatJSON, pretty: pretty(m.Params) && !watch}, nil
		case mediaYAML:
			if watch {
				continue
			}
			return output{format: formatYAML}, nil
		case h.brand.ProtobufMediaType:
			return output{format: formatProtobuf}, nil
		}
	}
	if watch {
		return output{format: formatYAML}, apierr.NotAcceptable("only the following media types are accepted: "+strings.Join(h.producedWatchTypes(), ", "), nil)
	}
	return output{}, apierr.NotAcceptable("only the following media types are accepted: "+strings.Join(h.producedTypes(), ", "), nil)
}

// routerNotAcceptable is the 406 of an Accept header no produced type
// matches at all.
func routerNotAcceptable(produced []string) error {
	return apierr.NotAcceptable("406: Not Acceptable\n\nAvailable representations: "+strings.Join(produced, ", "), &apierr.Details{})
}

// writeBody writes a compact JSON body in the negotiated encoding; d is the
// addressed resource (nil when the body can only be a Status).
func (hd *Handler) writeBody(w http.ResponseWriter, r *http.Request, out output, code int, body []byte, d *registry.Descriptor) {
	h := w.Header()
	switch out.format {
	case formatProtobuf:
		pb, err := protobufBody(d, body)
		if err != nil {
			hd.log.Error("protobuf encoding failed", "err", err)
			out.format = formatJSON
			hd.writeBody(w, r, out, http.StatusInternalServerError, mustJSON(apierr.InternalError(err).Status), nil)
			return
		}
		h.Set("Content-Type", hd.brand.ProtobufMediaType)
		body = pb
	case formatYAML:
		y, err := codec.JSONToYAML(body)
		if err != nil {
			hd.writeError(w, r, apierr.InternalError(err))
			return
		}
		h.Set("Content-Type", mediaYAML)
		body = y
	default:
		h.Set("Content-Type", mediaJSON)
		if out.pretty {
			body = codec.Indent(make([]byte, 0, len(body)+len(body)/2), trimNewline(body))
		} else if len(body) == 0 || body[len(body)-1] != '\n' {
			body = append(body, '\n')
		}
	}
	gw, finish := gzipWriter(w, r)
	if gw == w {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	gw.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = gw.Write(body)
	}
	if err := finish(); err != nil {
		slog.Debug("response write failed", "err", err)
	}
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	return b
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// writeError writes err as a Status negotiated to the request's Accept.
// Errors that cannot be negotiated themselves are written as indented JSON.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	se := apierr.FromError(err)
	body, _ := json.Marshal(se.Status)
	info := requestWatch(r)
	out, nerr := h.negotiate(r, info)
	if nerr != nil {
		if se.Status.Reason == apierr.ReasonNotAcceptable && info {
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
	h.writeBody(w, r, out, code, body, nil)
}

// WriteError writes err as a Status, for the layers outside this package
// (filters, routes).
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	h.writeError(w, r, err)
}

func requestWatch(r *http.Request) bool {
	q := r.URL.Query()
	v := q.Get("watch")
	return v == "1" || v == "true" || strings.Contains(r.URL.Path, "/watch/")
}

// gzipWriter wraps w for compression as codec.GzipWriter decides, except
// for clients on the loopback interface: there compression only burns CPU
// on both ends of a connection that costs nothing to fill, and the CPU is
// shared by both.
func gzipWriter(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func() error) {
	if isLoopback(r.RemoteAddr) {
		return w, func() error { return nil }
	}
	return codec.GzipWriter(w, r)
}

// isLoopback reports whether a RemoteAddr ("ip:port") is a loopback address.
func isLoopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
