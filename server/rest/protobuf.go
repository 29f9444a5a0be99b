package rest

import (
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"

	"platd/bolt"
	"platd/codec"
	"platd/server/apierr"
	"platd/server/protobuf"
)

// decodeProtobufBody decodes a protobuf request body into an object.
func (h *Handler) decodeProtobufBody(body []byte, s *scope) (*decoded, error) {
	d := s.d
	apiVersion, kind, raw, err := codec.UnwrapProtobuf(body)
	if err != nil {
		return nil, apierr.BadRequest(err.Error())
	}
	if kind != "" && kind != d.Kind {
		return nil, apierr.BadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: converting (%s.%s) to (%s.%s): unknown conversion",
			kind, versionOf(apiVersion), d.Kind, versionOf(apiVersion), kind, internalPackage(d.Group), d.Kind))
	}
	if !s.acceptsVersion(apiVersion) {
		return nil, apierr.BadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", apiVersion, d.GroupVersion()))
	}
	obj, err := protobuf.Unmarshal(raw, d.Schema)
	if err != nil {
		return nil, h.cannotHandle(d.Kind, d.GroupVersion(), err.Error())
	}
	obj["kind"], obj["apiVersion"] = d.Kind, d.GroupVersion()
	return &decoded{obj: obj}, nil
}

// listProto renders a list in protobuf: each item transcoded from its
// stored bytes straight into the list message, which is built behind room
// for the envelope so that wrapping it copies nothing. size estimates the
// message; protobuf is smaller than the JSON it is measured in. A long
// list is transcoded in parts by several goroutines.
func (rd *renderer) listProto(lm listMeta, items []bolt.KV, size int) ([]byte, error) {
	gv, kind := rd.d.GroupVersion(), rd.d.ListKind
	room := codec.ProtobufHeadroom(gv, kind)
	raw := protobuf.AppendListHead(make([]byte, room, room+size), lm.asMap())
	parts := listParts(len(items))
	if parts < 2 {
		var err error
		if raw, err = rd.appendProtoItems(raw, items); err != nil {
			return nil, err
		}
		return codec.WrapProtobufAt(raw, room, gv, kind), nil
	}
	// Each part is written into its own region of raw, sized by its stored
	// bytes, which protobuf rarely outgrows; the parts are then closed up
	// behind the first, which this goroutine writes. A part that outgrows
	// its region moves to its own array (append does that), and then the
	// list is assembled in a new one.
	per := (len(items) + parts - 1) / parts
	part := func(p int) []bolt.KV { return items[min(p*per, len(items)):min((p+1)*per, len(items))] }
	bufs := make([][]byte, parts) // part p's region, then its output
	caps := make([]int, parts)
	errs := make([]error, parts)
	end := len(raw)
	for p := range parts {
		start := end
		end = min(start+storedSize(part(p)), cap(raw))
		bufs[p] = raw[start:start:end]
		if p == 0 {
			bufs[0] = raw[:start:end] // the first part follows the head
		}
		caps[p] = cap(bufs[p])
	}
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Go(func() { bufs[p], errs[p] = rd.appendProtoItems(bufs[p], part(p)) })
	}
	bufs[0], errs[0] = rd.appendProtoItems(bufs[0], part(0))
	wg.Wait()
	inPlace := true
	for p := range parts {
		if errs[p] != nil {
			return nil, errs[p]
		}
		inPlace = inPlace && cap(bufs[p]) == caps[p]
	}
	if inPlace {
		raw = raw[:len(bufs[0])]
	} else {
		raw = bufs[0]
		n := 0
		for _, b := range bufs {
			n += len(b)
		}
		raw = append(make([]byte, 0, n+64), raw...)
	}
	for _, b := range bufs[1:] {
		raw = append(raw, b...) // in place, a move down within raw's array
	}
	return codec.WrapProtobufAt(raw, room, gv, kind), nil
}

// Parallel rendering of long lists (protobuf, Table): a part must be long
// enough that handing it to a goroutine costs little beside rendering it,
// and a few workers are enough to keep the network busy.
const (
	minItemsPerWorker = 1024
	maxListWorkers    = 4
)

// listParts is how many parts a list of n items is rendered in, at least 1.
func listParts(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), maxListWorkers, n/minItemsPerWorker))
}

