package etcd

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/bolt"
	"platd/bolt/storetest"
)

// rawTag is the tag etcd holds for prefix, "" when none.
func rawTag(t *testing.T, cli *clientv3.Client, prefix string) string {
	t.Helper()
	resp, err := cli.Get(t.Context(), TagKey(prefix))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return ""
	}
	return string(resp.Kvs[0].Value)
}

func tagged(tag string) func(*Options) { return func(o *Options) { o.Tag = tag } }

// tryOpen opens a DB on the shared etcd, returning Open's error.
func tryOpen(t *testing.T, prefix, tag string) (*DB, error) {
	t.Helper()
	db, err := Open(t.Context(), Options{Endpoints: []string{shared.Endpoint()}, Prefix: prefix, Stamp: storetest.Stamp,
		Logger: quiet, DialTimeout: 10 * time.Second, Tag: tag})
	if err == nil {
		t.Cleanup(func() { db.Close() })
	}
	return db, err
}

// The first Open of an empty prefix records the tag, beside the prefix's
// keys and never as an object; an Open with another tag is refused with
// a TagError, one with the same tag (or none) is not.
func TestTagRecorded(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	a := openOn(t, shared, prefix, tagged("plat"))
	if got := rawTag(t, a.Client(), prefix); got != "plat" {
		t.Fatalf("recorded tag %q, want plat", got)
	}
	// The root prefix's keys all start with "/": its tag sorts apart.
	if TagKey(prefix) != prefix+".tag" || TagKey(prefix+"/") != prefix+".tag" || TagKey("/") != ".tag" {
		t.Errorf("TagKey %q %q", TagKey(prefix+"/"), TagKey("/"))
	}
	if _, err := a.Create(t.Context(), "/configmaps/ns/a", []byte("v@0")); err != nil {
		t.Fatal(err)
	}
	if n := a.Count("/"); n != 1 {
		t.Errorf("Count / = %d, want 1: the tag is no object", n)
	}
	if res, err := a.List("/", bolt.ListOptions{}); err != nil || len(res.Items) != 1 || res.Items[0].Key != "/configmaps/ns/a" {
		t.Errorf("list / %v %v", res.Items, err)
	}
	if a.Untagged() {
		t.Error("Untagged after the tag was recorded")
	}

	_, err := tryOpen(t, prefix, "kubernetes")
	var te *bolt.TagError
	if !errors.As(err, &te) || te.Recorded != "plat" || te.Wanted != "kubernetes" || !errors.Is(err, bolt.ErrTagMismatch) {
		t.Fatalf("Open with another tag: %v, want a TagError plat/kubernetes", err)
	}
	if got := rawTag(t, a.Client(), prefix); got != "plat" {
		t.Fatalf("a refused Open left the tag %q", got)
	}
	b, err := tryOpen(t, prefix, "plat")
	if err != nil {
		t.Fatalf("Open with the same tag: %v", err)
	}
	if _, err := b.Get("/configmaps/ns/a"); err != nil {
		t.Errorf("second replica: %v", err)
	}
	if _, err := tryOpen(t, prefix, ""); err != nil {
		t.Errorf("Open without a tag: %v", err)
	}
}

// A prefix that holds objects but no tag (written before tags were
// recorded) is opened with any tag and left for RecordTag; an Open with
// no tag records nothing.
func TestTagUntagged(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	old := openOn(t, shared, prefix, nil)
	if _, err := old.Create(t.Context(), "/namespaces/a", []byte("v@0")); err != nil {
		t.Fatal(err)
	}
	if old.Untagged() || rawTag(t, old.Client(), prefix) != "" {
		t.Fatal("an Open without a tag recorded one, or reports the prefix untagged")
	}
	if err := old.RecordTag(); !errors.Is(err, bolt.ErrInvalid) {
		t.Errorf("RecordTag without a tag: %v", err)
	}
	db := openOn(t, shared, prefix, tagged("kubernetes"))
	if !db.Untagged() || rawTag(t, db.Client(), prefix) != "" {
		t.Fatal("a prefix with objects was tagged at Open, or is not reported untagged")
	}
	if err := db.RecordTag(); err != nil {
		t.Fatal(err)
	}
	if db.Untagged() || rawTag(t, db.Client(), prefix) != "kubernetes" {
		t.Fatalf("after RecordTag: untagged %v, tag %q", db.Untagged(), rawTag(t, db.Client(), prefix))
	}
	if _, err := tryOpen(t, prefix, "plat"); !errors.Is(err, bolt.ErrTagMismatch) {
		t.Errorf("Open with another tag after RecordTag: %v", err)
	}
}

// Two replicas starting together on an empty prefix with different tags:
// one records its tag and the other is refused.
func TestTagRace(t *testing.T) {
	t.Parallel()
	cli := openOn(t, shared, newPrefix(), nil).Client()
	for range 3 {
		prefix := newPrefix()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, tag := range []string{"plat", "kubernetes"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = tryOpen(t, prefix, tag)
			}()
		}
		wg.Wait()
		var te *bolt.TagError
		if (errs[0] == nil) == (errs[1] == nil) || !errors.As(errors.Join(errs...), &te) {
			t.Fatalf("open results %v", errs)
		}
		if got := rawTag(t, cli, prefix); got != te.Recorded {
			t.Fatalf("recorded %q, refused for %q", got, te.Recorded)
		}
	}
}

// Erase deletes every key of the prefix (objects, compaction key, tag)
// and nothing of a neighbouring prefix.
func TestErase(t *testing.T) {
	t.Parallel()
	prefix := newPrefix()
	db := openOn(t, shared, prefix, tagged("plat"))
	next := openOn(t, shared, prefix+"x", tagged("plat"))
	for _, d := range []*DB{db, next} {
		for _, k := range []string{"/configmaps/ns/a", "/namespaces/ns"} {
			if _, err := d.Create(t.Context(), k, []byte("v@0")); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The compaction key, written as the compactor's first interval does
	// (compacting the shared etcd would cut other tests' history).
	if _, _, err := db.compactOnce(0, 0); err != nil {
		t.Fatal(err)
	}
	if resp, err := db.Client().Get(t.Context(), prefix+compactKey); err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("compaction key: %v %v", resp, err)
	}
	if err := db.Erase(context.Background()); err != nil {
		t.Fatal(err)
	}
	cli := db.Client()
	for _, p := range []string{prefix + "/", TagKey(prefix)} {
		resp, err := cli.Get(t.Context(), p, clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil || len(resp.Kvs) != 0 {
			t.Errorf("left under %s: %v %v", p, resp.Kvs, err)
		}
	}
	if resp, err := cli.Get(t.Context(), prefix+"x/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || resp.Count != 2 {
		t.Errorf("neighbouring prefix holds %v keys (%v), want 2", resp.Count, err)
	}
	if got := rawTag(t, cli, prefix+"x"); got != "plat" {
		t.Errorf("neighbouring prefix's tag %q", got)
	}
}
