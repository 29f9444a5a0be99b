package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// watchEvent is one decoded event of a JSON watch stream.
type watchEvent struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

// watcher reads a watch stream in the background.
type watcher struct {
	t      *testing.T
	res    *http.Response
	events chan watchEvent
	closed chan struct{}
	cancel context.CancelFunc
}

// watch opens a watch as admin, with header names and values.
func (e *env) watch(p string, header ...string) *watcher {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL()+p, nil)
	r.Header.Set("Authorization", "Bearer "+adminToken)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	res, err := e.client.Do(r)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if res.StatusCode != 200 {
		cancel()
		e.t.Fatalf("watch %s: status %d", p, res.StatusCode)
	}
	w := &watcher{t: e.t, res: res, events: make(chan watchEvent, 100), closed: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(w.closed)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev watchEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				w.t.Errorf("undecodable watch line %q: %v", sc.Text(), err)
				return
			}
			w.events <- ev
		}
	}()
	e.t.Cleanup(w.stop)
	return w
}

func (w *watcher) stop() { w.cancel(); _ = w.res.Body.Close(); <-w.closed }

// next returns the next event or fails after a deadline.
func (w *watcher) next() watchEvent {
	w.t.Helper()
	select {
	case ev := <-w.events:
		return ev
	case <-w.closed:
		select {
		case ev := <-w.events:
			return ev
		default:
		}
		w.t.Fatal("watch closed while an event was expected")
	case <-time.After(10 * time.Second):
		w.t.Fatal("no watch event within 10s")
	}
	return watchEvent{}
}

// expect reads the next event and checks its type and object name.
func (w *watcher) expect(typ, name string) watchEvent {
	w.t.Helper()
	ev := w.next()
	if ev.Type != typ {
		w.t.Fatalf("event %s %v, want %s %s", ev.Type, path(ev.Object, "metadata.name"), typ, name)
	}
	if name != "" && path(ev.Object, "metadata.name") != name {
		w.t.Fatalf("event %s for %v, want %s", typ, path(ev.Object, "metadata.name"), name)
	}
	return ev
}

// waitClosed waits until the server ends the stream.
func (w *watcher) waitClosed() {
	w.t.Helper()
	select {
	case <-w.closed:
	case <-time.After(10 * time.Second):
		w.t.Fatal("watch stream not closed by the server within 10s")
	}
}

func rvOf(o map[string]any) string { s, _ := path(o, "metadata.resourceVersion").(string); return s }

func TestWatchFromResourceVersion(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	first := e.do("POST", base, cm("before", nil, nil)).mustCode(t, 201).obj(t)
	w := e.watch(base + "?watch=1&resourceVersion=" + rvOf(first))
	created := e.do("POST", base, cm("w1", map[string]string{"k": "1"}, nil)).mustCreated(t)
	upd := created
	upd["data"] = map[string]any{"k": "2"}
	modified := e.do("PUT", base+"/w1", upd).mustCode(t, 200).obj(t)
	e.do("DELETE", base+"/w1", nil).mustCode(t, 200)

	ev := w.expect("ADDED", "w1")
	if ev.Object["kind"] != "ConfigMap" || ev.Object["apiVersion"] != "v1" || rvOf(ev.Object) != rvOf(created) {
		t.Errorf("ADDED object: %v", ev.Object)
	}
	ev = w.expect("MODIFIED", "w1")
	if path(ev.Object, "data.k") != "2" || rvOf(ev.Object) != rvOf(modified) {
		t.Errorf("MODIFIED object: %v", ev.Object)
	}
	ev = w.expect("DELETED", "w1")
	if path(ev.Object, "data.k") != "2" || rvOf(ev.Object) <= rvOf(modified) && len(rvOf(ev.Object)) <= len(rvOf(modified)) {
		t.Errorf("DELETED object should carry the last state at a newer revision: %v", ev.Object)
	}
}

// mustCreated checks a 201 and decodes the object.
func (r *resp) mustCreated(t *testing.T) map[string]any { t.Helper(); return r.mustCode(t, 201).obj(t) }

func TestWatchInitialEventsAndBookmark(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	e.do("POST", base, cm("pre", nil, nil)).mustCreated(t)
	for i, q := range []string{"?watch=1&allowWatchBookmarks=true", "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"} {
		w := e.watch(base + q)
		w.expect("ADDED", "pre")
		if i == 1 {
			w.expect("ADDED", "z-live-0")
		}
		bm := w.expect("BOOKMARK", "")
		md := bm.Object["metadata"].(map[string]any)
		if bm.Object["kind"] != "ConfigMap" || md["creationTimestamp"] != nil || rvOf(bm.Object) == "" {
			t.Errorf("%s: bookmark %v", q, bm.Object)
		}
		ann := md["annotations"].(map[string]any)
		if ann[platBrand.DomainLabel("initial-events-end")] != "true" {
			t.Errorf("%s: bookmark annotations %v", q, ann)
		}
		if ann[platBrand.Label("initial-events-list-blueprint")] != "eyJraW5kIjoiQ29uZmlnTWFwTGlzdCIsImFwaVZlcnNpb24iOiJ2MSIsIm1ldGFkYXRhIjp7fSwiaXRlbXMiOm51bGx9Cg==" {
			t.Errorf("%s: blueprint %v", q, ann[platBrand.Label("initial-events-list-blueprint")])
		}
		live := "z-live-" + string(rune('0'+i))
		e.do("POST", base, cm(live, nil, nil)).mustCreated(t)
		w.expect("ADDED", live)
		w.stop()
	}
	// Without bookmarks the initial burst has no bookmark.
	w := e.watch(base + "?watch=1")
	w.expect("ADDED", "pre")
	w.expect("ADDED", "z-live-0")
	w.expect("ADDED", "z-live-1")
	e.do("POST", base, cm("after", nil, nil)).mustCreated(t)
	w.expect("ADDED", "after")
}

