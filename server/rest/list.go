package rest

import (
	"fmt"
	"net/http"
	"strconv"

	"platd/bolt"
	"platd/codec"
	"platd/server/apierr"
	"platd/server/protobuf"
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
	// Upstream reads from storage every exact list and every paged list
	// with a resourceVersion other than "" and "0", whatever the match;
	// everything else from its watch cache. The two fail differently.
	notOlder := o.resourceVersionMatch == matchNotOlderThan
	fromStorage := o.resourceVersionMatch == matchExact ||
		o.limit > 0 && o.resourceVersion != "" && o.resourceVersion != "0"
	parse := parseResourceVersionCached
	if fromStorage {
		parse = parseResourceVersion
	}
	rv, err := parse(o.resourceVersion)
	if err != nil {
		return p, err
	}
	rev, reachable := rv.revision()
	switch {
	case o.resourceVersion == "":
	case fromStorage && (!reachable || notOlder && rev > h.store.Revision()):
		// Storage reads the current state and finds it older: no wait.
		return p, tooLargeResourceVersion(rv, h.store.Revision(), tooLargeRetryStorage)
	case fromStorage && (rv == 0 || notOlder):
		// "00" and the like, or not older than a revision reached: the
		// current state, paged.
	case fromStorage:
		// An exact read of a revision not reached yet: see
		// tooLargeRetryCache for why this one waits.
		if err := h.waitForRevision(r.Context(), rv); err != nil {
			return p, err
		}
		p.revision, p.exact = rev, true
	case rv == 0:
		// resourceVersion=0: any state will do, served whole.
		p.limit = 0
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
	if out.as == asMetadata {
		h.writeError(w, r, apierr.NotAcceptable(fmt.Sprintf("you requested PartialObjectMetadata, but the requested object is a list (%s)", internalType(s.d, true)), nil))
		return
	}
	rd, err := h.newRenderer(r, s.d, out)
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
	lm := h.pageMeta(s, pred, plan, res)
	if out.as != asMetadataList || converter(s.d) != nil {
		// Items stored in another version are converted all at once.
		// Their metadata too is served as converted: a conversion may
		// set labels and annotations.
		if res.Items, err = convertItems(s.d, res.Items); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	if out.format == formatJSON && !out.pretty && (out.as == asObject || out.as == asMetadataList) {
		h.streamList(w, r, rd, lm, res.Items)
		return
	}
	if out.format == formatProtobuf && out.as == asObject {
		h.streamProtoList(w, r, rd, lm, res.Items)
		return
	}
	if out.format == formatProtobuf && out.as == asMetadataList {
		h.streamMetadataProtoList(w, r, rd, lm, res.Items)
		return
	}
	if out.format == formatJSON && !out.pretty && out.as == asTable && (s.d.Table == nil || s.d.Table.Order == nil) {
		h.streamTable(w, r, rd, lm, res.Items)
		return
	}
	body, err := rd.list(lm, res.Items)
	if err != nil {
		h.writeError(w, r, internalErr(err))
		return
	}
	h.writeRendered(w, r, out, http.StatusOK, s.d.Schema, true, body)
}

// pageMeta is the list metadata of one page.
func (h *Handler) pageMeta(s *scope, pred *predicate, plan listPlan, res bolt.ListResult) listMeta {
	lm := listMeta{rv: strconv.FormatInt(res.Revision, 10)}
	if res.More && plan.limit > 0 && len(res.Items) > 0 {
		lm.cont = h.encodeContinue(res.Revision, s.prefix(), res.Items[len(res.Items)-1].Key)
		if pred.empty() {
			n := res.Remaining
			lm.remaining = &n
		}
	}
	return lm
}

// listChunkSize is how much of a compact JSON list is buffered per write.
// Writing in chunks keeps a large list from being copied into one
// allocation; the first chunk is larger than the gzip threshold, so
// compression is decided as it would be for the whole body.
const listChunkSize = 256 << 10

// startStream begins a 200 response whose body is written in chunks: it
// chooses compression as for a whole body and returns the writer of the
// chunks (HTTP/2 frames sized for the peer) and the finish to call after
// the last. The framing is net/http's, as for every response (see
// sendParts). A HEAD request is answered there: write is nil.
func (h *Handler) startStream(w http.ResponseWriter, r *http.Request) (write func([]byte) (int, error), finish func() error) {
	gw, finish := h.gzipWriter(w, r)
	gw.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		_ = finish()
		return nil, nil
	}
	write = gw.Write
	if r.ProtoMajor == 2 && gw == w {
		write = func(p []byte) (int, error) { return writeFramed(w, p) }
	}
	return write, finish
}

// streamList writes a compact JSON list, of the objects or of their
// metadata (PartialObjectMetadataList), straight from the stored bytes.
// An object that cannot be served is left out (and logged); the metadata
// of every item is found before anything is written, so one that cannot be
// read fails the list, as the whole rendering does.
func (h *Handler) streamList(w http.ResponseWriter, r *http.Request, rd *renderer, lm listMeta, items []bolt.KV) {
	kind, apiVersion := rd.d.ListKind, rd.d.GroupVersion()
	item := func(i int) ([]byte, error) { return rd.listItem(items[i].Value) }
	if rd.out.as == asMetadataList {
		metas := make([][]byte, len(items))
		for i := range items {
			m, err := storedMetadata(items[i].Value)
			if err != nil {
				h.writeError(w, r, internalErr(fmt.Errorf("%s: %w", items[i].Key, err)))
				return
			}
			metas[i] = m
		}
		kind, apiVersion = "PartialObjectMetadataList", rd.metaGroupVersion()
		item = func(i int) ([]byte, error) {
			rd.item = rd.appendMetadataJSON(rd.item[:0], metas[i])
			return rd.item, nil
		}
	}
	w.Header().Set("Content-Type", mediaJSON)
	write, finish := h.startStream(w, r)
	if write == nil {
		return
	}
	buf := listHeadJSON(make([]byte, 0, listChunkSize+4096), kind, apiVersion, lm)
	written, buffered, flushed := 0, 0, false
	for i := range items {
		v, err := item(i)
		if err != nil {
			h.log.Error("list: undecodable stored object", "key", items[i].Key, "err", err)
			continue
		}
		// A chunk holds at least one item, and the first write, which
		// decides the compression, is larger than the gzip threshold
		// unless the whole body is not: a large body is compressed
		// whatever the size of its first item, as a body written whole.
		if len(buf)+len(v)+1 > listChunkSize && buffered > 0 && (flushed || len(buf) > codec.GzipThreshold) {
			if _, err := write(buf); err != nil {
				_ = finish()
				return
			}
			buf, buffered, flushed = buf[:0], 0, true
		}
		if written > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, v...)
		written++
		buffered++
	}
	buf = append(buf, "]}\n"...)
	_, _ = write(buf)
	if err := finish(); err != nil {
		h.log.Debug("list write failed", "err", err)
	}
}

