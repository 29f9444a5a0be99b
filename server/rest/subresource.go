package rest

import (
	"fmt"
	"net/http"
	"strings"

	"platd/server/apierr"
	"platd/server/registry"
)

// serveSpecial serves the resources and subresources whose objects are
// not plain stored objects: scale, binding, eviction, the node-only
// subresources and computed resources.
func (h *Handler) serveSpecial(w http.ResponseWriter, r *http.Request, s *scope) {
	if s.d.Computed != nil {
		h.serveComputed(w, r, s)
		return
	}
	switch s.serve() {
	case registry.ServeScale:
		h.serveScale(w, r, s)
	case registry.ServeBind:
		h.serveBind(w, r, s)
	case registry.ServeEvict:
		h.serveEvict(w, r, s)
	case registry.ServeNoNode:
		h.serveNoNode(w, r, s)
	case registry.ServeAnswer:
		h.serveAnswer(w, r, s)
	default:
		h.writeError(w, r, apierr.MethodNotAllowed())
	}
}

// serveNoNode answers the subresources that need a node (logs, exec,
// attach, port forwarding, proxies): a connect passes the mutating and
// the policy admission first, as upstream's connects do; the object must
// exist, and then the answer says that platd runs none.
func (h *Handler) serveNoNode(w http.ResponseWriter, r *http.Request, s *scope) {
	if sr := s.d.Subresource(s.sub); sr != nil && len(sr.Connect) > 0 {
		if err := h.admitConnect(w, r, s, sr); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	if sr := s.d.Subresource(s.sub); sr != nil && sr.Proxy {
		name, ok := proxiedName(s.name)
		if !ok {
			h.writeError(w, r, apierr.BadRequest(fmt.Sprintf("invalid %s request %q", s.d.Kind, s.name)))
			return
		}
		s = &scope{d: s.d, info: s.info, ns: s.ns, name: name, sub: s.sub}
	}
	if _, err := h.store.Get(s.key()); err != nil {
		h.writeError(w, r, objectErr(s, s.name, err))
		return
	}
	h.writeError(w, r, apierr.ServiceUnavailable(fmt.Sprintf(
		"%s/%s of %q is not available: platd runs no nodes, so there is no kubelet or node network to serve it", s.d.GroupResource(), s.sub, s.name), 0))
}

// proxiedName returns the object's name of a proxy URL's name segment:
// "name", "name:port" or "scheme:name:port" with scheme http or https.
func proxiedName(id string) (string, bool) {
	parts := strings.Split(id, ":")
	switch len(parts) {
	case 1, 2:
		return parts[0], parts[0] != ""
	case 3:
		switch parts[0] {
		case "", "http", "https":
			return parts[1], parts[1] != ""
		}
	}
	return "", false
}

// successStatus is the body of an action that creates nothing it could
// return (a binding, an eviction).
func successStatus(code int) *apierr.Status {
	return &apierr.Status{Kind: "Status", APIVersion: "v1", Status: apierr.StatusSuccess, Code: int32(code)}
}

// decodeKind decodes a request body of a kind that is not a resource
// (Binding, Eviction, Scale) with the schema Kinds gives it; the body may
// name one of also's apiVersions instead, of the same shape.
func (h *Handler) decodeKind(r *http.Request, apiVersion, kind string, also []string) (Object, error) {
	group, version := "", apiVersion
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		group, version = apiVersion[:i], apiVersion[i+1:]
	}
	sch := h.kind(group, version, kind)
	if sch == nil {
		return nil, apierr.InternalError(fmt.Errorf("no schema for %s %s", apiVersion, kind))
	}
	d := &registry.Descriptor{Group: group, Version: version, Kind: kind, Schema: sch}
	dec, err := h.decodeBody(r, &scope{d: d, alsoAccepts: also}, writeOptions{fieldValidation: validationIgnore})
	if err != nil {
		return nil, err
	}
	return dec.obj, nil
}
