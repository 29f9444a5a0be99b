package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/bolt"
	"platd/config"
	"platd/etcd"
	"platd/server"
	"platd/server/rest"
)

func openBolt(t *testing.T, path string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, bolt.Options{Stamp: rest.Stamp, Verify: rest.VerifyStored, NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// storedCount is the number of objects in the database at path, which a
// stopped server left: its controllers may write until it stops.
func storedCount(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bolt.Open(path, bolt.Options{Stamp: rest.Stamp, Verify: rest.VerifyStored, NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return db.Count("/")
}

func storedObject(name string, size int) []byte {
	return []byte(fmt.Sprintf(`{"metadata":{"name":%q,"resourceVersion":"0"},"data":{"v":%q}}`, name, strings.Repeat("x", size)))
}

// Copy between two engines: more objects than one page and one
// transaction, values too large to share a transaction, every key and
// byte kept, revisions the target's own, the counts checked.
func TestCopyStores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from, to := openBolt(t, filepath.Join(t.TempDir(), "a.db")), openBolt(t, filepath.Join(t.TempDir(), "b.db"))
	want := map[string][]byte{}
	put := func(key string, v []byte) {
		kv, err := from.Create(ctx, key, v)
		if err != nil {
			t.Fatal(err)
		}
		want[key] = kv.Value
	}
	for i := range 1100 {
		put(fmt.Sprintf("/configmaps/ns%d/cm%04d", i%3, i), storedObject("cm", 10))
	}
	for i := range 3 {
		put(fmt.Sprintf("/secrets.example/ns/big%d", i), storedObject("big", 700<<10))
	}
	put("/namespaces/default", storedObject("default", 0))
	// A deleted key is not copied.
	if _, err := from.Delete(ctx, "/configmaps/ns0/cm0000", 0); err != nil {
		t.Fatal(err)
	}
	delete(want, "/configmaps/ns0/cm0000")

	var calls, last int64
	res, err := server.Copy(ctx, from, to, func(done, total int64) {
		calls++
		if total != int64(len(want)) || done < last {
			t.Errorf("progress %d of %d after %d", done, total, last)
		}
		last = done
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Objects != int64(len(want)) || res.Revision != from.Revision() || last != res.Objects || calls < 10 {
		t.Errorf("result %+v, progress %d calls up to %d; want %d objects", res, calls, last, len(want))
	}
	wantPer := map[string]int64{"configmaps": 1099, "secrets.example": 3, "namespaces": 1}
	if fmt.Sprint(res.PerResource) != fmt.Sprint(wantPer) {
		t.Errorf("per resource %v, want %v", res.PerResource, wantPer)
	}
	all, err := to.List("/", bolt.ListOptions{})
	if err != nil || len(all.Items) != len(want) {
		t.Fatalf("target holds %d objects (%v), want %d", len(all.Items), err, len(want))
	}
	for _, kv := range all.Items {
		w, ok := want[kv.Key]
		got, _ := rest.Stamp(kv.Value, 0)
		w, _ = rest.Stamp(w, 0)
		if !ok || !bytes.Equal(got, w) {
			t.Fatalf("%s: copied %.80q, want %.80q", kv.Key, got, w)
		}
		if s, _ := rest.Stamp(kv.Value, kv.ModRevision); !bytes.Equal(s, kv.Value) {
			t.Fatalf("%s: value not stamped with the target's revision %d", kv.Key, kv.ModRevision)
		}
	}

	// A target holding anything is refused, and left as it is.
	rev := to.Revision()
	_, err = server.Copy(ctx, from, to, nil)
	if !errors.Is(err, server.ErrTargetNotEmpty) || !strings.Contains(err.Error(), fmt.Sprintf("it holds %d objects", len(want))) || to.Revision() != rev {
		t.Errorf("copy into a full store: %v", err)
	}
}

// An empty source copies nothing, and says so.
func TestCopyEmpty(t *testing.T) {
	t.Parallel()
	from, to := openBolt(t, filepath.Join(t.TempDir(), "a.db")), openBolt(t, filepath.Join(t.TempDir(), "b.db"))
	res, err := server.Copy(context.Background(), from, to, nil)
	if err != nil || res.Objects != 0 || to.Revision() != 0 {
		t.Errorf("%+v %v", res, err)
	}
}

// A whole data directory migrated: a server on the copy serves every
// object the first one had.
func TestMigrateDataDirectory(t *testing.T) {
	t.Parallel()
	a := start(t)
	for i := range 20 {
		a.do("POST", "/api/v1/namespaces/default/configmaps", cm(fmt.Sprintf("m%02d", i), map[string]string{"i": fmt.Sprint(i)}, map[string]string{"app": "m"})).mustCode(t, 201)
	}
	a.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "moved"}}).mustCode(t, 201)
	before := a.do("GET", "/api/v1/namespaces/default/configmaps?labelSelector=app%3Dm", nil).mustCode(t, 200).obj(t)
	a.stop()
	count := storedCount(t, a.opts.DBPath())

	dst := filepath.Join(t.TempDir(), "copy")
	res, err := server.Migrate(context.Background(), server.MigrateOptions{From: a.opts, To: testOptions(t, dst), Log: quietLog()})
	if err != nil || res.Objects != count {
		t.Fatalf("migrate: %+v %v; want %d objects", res, err, count)
	}
	// Into a target that holds objects now: refused, and the file kept.
	_, err = server.Migrate(context.Background(), server.MigrateOptions{From: a.opts, To: testOptions(t, dst), Log: quietLog()})
	if !errors.Is(err, server.ErrTargetNotEmpty) {
		t.Errorf("second migrate: %v", err)
	}

	b := startWith(t, testOptions(t, dst))
	after := b.do("GET", "/api/v1/namespaces/default/configmaps?labelSelector=app%3Dm", nil).mustCode(t, 200).obj(t)
	items, want := after["items"].([]any), before["items"].([]any)
	if len(items) != 20 || len(want) != 20 {
		t.Fatalf("%d configmaps after, %d before", len(items), len(want))
	}
	for i := range items {
		g, w := items[i].(map[string]any), want[i].(map[string]any)
		if path(g, "metadata.uid") != path(w, "metadata.uid") || path(g, "data.i") != path(w, "data.i") || path(g, "metadata.creationTimestamp") != path(w, "metadata.creationTimestamp") {
			t.Errorf("item %d: %v, want %v", i, g, w)
		}
	}
	b.do("GET", "/api/v1/namespaces/moved", nil).mustCode(t, 200)
}

// A source directory without a database is refused, and no target file
// is left by it.
func TestMigrateNoSource(t *testing.T) {
	t.Parallel()
	src, dst := testOptions(t, t.TempDir()), testOptions(t, filepath.Join(t.TempDir(), "copy"))
	_, err := server.Migrate(context.Background(), server.MigrateOptions{From: src, To: dst, Log: quietLog()})
	if err == nil || !strings.Contains(err.Error(), "no database in "+src.DataDir) {
		t.Errorf("migrate: %v", err)
	}
	if _, serr := os.Stat(dst.DBPath()); !os.IsNotExist(serr) {
		t.Errorf("target file: %v", serr)
	}
}

// withEtcd keeps the objects under prefix in the etcd at endpoint.
func withEtcd(endpoint, prefix string) option {
	return func(o *config.Options) {
		o.StorageBackend, o.Etcd.Servers, o.Etcd.Prefix = config.StorageBackendETCD3, []string{endpoint}, prefix
	}
}

// A data directory migrated into an empty etcd prefix, refused into one
// that holds objects, and migrated back into a new data directory: a
// server there serves every object as the first one did.
func TestMigrateThroughEtcd(t *testing.T) {
	t.Parallel()
	endpoint, prefix := embeddedEtcd(t)
	a := start(t)
	for i := range 30 {
		a.do("POST", "/api/v1/namespaces/default/configmaps", cm(fmt.Sprintf("e%02d", i), map[string]string{"i": fmt.Sprint(i)}, map[string]string{"app": "e"})).mustCode(t, 201)
	}
	before := a.do("GET", "/api/v1/namespaces/default/configmaps?labelSelector=app%3De", nil).mustCode(t, 200).obj(t)
	a.stop()
	count := storedCount(t, a.opts.DBPath())

	ctx := context.Background()
	toEtcd := testOptions(t, t.TempDir(), withEtcd(endpoint, prefix))
	res, err := server.Migrate(ctx, server.MigrateOptions{From: a.opts, To: toEtcd, Log: quietLog()})
	if err != nil || res.Objects != count {
		t.Fatalf("into etcd: %+v %v; want %d objects", res, err, count)
	}
	_, err = server.Migrate(ctx, server.MigrateOptions{From: a.opts, To: toEtcd, Log: quietLog()})
	if !errors.Is(err, server.ErrTargetNotEmpty) || !strings.Contains(err.Error(), fmt.Sprintf("it holds %d objects", count)) {
		t.Errorf("into a prefix that holds objects: %v", err)
	}

	back := testOptions(t, filepath.Join(t.TempDir(), "back"))
	res, err = server.Migrate(ctx, server.MigrateOptions{From: toEtcd, To: back, Log: quietLog()})
	if err != nil || res.Objects != count {
		t.Fatalf("back from etcd: %+v %v; want %d objects", res, err, count)
	}
	b := startWith(t, back)
	after := b.do("GET", "/api/v1/namespaces/default/configmaps?labelSelector=app%3De", nil).mustCode(t, 200).obj(t)
	items, want := after["items"].([]any), before["items"].([]any)
	if len(items) != 30 || len(want) != 30 {
		t.Fatalf("%d configmaps after, %d before", len(items), len(want))
	}
	for i := range items {
		g, w := items[i].(map[string]any), want[i].(map[string]any)
		if path(g, "metadata.uid") != path(w, "metadata.uid") || path(g, "data.i") != path(w, "data.i") || path(g, "metadata.name") != path(w, "metadata.name") {
			t.Errorf("item %d: %v, want %v", i, g, w)
		}
	}
}

// A migration into an empty etcd prefix that fails part way (a value over
// etcd's request limit, after more than one transaction was written)
// deletes what it wrote, tag included, and says so: run again once the
// value is gone, it is not refused.
func TestMigrateIntoEtcdFailure(t *testing.T) {
	t.Parallel()
	endpoint, prefix := embeddedEtcd(t)
	src := testOptions(t, t.TempDir())
	db := openBolt(t, src.DBPath())
	for i := range 300 {
		if _, err := db.Create(context.Background(), fmt.Sprintf("/configmaps/ns/cm%03d", i), storedObject("cm", 10)); err != nil {
			t.Fatal(err)
		}
	}
	// Sorted after the configmaps: copied last, alone, and refused by etcd
	// (over its 1.5 MiB request limit).
	if _, err := db.Create(context.Background(), "/secrets/ns/huge", storedObject("huge", 1700<<10)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	cli := etcdClient(t, endpoint)
	count := func(key string, opts ...clientv3.OpOption) int64 {
		t.Helper()
		resp, err := cli.Get(t.Context(), key, append(opts, clientv3.WithCountOnly())...)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Count
	}
	to := testOptions(t, t.TempDir(), withEtcd(endpoint, prefix))
	var copied int64
	_, err := server.Migrate(context.Background(), server.MigrateOptions{From: src, To: to, Log: quietLog(),
		Progress: func(done, _ int64) { copied = done }})
	if err == nil || errors.Is(err, server.ErrTargetNotEmpty) || !strings.Contains(err.Error(), "writing 1 objects (17") || !strings.Contains(err.Error(), " bytes) from /secrets/ns/huge: ") ||
		!strings.Contains(err.Error(), "request is too large") ||
		!strings.HasSuffix(err.Error(), "(what it wrote under the etcd prefix "+prefix+" is deleted: the prefix is empty again)") {
		t.Fatalf("migrate: %v", err)
	}
	if copied != 300 {
		t.Errorf("%d objects copied before the failure, want 300", copied)
	}
	// Written, then deleted: the configmaps are in etcd's history, and
	// nothing of the prefix is left, neither objects, compaction key nor
	// the brand.
	now, err := cli.Get(t.Context(), prefix+"/configmaps/ns/cm000")
	if err != nil || len(now.Kvs) != 0 {
		t.Fatalf("after the failure: %v %v", now.Kvs, err)
	}
	if past, err := cli.Get(t.Context(), prefix+"/configmaps/ns/cm000", clientv3.WithRev(now.Header.Revision-1)); err != nil || len(past.Kvs) != 1 {
		t.Fatalf("the copy wrote no configmap before it failed: %v %v", past, err)
	}
	if n, tag := count(prefix+"/", clientv3.WithPrefix()), count(etcd.TagKey(prefix)); n != 0 || tag != 0 {
		t.Fatalf("left under the prefix: %d keys, %d tag", n, tag)
	}

	db = openBolt(t, src.DBPath())
	if _, err := db.Delete(context.Background(), "/secrets/ns/huge", 0); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := server.Migrate(context.Background(), server.MigrateOptions{From: src, To: to, Log: quietLog()})
	if err != nil || res.Objects != 300 {
		t.Fatalf("second migrate: %+v %v", res, err)
	}
	if n := count(prefix+"/configmaps/", clientv3.WithPrefix()); n != 300 {
		t.Errorf("etcd holds %d configmaps, want 300", n)
	}
}

// A migration runs no etcd compaction, and one that fails into an etcd
// prefix that held objects deletes nothing: they are not its own.
func TestMigrateIntoFullEtcdKeeps(t *testing.T) {
	t.Parallel()
	endpoint, prefix := embeddedEtcd(t)
	src := testOptions(t, t.TempDir())
	db := openBolt(t, src.DBPath())
	if _, err := db.Create(context.Background(), "/configmaps/ns/a", storedObject("a", 10)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	to := testOptions(t, t.TempDir(), withEtcd(endpoint, prefix))
	// A migration opens etcd without its compactor, whose first interval
	// would write the compaction key.
	to.Etcd.CompactionInterval = time.Millisecond
	if _, err := server.Migrate(context.Background(), server.MigrateOptions{From: src, To: to, Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	if resp, err := etcdClient(t, endpoint).Get(t.Context(), prefix+"/compact_rev_key"); err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("a migration ran the compactor: %v %v", resp, err)
	}
	_, err := server.Migrate(context.Background(), server.MigrateOptions{From: src, To: to, Log: quietLog()})
	if !errors.Is(err, server.ErrTargetNotEmpty) || strings.Contains(err.Error(), "deleted") {
		t.Fatalf("second migrate: %v", err)
	}
	resp, err := etcdClient(t, endpoint).Get(t.Context(), prefix+"/configmaps/ns/a")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the target's object: %v %v", resp, err)
	}
}
