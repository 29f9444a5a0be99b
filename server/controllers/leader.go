package controllers

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"platd/server/apierr"
	"platd/server/registry"
)

// Leader election timings, kube-controller-manager's defaults: a lease
// unrenewed for LeaseDuration may be taken by another candidate; the
// leader gives up when it could not renew for RenewDeadline (before anyone
// else may take it over); candidates try again every RetryPeriod.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// retryJitter spreads the candidates' attempts, as client-go's factor 1.2:
// replicas started together do not all write the lease at once.
const retryJitter = 0.2

// microTime is the wire form of a Lease's times (MicroTime).
const microTime = "2006-01-02T15:04:05.000000Z07:00"

// Elector runs work on one replica at a time through a Lease in the system
// namespace, the way kube-controller-manager's leader election does: the
// holder renews the lease; others take it only when its holder has not
// renewed it for its duration as they observed it (their own clocks, so
// clocks of different hosts need not agree), or when it was released.
type Elector struct {
	Objects Objects
	// Leases is the coordination Lease descriptor.
	Leases          *registry.Descriptor
	Namespace, Name string
	// Identity is this candidate's holderIdentity (upstream's
	// "<hostname>_<uuid>").
	Identity string
	// The timings; zero means the default.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	Log                                       *slog.Logger

	mu sync.Mutex
	// observedRV and observedAt are the lease's resourceVersion last seen
	// and this replica's time when it was first seen: the lease expires
	// LeaseDuration after that.
	observedRV string
	observedAt time.Time
	leading    bool
}

// Leading reports whether this candidate holds the lease now. It is safe
// for concurrent use.
func (e *Elector) Leading() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leading
}

func (e *Elector) setLeading(v bool) {
	e.mu.Lock()
	e.leading = v
	e.mu.Unlock()
}

func (e *Elector) timings() (lease, renew, retry time.Duration) {
	return orDefault(e.LeaseDuration, DefaultLeaseDuration), orDefault(e.RenewDeadline, DefaultRenewDeadline), orDefault(e.RetryPeriod, DefaultRetryPeriod)
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Run campaigns until ctx ends. Each time the lease is won, lead runs
// with a context that ends when the lease is lost or ctx ends; Run waits
// for lead to return before it campaigns again, so the work of two terms
// never overlaps. When ctx ends while leading, the lease is released once
// lead has returned, so another candidate takes over at once instead of
// after the lease duration (client-go's ReleaseOnCancel).
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context)) {
	for {
		if !e.acquire(ctx) {
			return
		}
		e.Log.Info("leader elected", "lease", e.Namespace+"/"+e.Name, "identity", e.Identity)
		e.setLeading(true)
		term, end := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			lead(term)
		}()
		e.renew(term)
		end()
		<-done
		e.setLeading(false)
		if ctx.Err() != nil {
			e.release()
			return
		}
		e.Log.Warn("leader lost the lease", "lease", e.Namespace+"/"+e.Name, "identity", e.Identity)
	}
}

