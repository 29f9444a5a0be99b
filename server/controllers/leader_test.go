package controllers

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"platd/server/registry"
)

// candidates is a set of electors on one store, each with its own
// context, counting the terms that run at once.
type candidates struct {
	electors []*Elector
	stops    []context.CancelFunc
	done     []chan struct{}
	running  atomic.Int32
	overlap  atomic.Bool
	terms    atomic.Int32
}

func startCandidates(t *testing.T, e *testEnv, n int) *candidates {
	t.Helper()
	if err := e.api.EnsureNamespace(context.Background(), e.brand.SystemNamespace); err != nil {
		t.Fatal(err)
	}
	c := &candidates{}
	for i := range n {
		el := &Elector{Objects: e.api, Leases: e.lookup(t, e.brand.Group("coordination"), "v1", "leases"),
			Namespace: e.brand.SystemNamespace, Name: e.brand.ControllerManager, Identity: fmt.Sprintf("host_%d", i),
			LeaseDuration: time.Second, RenewDeadline: 200 * time.Millisecond, RetryPeriod: 10 * time.Millisecond, Log: e.log}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			el.Run(ctx, func(ctx context.Context) {
				if c.running.Add(1) > 1 {
					c.overlap.Store(true)
				}
				c.terms.Add(1)
				<-ctx.Done()
				c.running.Add(-1)
			})
		}()
		c.electors, c.stops, c.done = append(c.electors, el), append(c.stops, cancel), append(c.done, done)
	}
	t.Cleanup(func() {
		for i := range c.stops {
			c.stops[i]()
			<-c.done[i]
		}
	})
	return c
}

// leader waits until exactly one running candidate leads and returns its
// index.
func (c *candidates) leader(t *testing.T, stopped map[int]bool) int {
	t.Helper()
	who := -1
	waitFor(t, "one leader", func() bool {
		who = -1
		for i, el := range c.electors {
			if !stopped[i] && el.Leading() {
				if who >= 0 {
					return false
				}
				who = i
			}
		}
		return who >= 0 && c.running.Load() == 1
	})
	return who
}

func TestElectorOneLeaderAndHandOver(t *testing.T) {
	e := newTestEnv(t)
	c := startCandidates(t, e, 3)
	leases := e.lookup(t, e.brand.Group("coordination"), "v1", "leases")
	stopped := map[int]bool{}

	first := c.leader(t, stopped)
	lease, err := e.api.Get(leases, e.brand.SystemNamespace, e.brand.ControllerManager)
	if err != nil {
		t.Fatal(err)
	}
	spec := child(lease, "spec")
	if spec["holderIdentity"] != c.electors[first].Identity || intValue(spec["leaseDurationSeconds"]) != 1 || intValue(spec["leaseTransitions"]) != 0 {
		t.Fatalf("lease after the first election: %v", spec)
	}
	if _, err := time.Parse(microTime, spec["renewTime"].(string)); err != nil {
		t.Fatalf("renewTime %v: %v", spec["renewTime"], err)
	}

	// A stopped leader ends its term, then releases: another takes over
	// without waiting out the lease.
	c.stops[first]()
	<-c.done[first]
	stopped[first] = true
	second := c.leader(t, stopped)
	if second == first {
		t.Fatal("the stopped candidate still leads")
	}
	lease, _ = e.api.Get(leases, e.brand.SystemNamespace, e.brand.ControllerManager)
	if spec := child(lease, "spec"); spec["holderIdentity"] != c.electors[second].Identity || intValue(spec["leaseTransitions"]) != 1 {
		t.Fatalf("lease after the hand-over: %v", spec)
	}
	if c.overlap.Load() {
		t.Fatal("two terms ran at once")
	}
}

func TestElectorStepsDownWhenTheLeaseIsTaken(t *testing.T) {
	e := newTestEnv(t)
	c := startCandidates(t, e, 2)
	leases := e.lookup(t, e.brand.Group("coordination"), "v1", "leases")
	first := c.leader(t, nil)

	// Another holder writes itself in with a fresh renewal: the leader's
	// renewals fail and it stops its work within the renew deadline;
	// nobody leads until that lease runs out.
	stamp := time.Now().UTC().Format(microTime)
	if _, err := e.api.Update(context.Background(), leases, e.brand.SystemNamespace, e.brand.ControllerManager, "", func(old registry.Object) registry.Object {
		spec := child(old, "spec")
		spec["holderIdentity"], spec["renewTime"], spec["leaseDurationSeconds"] = "intruder", stamp, int64(1)
		return old
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the leader to step down", func() bool { return !c.electors[first].Leading() && c.running.Load() == 0 })
	lease, _ := e.api.Get(leases, e.brand.SystemNamespace, e.brand.ControllerManager)
	if h := child(lease, "spec")["holderIdentity"]; h != "intruder" {
		t.Fatalf("holder while the intruder's lease is fresh: %v", h)
	}
	// Once it expires, a candidate takes the lease and the work resumes.
	c.leader(t, nil)
	if c.terms.Load() != 2 || c.overlap.Load() {
		t.Fatalf("terms %d, overlap %v", c.terms.Load(), c.overlap.Load())
	}
}

func TestElectorTakesOverFromADeadHolder(t *testing.T) {
	e := newTestEnv(t)
	leases := e.lookup(t, e.brand.Group("coordination"), "v1", "leases")
	if err := e.api.EnsureNamespace(context.Background(), e.brand.SystemNamespace); err != nil {
		t.Fatal(err)
	}
	// A holder that died without releasing: its lease stays until the
	// candidates have seen it unchanged for its duration.
	stamp := time.Now().UTC().Format(microTime)
	if _, err := e.api.Create(context.Background(), leases, registry.Object{
		"metadata": map[string]any{"name": e.brand.ControllerManager, "namespace": e.brand.SystemNamespace},
		"spec": map[string]any{"holderIdentity": "dead_1", "leaseDurationSeconds": int64(1), "acquireTime": stamp,
			"renewTime": stamp, "leaseTransitions": int64(4)},
	}); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	c := startCandidates(t, e, 2)
	who := c.leader(t, nil)
	if waited := time.Since(started); waited < time.Second {
		t.Fatalf("took the lease of a holder seen alive %v ago", waited)
	}
	lease, _ := e.api.Get(leases, e.brand.SystemNamespace, e.brand.ControllerManager)
	if spec := child(lease, "spec"); spec["holderIdentity"] != c.electors[who].Identity || intValue(spec["leaseTransitions"]) != 5 ||
		spec["acquireTime"] == stamp {
		t.Fatalf("lease after the take-over: %v", spec)
	}
}
