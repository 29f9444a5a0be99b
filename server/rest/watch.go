package rest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"platd/bolt"
	"platd/codec"
	"platd/server/apierr"
	"platd/server/protobuf"
	"platd/server/registry"
	"platd/server/schema"
)

const (
	// bookmarkInterval is how often a watch that allows bookmarks is told
	// how far it has got, so a client that re-watches after a quiet period
	// does not start from a revision the history has dropped. Upstream's
	// watch cache uses about a minute too.
	bookmarkInterval = time.Minute
	// minWatchTimeout is the shortest server-chosen watch lifetime; each
	// watch without timeoutSeconds lasts a random time in
	// [minWatchTimeout, 2*minWatchTimeout) so reconnections spread out.
	minWatchTimeout = 30 * time.Minute
)

// Watch event types.
const (
	eventAdded    = "ADDED"
	eventModified = "MODIFIED"
	eventDeleted  = "DELETED"
	eventBookmark = "BOOKMARK"
	eventError    = "ERROR"
)

// watchStream writes events to one client.
type watchStream struct {
	h   *Handler
	enc *codec.WatchEncoder
	rd  *renderer
	buf []byte
	// tableColumns is set once a Table event has carried the column
	// definitions, which only the first event does.
	tableColumns bool
	// sent counts the events written (apiserver_watch_events_*); nil
	// counts nothing.
	sent EventCounter
}

// EventCounter counts the events sent to one watch, with their sizes.
type EventCounter interface{ Sent(n int) }

// write counts one encoded event and sends it; counted first, so a client
// that has seen an event finds it in the metrics.
func (ws *watchStream) write(eventType string, obj []byte) error {
	if ws.sent != nil {
		ws.sent.Sent(len(obj))
	}
	return ws.enc.Encode(eventType, obj)
}

// send writes one event carrying the stored object of key at revision rev
// (prev: the key's previous state, restamped at rev).
func (ws *watchStream) send(eventType string, key string, rev int64, prev bool, stored []byte) error {
	obj, err := ws.encode(key, rev, prev, stored)
	if se := (*apierr.Error)(nil); errors.As(err, &se) {
		// An object that cannot be served (its conversion failed) ends
		// the watch with the failure, as upstream's.
		ws.h.sendError(ws, se)
		return se
	}
	if err != nil {
		ws.h.log.Error("watch: encoding an event failed", "key", key, "err", err)
		return nil
	}
	return ws.write(eventType, obj)
}

// encode renders one event object in the watch's form. Encodings that
// cost more than a copy are shared through the handler's event cache, so
// an event is encoded once for all watchers of its form; key "" (a
// bookmark) is never shared.
func (ws *watchStream) encode(key string, rev int64, prev bool, stored []byte) ([]byte, error) {
	rd := ws.rd
	switch {
	case rd.out.as == asTable:
		rv, _ := storedResourceVersion(stored)
		t := rd.newTableWith(listMeta{rv: rv}, !ws.tableColumns)
		ws.tableColumns = true
		if err := t.addRow(stored); err != nil {
			return nil, err
		}
		return trimNewline(t.finish()), nil
	case (rd.out.format == formatJSON || rd.out.format == formatYAML) && rd.out.as == asObject:
		var err error
		ws.buf, err = rd.objectJSON(ws.buf[:0], stored)
		return ws.buf, err
	}
	if key == "" {
		return rd.eventObject(stored)
	}
	ck := eventKey{d: rd.d, out: rd.out, key: key, rev: rev, prev: prev}
	if b, ok := ws.h.events.get(ck); ok {
		return b, nil
	}
	b, err := rd.eventObject(stored)
	if err != nil {
		return nil, err
	}
	ws.h.events.put(ck, b)
	return b, nil
}

// eventObject renders the object of a watch event in protobuf, CBOR or
// as metadata: the whole-object body of a response, without its newline.
func (rd *renderer) eventObject(stored []byte) ([]byte, error) {
	out := rd.out
	if out.as == asMetadataList {
		out.as = asMetadata
	}
	saved := rd.out
	rd.out = out
	defer func() { rd.out = saved }()
	b, err := rd.single(stored)
	if err == nil && out.format == formatCBOR {
		if out.as == asObject {
			return cborFromJSON(b, rd.d.Schema, false)
		}
		return cborFromJSON(b, nil, false)
	}
	return trimNewline(b), err
}

