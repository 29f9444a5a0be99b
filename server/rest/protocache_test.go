package rest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"platd/bolt"
	"platd/codec"
	"platd/server/registry"
)

// TestProtoCacheEntries: an entry answers only for its key, revision and
// descriptor; an older revision never replaces a newer one; drop removes
// only older entries; oversized messages and revision 0 are not kept.
func TestProtoCacheEntries(t *testing.T) {
	t.Parallel()
	c := newProtoCache(nil, nil)
	d1, d2 := &registry.Descriptor{}, &registry.Descriptor{}
	pb := []byte("message")
	c.put(d1, "k", 5, pb)
	pb[0] = 'X' // the cache holds a copy
	if got, ok := c.get(d1, "k", 5); !ok || string(got) != "message" {
		t.Fatalf("get = %q %v", got, ok)
	}
	for _, miss := range []struct {
		d   *registry.Descriptor
		key string
		rev int64
	}{{d1, "k", 4}, {d1, "k", 6}, {d2, "k", 5}, {d1, "other", 5}} {
		if _, ok := c.get(miss.d, miss.key, miss.rev); ok {
			t.Errorf("get(%v, %q, %d) hit", miss.d == d1, miss.key, miss.rev)
		}
	}
	c.put(d1, "k", 3, []byte("older"))
	if got, ok := c.get(d1, "k", 5); !ok || string(got) != "message" {
		t.Fatalf("an older revision replaced the entry: %q %v", got, ok)
	}
	c.put(d1, "k", 7, []byte("newer"))
	if got, ok := c.get(d1, "k", 7); !ok || string(got) != "newer" {
		t.Fatalf("get = %q %v", got, ok)
	}
	// The metadata's message is an entry of its own, dropped with the
	// object's.
	c.put(d1, metadataCacheKey("k"), 7, []byte("meta"))
	if got, ok := c.get(d1, metadataCacheKey("k"), 7); !ok || string(got) != "meta" {
		t.Fatalf("metadata get = %q %v", got, ok)
	}
	if got, ok := c.get(d1, "k", 7); !ok || string(got) != "newer" {
		t.Fatalf("the metadata's entry replaced the object's: %q %v", got, ok)
	}
	c.drop("k", 7)
	if _, ok := c.get(d1, "k", 7); !ok {
		t.Fatal("drop at the entry's own revision removed it")
	}
	c.drop("k", 8)
	if _, ok := c.get(d1, "k", 7); ok {
		t.Fatal("drop at a newer revision kept the entry")
	}
	if _, ok := c.get(d1, metadataCacheKey("k"), 7); ok {
		t.Fatal("drop at a newer revision kept the metadata's entry")
	}
	c.put(d1, "zero", 0, pb)
	c.put(d1, "big", 1, make([]byte, protoCacheMaxEntry+1))
	if b, n := c.size(); b != 0 || n != 0 {
		t.Fatalf("size = %d bytes, %d entries; want none", b, n)
	}
}

// TestProtoCacheBound: the oldest entries go first once a shard is full,
// and a few often rewritten keys keep a short queue.
func TestProtoCacheBound(t *testing.T) {
	t.Parallel()
	c := newProtoCache(nil, nil)
	c.shardBytes = 10 * (100 + protoEntryOverhead + 8)
	d := &registry.Descriptor{}
	for i := range 1000 {
		c.put(d, fmt.Sprintf("key-%04d", i), 1, make([]byte, 100))
	}
	b, n := c.size()
	if b > protoCacheShards*c.shardBytes || n > protoCacheShards*10 || n < protoCacheShards {
		t.Fatalf("size = %d bytes, %d entries over a bound of %d", b, n, protoCacheShards*c.shardBytes)
	}
	if _, ok := c.get(d, "key-0999", 1); !ok {
		t.Fatal("the newest entry was dropped")
	}
	if _, ok := c.get(d, "key-0000", 1); ok {
		t.Fatal("the oldest entry was kept")
	}
	c = newProtoCache(nil, nil)
	for rev := range int64(10000) {
		c.put(d, "a", rev+1, []byte("x"))
		c.put(d, "b", rev+1, []byte("y"))
	}
	for i := range c.shards {
		if s := &c.shards[i]; len(s.queue)-s.head > 2*len(s.entries)+64 {
			t.Fatalf("shard %d queues %d records for %d entries", i, len(s.queue)-s.head, len(s.entries))
		}
	}
}

