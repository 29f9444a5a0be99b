package controllers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
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
			LeaseDuration: time.Second, RenewDeadline: 700 * time.Millisecond, RetryPeriod: 10 * time.Millisecond, Log: e.log}
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
	if spec["holderIdentity"] != c.electors[first].Identity || registry.Int64(spec["leaseDurationSeconds"]) != 1 || registry.Int64(spec["leaseTransitions"]) != 0 {
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
	if spec := child(lease, "spec"); spec["holderIdentity"] != c.electors[second].Identity || registry.Int64(spec["leaseTransitions"]) != 1 {
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
	if spec := child(lease, "spec"); spec["holderIdentity"] != c.electors[who].Identity || registry.Int64(spec["leaseTransitions"]) != 5 ||
		spec["acquireTime"] == stamp {
		t.Fatalf("lease after the take-over: %v", spec)
	}
}

// hangingObjects is a store that can hang like an unreachable etcd: once
// hung, its reads or writes wait until released, ignoring their ctx.
type hangingObjects struct {
	Objects
	reads, writes atomic.Bool
	release       chan struct{}
	// waiting counts calls hanging now; renewed is when the last
	// successful write was sent (UnixNano).
	waiting, renewed atomic.Int64
}

func (h *hangingObjects) hang(on *atomic.Bool) {
	if on.Load() {
		h.waiting.Add(1)
		<-h.release
		h.waiting.Add(-1)
	}
}

func (h *hangingObjects) Get(d *registry.Descriptor, ns, name string) (registry.Object, error) {
	h.hang(&h.reads)
	return h.Objects.Get(d, ns, name)
}

func (h *hangingObjects) Create(ctx context.Context, d *registry.Descriptor, obj registry.Object) (registry.Object, error) {
	h.hang(&h.writes)
	sent := time.Now()
	out, err := h.Objects.Create(ctx, d, obj)
	if err == nil {
		h.renewed.Store(sent.UnixNano())
	}
	return out, err
}

func (h *hangingObjects) Update(ctx context.Context, d *registry.Descriptor, ns, name, sub string, change func(registry.Object) registry.Object) (registry.Object, error) {
	h.hang(&h.writes)
	sent := time.Now()
	out, err := h.Objects.Update(ctx, d, ns, name, sub, change)
	if err == nil {
		h.renewed.Store(sent.UnixNano())
	}
	return out, err
}

// The leader's store hangs in the middle of its term: its work must end
// by the renew deadline after its last renewal, while the hung call still
// waits, and so before the other candidate may take the lease over.
func TestElectorStepsDownWhenTheStoreHangs(t *testing.T) {
	const leaseDur, renewDeadline = time.Second, 200 * time.Millisecond
	for _, tc := range []struct {
		name          string
		reads, writes bool
	}{
		{"reads hang", true, false},
		{"writes hang", false, true},
		{"both hang", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			if err := e.api.EnsureNamespace(context.Background(), e.brand.SystemNamespace); err != nil {
				t.Fatal(err)
			}
			hung := &hangingObjects{Objects: e.api, release: make(chan struct{})}
			var releaseOnce sync.Once
			release := func() { releaseOnce.Do(func() { close(hung.release) }) }
			leases := e.lookup(t, e.brand.Group("coordination"), "v1", "leases")
			logs := &logBuffer{}
			var (
				running, overlap atomic.Int32
				ended            [2]atomic.Int64 // when each term's work saw its end
				hungAtEnd        atomic.Int64    // hanging calls when the first term ended
				started          atomic.Int64    // when the second candidate's term began
			)
			electors := make([]*Elector, 2)
			var stops []func()
			for i, objs := range []Objects{hung, e.api} {
				el := &Elector{Objects: objs, Leases: leases, Namespace: e.brand.SystemNamespace, Name: e.brand.ControllerManager,
					Identity: fmt.Sprintf("host_%d", i), LeaseDuration: leaseDur, RenewDeadline: renewDeadline,
					RetryPeriod: 10 * time.Millisecond, Log: e.log}
				if i == 0 {
					el.Log = slog.New(slog.NewTextHandler(logs, nil))
				}
				electors[i] = el
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() {
					defer close(done)
					el.Run(ctx, func(ctx context.Context) {
						if running.Add(1) > 1 {
							overlap.Add(1)
						}
						if i == 1 {
							started.CompareAndSwap(0, time.Now().UnixNano())
						}
						<-ctx.Done()
						if i == 0 && ended[0].Load() == 0 {
							hungAtEnd.Store(hung.waiting.Load())
						}
						ended[i].CompareAndSwap(0, time.Now().UnixNano())
						running.Add(-1)
					})
				}()
				stops = append(stops, func() { cancel(); <-done })
				if i == 0 {
					waitFor(t, "the first candidate to lead", el.Leading)
				}
			}
			t.Cleanup(func() {
				release()
				for _, stop := range stops {
					stop()
				}
			})
			// The second candidate has seen the lease before the store hangs.
			waitFor(t, "the second candidate to see the lease", func() bool {
				electors[1].mu.Lock()
				defer electors[1].mu.Unlock()
				return electors[1].observedRV != ""
			})
			hung.reads.Store(tc.reads)
			hung.writes.Store(tc.writes)

			waitFor(t, "the second candidate to lead", func() bool { return electors[1].Leading() && started.Load() != 0 })
			if electors[0].Leading() {
				t.Fatal("the hung leader still leads")
			}
			end, renewed := ended[0].Load(), hung.renewed.Load()
			if end == 0 || overlap.Load() != 0 || end > started.Load() {
				t.Fatalf("the hung leader's work ended at %d, the next term began at %d (overlap %d)", end, started.Load(), overlap.Load())
			}
			if hungAtEnd.Load() == 0 {
				t.Fatal("the term ended only after the hung store call returned")
			}
			// Steps down by the renew deadline; the check allows the
			// documented bound, LeaseDuration after the last renewal.
			if after := time.Duration(end - renewed); after > leaseDur {
				t.Fatalf("the work ended %v after the last renewal", after)
			} else {
				t.Logf("the work ended %v after the last renewal (renew deadline %v)", after, renewDeadline)
			}
			lease, err := e.api.Get(leases, e.brand.SystemNamespace, e.brand.ControllerManager)
			if err != nil {
				t.Fatal(err)
			}
			if spec := child(lease, "spec"); spec["holderIdentity"] != "host_1" || registry.Int64(spec["leaseTransitions"]) != 1 {
				t.Fatalf("lease after the take-over: %v", spec)
			}
			// Once the store answers, the old leader's renewal comes back
			// (late, with hung writes): its work had stopped in time.
			release()
			waitFor(t, "the lost lease to be logged", func() bool { return strings.Contains(logs.String(), `msg="leader lost the lease"`) })
			if strings.Contains(logs.String(), "outlives") {
				t.Fatalf("work that stopped in time reported as outliving the lease: %s", logs)
			}
		})
	}
}

