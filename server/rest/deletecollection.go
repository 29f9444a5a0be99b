package rest

import (
	"errors"
	"net/http"
	"strconv"

	"platd/bolt"
	"platd/server/apierr"
)

// deleteCollection serves DELETE of a collection: every selected object is
// deleted as a single DELETE would, and the list of them is returned.
func (h *Handler) deleteCollection(w http.ResponseWriter, r *http.Request, s *scope) {
	out, err := h.negotiate(r, false)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	lo, err := h.parseListOptions(r.URL.Query(), false)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	pred, err := parsePredicate(s.d, lo.labelSelector, lo.fieldSelector)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	o, dry, err := h.parseDeleteOptions(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	opts := bolt.ListOptions{}
	if !pred.empty() {
		opts.Filter = func(kv *bolt.KV) bool { return pred.matchesStored(kv.Value) }
	}
	res, err := h.store.List(s.prefix(), opts)
	if err != nil {
		h.writeError(w, r, apierr.InternalError(err))
		return
	}
	b := typePrefix(nil, s.d.ListKind, s.d.GroupVersion())
	b = append(b, `"metadata":{"resourceVersion":"`...)
	b = strconv.AppendInt(b, res.Revision, 10)
	b = append(b, `"},"items":[`...)
	n := 0
	for _, kv := range res.Items {
		obj, err := decodeStored(s.d, kv.Value)
		if err != nil {
			h.writeError(w, r, apierr.InternalError(err))
			return
		}
		ns, name := metaString(obj, "namespace"), metaString(obj, "name")
		dr, err := h.deleteObject(r.Context(), s.d, s, ns, name, o, dry)
		if err != nil {
			if apierr.Code(err) == http.StatusNotFound || errors.Is(err, bolt.ErrNotFound) {
				continue
			}
			h.writeError(w, r, err)
			return
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		if dr.removed {
			b = append(b, kv.Value...)
		} else {
			// A marked object is listed in its new state, without the
			// kind/apiVersion prefix list items do not carry.
			b = append(b, '{')
			b = append(b, dr.body[len(typePrefix(nil, s.d.Kind, s.d.GroupVersion())):]...)
		}
	}
	b = append(b, "]}\n"...)
	h.writeBody(w, r, out, http.StatusOK, b, s.d)
}
