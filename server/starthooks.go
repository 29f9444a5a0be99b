package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Start-up hooks: upstream's post-start hook names, each standing for the
// platd start-up work that does that hook's job. Clients probe these
// names (/readyz/poststarthook/<name>), so they carry no brand. Upstream
// hooks for work platd does not do (the admission initializer, the
// priority-and-fairness filter's queues, the aggregator's proxy and
// status controllers, the identity lease collector on every replica, the
// service IP repair) are not registered: a check must stand for real
// work.
const (
	// The stored flow-control configuration is read, and followed, by
	// the classifier of requests (flowcontrol.go).
	hookFlowControlConsumer = "priority-and-fairness-config-consumer"
	// The object counts of a store on etcd are polled (storagecounts.go):
	// upstream's object count tracker.
	hookCountTracker = "storage-object-count-tracker-hook"
	// The CRD controller, which is also its own informer: its watch of
	// CustomResourceDefinitions and its cleanup queue run.
	hookCRDInformers   = "start-apiextensions-informers"
	hookCRDControllers = "start-apiextensions-controllers"
	// Every stored CRD's resources are served (CRDs.Load).
	hookCRDSynced = "crd-informer-synced"
	// The default namespaces exist.
	hookNamespaces = "start-system-namespaces-controller"
	// The authentication ConfigMap of the system namespace is written.
	hookAuthInfo = "start-cluster-authentication-info-controller"
	// A replica sharing its store renews its identity lease.
	hookIdentityLease = "start-kube-apiserver-identity-lease-controller"
	// The ConfigMap dating the tracking of legacy service-account tokens
	// is kept (controllers.LegacyTokenTracking).
	hookLegacyTokenTracking = "start-legacy-token-tracking-controller"
	// The system PriorityClasses are written.
	hookPriorityClasses = "scheduling/bootstrap-system-priority-classes"
	// The bootstrap flow-control configuration is written.
	hookFlowControl = "priority-and-fairness-config-producer"
	// The API server's own Service (and its endpoints) exist.
	hookBootstrap = "bootstrap-controller"
	// A local APIService exists for every served group-version.
	hookAutoregistration = "kube-apiserver-autoregistration"
	// The APIServices' groups are served: platd serves local ones only,
	// once written, so this is the same work as hookAutoregistration.
	hookAPIServiceRegistration = "apiservice-registration-controller"
)

// autoregisterCompletion is upstream's check (not a hook) that every
// local APIService is registered: here the same work as
// hookAutoregistration, as platd writes them itself.
const autoregisterCompletion = "autoregister-completion"

// doneSet is a set of named pieces of start-up work, each with a channel
// closed when it is done. A name is pending from its first mention. Safe
// for concurrent use; the zero value is empty.
type doneSet struct {
	mu   sync.Mutex
	done map[string]chan struct{}
	// order keeps names in first-mention order, for pending's answer.
	order []string
}

// ch returns the channel of name, making it pending if new.
func (d *doneSet) ch(name string) chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done == nil {
		d.done = map[string]chan struct{}{}
	}
	c, ok := d.done[name]
	if !ok {
		c = make(chan struct{})
		d.done[name] = c
		d.order = append(d.order, name)
	}
	return c
}

// finish marks each name done; finishing twice is harmless.
func (d *doneSet) finish(names ...string) {
	for _, name := range names {
		c := d.ch(name)
		d.mu.Lock()
		select {
		case <-c:
		default:
			close(c)
		}
		d.mu.Unlock()
	}
}

// pending returns the names not yet done, in first-mention order.
func (d *doneSet) pending() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, name := range d.order {
		select {
		case <-d.done[name]:
		default:
			out = append(out, name)
		}
	}
	return slices.Clip(out)
}

// The caches behind informer-sync: each is loaded before the first request
// and then follows the store's watch.
const (
	crdInformer  = "customresourcedefinitions"
	rbacInformer = "rbac-policy"
	nodeInformer = "node-graph"
)

// startHooks returns the start-up hooks this server runs, in upstream's
// order; autoregisterCompletion, a plain check, follows the hook whose
// work it checks.
func (s *Server) startHooks() []string {
	var out []string
	if s.flows != nil {
		out = append(out, hookFlowControlConsumer)
	}
	if s.pollsObjectCounts() {
		out = append(out, hookCountTracker)
	}
	if s.crds != nil {
		out = append(out, hookCRDInformers, hookCRDControllers, hookCRDSynced)
	}
	out = append(out, hookNamespaces)
	if s.reg.ByKind("", "v1", "ConfigMap") != nil {
		out = append(out, hookAuthInfo)
	}
	if s.replicas != nil {
		out = append(out, hookIdentityLease)
	}
	if s.trackingTokens {
		out = append(out, hookLegacyTokenTracking)
	}
	if s.rbacEnabled() {
		out = append(out, rbacBootstrapHook)
	}
	seeded := s.seedHooks()
	for _, h := range []string{hookPriorityClasses, hookFlowControl} {
		if slices.Contains(seeded, h) {
			out = append(out, h)
		}
	}
	out = append(out, hookBootstrap)
	if slices.Contains(seeded, hookAutoregistration) {
		out = append(out, hookAPIServiceRegistration, hookAutoregistration, autoregisterCompletion)
	}
	return out
}

// hookRetryFor is how long the work of a start-up hook is retried before
// the hook fails, stopping the server, as upstream's hooks retry for a
// while and a failed hook is fatal.
const hookRetryFor = 30 * time.Second

// hookWork runs f, the work of hook, until it succeeds: a failure is
// logged and retried after a growing pause, and one that lasts past
// retryFor (hookRetryFor when 0) stops the server. It reports whether f
// succeeded; false also when ctx ends first.
func (s *Server) hookWork(ctx context.Context, hook, what string, retryFor time.Duration, f func() error) bool {
	if retryFor == 0 {
		retryFor = hookRetryFor
	}
	deadline := time.Now().Add(retryFor)
	pause := 50 * time.Millisecond
	for {
		err := f()
		switch {
		case err == nil:
			return true
		case ctx.Err() != nil:
			return false
		case time.Now().After(deadline):
			s.fail(fmt.Errorf("PostStartHook %q failed: %s: %w", hook, what, err))
			return false
		}
		s.log.Warn("start-up work failed; retrying", "hook", hook, "work", what, "err", err, "retryIn", pause)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
		pause = min(2*pause, 2*time.Second)
	}
}