// streamTable writes a Table of rows in the stored order as its parts
// are rendered (tableBuilder.rowParts), without joining them into one
// body. A failure to render a row is answered before anything is written.
func (h *Handler) streamTable(w http.ResponseWriter, r *http.Request, rd *renderer, lm listMeta, items []bolt.KV) {
	parts, err := rd.newTable(lm).rowParts(items)
	if err != nil {
		h.writeError(w, r, internalErr(err))
		return
	}
	w.Header().Set("Content-Type", mediaJSON)
	write, finish := h.startStream(w, r)
	if write == nil {
		releaseTableChunks(parts)
		return
	}
	for _, p := range parts {
		if _, err := write(p); err != nil {
			break
		}
	}
	releaseTableChunks(parts)
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

// listHeadJSON appends a list's kind, apiVersion, metadata and the opening
// of items.
func listHeadJSON(b []byte, kind, apiVersion string, lm listMeta) []byte {
	b = typePrefix(b, kind, apiVersion)
	b = append(b, `"metadata":`...)
	b = appendListMetaJSON(b, lm)
	return append(b, `,"items":[`...)
}

// list renders a whole list body in the negotiated form: JSON for JSON
// and YAML output, else a protobuf envelope.
func (rd *renderer) list(lm listMeta, items []bolt.KV) ([]byte, error) {
	size := 256
	for i := range items {
		size += len(items[i].Value) + 1
	}
	proto := rd.out.format == formatProtobuf
	switch rd.out.as {
	case asTable:
		t := rd.newTable(lm)
		if err := t.addRows(items); err != nil {
			return nil, err
		}
		return t.finish(), nil
	case asMetadataList:
		if proto {
			return rd.metadataListProto(lm, items)
		}
		b := listHeadJSON(make([]byte, 0, size), "PartialObjectMetadataList", rd.metaGroupVersion(), lm)
		var err error
		for i := range items {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = rd.metadataJSON(b, items[i].Value); err != nil {
				return nil, err
			}
		}
		return append(b, "]}\n"...), nil
	}
	if proto {
		return rd.listProto(lm, items, size)
	}
	b := listHeadJSON(make([]byte, 0, size), rd.d.ListKind, rd.d.GroupVersion(), lm)
	for i := range items {
		v, err := rd.listItem(items[i].Value)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, v...)
	}
	return append(b, "]}\n"...), nil
}

