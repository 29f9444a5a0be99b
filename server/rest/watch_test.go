package rest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"platd/bolt"
	"platd/codec"
	"platd/config"
	"platd/server/builtin"
	"platd/server/registry"
	"platd/server/schema"
)

// newTestHandler serves the built-in types from a fresh store over plain
// HTTP.
func newTestHandler(t testing.TB, c Config) (*Handler, *httptest.Server, bolt.Store) {
	t.Helper()
	b, _ := config.LookupBrand("plat")
	store, err := bolt.Open(filepath.Join(t.TempDir(), "db"), bolt.Options{Stamp: Stamp, NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := schema.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	if err := builtin.Register(reg, cat, b); err != nil {
		t.Fatal(err)
	}
	c.Store, c.Registry, c.Brand, c.Kinds = store, reg, b, cat.ByGVK
	h := New(c)
	for _, ns := range []string{"default", "other"} {
		if err := h.EnsureNamespace(context.Background(), ns); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); store.Close() })
	for _, ns := range []string{"default", "other"} {
		defaultAccount(t, srv, ns)
	}
	return h, srv, store
}

// defaultAccount creates the default service account of ns, which a
// server's controller would: pods are admitted only with their account.
func defaultAccount(t testing.TB, srv *httptest.Server, ns string) {
	t.Helper()
	res, err := srv.Client().Post(srv.URL+"/api/v1/namespaces/"+ns+"/serviceaccounts", "application/json",
		strings.NewReader(`{"metadata":{"name":"default"}}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("default service account of %s: %s", ns, res.Status)
	}
}

// TestBookmarksFollowTheStore checks that periodic bookmarks of a quiet
// watch carry the store's newest revision, not the watch's last event.
func TestBookmarksFollowTheStore(t *testing.T) {
	t.Parallel()
	_, srv, store := newTestHandler(t, Config{BookmarkInterval: 20 * time.Millisecond})
	start := store.Revision()
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion="+strconv.FormatInt(start, 10), nil)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	// Writes in another namespace only.
	var last int64
	for i := 0; i < 3; i++ {
		body := `{"metadata":{"name":"c` + strconv.Itoa(i) + `"}}`
		r, err := srv.Client().Post(srv.URL+"/api/v1/namespaces/other/configmaps", "application/json", strings.NewReader(body))
		if err != nil || r.StatusCode != 201 {
			t.Fatalf("create: %v %v", r, err)
		}
		var obj struct {
			Metadata struct{ ResourceVersion string } `json:"metadata"`
		}
		_ = json.NewDecoder(r.Body).Decode(&obj)
		r.Body.Close()
		last, _ = strconv.ParseInt(obj.Metadata.ResourceVersion, 10, 64)
	}
	sc := bufio.NewScanner(res.Body)
	deadline := time.Now().Add(10 * time.Second)
	for sc.Scan() && time.Now().Before(deadline) {
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata struct{ ResourceVersion string } `json:"metadata"`
			} `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type != "BOOKMARK" {
			t.Fatalf("unexpected %s event in a quiet namespace", ev.Type)
		}
		rv, _ := strconv.ParseInt(ev.Object.Metadata.ResourceVersion, 10, 64)
		if rv >= last {
			return
		}
	}
	t.Fatalf("no bookmark reached revision %d", last)
}

// onHeader runs fn as the response's status goes out, before the client
// can see it.
type onHeader struct {
	http.ResponseWriter
	fn func()
}

func (w *onHeader) WriteHeader(code int) {
	if w.fn != nil {
		w.fn()
		w.fn = nil
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *onHeader) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// A watch belongs to the descriptor that served it from its first byte:
// a successor that takes over as the answer starts (a CRD turning to
// terminating) carries it on, and retiring the successor ends it.
func TestWatchPassesToSuccessor(t *testing.T) {
	t.Parallel()
	h, _, _ := newTestHandler(t, Config{})
	d := h.reg.Lookup("", "v1", "configmaps")
	next := *d
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "" {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(&onHeader{ResponseWriter: w, fn: func() {
			h.reg.Succeed([]*registry.Descriptor{d}, []*registry.Descriptor{&next})
		}}, r)
	}))
	defer srv.Close()
	base := srv.URL + "/api/v1/namespaces/default/configmaps"
	res, err := srv.Client().Get(base + "?watch=1&resourceVersion=0")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if h.reg.Lookup("", "v1", "configmaps") != &next {
		t.Fatal("the successor did not take over as the watch answered")
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	r, err := srv.Client().Post(base, "application/json", strings.NewReader(`{"metadata":{"name":"after"}}`))
	if err != nil || r.StatusCode != 201 {
		t.Fatalf("create: %v %v", r, err)
	}
	r.Body.Close()
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatal("the watch ended when its descriptor passed to a successor")
		}
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"object"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Type != "ADDED" || ev.Object.Metadata.Name != "after" {
			t.Fatalf("event %s: %v", line, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	h.reg.Replace([]*registry.Descriptor{&next}, []*registry.Descriptor{d})
	select {
	case line, ok := <-lines:
		if ok {
			t.Fatalf("event %s after the successor was retired, want the end of the watch", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch outlived its retired descriptor by 10s")
	}
}

// A watch of one object by path may carry a field selector only when it
// pins that same name, as upstream's; any other selector is a 400.
func TestWatchByPathSelector(t *testing.T) {
	t.Parallel()
	_, srv, _ := newTestHandler(t, Config{})
	c := srv.Client()
	c.Timeout = 10 * time.Second
	base := srv.URL + "/api/v1/watch/namespaces/default/configmaps/foo?timeoutSeconds=-1&fieldSelector="
	for fs, code := range map[string]int{"metadata.name%3Dbar": 400, "metadata.namespace%3Ddefault": 400,
		"metadata.name%3Dfoo": 200, "metadata.name%3Dfoo,metadata.namespace%3Ddefault": 200, "": 200} {
		res, err := c.Get(base + fs)
		if err != nil {
			t.Fatal(err)
		}
		var st struct{ Message string }
		_ = json.NewDecoder(res.Body).Decode(&st)
		res.Body.Close()
		if res.StatusCode != code || code == 400 && st.Message != "fieldSelector metadata.name doesn't match requested name" {
			t.Errorf("fieldSelector=%s: %d %q, want %d", fs, res.StatusCode, st.Message, code)
		}
	}
}

// A negative timeoutSeconds ends a watch at once, as upstream's: only 0
// takes the server's default.
func TestWatchNegativeTimeout(t *testing.T) {
	t.Parallel()
	_, srv, _ := newTestHandler(t, Config{})
	c := srv.Client()
	c.Timeout = 10 * time.Second
	res, err := c.Get(srv.URL + "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=-1")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if _, err := io.ReadAll(res.Body); err != nil || res.StatusCode != 200 {
		t.Errorf("watch with timeoutSeconds=-1: %d, still open: %v", res.StatusCode, err)
	}
}

// The list blueprint of a watch list's closing BOOKMARK is in the watch's
// encoding: an empty list in the protobuf envelope on a protobuf watch, as
// client-go decodes it with the stream's decoder.
func TestProtobufWatchListBlueprint(t *testing.T) {
	t.Parallel()
	_, srv, _ := newTestHandler(t, Config{})
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=5", nil)
	b, _ := config.LookupBrand("plat")
	req.Header.Set("Accept", b.ProtobufMediaType+";stream=watch")
	c := srv.Client()
	c.Timeout = 10 * time.Second
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	key := []byte("initial-events-list-blueprint")
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(res.Body, hdr[:]); err != nil {
			t.Fatalf("no bookmark: %v", err)
		}
		frame := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(res.Body, frame); err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(frame, key)
		if i < 0 {
			continue
		}
		rest := frame[i+len(key):]
		_, _, n := protowire.ConsumeTag(rest)
		val, _ := protowire.ConsumeBytes(rest[n:])
		bp, err := base64.StdEncoding.DecodeString(string(val))
		if err != nil {
			t.Fatal(err)
		}
		apiVersion, kind, raw, err := codec.UnwrapProtobuf(bp)
		if err != nil || apiVersion != "v1" || kind != "ConfigMapList" || !bytes.Equal(raw, []byte{0x0a, 0x06, 0x0a, 0x00, 0x12, 0x00, 0x1a, 0x00}) {
			t.Errorf("blueprint %q: %s %s %x %v", bp, apiVersion, kind, raw, err)
		}
		return
	}
}