// TestProtoListCached: a protobuf list answered from the cache is the
// list transcoded afresh; a change or deletion shows in the next list and
// drops the object's entry.
func TestProtoListCached(t *testing.T) {
	t.Parallel()
	h, srv, store := newTestHandler(t, Config{})
	post := func(name, value string) {
		t.Helper()
		body := `{"metadata":{"name":"` + name + `","labels":{"app":"cached"}},"data":{"k":"` + value + `"}}`
		r, err := srv.Client().Post(srv.URL+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
		if err != nil || r.StatusCode != http.StatusCreated {
			t.Fatalf("create %s: %v %v", name, r, err)
		}
		r.Body.Close()
	}
	for i := range 30 {
		post(fmt.Sprintf("cm-%02d", i), strings.Repeat("v", i))
	}
	// list asks for the list, allowing gzip (the client undoes it) or not.
	list := func(gzip bool) []byte {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/namespaces/default/configmaps?labelSelector=app%3Dcached", nil)
		req.Header.Set("Accept", h.brand.ProtobufMediaType)
		if !gzip {
			req.Header.Set("Accept-Encoding", "identity")
		}
		r, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		body, err := io.ReadAll(r.Body)
		if err != nil || r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != h.brand.ProtobufMediaType {
			t.Fatalf("list: %d %q %v", r.StatusCode, r.Header.Get("Content-Type"), err)
		}
		// Longer than net/http's buffer: chunked, as upstream's.
		if !gzip && (r.ContentLength != -1 || len(r.TransferEncoding) != 1 || r.TransferEncoding[0] != "chunked" || len(body) <= 2048) {
			t.Fatalf("Content-Length %d, Transfer-Encoding %q for a body of %d", r.ContentLength, r.TransferEncoding, len(body))
		}
		return body
	}
	d := h.reg.Lookup("", "v1", "configmaps")
	// want renders the current objects without the cache.
	want := func() []byte {
		t.Helper()
		res, err := store.List(d.Key("default", ""), bolt.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var items []bolt.KV
		for _, kv := range res.Items {
			if bytes.Contains(kv.Value, []byte(`"app":"cached"`)) {
				items = append(items, kv)
			}
		}
		plain := New(Config{Registry: h.reg, Brand: h.brand}) // an empty cache
		rd, err := plain.newRenderer(httptest.NewRequest("GET", "/", nil), d, output{format: formatProtobuf})
		if err != nil {
			t.Fatal(err)
		}
		b, err := rd.list(listMeta{rv: fmt.Sprint(res.Revision)}, items)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cold := list(false)
	if _, n := h.protos.size(); n != 30 {
		t.Fatalf("the cache holds %d entries after a list of 30", n)
	}
	warm := list(false)
	if !bytes.Equal(cold, warm) || !bytes.Equal(warm, want()) || !bytes.Equal(list(true), warm) {
		t.Fatal("the cached list differs from the transcoded one")
	}
	if _, kind, _, err := codec.UnwrapProtobuf(warm); err != nil || kind != "ConfigMapList" {
		t.Fatalf("list: %q %v", kind, err)
	}
	// An update and a delete reach the next list and drop the entries.
	cm3, err := store.Get(d.Key("default", "cm-03"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Update(context.Background(), cm3.Key, 0, bytes.Replace(cm3.Value, []byte(`"k":"vvv"`), []byte(`"k":"changed"`), 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Delete(context.Background(), d.Key("default", "cm-04"), 0); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, n := h.protos.size(); n == 28 {
			break
		}
		if time.Now().After(deadline) {
			_, n := h.protos.size()
			t.Fatalf("the cache holds %d entries after a change and a delete, want 28", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	after := list(true)
	if !bytes.Equal(after, want()) || !bytes.Contains(after, []byte("changed")) || bytes.Contains(after, []byte("cm-04")) {
		t.Fatal("the list after a change differs from the transcoded one")
	}
}
