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
	default:
		h.writeError(w, r, apierr.MethodNotAllowed())
	}
}

// serveNoNode answers the subresources that need a node (logs, exec,
// attach, port forwarding, proxies): the object must exist, and then the
// answer says that platd runs none.
func (h *Handler) serveNoNode(w http.ResponseWriter, r *http.Request, s *scope) {
	if _, err := h.store.Get(s.key()); err != nil {
		h.writeError(w, r, objectErr(s, s.name, err))
		return
	}
	h.writeError(w, r, apierr.ServiceUnavailable(fmt.Sprintf(
		"%s/%s of %q is not available: platd runs no nodes, so there is no kubelet or node network to serve it", s.d.GroupResource(), s.sub, s.name), 0))
}

// subresourceKind is the apiVersion and kind a subresource answers with.
func subresourceKind(d *registry.Descriptor, sub *registry.Subresource) (apiVersion, kind string) {
	if sub.Kind == "" {
		return d.GroupVersion(), d.Kind
	}
	if sub.Group == "" {
		return sub.Version, sub.Kind
	}
	return sub.Group + "/" + sub.Version, sub.Kind
}

// successStatus is the body of an action that creates nothing it could
// return (a binding, an eviction).
func successStatus(code int) *apierr.Status {
	return &apierr.Status{Kind: "Status", APIVersion: "v1", Status: apierr.StatusSuccess, Code: int32(code)}
}

// decodeKind decodes a request body of a kind that is not a resource
// (Binding, Eviction, Scale) with the schema Kinds gives it.
func (h *Handler) decodeKind(r *http.Request, apiVersion, kind string) (Object, error) {
	group, version := "", apiVersion
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		group, version = apiVersion[:i], apiVersion[i+1:]
	}
	sch := h.kind(group, version, kind)
	if sch == nil {
		return nil, apierr.InternalError(fmt.Errorf("no schema for %s %s", apiVersion, kind))
	}
	d := &registry.Descriptor{Group: group, Version: version, Kind: kind, Schema: sch}
	dec, err := h.decodeBody(r, &scope{d: d}, writeOptions{fieldValidation: validationIgnore})
	if err != nil {
		return nil, err
	}
	return dec.obj, nil
}