// acquire tries every retry period (with jitter) until the lease is won;
// it returns false when ctx ends first.
func (e *Elector) acquire(ctx context.Context) bool {
	_, _, retry := e.timings()
	for {
		if e.tryAcquireOrRenew(ctx) {
			return true
		}
		wait := retry + time.Duration(rand.Float64()*retryJitter*float64(retry))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// renew renews the lease every retry period until ctx ends or it has not
// been renewed for the renew deadline.
func (e *Elector) renew(ctx context.Context) {
	_, deadline, retry := e.timings()
	renewed := time.Now()
	t := time.NewTicker(retry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if e.tryAcquireOrRenew(ctx) {
			renewed = time.Now()
			continue
		}
		if ctx.Err() == nil && time.Since(renewed) >= deadline {
			return
		}
	}
}

// tryAcquireOrRenew writes this candidate into the lease when it is free,
// expired or already its own, and reports whether it holds it.
func (e *Elector) tryAcquireOrRenew(ctx context.Context) bool {
	leaseDur, renewDeadline, _ := e.timings()
	// One attempt may not outlast the renew deadline.
	ctx, cancel := context.WithTimeout(ctx, renewDeadline)
	defer cancel()
	now := time.Now()
	stamp := now.UTC().Format(microTime)
	_, err := e.Objects.Get(e.Leases, e.Namespace, e.Name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		_, err = e.Objects.Create(ctx, e.Leases, registry.Object{
			"metadata": map[string]any{"name": e.Name, "namespace": e.Namespace},
			"spec": map[string]any{"holderIdentity": e.Identity, "leaseDurationSeconds": seconds(leaseDur),
				"acquireTime": stamp, "renewTime": stamp, "leaseTransitions": int64(0)},
		})
		if err != nil && apierr.ReasonOf(err) != apierr.ReasonAlreadyExists && ctx.Err() == nil {
			e.Log.Warn("leader election: creating the lease", "lease", e.Namespace+"/"+e.Name, "err", err)
		}
		return err == nil
	}
	if err != nil {
		e.Log.Warn("leader election: reading the lease", "lease", e.Namespace+"/"+e.Name, "err", err)
		return false
	}
	held := false
	_, err = e.Objects.Update(ctx, e.Leases, e.Namespace, e.Name, "", func(old registry.Object) registry.Object {
		held = false
		spec := child(old, "spec")
		holder, _ := spec["holderIdentity"].(string)
		if holder != e.Identity && holder != "" && !e.expired(old, now) {
			return nil
		}
		if holder != e.Identity {
			spec["acquireTime"] = stamp
			spec["leaseTransitions"] = intValue(spec["leaseTransitions"]) + 1
		}
		spec["holderIdentity"] = e.Identity
		spec["leaseDurationSeconds"] = seconds(leaseDur)
		spec["renewTime"] = stamp
		held = true
		return old
	})
	if err != nil {
		held = false
		// A conflict is another candidate's write; an ended context
		// is the term's end.
		if apierr.ReasonOf(err) != apierr.ReasonConflict && ctx.Err() == nil {
			e.Log.Warn("leader election: updating the lease", "lease", e.Namespace+"/"+e.Name, "err", err)
		}
	}
	return held
}

// expired reports whether another holder's lease ran out: it has not
// changed for its duration since this replica first saw its current
// version.
func (e *Elector) expired(lease registry.Object, now time.Time) bool {
	rv := metaString(lease, "resourceVersion")
	e.mu.Lock()
	defer e.mu.Unlock()
	if rv != e.observedRV {
		e.observedRV, e.observedAt = rv, now
	}
	dur := time.Duration(intValue(child(lease, "spec")["leaseDurationSeconds"])) * time.Second
	return !now.Before(e.observedAt.Add(dur))
}

// release gives up a held lease: an empty holder lets the next candidate
// take it at its next attempt.
func (e *Elector) release() {
	_, renewDeadline, _ := e.timings()
	ctx, cancel := context.WithTimeout(context.Background(), renewDeadline)
	defer cancel()
	stamp := time.Now().UTC().Format(microTime)
	_, err := e.Objects.Update(ctx, e.Leases, e.Namespace, e.Name, "", func(old registry.Object) registry.Object {
		spec := child(old, "spec")
		if spec["holderIdentity"] != e.Identity {
			return nil
		}
		spec["holderIdentity"] = ""
		spec["leaseDurationSeconds"] = int64(1)
		spec["acquireTime"], spec["renewTime"] = stamp, stamp
		return old
	})
	if err != nil {
		e.Log.Warn("leader election: releasing the lease", "lease", e.Namespace+"/"+e.Name, "err", err)
		return
	}
	e.Log.Info("leader released the lease", "lease", e.Namespace+"/"+e.Name, "identity", e.Identity)
}

// seconds is a lease duration in whole seconds, at least one (the field
// must be positive).
func seconds(d time.Duration) int64 {
	return max(int64((d+time.Second-1)/time.Second), 1)
}

// intValue reads a decoded JSON integer.
func intValue(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}
