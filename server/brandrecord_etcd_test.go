package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/config"
	"platd/etcd"
	"platd/server"
)

// etcdClient is a client of the embedded etcd, closed with the test.
func etcdClient(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// With --storage-backend=etcd3 the brand is recorded under the prefix at
// the first start, and a replica started with another brand on that
// prefix is refused as a bbolt data directory refuses it (the same
// configuration error); a prefix written before the brand was recorded is
// judged by its system namespace.
func TestEtcdBrandRecorded(t *testing.T) {
	t.Parallel()
	endpoint, prefix := embeddedEtcd(t)
	cli := etcdClient(t, endpoint)
	tag := func() string {
		t.Helper()
		resp, err := cli.Get(t.Context(), etcd.TagKey(prefix))
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			return ""
		}
		return string(resp.Kvs[0].Value)
	}
	e := startWith(t, testOptions(t, t.TempDir(), withEtcd(endpoint, prefix), withBrand("kubernetes")))
	e.stop()
	if got := tag(); got != "kubernetes" {
		t.Fatalf("recorded brand %q, want kubernetes", got)
	}
	o := testOptions(t, t.TempDir(), withEtcd(endpoint, prefix))
	want := "invalid configuration: the etcd prefix " + prefix + " holds the objects of --brand kubernetes, and this start asks for --brand plat; " +
		"one prefix keeps one brand's spellings (system namespaces, groups, labels), for every replica. " +
		"Start with --brand kubernetes, or give another --etcd-prefix, or delete its keys (etcdctl del --prefix " + prefix + "/ and etcdctl del " +
		prefix + ".tag) to start over with --brand plat"
	refused := func(step string) {
		t.Helper()
		s, err := server.New(context.Background(), o, quietLog())
		if err == nil {
			s.Serve(canceled())
			t.Fatalf("%s: a plat replica on a kubernetes prefix was not refused", step)
		}
		if !errors.Is(err, config.ErrInvalid) || err.Error() != want {
			t.Fatalf("%s: error\n%v\nwant\n%s", step, err, want)
		}
	}
	refused("recorded")
	// A prefix written before the brand was recorded: its system
	// namespace tells, and a refused start records nothing.
	if _, err := cli.Delete(t.Context(), etcd.TagKey(prefix)); err != nil {
		t.Fatal(err)
	}
	refused("unrecorded")
	if got := tag(); got != "" {
		t.Fatalf("a refused start recorded %q", got)
	}
	e = startWith(t, testOptions(t, t.TempDir(), withEtcd(endpoint, prefix), withBrand("kubernetes")))
	e.stop()
	if got := tag(); got != "kubernetes" {
		t.Fatalf("adopted prefix records %q, want kubernetes", got)
	}
	// Another prefix takes any brand.
	_, other := embeddedEtcd(t)
	e = startWith(t, testOptions(t, t.TempDir(), withEtcd(endpoint, other)))
	e.stop()
	if resp, err := cli.Get(t.Context(), etcd.TagKey(other)); err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "plat" {
		t.Fatalf("new prefix records %v %v", resp, err)
	}
}
