package rest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"platd/bolt"
	"platd/codec"
	"platd/server/apierr"
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
	w   http.ResponseWriter
	enc *codec.WatchEncoder
	buf []byte
	// d is the watched resource; proto selects protobuf frames.
	d     *registry.Descriptor
	proto bool
}

// send writes one event; object is its compact JSON with kind/apiVersion.
func (ws *watchStream) send(eventType string, object []byte) error {
	if ws.proto {
		pb, err := protobufBody(ws.d, object)
		if err != nil {
			return err
		}
		object = pb
	}
	return ws.enc.Encode(eventType, object)
}

// watch serves a watch on a collection (or on one object by name).
func (h *Handler) watch(w http.ResponseWriter, r *http.Request, s *scope) {
	out, o, pred, err := h.beginRead(r, s, true)
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
		// The /watch/ path form names the object in the path.
		if pred, err = parsePredicate(s.d, o.labelSelector, joinSelector(o.fieldSelector, fieldName+"="+s.name)); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	timeout := minWatchTimeout + rand.N(minWatchTimeout)
	if o.hasTimeout && o.timeoutSeconds > 0 {
		timeout = time.Duration(o.timeoutSeconds) * time.Second
	}
	sendInitial := rv == 0
	if o.sendInitialEvents != nil {
		sendInitial = *o.sendInitialEvents
	}
	ctx := r.Context()
	prefix := s.prefix()

	ws := &watchStream{w: w, enc: codec.NewJSONFrameWriter(w), d: s.d}
	contentType := mediaJSON
	if out.format == formatProtobuf {
		ws.enc, ws.proto = codec.NewProtobufFrameWriter(w), true
		contentType = h.brand.ProtobufMediaType + ";stream=watch"
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
	startRev := rv
	if sendInitial {
		opts := bolt.ListOptions{}
		if !pred.empty() {
			opts.Filter = func(kv *bolt.KV) bool { return pred.matchesStored(kv.Value) }
		}
		res, err := h.store.List(prefix, opts)
		if err != nil {
			h.writeError(w, r, apierr.InternalError(err))
			return
		}
		initial, startRev = res.Items, res.Revision
	}
	watcher, err := h.store.Watch(ctx, prefix, startRev)
	if err != nil {
		if errors.Is(err, bolt.ErrCompacted) {
			start()
			h.sendError(ws, apierr.Expired(fmt.Sprintf("too old resource version: %d (%d)", rv, h.store.CompactedRevision())))
			return
		}
		h.writeError(w, r, apierr.InternalError(err))
		return
	}
	defer watcher.Stop()
	start()
	h.log.Debug("watch start", "resource", s.d.GroupResource(), "namespace", s.ns, "from", startRev)

	for _, kv := range initial {
		ws.buf = objectJSON(ws.buf[:0], s.d, kv.Value)
		if err := ws.send(eventAdded, ws.buf); err != nil {
			return
		}
	}
	lastRev := startRev
	if sendInitial && o.allowWatchBookmarks {
		if err := ws.send(eventBookmark, h.bookmark(s, lastRev, true)); err != nil {
			return
		}
	}
	if err := ws.enc.Flush(); err != nil {
		return
	}

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var bookmarks <-chan time.Time
	if o.allowWatchBookmarks {
		t := time.NewTicker(h.bookmarkInterval)
		defer t.Stop()
		bookmarks = t.C
	}
	events := watcher.Events()
	// forward writes one store event; false ends the watch.
	forward := func(ev bolt.Event) bool {
		lastRev = ev.Revision
		typ, obj, ok := h.translate(s, pred, ev)
		if !ok {
			return true
		}
		ws.buf = objectJSON(ws.buf[:0], s.d, obj)
		return ws.send(typ, ws.buf) == nil
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
			if err := ws.send(eventBookmark, h.bookmark(s, max(lastRev, progress), false)); err != nil {
				return
			}
			if err := ws.enc.Flush(); err != nil {
				return
			}
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		case <-h.shutdown:
			return
		}
	}
}

// translate turns a store event into what this watcher sees: selectors
// make an object enter (ADDED) or leave (DELETED, previous state at the
// new revision) the watched set.
func (h *Handler) translate(s *scope, pred *predicate, ev bolt.Event) (string, []byte, bool) {
	switch ev.Type {
	case bolt.Delete:
		old := ev.KV.Value
		if ev.Prev != nil && !pred.matchesStored(ev.Prev.Value) {
			return "", nil, false
		}
		return eventDeleted, old, true
	}
	now := pred.matchesStored(ev.KV.Value)
	if ev.Prev == nil {
		return eventAdded, ev.KV.Value, now
	}
	before := pred.empty() || pred.matchesStored(ev.Prev.Value)
	switch {
	case now && before:
		return eventModified, ev.KV.Value, true
	case now:
		return eventAdded, ev.KV.Value, true
	case before:
		left, err := h.stamp(ev.Prev.Value, ev.Revision)
		if err != nil {
			return "", nil, false
		}
		return eventDeleted, left, true
	}
	return "", nil, false
}

// bookmark is the object of a BOOKMARK event: an empty object of the kind
// with only its resourceVersion (and, closing the initial events, the
// annotations that say so).
func (h *Handler) bookmark(s *scope, rev int64, initialEnd bool) []byte {
	md := map[string]any{"resourceVersion": fmt.Sprint(rev)}
	if initialEnd {
		blueprint := typePrefix(nil, s.d.ListKind, s.d.GroupVersion())
		blueprint = append(blueprint, `"metadata":{},"items":null}`+"\n"...)
		md["annotations"] = map[string]any{
			h.brand.DomainLabel("initial-events-end"):      "true",
			h.brand.Label("initial-events-list-blueprint"): base64.StdEncoding.EncodeToString(blueprint),
		}
	}
	obj := Object{"kind": s.d.Kind, "apiVersion": s.d.GroupVersion(), "metadata": md}
	return schema.Encode(nil, obj, s.d.Schema)
}

// sendError ends a watch with an ERROR event carrying a Status.
func (h *Handler) sendError(ws *watchStream, err error) {
	st := apierr.FromError(err).Status
	b, _ := json.Marshal(st)
	_ = ws.send(eventError, b)
	_ = ws.enc.Flush()
}

func joinSelector(a, b string) string {
	if a == "" {
		return b
	}
	return a + "," + b
}