func TestWatchLabelSelectorTransitions(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	obj := e.do("POST", base, cm("moving", nil, map[string]string{"app": "a"})).mustCreated(t)
	w := e.watch(base + "?watch=1&labelSelector=app%3Da&resourceVersion=" + rvOf(obj))
	obj["metadata"].(map[string]any)["labels"] = map[string]any{"app": "b"}
	left := e.do("PUT", base+"/moving", obj).mustCode(t, 200).obj(t)
	ev := w.expect("DELETED", "moving")
	if path(ev.Object, "metadata.labels.app") != "a" || rvOf(ev.Object) != rvOf(left) {
		t.Errorf("leaving object should be the previous state at the new revision: %v", ev.Object)
	}
	left["metadata"].(map[string]any)["labels"] = map[string]any{"app": "a"}
	e.do("PUT", base+"/moving", left).mustCode(t, 200)
	w.expect("ADDED", "moving")
	e.do("POST", base, cm("other", nil, map[string]string{"app": "b"})).mustCreated(t)
	e.do("POST", base, cm("match", nil, map[string]string{"app": "a"})).mustCreated(t)
	w.expect("ADDED", "match")
}

func TestWatchSingleObjectAndTimeout(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	e.do("POST", base, cm("one", nil, nil)).mustCreated(t)
	e.do("POST", base, cm("two", nil, nil)).mustCreated(t)
	w := e.watch(base + "?watch=1&fieldSelector=metadata.name%3Dtwo&timeoutSeconds=1")
	w.expect("ADDED", "two")
	w.waitClosed()
	select {
	case ev := <-w.events:
		t.Errorf("unexpected event %v", ev)
	default:
	}
	// The legacy /watch/ path form names the object in the path.
	w2 := e.watch("/api/v1/watch/namespaces/default/configmaps/one?timeoutSeconds=1")
	w2.expect("ADDED", "one")
	w2.waitClosed()
}

func TestWatchTooOldResourceVersion(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	first := e.do("POST", base, cm("a", nil, nil)).mustCreated(t)
	second := e.do("POST", base, cm("b", nil, nil)).mustCreated(t)
	rev := int64(0)
	for _, c := range rvOf(second) {
		rev = rev*10 + int64(c-'0')
	}
	if err := e.srv.Store().Compact(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
	w := e.watch(base + "?watch=1&resourceVersion=" + rvOf(first))
	ev := w.expect("ERROR", "")
	if path(ev.Object, "reason") != "Expired" || path(ev.Object, "code") != float64(410) ||
		!strings.HasPrefix(path(ev.Object, "message").(string), "too old resource version: "+rvOf(first)+" (") {
		t.Errorf("error event: %v", ev.Object)
	}
	w.waitClosed()
}

func TestWatchErrors(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	st := e.do("GET", base+"?watch=1&resourceVersionMatch=NotOlderThan", nil).mustCode(t, 422).obj(t)
	if st["message"] != `ListOptions.`+platBrand.MetaGroup()+` "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided` {
		t.Errorf("rvMatch on watch: %v", st["message"])
	}
	y := e.do("GET", base+"?watch=1", nil, "Accept", "application/yaml").mustCode(t, 406)
	if y.header.Get("Content-Type") != "application/yaml" || !strings.Contains(string(y.body), "only the following media types are accepted") {
		t.Errorf("yaml watch: %s %s", y.header.Get("Content-Type"), y.body)
	}
}

func TestWatchTooLargeResourceVersion(t *testing.T) {
	t.Parallel()
	e := start(t)
	w := e.watch("/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=99999999")
	ev := w.expect("ERROR", "")
	if path(ev.Object, "code") != float64(504) || !strings.HasPrefix(path(ev.Object, "message").(string), "Timeout: Too large resource version: 99999999, current: ") {
		t.Errorf("error event: %v", ev.Object)
	}
	w.waitClosed()
	r := e.do("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=99999999&resourceVersionMatch=NotOlderThan", nil).mustCode(t, 504)
	if r.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	st := r.obj(t)
	if path(st, "details.causes") == nil || path(st, "details.retryAfterSeconds") != float64(1) {
		t.Errorf("504 details: %v", st["details"])
	}
}
