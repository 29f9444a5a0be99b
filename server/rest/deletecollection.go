package rest

import (
	"net/http"

	"platd/server/apierr"
)

// deleteCollection serves DELETE of a collection: every selected object
// (of one page, when the request sets a limit) is deleted as a single
// DELETE would, and the list of them is returned.
func (h *Handler) deleteCollection(w http.ResponseWriter, r *http.Request, s *scope) {
	out, err := h.negotiateFor(r, s.d, false)
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
	if o.unsafe() && h.unsafeDelete {
		h.writeError(w, r, h.optionsInvalid(kindDeleteOptions,
			apierr.Invalid(paramIgnoreStoreReadError, true, "is not allowed with DELETECOLLECTION, try again after removing the option")))
		return
	}
	// Upstream lists what it deletes with the request's list options: a
	// resourceVersion fails here as it fails a list, and with a limit
	// one page is deleted, its continue token returned for the next.
	plan, err := h.planList(r, s, lo)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	warnOrphaning(w, r, s.d, o)
	rd, err := h.newRenderer(r, s.d, out)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := h.readPage(s, pred, plan)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	// Each item is deleted as a single DELETE would delete it, an item
	// gone meanwhile (or refused as not found) skipped; the answer lists
	// the items as they were listed, as upstream's does.
	s.collectionItem = true
	for _, kv := range res.Items {
		ns, name, ok := s.d.SplitKey(kv.Key)
		if !ok {
			continue
		}
		if _, err := h.deleteObject(r.Context(), s, ns, name, o, dry); err != nil {
			if apierr.Code(h.toStatus(err)) == http.StatusNotFound {
				continue
			}
			addWarnings(r.Context(), w, s.warnings)
			h.writeError(w, r, err)
			return
		}
	}
	addWarnings(r.Context(), w, s.warnings)
	if out.as == asMetadata {
		out.as = asMetadataList
	}
	rd.out = out
	body, err := rd.list(h.pageMeta(s, pred, plan, res), res.Items)
	if err != nil {
		h.writeError(w, r, internalErr(err))
		return
	}
	h.writeRendered(w, r, out, http.StatusOK, s.d.Schema, true, body)
}