// watch serves a watch on a collection (or on one object by name).
func (h *Handler) watch(w http.ResponseWriter, r *http.Request, s *scope) {
	out, o, pred, err := h.beginRead(r, s, true)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	rd, err := h.newRenderer(r, s.d, out)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	rv, err := parseResourceVersionCached(o.resourceVersion)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if s.name != "" && !s.info.NameFromSelector {
		// The /watch/ path form names the object in the path; a field
		// selector may only pin that same name, as upstream's.
		if pred.hasFields {
			if n, ok := pred.fields.RequiresExactMatch(fieldName); !ok || n != s.name {
				h.writeError(w, r, apierr.BadRequest("fieldSelector metadata.name doesn't match requested name"))
				return
			}
		} else if pred, err = parsePredicate(s.d, o.labelSelector, fieldName+"="+s.name); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	// As upstream: only 0 (or none) takes the default; a negative timeout
	// ends the watch at once.
	timeout := minWatchTimeout + rand.N(minWatchTimeout)
	if o.hasTimeout && o.timeoutSeconds != 0 {
		timeout = time.Duration(o.timeoutSeconds) * time.Second
	}
	sendInitial := rv == 0
	if o.sendInitialEvents != nil {
		sendInitial = *o.sendInitialEvents
	}
	ctx := r.Context()
	prefix := s.prefix()
	// Asked before the client sees the answer: a successor taking over
	// right after it (a CRD turning to terminating) must carry this watch
	// on, and only the descriptor still served when asked has one.
	retired := h.reg.Retired(s.d)

	ws := &watchStream{h: h, enc: codec.NewJSONFrameWriter(w), rd: rd}
	if h.watchEvents != nil {
		ws.sent = h.watchEvents(s.d.Group, s.d.Version, s.d.Kind)
	}
	contentType := mediaJSON
	switch out.format {
	case formatProtobuf:
		ws.enc = codec.NewProtobufFrameWriter(w)
		contentType = h.brand.ProtobufMediaType + ";stream=watch"
	case formatCBOR:
		ws.enc = codec.NewCBORFrameWriter(w)
		contentType = codec.CBORSeqMediaType
	}
	start := func() {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		_ = ws.enc.Flush()
	}
	if o.sendInitialEvents != nil && *o.sendInitialEvents && rv > 0 {
		if err := h.waitForRevision(ctx, rv); err != nil {
			start()
			h.sendError(ws, err)
			return
		}
	}
	var initial []bolt.KV
	startRev, reachable := rv.revision()
	if !reachable {
		// Only events newer than rv are due, and no revision is: the
		// watch starts past every revision and stays silent until it
		// times out, as upstream's does.
		startRev = math.MaxInt64
	}
	reqRev := startRev
	var watcher bolt.Watcher
	if sendInitial {
		var failed error
		opts := bolt.ListOptions{ReportCorrupt: true}
		if !pred.convertsFirst() {
			opts.Filter = pred.storeFilter(&failed)
		}
		// ListWatch, since an empty store lists at 0, which a watch reads
		// as "from now".
		var res bolt.ListResult
		res, watcher, err = bolt.ListWatch(ctx, h.store, prefix, opts)
		if err != nil && !errors.Is(err, bolt.ErrCompacted) {
			h.writeError(w, r, &storeFailure{s: s, op: opList, err: err})
			return
		}
		initial, startRev = res.Items, res.Revision
		if failed == nil && err == nil {
			// The initial objects are converted in one exchange, and
			// then selected as served.
			initial, failed = convertItems(s.d, initial)
			if failed == nil && pred.convertsFirst() {
				initial, failed = pred.selectConverted(initial)
			}
		}
		if failed != nil {
			if watcher != nil {
				watcher.Stop()
			}
			h.writeError(w, r, failed)
			return
		}
	} else {
		watcher, err = h.store.Watch(ctx, prefix, startRev)
	}
	if err != nil {
		if errors.Is(err, bolt.ErrCompacted) {
			start()
			h.sendError(ws, &storeFailure{s: s, op: opWatch, rev: reqRev, err: err})
			return
		}
		h.writeError(w, r, &storeFailure{s: s, op: opWatch, rev: reqRev, err: err})
		return
	}
	defer watcher.Stop()
	start()
	h.log.Debug("watch start", "resource", s.d.GroupResource(), "namespace", s.ns, "from", startRev)

	for _, kv := range initial {
		if err := ws.send(eventAdded, kv.Key, kv.ModRevision, false, kv.Value); err != nil {
			return
		}
	}
	lastRev := startRev
	if sendInitial && o.allowWatchBookmarks {
		if err := ws.sendBookmark(h.bookmark(s, lastRev, true, out.format)); err != nil {
			return
		}
	}
	if err := ws.enc.Flush(); err != nil {
		return
	}

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var bookmarks <-chan time.Time
	if o.allowWatchBookmarks && reachable {
		// Upstream passes on only bookmarks newer than rv: none, for an
		// rv no revision reaches.
		t := time.NewTicker(h.bookmarkInterval)
		defer t.Stop()
		bookmarks = t.C
	}
	events := watcher.Events()
	// forward writes one store event; false ends the watch.
	forward := func(ev bolt.Event) bool {
		lastRev = ev.Revision
		typ, obj, prev, ok, err := h.translate(s.d, pred, ev)
		if err != nil {
			// An object that cannot be read or converted ends the
			// watch with the failure, as upstream's.
			h.sendError(ws, err)
			return false
		}
		if !ok {
			return true
		}
		return ws.send(typ, ev.KV.Key, ev.Revision, prev, obj) == nil
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				if err := watcher.Err(); err != nil {
					h.log.Debug("watch closed by store", "err", err)
				}
				return
			}
			if !forward(ev) {
				return
			}
			if len(events) == 0 {
				if err := ws.enc.Flush(); err != nil {
					return
				}
			}
		case <-bookmarks:
			if lastRev > h.store.Revision() {
				// Started from a version the store has not reached:
				// upstream's cache passes on no bookmark before it has.
				continue
			}
			// Everything up to the store's progress is on the channel: pass
			// it on first, then the bookmark can name the newest revision
			// even when nothing in this watch's range changed.
			progress := watcher.Progress()
			for drained := false; !drained; {
				select {
				case ev, ok := <-events:
					if !ok {
						return
					}
					if !forward(ev) {
						return
					}
				default:
					drained = true
				}
			}
			if err := ws.sendBookmark(h.bookmark(s, max(lastRev, progress), false, out.format)); err != nil {
				return
			}
			if err := ws.enc.Flush(); err != nil {
				return
			}
		case <-timer.C:
			return
		case <-retired:
			return
		case <-ctx.Done():
			return
		case <-h.shutdown:
			return
		}
	}
}

