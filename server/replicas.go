package server

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"

	"platd/config"
	"platd/server/controllers"
	"platd/server/rest"
	"platd/uuid"
)

// replicaSet is what a server sharing its store with other replicas runs
// beside the API: the election of the one replica that runs the
// controllers, and its own identity lease. A server that owns its store
// (bbolt) has none: its controllers start at once.
type replicaSet struct {
	elector  *controllers.Elector
	identity *controllers.Identity
	// endpoints keeps the API's endpoints listing every live replica
	// (on the leader).
	endpoints *controllers.APIServerEndpoints
}

// replicated reports whether other replicas may share the store, so that
// once-per-cluster work needs an elected leader: with etcd, or a store
// handed to NewOnStore. A bbolt file is one process's alone.
func (s *Server) replicated() bool {
	return !s.ownStore || s.opts.UsesEtcd()
}

// newReplicaSet prepares the election and the identity lease; nil when
// the server owns its store.
func (s *Server) newReplicaSet() (*replicaSet, error) {
	if !s.replicated() {
		return nil, nil
	}
	b, r := s.opts.Brand, s.opts.Replicas
	leases := s.reg.Lookup(b.Group("coordination"), "v1", "leases")
	if leases == nil {
		return nil, fmt.Errorf("%w: --runtime-config: %s/v1 leases must be served when replicas share the store: the controllers' leader is elected through a Lease",
			config.ErrInvalid, b.Group("coordination"))
	}
	host := r.Hostname
	if host == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("the host name names this replica: %w", err)
		}
		host = h
	}
	// The component is the API server's field manager: upstream's name
	// in the kubernetes brand, as its identity leases carry.
	component := b.FieldManager
	name := controllers.IdentityLeaseName(host, component)
	label, addrAnnotation := "apiserver."+b.LongDomain+"/identity", b.Label("peer-advertise-address")
	id := &controllers.Identity{Objects: s.rest, Leases: leases, Namespace: b.SystemNamespace, Name: name, Holder: name + "_" + uuid.New(),
		Labels: map[string]any{label: component, b.Label("hostname"): host}, Renew: r.IdentityRenewInterval, Log: s.log}
	a := s.apiServer()
	if a.Address.IsValid() {
		id.Annotations = map[string]any{addrAnnotation: net.JoinHostPort(a.Address.String(), strconv.Itoa(a.Port))}
	}
	elector := &controllers.Elector{Objects: s.rest, Leases: leases, Namespace: b.SystemNamespace, Name: b.ControllerManager,
		Identity: host + "_" + uuid.New(), LeaseDuration: r.LeaseDuration, RenewDeadline: r.RenewDeadline, RetryPeriod: r.RetryPeriod, Log: s.log}
	if err := elector.Check(); err != nil {
		return nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	return &replicaSet{
		elector:  elector,
		identity: id,
		endpoints: &controllers.APIServerEndpoints{Source: s.store, Objects: s.rest, Leases: leases, Namespace: b.SystemNamespace,
			Label: label, Component: component, AddressAnnotation: addrAnnotation, TTL: r.EndpointTTL, Log: s.log,
			Wanted: func(addrs []netip.Addr) []controllers.Wanted {
				return controllers.APIServerEndpointObjects(s.reg, b, addrs, a.Port)
			}},
	}, nil
}

// keptWanted is what the API server itself keeps: with replicas, the
// leader's endpoints reconciler keeps the Endpoints and EndpointSlice.
func (s *Server) keptWanted() []controllers.Wanted {
	if s.replicas != nil {
		return controllers.APIServerService(s.reg, s.opts.Brand, s.apiServer())
	}
	return controllers.APIServerObjects(s.reg, s.opts.Brand, s.apiServer())
}

// runReplicated runs this replica's identity lease, and lead (the
// once-per-cluster controllers) whenever this replica is the elected
// leader, until ctx ends.
func (s *Server) runReplicated(ctx context.Context, lead func(context.Context)) {
	r := s.replicas
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.hooks.finish(hookIdentityLease)
		r.identity.Run(ctx)
	}()
	// The lease is written as the controller manager's, as upstream's
	// kube-controller-manager writes it; the leader's work is recorded
	// as without replicas.
	r.elector.Run(rest.WithManager(ctx, s.opts.Brand.ControllerManager), func(term context.Context) {
		term = rest.WithManager(term, s.opts.Brand.FieldManager)
		if s.crds != nil {
			s.crds.Requeue()
		}
		var lwg sync.WaitGroup
		lwg.Add(1)
		go func() {
			defer lwg.Done()
			r.endpoints.Run(term)
		}()
		lead(term)
		lwg.Wait()
	})
	wg.Wait()
}

// leading reports whether this server runs the once-per-cluster work now:
// always without replicas.
func (s *Server) leading() bool {
	return s.replicas == nil || s.replicas.elector.Leading()
}