// metadataListProto renders a PartialObjectMetadataList in protobuf.
func (rd *renderer) metadataListProto(lm listMeta, items []bolt.KV) ([]byte, error) {
	v1beta1 := rd.out.asVersion == metaV1beta1
	var raw []byte
	if v1beta1 {
		raw = protobuf.AppendV1beta1MetadataListHead(nil, lm.asMap())
	} else {
		raw = protobuf.AppendListHead(nil, lm.asMap())
	}
	var item []byte
	var err error
	for i := range items {
		if item, err = rd.metadataProto(item[:0], items[i].Value); err != nil {
			return nil, err
		}
		if v1beta1 {
			raw = protobuf.AppendV1beta1MetadataListItem(raw, item)
		} else {
			raw = protobuf.AppendListItem(raw, item)
		}
	}
	return codec.WrapProtobuf(nil, rd.metaGroupVersion(), "PartialObjectMetadataList", raw), nil
}

// readPage reads one page of the addressed collection. The objects of a
// type with a Converter are converted before they are selected (see
// predicate.convertsFirst), and then are in the version served.
func (h *Handler) readPage(s *scope, pred *predicate, plan listPlan) (bolt.ListResult, error) {
	if pred.convertsFirst() {
		return h.readConvertedPage(s, pred, plan)
	}
	var failed error
	opts := bolt.ListOptions{Revision: plan.revision, StartKey: plan.start, Limit: int(plan.limit), ReportCorrupt: true,
		Filter: pred.storeFilter(&failed)}
	res, err := h.store.List(s.prefix(), opts)
	if err != nil {
		return res, h.pageFailure(s, plan, err)
	}
	return res, failed
}

// readConvertedPage is readPage of objects converted before they are
// selected: the store's pages are read unfiltered and converted, a page
// in one exchange, until the limit is reached, as the store fills a
// filtered page.
func (h *Handler) readConvertedPage(s *scope, pred *predicate, plan listPlan) (bolt.ListResult, error) {
	opts := bolt.ListOptions{Revision: plan.revision, StartKey: plan.start, Limit: int(plan.limit), ReportCorrupt: true}
	var out bolt.ListResult
	for {
		res, err := h.store.List(s.prefix(), opts)
		if err != nil {
			return res, h.pageFailure(s, plan, err)
		}
		out.Revision = res.Revision
		items, err := convertItems(s.d, res.Items)
		if err != nil {
			return out, err
		}
		for i := range items {
			ok, err := pred.matchesStored(items[i].Value)
			if err != nil {
				return out, fmt.Errorf("%s: %w", items[i].Key, err)
			}
			if !ok {
				continue
			}
			out.Items = append(out.Items, items[i])
			if plan.limit > 0 && len(out.Items) == int(plan.limit) {
				out.More = i < len(items)-1 || res.More
				return out, nil
			}
		}
		if !res.More || len(res.Items) == 0 {
			return out, nil
		}
		opts.Revision = res.Revision
		opts.StartKey = res.Items[len(res.Items)-1].Key + "\x00"
		if plan.limit > 0 {
			opts.Limit = int(plan.limit) - len(out.Items)
		}
	}
}

// pageFailure is the failure of the store's read of a page.
func (h *Handler) pageFailure(s *scope, plan listPlan, err error) error {
	op := opList
	if plan.fromContinue {
		op = opContinue
	}
	return &storeFailure{s: s, op: op, rev: plan.revision, rel: plan.rel, err: err}
}