// sendBookmark writes a BOOKMARK event; bookmark is the object in the
// stored form (metadata first, no kind), rendered like any other object.
func (ws *watchStream) sendBookmark(bookmark []byte) error {
	obj, err := ws.encode("", 0, false, bookmark)
	if err != nil {
		return err
	}
	return ws.write(eventBookmark, obj)
}

// translate turns a store event into what this watcher of d sees:
// selectors make an object enter (ADDED) or leave (DELETED, previous
// state at the new revision) the watched set. prev says the object is
// that previous state. The states of a type with a Converter are first
// converted into d's version, once for all of d's watchers. err is an
// object that cannot be read or converted.
func (h *Handler) translate(d *registry.Descriptor, pred *predicate, ev bolt.Event) (typ string, obj []byte, prev, ok bool, err error) {
	if ev.Type == bolt.Delete && len(ev.KV.Value) == 0 {
		// A corrupt value deleted on another etcd replica: its state
		// was never readable, so there is no object to send.
		return "", nil, false, false, nil
	}
	if converter(d) != nil {
		if ev, err = h.eventInVersion(d, ev); err != nil {
			return "", nil, false, false, err
		}
	}
	matches := func(kv *bolt.KV) (bool, error) {
		ok, err := pred.matchesStored(kv.Value)
		if err != nil {
			err = fmt.Errorf("%s: %w", kv.Key, err)
		}
		return ok, err
	}
	switch ev.Type {
	case bolt.Delete:
		if ev.Prev != nil {
			if was, err := matches(ev.Prev); err != nil || !was {
				return "", nil, false, false, err
			}
		}
		return eventDeleted, ev.KV.Value, false, true, nil
	}
	now, err := matches(&ev.KV)
	if err != nil {
		return "", nil, false, false, err
	}
	if ev.Prev == nil {
		return eventAdded, ev.KV.Value, false, now, nil
	}
	before := pred.empty()
	if !before {
		if before, err = matches(ev.Prev); err != nil {
			return "", nil, false, false, err
		}
	}
	switch {
	case now && before:
		return eventModified, ev.KV.Value, false, true, nil
	case now:
		return eventAdded, ev.KV.Value, false, true, nil
	case before:
		left, err := h.stamp(ev.Prev.Value, ev.Revision)
		if err != nil {
			return "", nil, false, false, nil
		}
		return eventDeleted, left, true, true, nil
	}
	return "", nil, false, false, nil
}

