package etcd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"platd/bolt"
	"platd/bolt/storetest"
	"platd/etcd/etcdtest"
)

// waitTimeout bounds every wait in these tests; it matters only when one
// fails.
const waitTimeout = 20 * time.Second

// TestStoredValues: etcd holds each object under the prefix, stamped with
// 0 whatever revision the written bytes carried; reads stamp the key's mod
// revision.
func TestStoredValues(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	db := openOn(t, shared, prefix, nil)
	c, err := db.Create(t.Context(), "/configmaps/ns/a", []byte("payload@99"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := db.Update(t.Context(), "/configmaps/ns/a", c.ModRevision, []byte("payload2@"+fmt.Sprint(c.ModRevision)))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := db.Client().Get(t.Context(), prefix+"/configmaps/ns/a")
	if err != nil {
		t.Fatal(err)
	}
	if len(raw.Kvs) != 1 || string(raw.Kvs[0].Value) != "payload2@0" || raw.Kvs[0].ModRevision != u.ModRevision {
		t.Fatalf("etcd holds %v, want payload2@0 at %d", raw.Kvs, u.ModRevision)
	}
	got, err := db.Get("/configmaps/ns/a")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("payload2@%d", u.ModRevision); string(got.Value) != want || got.CreateRevision != c.ModRevision {
		t.Fatalf("Get %q created %d, want %q created %d", got.Value, got.CreateRevision, want, c.ModRevision)
	}
	// The compaction key is no object: it is refused and never listed.
	if _, err := db.Create(t.Context(), compactKey, []byte("x")); !errors.Is(err, bolt.ErrInvalid) {
		t.Fatalf("Create %s: %v, want ErrInvalid", compactKey, err)
	}
	res, err := db.List("/", bolt.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 || res.Items[0].Key != "/configmaps/ns/a" {
		t.Fatalf("list %v", res.Items)
	}
}

// TestReplicas: a write acknowledged by one replica is read at once by
// another on the same etcd and prefix, by Get, List and Count, and a watch
// on the second sees every write of the first in order.
func TestReplicas(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	a := openOn(t, shared, prefix, nil)
	b := openOn(t, shared, prefix, nil)
	w, err := b.Watch(t.Context(), "/cms/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var written []bolt.KV
	for i := range 30 {
		key := fmt.Sprintf("/cms/ns/k%02d", i)
		kv, err := a.Create(t.Context(), key, []byte("v"))
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, kv)
		got, err := b.Get(key)
		if err != nil {
			t.Fatalf("replica b after a's create of %s: %v", key, err)
		}
		if !bytes.Equal(got.Value, kv.Value) || got.ModRevision != kv.ModRevision {
			t.Fatalf("replica b reads %q at %d, a wrote %q at %d", got.Value, got.ModRevision, kv.Value, kv.ModRevision)
		}
		if n := b.Count("/cms/"); n != int64(i+1) {
			t.Fatalf("replica b counts %d, want %d", n, i+1)
		}
		if i%3 == 2 {
			d, err := a.Delete(t.Context(), key, kv.ModRevision)
			if err != nil {
				t.Fatal(err)
			}
			written = append(written, d)
			if _, err := b.Get(key); !errors.Is(err, bolt.ErrNotFound) {
				t.Fatalf("replica b after a's delete: %v", err)
			}
			res, err := b.List("/cms/", bolt.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Revision != d.ModRevision || a.Revision() != b.Revision() {
				t.Fatalf("replica b lists at %d (revision %d), a at %d, the delete at %d", res.Revision, b.Revision(), a.Revision(), d.ModRevision)
			}
			again, err := a.Create(t.Context(), key, []byte("again"))
			if err != nil {
				t.Fatal(err)
			}
			written = append(written, again)
		}
	}
	timeout := time.After(waitTimeout)
	for i, kv := range written {
		select {
		case ev := <-w.Events():
			if ev.Revision != kv.ModRevision || ev.KV.Key != kv.Key {
				t.Fatalf("event %d: %s at %d, want %s at %d", i, ev.KV.Key, ev.Revision, kv.Key, kv.ModRevision)
			}
		case <-timeout:
			t.Fatalf("timed out after %d of %d events", i, len(written))
		}
	}
}

// TestCompactionCoordination: of two replicas the first to move the
// compaction key's version compacts; the other learns the version and
// compacts nothing in that interval, and both report the compaction.
func TestCompactionCoordination(t *testing.T) {
	t.Parallel()
	s, err := startEtcd() // compaction cuts every prefix's history
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	prefix := newPrefix()
	a := openOn(t, s, prefix, nil)
	b := openOn(t, s, prefix, nil)
	first, err := a.Create(t.Context(), "/k/1", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	// Interval 1: a wins and only records the revision; b loses.
	va, ra, err := a.compactOnce(0, 0)
	if err != nil || va != 1 || ra < first.ModRevision {
		t.Fatalf("a's first interval: version %d revision %d, %v", va, ra, err)
	}
	vb, rb, err := b.compactOnce(0, 0)
	if err != nil || vb != 1 {
		t.Fatalf("b's first interval: version %d revision %d, %v", vb, rb, err)
	}
	if _, err := a.Update(t.Context(), "/k/1", 0, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	// Interval 2: b wins now and compacts at what it saw an interval ago;
	// a, a step behind, loses and compacts nothing.
	if vb, _, err = b.compactOnce(vb, rb); err != nil || vb != 2 {
		t.Fatalf("b's second interval: version %d, %v", vb, err)
	}
	if va, _, err = a.compactOnce(va, ra); err != nil || va != 2 {
		t.Fatalf("a's second interval: version %d, %v", va, err)
	}
	// etcd is compacted at rb, a revision of the compaction key; both
	// report the last write under the prefix at or below it: the create.
	want := first.ModRevision
	deadline := time.Now().Add(waitTimeout)
	for a.CompactedRevision() != want || b.CompactedRevision() != want {
		if time.Now().After(deadline) {
			t.Fatalf("compacted a %d b %d, want %d", a.CompactedRevision(), b.CompactedRevision(), want)
		}
		if err := a.WaitForRevision(t.Context(), a.Revision()); err != nil {
			t.Fatal(err)
		}
		runtime.Gosched()
	}
	if _, err := a.List("/k/", bolt.ListOptions{Revision: want - 1}); !errors.Is(err, bolt.ErrCompacted) {
		t.Fatalf("list below the compaction on a: %v", err)
	}
	if _, err := a.Watch(t.Context(), "/k/", want-1); !errors.Is(err, bolt.ErrCompacted) {
		t.Fatalf("watch below the compaction on a: %v", err)
	}
	// A replica opened later learns the compacted revision from the key;
	// its listing no longer shows the create, so it reports rb.
	c := openOn(t, s, prefix, nil)
	if c.CompactedRevision() != rb {
		t.Fatalf("new replica: compacted %d, want %d", c.CompactedRevision(), rb)
	}
}

// TestEtcdGone: with etcd stopped, writes end with the write timeout and
// reads with the read timeout, with an error, and Close returns.
func TestEtcdGone(t *testing.T) {
	t.Parallel()
	s, err := startEtcd()
	if err != nil {
		t.Fatal(err)
	}
	db := openOn(t, s, newPrefix(), nil)
	db.readTimeout, db.writeTimeout = 500*time.Millisecond, 500*time.Millisecond
	if _, err := db.Create(t.Context(), "/k/a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	// A write picked up ends with the write timeout, not its ctx: etcd
	// may have applied it, which ErrIO says.
	if _, err := db.Create(t.Context(), "/k/b", []byte("v")); !errors.Is(err, bolt.ErrIO) {
		t.Fatalf("Create with etcd stopped: %v, want ErrIO", err)
	}
	if _, err := db.Get("/k/a"); err == nil {
		t.Fatal("Get with etcd stopped succeeded")
	}
	if _, err := db.List("/k/", bolt.ListOptions{}); err == nil {
		t.Fatal("List with etcd stopped succeeded")
	}
	done := make(chan error, 1)
	go func() { done <- db.Close() }()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("Close hangs with etcd stopped")
	}
	if _, err := db.Get("/k/a"); !errors.Is(err, bolt.ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
}

// xorTransformer is a stand-in for encryption at rest.
type xorTransformer struct{}

func (xorTransformer) ToStorage(key string, v []byte) ([]byte, error) {
	out := make([]byte, len(v))
	for i, c := range v {
		out[i] = c ^ 0x5a
	}
	return append([]byte("enc:"), out...), nil
}

func (xorTransformer) FromStorage(key string, s []byte) ([]byte, bool, error) {
	rest, ok := bytes.CutPrefix(s, []byte("enc:"))
	if !ok {
		return nil, false, errors.New("not encrypted")
	}
	out := make([]byte, len(rest))
	for i, c := range rest {
		out[i] = c ^ 0x5a
	}
	return out, false, nil
}

// TestTransformerAndCorrupt: values are transformed in etcd and plain in
// reads; a value that cannot be read back is a CorruptError for Get, left
// out of lists or failing them (ReportCorrupt), and can be deleted with a
// stand-in.
func TestTransformerAndCorrupt(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	opts := func(o *Options) {
		o.Transformer = xorTransformer{}
		o.Verify = func(key string, v []byte) error {
			if strings.Contains(string(v), "bad") {
				return errors.New("refused")
			}
			return nil
		}
	}
	db := openOn(t, shared, prefix, opts)
	kv, err := db.Create(t.Context(), "/s/ns/a", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := db.Client().Get(t.Context(), prefix+"/s/ns/a")
	if err != nil {
		t.Fatal(err)
	}
	if v := string(raw.Kvs[0].Value); !strings.HasPrefix(v, "enc:") || strings.Contains(v, "secret") {
		t.Fatalf("etcd holds %q", v)
	}
	if got, err := db.Get("/s/ns/a"); err != nil || !bytes.Equal(got.Value, kv.Value) {
		t.Fatalf("Get %q %v, want %q", got.Value, err, kv.Value)
	}
	// Written behind the engine's back: unencrypted, and refused by Verify.
	for key, v := range map[string]string{"/s/ns/plain": "plain", "/s/ns/bad": ""} {
		stored := v
		if v == "" {
			s, _ := xorTransformer{}.ToStorage(key, []byte("bad"))
			stored = string(s)
		}
		if _, err := db.Client().Put(t.Context(), prefix+key, stored); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"/s/ns/plain", "/s/ns/bad"} {
		_, err := db.Get(key)
		var ce *bolt.CorruptError
		if !errors.As(err, &ce) || ce.Key != key || ce.Untransformable != (key == "/s/ns/plain") {
			t.Fatalf("Get %s: %v", key, err)
		}
	}
	res, err := db.List("/s/", bolt.ListOptions{})
	if err != nil || len(res.Items) != 1 {
		t.Fatalf("list without ReportCorrupt: %v %v", res.Items, err)
	}
	_, err = db.List("/s/", bolt.ListOptions{ReportCorrupt: true})
	var le *bolt.CorruptListError
	if !errors.As(err, &le) || len(le.Keys) != 2 {
		t.Fatalf("list with ReportCorrupt: %v", err)
	}
	if _, err := db.Delete(t.Context(), "/s/ns/bad", 0); !errors.Is(err, bolt.ErrCorruptValue) {
		t.Fatalf("delete of a corrupt value without a stand-in: %v", err)
	}
	other := openOn(t, shared, prefix, opts)
	w, err := db.Watch(t.Context(), "/s/", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ow, err := other.Watch(t.Context(), "/s/", db.Revision())
	if err != nil {
		t.Fatal(err)
	}
	defer ow.Stop()
	db.mu.RLock()
	badAt, _ := db.idx.Get("/s/ns/bad")
	db.mu.RUnlock()
	kvs, err := db.Txn(t.Context(), []bolt.Op{{Kind: bolt.OpDelete, Key: "/s/ns/bad", Value: []byte("stand-in")}})
	if err != nil {
		t.Fatalf("delete with a stand-in: %v", err)
	}
	if _, err := db.Get("/s/ns/bad"); !errors.Is(err, bolt.ErrNotFound) {
		t.Fatalf("Get after delete: %v", err)
	}
	rev := kvs[0].ModRevision
	// The deleting replica publishes the stand-in, as bolt does.
	ev := nextEvent(t, w)
	if ev.Type != bolt.Delete || ev.Revision != rev || ev.KV.Key != "/s/ns/bad" || string(ev.KV.Value) != fmt.Sprintf("stand-in@%d", rev) ||
		ev.KV.CreateRevision != badAt.CreateRevision || ev.Prev == nil || string(ev.Prev.Value) != fmt.Sprintf("stand-in@%d", badAt.ModRevision) {
		t.Fatalf("delete event on the deleting replica: %+v prev %+v", ev, ev.Prev)
	}
	// Another replica never saw the stand-in: a well-formed delete with
	// no value (the README's caveat).
	ev = nextEvent(t, ow)
	if ev.Type != bolt.Delete || ev.Revision != rev || ev.KV.Key != "/s/ns/bad" || ev.KV.Value != nil ||
		ev.KV.ModRevision != rev || ev.KV.CreateRevision != badAt.CreateRevision || ev.Prev != nil {
		t.Fatalf("delete event on another replica: %+v prev %+v", ev, ev.Prev)
	}
	db.mu.RLock()
	n := len(db.standIns)
	db.mu.RUnlock()
	if n != 0 {
		t.Fatalf("%d stand-ins held after the delete", n)
	}
}

// TestPastListFromEtcd: a list older than the in-memory history is read
// from etcd's own history, exactly.
func TestPastListFromEtcd(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	db := openOn(t, shared, prefix, func(o *Options) { o.HistoryMaxBytes = 1 })
	var revs []int64
	var states [][]string
	cur := map[string]bool{}
	for i := range 12 {
		key := fmt.Sprintf("/p/k%d", i%4)
		var kv bolt.KV
		var err error
		if cur[key] {
			kv, err = db.Delete(t.Context(), key, 0)
			delete(cur, key)
		} else {
			kv, err = db.Create(t.Context(), key, []byte("v"))
			cur[key] = true
		}
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, kv.ModRevision)
		var keys []string
		for k := range 4 {
			if cur[fmt.Sprintf("/p/k%d", k)] {
				keys = append(keys, fmt.Sprintf("/p/k%d", k))
			}
		}
		states = append(states, keys)
	}
	db.mu.RLock()
	base := db.ringBase
	db.mu.RUnlock()
	if base <= revs[0] {
		t.Fatalf("ring base %d: the history was not trimmed", base)
	}
	for i, rev := range revs {
		res, err := db.List("/p/", bolt.ListOptions{Revision: rev, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			for _, kv := range res.Items {
				got = append(got, kv.Key)
			}
			if !res.More {
				break
			}
			if res.Remaining != int64(len(states[i])-len(got)) {
				t.Fatalf("at %d: remaining %d after %v, want %v", rev, res.Remaining, got, states[i])
			}
			res, err = db.List("/p/", bolt.ListOptions{Revision: rev, Limit: 1, StartKey: got[len(got)-1] + "\x00"})
			if err != nil {
				t.Fatal(err)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(states[i]) {
			t.Fatalf("list at %d: %v, want %v", rev, got, states[i])
		}
	}
	// A watch from before the ring replays from etcd, then follows.
	w, err := db.Watch(t.Context(), "/p/", revs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	last, err := db.Create(t.Context(), "/p/last", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	timeout := time.After(waitTimeout)
	for _, want := range append(revs[1:], last.ModRevision) {
		select {
		case ev := <-w.Events():
			if ev.Revision != want {
				t.Fatalf("replayed event at %d, want %d", ev.Revision, want)
			}
		case <-timeout:
			t.Fatalf("timed out waiting for the event at %d", want)
		}
	}
}

// TestCloseLeaksNothing: Close ends every goroutine the DB and its client
// started. The embedded etcd in the same process starts goroutines of its
// own at any time (and dials itself through gRPC), so the check looks for
// goroutines of this package and of the etcd client rather than counting.
func TestCloseLeaksNothing(t *testing.T) {
	db, err := Open(t.Context(), Options{Endpoints: []string{shared.Endpoint()}, Prefix: newPrefix(),
		Stamp: func(v []byte, _ int64) ([]byte, error) { return v, nil }, Logger: quiet, CompactionInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Create(t.Context(), "/k/a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	w, err := db.Watch(t.Context(), "/k/", 0)
	if err != nil {
		t.Fatal(err)
	}
	old, err := db.Watch(t.Context(), "/k/", 1) // replays from etcd
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get("/k/a"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	goroutinesIn(t, "platd/etcd.(*", "go.etcd.io/etcd/client/v3.", "transport.(*http2Client)")
	for _, w := range []bolt.Watcher{w, old} {
		for range w.Events() {
		}
	}
}

// TestWritesElsewhere: writes outside the prefix move etcd's revision but
// not Revision; a consistent read still returns at once (a progress
// notification tells the mirror it has seen them), and a list at such a
// revision reads the state under the prefix then.
func TestWritesElsewhere(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	db := openOn(t, shared, prefix, nil)
	kv, err := db.Create(t.Context(), "/k/a", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	put, err := db.Client().Put(t.Context(), prefix+"-elsewhere/x", "x")
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := put.Header.Revision
	if _, err := db.Get("/k/a"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	if err := db.WaitForRevision(ctx, elsewhere); err != nil {
		t.Fatalf("WaitForRevision of a write elsewhere: %v", err)
	}
	if db.Revision() != kv.ModRevision {
		t.Fatalf("Revision %d, want the last write under the prefix %d", db.Revision(), kv.ModRevision)
	}
	res, err := db.List("/k/", bolt.ListOptions{Revision: elsewhere})
	if err != nil || res.Revision != elsewhere || len(res.Items) != 1 || !bytes.Equal(res.Items[0].Value, kv.Value) {
		t.Fatalf("list at %d: %+v %v", elsewhere, res, err)
	}
	// A revision no write has reached is still in the future.
	if _, err := db.List("/k/", bolt.ListOptions{Revision: elsewhere + 1_000_000}); !errors.Is(err, bolt.ErrFutureRevision) {
		t.Fatalf("list far ahead: %v", err)
	}
}

// TestOpenWithoutEtcd: Open of an endpoint nobody serves fails within its
// dial timeout and leaves nothing running.
func TestOpenWithoutEtcd(t *testing.T) {
	t.Parallel()
	u, err := etcdtest.FreeURL()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		db, err := Open(t.Context(), Options{Endpoints: []string{u.String()}, Stamp: storetest.Stamp,
			Logger: quiet, DialTimeout: 300 * time.Millisecond})
		if err == nil {
			db.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Open without etcd succeeded")
		}
	case <-time.After(waitTimeout):
		t.Fatal("Open without etcd hangs")
	}
}
