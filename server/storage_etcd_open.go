package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"platd/bolt"
	"platd/config"
	"platd/etcd"
	"platd/server/rest"
)

// openEtcd opens the etcd engine of --etcd-servers: the data directory
// keeps the key material and the kubeconfig, etcd every object. The brand
// is recorded under the prefix at the first start, and a start with
// another brand on the same prefix is refused, as with a bbolt file.
func openEtcd(ctx context.Context, s *Server, t bolt.Transformer) (bolt.Store, error) {
	o := s.opts
	db, err := etcd.Open(ctx, etcd.Options{Endpoints: o.Etcd.Servers, Prefix: o.Etcd.Prefix, TLS: s.etcdTLS, Stamp: rest.Stamp, Transformer: t, Verify: rest.VerifyStored,
		HistoryRetention: o.HistoryRetention, HistoryMaxBytes: o.WatchHistoryMaxBytes, CompactionInterval: o.Etcd.CompactionInterval, Logger: s.log, Tag: o.Brand.Name})
	var te *bolt.TagError
	if errors.As(err, &te) {
		return nil, etcdBrandMismatch(o.Etcd, te.Recorded, te.Wanted)
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd %v (prefix %s): %w", o.Etcd.Servers, o.Etcd.Prefix, err)
	}
	return db, nil
}

// etcdBrandMismatch is brandMismatch for an etcd prefix: the replicas
// sharing a prefix share one brand.
func etcdBrandMismatch(e config.EtcdOptions, recorded, wanted string) error {
	return fmt.Errorf("%w: the etcd prefix %s holds the objects of --brand %s, and this start asks for --brand %s; "+
		"one prefix keeps one brand's spellings (system namespaces, groups, labels), for every replica. "+
		"Start with --brand %s, or give another --etcd-prefix, or delete its keys (etcdctl del --prefix %s/ and etcdctl del %s) to start over with --brand %s",
		config.ErrInvalid, e.Prefix, recorded, wanted, recorded, strings.TrimSuffix(e.Prefix, "/"), etcd.TagKey(e.Prefix), wanted)
}
