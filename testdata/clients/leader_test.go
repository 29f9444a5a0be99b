package clients

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Leader election timings: short so the test renews several times, in
// the order client-go requires (duration > deadline > retry * jitter).
const (
	leaseDuration = 3 * time.Second
	renewDeadline = 2 * time.Second
	retryPeriod   = 200 * time.Millisecond
)

func TestLeaderElectionAcquiresAndRenews(t *testing.T) {
	cs := clientset(t, config(t))
	ns := namespace(t, cs)
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: "leader"},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "candidate-1"},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	stopped := make(chan struct{})
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   leaseDuration,
		RenewDeadline:   renewDeadline,
		RetryPeriod:     retryPeriod,
		ReleaseOnCancel: true,
		Name:            "clients-test",
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { close(started) },
			OnStoppedLeading: func() { close(stopped) },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { elector.Run(ctx); close(done) }()

	select {
	case <-started:
	case <-time.After(waitTimeout):
		t.Fatal("never became leader")
	}
	lease, err := cs.CoordinationV1().Leases(ns).Get(ctx, "leader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "candidate-1" || lease.Spec.RenewTime == nil {
		t.Fatalf("lease after acquiring: %+v", lease.Spec)
	}
	first := lease.Spec.RenewTime.Time
	eventually(t, "the leader to renew its lease", func() bool {
		l, err := cs.CoordinationV1().Leases(ns).Get(ctx, "leader", metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.Time.After(first) && *l.Spec.HolderIdentity == "candidate-1"
	})
	if !elector.IsLeader() {
		t.Error("lost the lease while renewing")
	}

	cancel()
	<-done
	<-stopped
	// Released on cancel: the holder is cleared for the next candidate.
	l, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), "leader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
		t.Errorf("lease still held by %q after release", *l.Spec.HolderIdentity)
	}

	// A second candidate takes the released lease at once.
	lock2 := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: "leader"},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "candidate-2"},
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	started2 := make(chan struct{})
	elector2, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock2, LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: true, Name: "clients-test",
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { close(started2) },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	done2 := make(chan struct{})
	go func() { elector2.Run(ctx2); close(done2) }()
	select {
	case <-started2:
	case <-time.After(waitTimeout):
		t.Fatal("the second candidate never became leader")
	}
	l, err = cs.CoordinationV1().Leases(ns).Get(context.Background(), "leader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *l.Spec.HolderIdentity != "candidate-2" || l.Spec.LeaseTransitions == nil || *l.Spec.LeaseTransitions < 1 {
		t.Errorf("lease after handover: holder %v, transitions %v", *l.Spec.HolderIdentity, l.Spec.LeaseTransitions)
	}
	cancel2()
	<-done2
}
