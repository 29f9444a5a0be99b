package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"platd/bolt"
	"platd/server/apierr"
)

// get serves GET of one object (or of its status subresource, which is the
// same object).
func (h *Handler) get(w http.ResponseWriter, r *http.Request, s *scope) {
	out, err := h.negotiate(r, false)
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
		h.writeError(w, r, h.storeError(s, err))
		return
	}
	h.writeBody(w, r, out, http.StatusOK, objectJSON(make([]byte, 0, len(kv.Value)+64), s.d, kv.Value), s.d)
}

// waitForRevision waits until the store has reached rev, or answers the
// upstream 504 "Too large resource version" after tooLargeWait.
func (h *Handler) waitForRevision(ctx context.Context, rev int64) error {
	if rev <= h.store.Revision() {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, h.tooLargeWait)
	defer cancel()
	if err := h.store.WaitForRevision(wctx, rev); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return tooLargeResourceVersion(rev, h.store.Revision())
	}
	return nil
}

func tooLargeResourceVersion(rev, current int64) error {
	return apierr.Timeout(fmt.Sprintf("Too large resource version: %d, current: %d", rev, current), 1,
		apierr.Cause{Type: "ResourceVersionTooLarge", Message: "Too large resource version"})
}

// storeError maps a storage error on the addressed object to its Status.
func (h *Handler) storeError(s *scope, err error) error {
	return h.storeErrorFor(s, s.name, err)
}

func (h *Handler) storeErrorFor(s *scope, name string, err error) error {
	switch {
	case errors.Is(err, bolt.ErrNotFound):
		return apierr.NotFound(s.d.Group, s.d.Resource, name)
	case errors.Is(err, bolt.ErrExists):
		return apierr.AlreadyExists(s.d.Group, s.d.Resource, name)
	case errors.Is(err, bolt.ErrConflict):
		return apierr.ConflictModified(s.d.Group, s.d.Resource, name)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierr.Timeout("request did not complete within requested timeout - "+err.Error(), 0)
	case errors.Is(err, bolt.ErrClosed):
		return apierr.ServiceUnavailable("apiserver is shutting down", 1)
	}
	return apierr.InternalError(err)
}
