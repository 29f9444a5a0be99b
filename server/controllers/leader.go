package controllers

import (
	"context"
	"errors"
	"fmt"
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
//
// The bound on two leaders: a candidate takes the lease over only
// LeaseDuration after it saw the leader's last renewal, which it cannot
// see before that renewal's attempt started. The leader's work context
// ends RenewDeadline after that start, whatever the store does, so the
// leader's work has LeaseDuration − RenewDeadline (5 s) to stop. The work
// is not fenced: writes it already started then still complete, and work
// slower to return than that bound overlaps the next leader's (a warning
// is logged). RenewDeadline must be below LeaseDuration.
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
	// term is the running term's context, nil between terms: leading
	// ends the moment it is cancelled.
	term context.Context
}

// Leading reports whether this candidate holds the lease now: a term runs
// and its renew deadline has not passed. It is safe for concurrent use.
func (e *Elector) Leading() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.term != nil && e.term.Err() == nil
}

func (e *Elector) setTerm(term context.Context) {
	e.mu.Lock()
	e.term = term
	e.mu.Unlock()
}

func (e *Elector) timings() (lease, renew, retry time.Duration) {
	return orDefault(e.LeaseDuration, DefaultLeaseDuration), orDefault(e.RenewDeadline, DefaultRenewDeadline), orDefault(e.RetryPeriod, DefaultRetryPeriod)
}

// ErrTimings is returned by Check for timings that cannot keep one leader.
var ErrTimings = errors.New("leader election timings")

// Check reports timings that break the bound on two leaders: the renew
// deadline must be below the lease duration, and the retry period (with
// its jitter) below the renew deadline, or no renewal fits in it.
func (e *Elector) Check() error {
	lease, renew, retry := e.timings()
	if renew >= lease {
		return fmt.Errorf("%w: the renew deadline %v must be below the lease duration %v", ErrTimings, renew, lease)
	}
	if maxRetry := time.Duration(float64(retry) * (1 + retryJitter)); maxRetry >= renew {
		return fmt.Errorf("%w: the retry period %v (%v with jitter) must be below the renew deadline %v", ErrTimings, retry, maxRetry, renew)
	}
	return nil
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
// on this replica never overlaps. When ctx ends while leading, the lease
// is released once lead has returned, so another candidate takes over at
// once instead of after the lease duration (client-go's ReleaseOnCancel).
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context)) {
	leaseDur, renewDeadline, _ := e.timings()
	for {
		renewed, ok := e.acquire(ctx)
		if !ok {
			return
		}
		e.Log.Info("leader elected", "lease", e.Namespace+"/"+e.Name, "identity", e.Identity)
		term, end := context.WithCancel(ctx)
		e.setTerm(term)
		done := make(chan struct{})
		go func() {
			defer close(done)
			lead(term)
		}()
		renewed = e.renew(term, end, renewed)
		end()
		// Past the lease duration after the last renewal, the next leader
		// may already run (see the timings).
		slow := time.NewTimer(time.Until(renewed.Add(leaseDur)))
		select {
		case <-done:
		case <-slow.C:
			// The timer also fires at once when renew itself came back
			// late, after lead had returned.
			select {
			case <-done:
			default:
				e.Log.Warn("leader's work outlives its lease", "lease", e.Namespace+"/"+e.Name, "identity", e.Identity,
					"bound", leaseDur-renewDeadline)
				<-done
			}
		}
		slow.Stop()
		e.setTerm(nil)
		if ctx.Err() != nil {
			e.release()
			return
		}
		e.Log.Warn("leader lost the lease", "lease", e.Namespace+"/"+e.Name, "identity", e.Identity)
	}
}

// acquire tries every retry period (with jitter) until the lease is won
// and returns when the winning attempt started; ok is false when ctx ends
// first.
func (e *Elector) acquire(ctx context.Context) (started time.Time, ok bool) {
	_, renewDeadline, retry := e.timings()
	for {
		// One attempt may not outlast the renew deadline.
		actx, cancel := context.WithTimeout(ctx, renewDeadline)
		started = time.Now()
		won := e.tryAcquireOrRenew(actx, started)
		cancel()
		if won {
			return started, true
		}
		wait := retry + time.Duration(rand.Float64()*retryJitter*float64(retry))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, false
		case <-t.C:
		}
	}
}

// renew renews the lease every retry period until term ends or the renew
// deadline after the start of the last successful attempt (renewed)
// passes. At that deadline it ends the term (end) at once, even while an
// attempt is still waiting on the store: every attempt runs under that
// one deadline, as client-go runs its whole renew loop under one timeout.
// It returns the start of the last successful attempt.
func (e *Elector) renew(term context.Context, end context.CancelFunc, renewed time.Time) time.Time {
	_, renewDeadline, retry := e.timings()
	stepDown := time.AfterFunc(time.Until(renewed.Add(renewDeadline)), end)
	defer stepDown.Stop()
	t := time.NewTicker(retry)
	defer t.Stop()
	for {
		select {
		case <-term.Done():
			return renewed
		case <-t.C:
		}
		ctx, cancel := context.WithDeadline(term, renewed.Add(renewDeadline))
		started := time.Now()
		ok := e.tryAcquireOrRenew(ctx, started)
		cancel()
		if !ok {
			continue
		}
		// A renewal that succeeded after the deadline counts no more:
		// the term has ended.
		if !stepDown.Stop() || term.Err() != nil {
			return renewed
		}
		renewed = started
		stepDown.Reset(time.Until(renewed.Add(renewDeadline)))
	}
}

// tryAcquireOrRenew writes this candidate into the lease when it is free,
// expired or already its own, and reports whether it holds it; now, when
// the attempt started, stamps the lease. It gives up when ctx ends.
func (e *Elector) tryAcquireOrRenew(ctx context.Context, now time.Time) bool {
	leaseDur, _, _ := e.timings()
	stamp := now.UTC().Format(microTime)
	_, err := e.getLease(ctx)
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
		if ctx.Err() != nil {
			return false
		}
		e.Log.Warn("leader election: reading the lease", "lease", e.Namespace+"/"+e.Name, "err", err)
		return false
	}
	held := false
	_, err = e.Objects.Update(ctx, e.Leases, e.Namespace, e.Name, "", func(old registry.Object) registry.Object {
		held = false
		spec := child(old, "spec")
		holder, _ := spec["holderIdentity"].(string)
		// Observed now, as read: the lease's version cannot be seen
		// before its writer's attempt started.
		if holder != e.Identity && holder != "" && !e.expired(old, time.Now()) {
			return nil
		}
		if holder != e.Identity {
			spec["acquireTime"] = stamp
			spec["leaseTransitions"] = registry.Int64(spec["leaseTransitions"]) + 1
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

// getLease reads the lease until ctx ends. The store's Get takes no ctx
// (the etcd engine waits up to its own read timeout), so a read still
// waiting at ctx's end is abandoned: it finishes on its own, at most one
// per attempt.
func (e *Elector) getLease(ctx context.Context) (registry.Object, error) {
	type read struct {
		obj registry.Object
		err error
	}
	ch := make(chan read, 1)
	go func() {
		obj, err := e.Objects.Get(e.Leases, e.Namespace, e.Name)
		ch <- read{obj, err}
	}()
	select {
	case r := <-ch:
		return r.obj, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
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
	dur := time.Duration(registry.Int64(child(lease, "spec")["leaseDurationSeconds"])) * time.Second
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
