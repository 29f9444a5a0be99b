package rest

import (
	"errors"
	"net/http"
	"strconv"

	"platd/bolt"
	"platd/codec"
	"platd/server/apierr"
)

// listPlan is where a list reads: which snapshot, from which key, how many.
type listPlan struct {
	revision int64 // 0: current
	start    string
	limit    int64
	// rel is the continue token's relative start, for the 410 it may need.
	rel          string
	fromContinue bool
	// exact marks a read that must happen at exactly revision.
	exact bool
}

// planList applies the resourceVersion / resourceVersionMatch / limit /
// continue rules.
func (h *Handler) planList(r *http.Request, s *scope, o *listOptions) (listPlan, error) {
	p := listPlan{limit: o.limit}
	if p.limit < 0 {
		p.limit = 0
	}
	if o.continueToken != "" {
		if o.resourceVersion != "" && o.resourceVersion != "0" {
			return p, apierr.BadRequest("specifying resource version is not allowed when using continue")
		}
		rev, start, rel, err := h.decodeContinue(o.continueToken, s.prefix())
		if err != nil {
			return p, err
		}
		if rev > 0 {
			p.revision = rev
			p.exact = true
		}
		p.start, p.rel, p.fromContinue = start, rel, true
		return p, nil
	}
	var rv int64
	var err error
	if o.limit > 0 || o.resourceVersionMatch == matchExact {
		rv, err = parseResourceVersion(o.resourceVersion)
	} else {
		rv, err = parseResourceVersionCached(o.resourceVersion)
	}
	if err != nil {
		return p, err
	}
	switch {
	case o.resourceVersion == "":
	case rv == 0:
		// resourceVersion=0: any state will do, served whole.
		p.limit = 0
	case o.resourceVersionMatch == matchExact, o.resourceVersionMatch == "" && o.limit > 0:
		if err := h.waitForRevision(r.Context(), rv); err != nil {
			return p, err
		}
		p.revision, p.exact = rv, true
	default:
		if err := h.waitForRevision(r.Context(), rv); err != nil {
			return p, err
		}
	}
	return p, nil
}

// list serves GET of a collection.
func (h *Handler) list(w http.ResponseWriter, r *http.Request, s *scope) {
	out, o, pred, err := h.beginRead(r, s, false)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	plan, err := h.planList(r, s, o)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := h.readPage(s, pred, plan)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if out.format == formatJSON && !out.pretty {
		h.streamList(w, r, s, pred, plan, res)
		return
	}
	h.writeBody(w, r, out, http.StatusOK, h.renderList(nil, s, pred, plan, res), s.d)
}

// listChunkSize is how much of a compact JSON list is buffered per write.
// Writing in chunks keeps a large list from being copied into one
// allocation; the first chunk is larger than the gzip threshold, so
// compression is decided as it would be for the whole body.
const listChunkSize = 256 << 10

// streamList writes a compact JSON list straight from the stored bytes.
func (h *Handler) streamList(w http.ResponseWriter, r *http.Request, s *scope, pred *predicate, plan listPlan, res bolt.ListResult) {
	w.Header().Set("Content-Type", mediaJSON)
	gw, finish := gzipWriter(w, r)
	gw.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		_ = finish()
		return
	}
	write := gw.Write
	if r.ProtoMajor == 2 && gw == w {
		write = func(p []byte) (int, error) { return writeFramed(w, p) }
	}
	buf := h.listHead(make([]byte, 0, listChunkSize+4096), s, pred, plan, res)
	for i := range res.Items {
		v := res.Items[i].Value
		if len(buf)+len(v)+1 > listChunkSize && len(buf) > 0 {
			if _, err := write(buf); err != nil {
				_ = finish()
				return
			}
			buf = buf[:0]
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, v...)
	}
	buf = append(buf, "]}\n"...)
	_, _ = write(buf)
	if err := finish(); err != nil {
		h.log.Debug("list write failed", "err", err)
	}
}

// http2FramePayload is the DATA payload that, with its 9-byte frame
// header, fills exactly one TLS record (16 KiB of plaintext). An HTTP/2
// stream written in larger pieces is cut into 16 KiB frames whose headers
// spill into a second, tiny record: twice the records and write calls.
const http2FramePayload = 16384 - 9

// writeFramed writes p to an HTTP/2 response in record-sized frames.
func writeFramed(w http.ResponseWriter, p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), http2FramePayload)
		m, err := w.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

// renderList appends the whole list JSON to dst.
func (h *Handler) renderList(dst []byte, s *scope, pred *predicate, plan listPlan, res bolt.ListResult) []byte {
	size := 256
	for i := range res.Items {
		size += len(res.Items[i].Value) + 1
	}
	if dst == nil {
		dst = make([]byte, 0, size)
	}
	b := h.listHead(dst, s, pred, plan, res)
	for i := range res.Items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, res.Items[i].Value...)
	}
	return append(b, "]}\n"...)
}

// listHead appends the list's kind, apiVersion, metadata and the opening
// of items.
func (h *Handler) listHead(b []byte, s *scope, pred *predicate, plan listPlan, res bolt.ListResult) []byte {
	b = typePrefix(b, s.d.ListKind, s.d.GroupVersion())
	b = append(b, `"metadata":{"resourceVersion":"`...)
	b = strconv.AppendInt(b, res.Revision, 10)
	b = append(b, '"')
	if res.More && plan.limit > 0 && len(res.Items) > 0 {
		b = append(b, `,"continue":`...)
		b = codec.AppendJSONString(b, h.encodeContinue(res.Revision, s.prefix(), res.Items[len(res.Items)-1].Key))
		if pred.empty() {
			b = append(b, `,"remainingItemCount":`...)
			b = strconv.AppendInt(b, res.Remaining, 10)
		}
	}
	return append(b, `},"items":[`...)
}

// readPage reads one page of the addressed collection.
func (h *Handler) readPage(s *scope, pred *predicate, plan listPlan) (bolt.ListResult, error) {
	prefix := s.prefix()
	opts := bolt.ListOptions{Revision: plan.revision, StartKey: plan.start, Limit: int(plan.limit)}
	if !pred.empty() {
		opts.Filter = func(kv *bolt.KV) bool { return pred.matchesStored(kv.Value) }
	}
	res, err := h.store.List(prefix, opts)
	if err != nil {
		switch {
		case errors.Is(err, bolt.ErrCompacted) && plan.fromContinue:
			return res, h.continueExpired(plan.rel)
		case errors.Is(err, bolt.ErrCompacted):
			return res, apierr.Expired("The resourceVersion for the provided list is too old.")
		case errors.Is(err, bolt.ErrFutureRevision):
			return res, tooLargeResourceVersion(plan.revision, h.store.Revision())
		}
		return res, apierr.InternalError(err)
	}
	return res, nil
}
