package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"platd/health"
)

// etcdProbeTimeout bounds one probe of etcd, upstream's
// --etcd-healthcheck-timeout and --etcd-readycheck-timeout default: a
// member that cannot answer a read in that time is not serving.
const etcdProbeTimeout = 2 * time.Second

// etcdStore is an engine on an etcd cluster: its client is probed by the
// health checks, and Healthy says whether its in-memory mirror follows
// etcd (a replica whose mirror is down serves stale or no data).
type etcdStore interface {
	Client() *clientv3.Client
	Healthy() error
}

// storageChecks are the checks of the store, upstream's "etcd" (every
// endpoint) and "etcd-readiness" (readyz only), whatever the engine: the
// names are what clients and operators probe (/readyz/etcd). On etcd they
// read from the cluster with a quorum; on bbolt they read the in-memory
// state every request is served from.
func (s *Server) storageChecks() (all, readyz health.Check) {
	es, ok := s.store.(etcdStore)
	if !ok {
		probe := func(r *http.Request) error { return s.rest.ProbeStorage(r.Context()) }
		return health.Check{Name: "etcd", Fn: probe}, health.Check{Name: "etcd-readiness", Fn: probe}
	}
	probe := func(r *http.Request) error {
		if err := es.Healthy(); err != nil {
			return err
		}
		cli := es.Client()
		if cli == nil {
			return errors.New("no etcd client")
		}
		ctx, cancel := context.WithTimeout(r.Context(), etcdProbeTimeout)
		defer cancel()
		// A linearizable read needs a quorum: a member cut off from the
		// others fails it.
		_, err := cli.Get(ctx, s.opts.Etcd.Prefix+"/health", clientv3.WithCountOnly())
		return err
	}
	return health.Check{Name: "etcd", Fn: probe}, health.Check{Name: "etcd-readiness", Fn: probe}
}
