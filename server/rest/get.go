package rest

import (
	"net/http"
)

// get serves GET of one object (or of its status subresource, which is the
// same object).
func (h *Handler) get(w http.ResponseWriter, r *http.Request, s *scope) {
	out, err := h.negotiateFor(r, s.d, false)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	rv, err := parseResourceVersionCached(r.URL.Query().Get("resourceVersion"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := h.waitForRevision(r.Context(), rv); err != nil {
		h.writeError(w, r, err)
		return
	}
	kv, err := h.store.Get(s.key())
	if err != nil {
		h.writeError(w, r, objectErr(s, s.name, err))
		return
	}
	h.writeObject(w, r, out, http.StatusOK, s.d, kv.Value)
}