func TestElectorCheck(t *testing.T) {
	for _, tc := range []struct {
		name                string
		lease, renew, retry time.Duration
		wantErr             string
	}{
		{"defaults", 0, 0, 0, ""},
		{"short", time.Second, 200 * time.Millisecond, 10 * time.Millisecond, ""},
		{"renew equals lease", time.Second, time.Second, 10 * time.Millisecond, "the renew deadline 1s must be below the lease duration 1s"},
		{"renew above the default lease", 0, 20 * time.Second, 0, "the renew deadline 20s must be below the lease duration 15s"},
		{"retry with jitter reaches renew", time.Second, 120 * time.Millisecond, 100 * time.Millisecond,
			"the retry period 100ms (120ms with jitter) must be below the renew deadline 120ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Elector{LeaseDuration: tc.lease, RenewDeadline: tc.renew, RetryPeriod: tc.retry}).Check()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrTimings) || err.Error() != "leader election timings: "+tc.wantErr {
				t.Fatalf("got %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// logBuffer collects log lines for a test; safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Work that ignores the end of its term past the lease duration is the
// one way two leaders run at once: the elector says so.
func TestElectorWarnsWhenWorkOutlivesTheLease(t *testing.T) {
	e := newTestEnv(t)
	if err := e.api.EnsureNamespace(context.Background(), e.brand.SystemNamespace); err != nil {
		t.Fatal(err)
	}
	hung := &hangingObjects{Objects: e.api, release: make(chan struct{})}
	logs := &logBuffer{}
	el := &Elector{Objects: hung, Leases: e.lookup(t, e.brand.Group("coordination"), "v1", "leases"),
		Namespace: e.brand.SystemNamespace, Name: e.brand.ControllerManager, Identity: "host_0",
		LeaseDuration: 300 * time.Millisecond, RenewDeadline: 100 * time.Millisecond, RetryPeriod: 10 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(logs, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	done, finish := make(chan struct{}), make(chan struct{})
	var termEnded atomic.Bool
	go func() {
		defer close(done)
		el.Run(ctx, func(ctx context.Context) {
			<-ctx.Done()
			termEnded.Store(true)
			<-finish
		})
	}()
	t.Cleanup(func() {
		close(hung.release)
		cancel()
		<-done
	})
	waitFor(t, "the candidate to lead", el.Leading)
	if strings.Contains(logs.String(), "outlives") {
		t.Fatalf("warned while renewing: %s", logs)
	}
	hung.reads.Store(true)
	waitFor(t, "the term to end", termEnded.Load)
	waitFor(t, "the warning", func() bool { return strings.Contains(logs.String(), `msg="leader's work outlives its lease"`) })
	if el.Leading() {
		t.Fatal("leading after the term ended")
	}
	close(finish)
	waitFor(t, "the lost lease to be logged", func() bool { return strings.Contains(logs.String(), `msg="leader lost the lease"`) })
	if !strings.Contains(logs.String(), "bound=200ms") {
		t.Fatalf("the warning names no bound: %s", logs)
	}
}
