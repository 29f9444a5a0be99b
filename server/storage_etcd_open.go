package server

import (
	"context"
	"fmt"

	"platd/bolt"
	"platd/etcd"
	"platd/server/rest"
)

// openEtcd opens the etcd engine of --etcd-servers: the data directory
// keeps the key material and the kubeconfig, etcd every object. The
// brand is not recorded in etcd.
func openEtcd(ctx context.Context, s *Server, t bolt.Transformer) (bolt.Store, error) {
	o := s.opts
	db, err := etcd.Open(ctx, etcd.Options{Endpoints: o.Etcd.Servers, Prefix: o.Etcd.Prefix, TLS: s.etcdTLS, Stamp: rest.Stamp, Transformer: t, Verify: rest.VerifyStored,
		HistoryRetention: o.HistoryRetention, HistoryMaxBytes: o.WatchHistoryMaxBytes, CompactionInterval: o.Etcd.CompactionInterval, Logger: s.log})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd %v (prefix %s): %w", o.Etcd.Servers, o.Etcd.Prefix, err)
	}
	return db, nil
}