// storedSize is the total length of the items' stored bytes.
func storedSize(items []bolt.KV) int {
	n := 0
	for i := range items {
		n += len(items[i].Value)
	}
	return n
}

// appendProtoItems appends items as the items fields of a list message,
// each copied from the cache of messages or transcoded and then cached.
// It uses no renderer state but the descriptor, so parts of a list may be
// appended concurrently.
func (rd *renderer) appendProtoItems(raw []byte, items []bolt.KV) ([]byte, error) {
	cache := rd.h.protos
	var item []byte
	for i := range items {
		kv := &items[i]
		if pb, ok := cache.get(rd.d, kv.Key, kv.ModRevision); ok {
			raw = protobuf.AppendListItem(raw, pb)
			continue
		}
		start := len(raw)
		if rd.d.Storage == nil {
			var err error
			if raw, err = protobuf.AppendListItemJSON(raw, kv.Value, rd.d.Schema); err == nil {
				cache.put(rd.d, kv.Key, kv.ModRevision, listItemBody(raw[start:]))
				continue
			}
		}
		var err error
		if item, err = rd.decodeProto(item[:0], kv.Value); err != nil {
			return nil, err
		}
		raw = protobuf.AppendListItem(raw, item)
		cache.put(rd.d, kv.Key, kv.ModRevision, item)
	}
	return raw, nil
}

// listItemBody returns the message of one items field as
// protobuf.AppendListItem writes it: the bytes after its tag and length.
func listItemBody(field []byte) []byte {
	_, _, n := protowire.ConsumeTag(field)
	_, m := protowire.ConsumeVarint(field[n:])
	return field[n+m:]
}

// streamProtoList writes a whole list in protobuf as streamList writes
// JSON: the items' messages are gathered first (copied from the cache of
// messages, or transcoded and cached), which gives the envelope's length,
// and then written in chunks, so a long list is never assembled in one
// buffer. A failure to encode an item is answered before anything is
// written.
func (h *Handler) streamProtoList(w http.ResponseWriter, r *http.Request, rd *renderer, lm listMeta, items []bolt.KV) {
	msgs, err := rd.protoItems(items)
	if err != nil {
		h.writeError(w, r, apierr.InternalError(err))
		return
	}
	h.writeProtoList(w, r, protoList{gv: rd.d.GroupVersion(), kind: rd.d.ListKind, head: protobuf.AppendListHead(make([]byte, 0, 64), lm.asMap()),
		appendItem: protobuf.AppendListItem, itemSize: protobuf.ListItemSize}, msgs)
}

// streamMetadataProtoList writes a PartialObjectMetadataList in protobuf
// in chunks. The items' messages are made first (the envelope states the
// length of the whole body): from the cache of messages, or into blocks of
// at least listChunkSize, so that no buffer of the whole list is grown and
// copied: a block is begun whenever the one in use may not hold the next
// message, which is about as long as its metadata's JSON.
func (h *Handler) streamMetadataProtoList(w http.ResponseWriter, r *http.Request, rd *renderer, lm listMeta, items []bolt.KV) {
	const slack = 256 // what a message may take beyond its metadata's JSON
	msgs := make([][]byte, len(items))
	var block []byte
	for i := range items {
		kv := &items[i]
		if pb, ok := h.protos.get(rd.d, metadataCacheKey(kv.Key), kv.ModRevision); ok {
			msgs[i] = pb
			continue
		}
		m, err := storedMetadata(kv.Value)
		if err != nil {
			h.writeError(w, r, apierr.InternalError(fmt.Errorf("%s: %w", kv.Key, err)))
			return
		}
		if cap(block)-len(block) < len(m)+slack {
			block = make([]byte, 0, max(listChunkSize, len(m)+slack))
		}
		start, room := len(block), cap(block)
		out, err := rd.appendMetadataProto(block, m)
		if err != nil {
			h.writeError(w, r, apierr.InternalError(err))
			return
		}
		msgs[i] = out[start:len(out):len(out)]
		h.protos.put(rd.d, metadataCacheKey(kv.Key), kv.ModRevision, msgs[i])
		block = out
		if cap(out) != room {
			// Longer than its estimate, the message was moved with the
			// block's start: the next one begins a new block.
			block = nil
		}
	}
	l := protoList{gv: rd.metaGroupVersion(), kind: "PartialObjectMetadataList",
		head: protobuf.AppendListHead(nil, lm.asMap()), appendItem: protobuf.AppendListItem, itemSize: protobuf.ListItemSize}
	if rd.out.asVersion == metaV1beta1 {
		l.head = protobuf.AppendV1beta1MetadataListHead(nil, lm.asMap())
		l.appendItem, l.itemSize = protobuf.AppendV1beta1MetadataListItem, protobuf.V1beta1MetadataListItemSize
	}
	h.writeProtoList(w, r, l, msgs)
}