// eventInVersion is ev with its states in d's version, converted through
// the handler's conversion cache.
func (h *Handler) eventInVersion(d *registry.Descriptor, ev bolt.Event) (bolt.Event, error) {
	v, err := h.conversions.inVersion(d, ev.KV.Key, ev.KV.ModRevision, ev.KV.Value)
	if err != nil {
		return ev, err
	}
	ev.KV.Value = v
	if ev.Prev != nil && len(ev.Prev.Value) > 0 {
		p := *ev.Prev
		if p.Value, err = h.conversions.inVersion(d, p.Key, p.ModRevision, p.Value); err != nil {
			return ev, err
		}
		ev.Prev = &p
	}
	return ev, nil
}

// bookmark is the object of a BOOKMARK event, in the stored form: an
// empty object of the kind with only its resourceVersion (and, closing the
// initial events, the annotations that say so).
// The list blueprint is in the watch's encoding, as upstream encodes it in
// the requested format: client-go decodes it with the stream's decoder.
func (h *Handler) bookmark(s *scope, rev int64, initialEnd bool, f format) []byte {
	md := map[string]any{"resourceVersion": fmt.Sprint(rev)}
	if initialEnd {
		var blueprint []byte
		switch f {
		case formatProtobuf:
			// An empty list: its metadata with the empty strings every
			// protobuf list carries, no items.
			blueprint = codec.WrapProtobuf(nil, s.d.GroupVersion(), s.d.ListKind, protobuf.AppendListHead(nil, nil))
		default:
			blueprint = typePrefix(nil, s.d.ListKind, s.d.GroupVersion())
			blueprint = append(blueprint, `"metadata":{},"items":null}`+"\n"...)
			if f == formatCBOR {
				if c, err := cborFromJSON(blueprint, nil, false); err == nil {
					blueprint = c
				}
			}
		}
		md["annotations"] = map[string]any{
			h.brand.DomainLabel("initial-events-end"):      "true",
			h.brand.Label("initial-events-list-blueprint"): base64.StdEncoding.EncodeToString(blueprint),
		}
	}
	return schema.Encode(nil, Object{"metadata": md}, s.d.Schema)
}

// sendError ends a watch with an ERROR event carrying a Status.
func (h *Handler) sendError(ws *watchStream, err error) {
	st := apierr.FromError(h.toStatus(err)).Status
	var b []byte
	switch ws.rd.out.format {
	case formatProtobuf:
		b = codec.WrapProtobuf(nil, "v1", "Status", protobuf.MarshalStatus(nil, &st))
	case formatCBOR:
		j, _ := json.Marshal(st)
		b, _ = cborFromJSON(j, nil, false)
	default:
		b, _ = json.Marshal(st)
	}
	_ = ws.enc.Encode(eventError, b)
	_ = ws.enc.Flush()
}
