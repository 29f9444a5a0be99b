package clients

import (
	"context"
	"sync"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// informerResync is off: the tests watch for changes, not periodic
// replays.
const informerResync = 0 * time.Second

// seen records what an informer's handler was told, by event and name.
type seen struct {
	mu     sync.Mutex
	events map[string]bool
}

func (s *seen) add(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events[what] = true
}

func (s *seen) has(what string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events[what]
}

// handler records adds, updates and deletes of named objects.
func (s *seen) handler() cache.ResourceEventHandlerFuncs {
	name := func(obj any) string {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		m, err := apimeta.Accessor(obj)
		if err != nil {
			return "?"
		}
		return m.GetName()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.add("add " + name(obj)) },
		UpdateFunc: func(_, obj any) { s.add("update " + name(obj)) },
		DeleteFunc: func(obj any) { s.add("delete " + name(obj)) },
	}
}

func TestPodInformerSyncs(t *testing.T) {
	cs := clientset(t, protobufConfig(t))
	ns := namespace(t, cs)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, testPod("before"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	factory := informers.NewSharedInformerFactoryWithOptions(cs, informerResync, informers.WithNamespace(ns))
	pods := factory.Core().V1().Pods()
	s := &seen{events: map[string]bool{}}
	if _, err := pods.Informer().AddEventHandler(s.handler()); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	// Shutdown waits for the informers, which stop with ctx.
	defer func() { cancel(); factory.Shutdown() }()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}
	if _, err := pods.Lister().Pods(ns).Get("before"); err != nil {
		t.Errorf("synced cache lacks the pod made before: %v", err)
	}

	p, err := cs.CoreV1().Pods(ns).Create(ctx, testPod("after"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the informer to see the new pod", func() bool { return s.has("add after") })
	p.Labels["stage"] = "two"
	if _, err := cs.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the informer to see the update", func() bool { return s.has("update after") })
	eventually(t, "the lister to hold the update", func() bool {
		got, err := pods.Lister().Pods(ns).Get("after")
		return err == nil && got.Labels["stage"] == "two"
	})
	grace := int64(0)
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "after", metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the informer to see the delete", func() bool { return s.has("delete after") })
}

func TestDeploymentInformerSyncs(t *testing.T) {
	requireServed(t, "apps/v1", "deployments")
	cs := clientset(t, config(t))
	ns := namespace(t, cs)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	factory := informers.NewSharedInformerFactoryWithOptions(cs, informerResync, informers.WithNamespace(ns))
	deployments := factory.Apps().V1().Deployments()
	s := &seen{events: map[string]bool{}}
	if _, err := deployments.Informer().AddEventHandler(s.handler()); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	// Shutdown waits for the informers, which stop with ctx.
	defer func() { cancel(); factory.Shutdown() }()
	factory.WaitForCacheSync(ctx.Done())
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, testDeployment("web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the informer to see the deployment", func() bool { return s.has("add web") })
}