// protoList says how a list message is laid out: its type, its head (the
// list metadata) and how an item is framed.
type protoList struct {
	gv, kind   string
	head       []byte
	appendItem func(dst, item []byte) []byte
	itemSize   func(n int) int
}

// writeProtoList writes the list of the messages msgs in an envelope, in
// chunks as they fill.
func (h *Handler) writeProtoList(w http.ResponseWriter, r *http.Request, l protoList, msgs [][]byte) {
	rawLen := len(l.head)
	for _, m := range msgs {
		rawLen += l.itemSize(len(m))
	}
	buf := codec.AppendProtobufHead(make([]byte, 0, min(listChunkSize+4096, rawLen+256)), l.gv, l.kind, rawLen)
	buf = append(buf, l.head...)
	tail := codec.AppendProtobufTail(nil)

	w.Header().Set("Content-Type", h.brand.ProtobufMediaType)
	write, finish := h.startStream(w, r)
	if write == nil {
		return
	}
	buffered, flushed := 0, false
	for _, m := range msgs {
		// As streamList: a chunk holds at least one item, and the first
		// write exceeds the gzip threshold unless the whole body does not.
		if len(buf)+l.itemSize(len(m)) > listChunkSize && buffered > 0 && (flushed || len(buf) > codec.GzipThreshold) {
			if _, err := write(buf); err != nil {
				_ = finish()
				return
			}
			buf, buffered, flushed = buf[:0], 0, true
		}
		buf = l.appendItem(buf, m)
		buffered++
	}
	buf = append(buf, tail...)
	_, _ = write(buf)
	if err := finish(); err != nil {
		h.log.Debug("list write failed", "err", err)
	}
}

// protoItems returns the message of each item, in order: from the cache
// of messages, or transcoded (and then cached). The misses of a long list
// are encoded in parts by several goroutines. The messages are only read.
func (rd *renderer) protoItems(items []bolt.KV) ([][]byte, error) {
	msgs := make([][]byte, len(items))
	parts := listParts(len(items))
	per := (len(items) + parts - 1) / parts
	lo := func(p int) int { return min(p*per, len(items)) }
	hi := func(p int) int { return min((p+1)*per, len(items)) }
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Go(func() { errs[p] = rd.fillProtoItems(msgs[lo(p):hi(p)], items[lo(p):hi(p)]) })
	}
	errs[0] = rd.fillProtoItems(msgs[:hi(0)], items[:hi(0)])
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

// fillProtoItems sets msgs[i] to the message of items[i]. Misses are
// encoded into one buffer of the part; a message keeps the array it was
// written in when the buffer later moves, so each stays valid.
func (rd *renderer) fillProtoItems(msgs [][]byte, items []bolt.KV) error {
	cache := rd.h.protos
	var buf []byte
	for i := range items {
		kv := &items[i]
		if pb, ok := cache.get(rd.d, kv.Key, kv.ModRevision); ok {
			msgs[i] = pb
			continue
		}
		if buf == nil {
			buf = make([]byte, 0, storedSize(items[i:]))
		}
		start := len(buf)
		var out []byte
		err := errNotTranscoded
		if rd.d.Storage == nil {
			out, err = protobuf.Transcode(buf, kv.Value, rd.d.Schema)
		}
		if err != nil {
			if out, err = rd.decodeProto(buf, kv.Value); err != nil {
				return err
			}
		}
		buf = out
		msgs[i] = buf[start:len(buf):len(buf)]
		cache.put(rd.d, kv.Key, kv.ModRevision, msgs[i])
	}
	return nil
}

// errNotTranscoded marks an object whose protobuf form is not transcoded
// from its stored bytes (a converted resource).
var errNotTranscoded = errors.New("not transcoded")
