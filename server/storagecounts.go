package server

import (
	"context"
	"strings"
	"time"

	"platd/server/registry"
)

// resourceCount is one series of apiserver_storage_objects.
type resourceCount struct {
	resource string
	count    int64
}

// objectCounts are the series of apiserver_storage_objects. The bbolt
// engine counts from memory when scraped; a store on etcd is polled every
// --etcd-count-metric-poll-period, as upstream polls etcd, and with a
// period of 0 the metric is not served.
func (s *Server) objectCounts() []resourceCount {
	if _, ok := s.store.(etcdStore); !ok {
		return s.countObjects()
	}
	if p := s.polledCounts.Load(); p != nil {
		return *p
	}
	return nil
}

// countObjects counts each stored resource's objects.
func (s *Server) countObjects() []resourceCount {
	var out []resourceCount
	seen := map[string]bool{}
	for _, d := range s.reg.All() {
		if d.Serve != registry.ServeObject || d.Computed != nil {
			continue // nothing stored: reviews, bindings, component statuses
		}
		p := d.ResourcePrefix()
		if seen[p] {
			continue // another version of a resource stored once
		}
		seen[p] = true
		out = append(out, resourceCount{strings.Trim(p, "/"), s.store.Count(p)})
	}
	return out
}

// pollObjectCounts starts the poll of a store on etcd, from when serving
// starts until the server stops.
func (s *Server) pollObjectCounts() {
	if !s.pollsObjectCounts() {
		return
	}
	period := s.opts.Etcd.CountMetricPollPeriod
	s.background.run(func(ctx context.Context) {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			counts := s.countObjects()
			s.polledCounts.Store(&counts)
			s.hooks.finish(hookCountTracker)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// pollsObjectCounts reports whether the object counts are polled: on etcd
// with a poll period.
func (s *Server) pollsObjectCounts() bool {
	_, ok := s.store.(etcdStore)
	return ok && s.opts.Etcd.CountMetricPollPeriod > 0
}
