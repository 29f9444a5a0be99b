package clients

import (
	"context"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// widgetGV is the group version of the CRD in testdata/crds.
var widgetGV = schema.GroupVersion{Group: "clients.example.com", Version: "v1"}

// Widget is a hand-written typed custom resource of the fixture CRD, as an
// operator author would write it.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

type WidgetSpec struct {
	Size  int64  `json:"size"`
	Color string `json:"color,omitempty"`
}

type WidgetStatus struct {
	Phase              string `json:"phase,omitempty"`
	Area               int64  `json:"area,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
}

func (w *Widget) DeepCopyObject() runtime.Object {
	c := *w
	w.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func (l *WidgetList) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Widget, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Widget)
	}
	return &c
}

func ptr[T any](v T) *T { return &v }

// widgetScheme knows the built-in types and the typed Widget.
func widgetScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	s.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, widgetGV)
	return s
}

// TestEnvtestInstallsCRDsAndReconcilerSetsStatus is the common operator
// test set-up: envtest installs CRDs from a directory into an existing
// cluster (waiting until discovery serves them), a manager runs a
// reconciler for the custom resource, and the reconciler's status writes
// go through the status subresource; a ConfigMap it owns is collected
// with the widget. envtest's clean-up deletes the CRD.
func TestEnvtestInstallsCRDsAndReconcilerSetsStatus(t *testing.T) {
	env := &envtest.Environment{
		UseExistingCluster:    ptr(true),
		Config:                config(t),
		CRDDirectoryPaths:     []string{filepath.Join("testdata", "crds")},
		ErrorIfCRDPathMissing: true,
		CRDInstallOptions:     envtest.CRDInstallOptions{CleanUpAfterUse: true},
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest start: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = env.Stop()
		}
	})
	if len(env.CRDs) != 1 || env.CRDs[0].Name != "widgets.clients.example.com" {
		t.Fatalf("envtest installed %d CRDs: %v", len(env.CRDs), env.CRDs)
	}

	cs := clientset(t, config(t))
	ns := namespace(t, cs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scheme := widgetScheme(t)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The reconciler keeps a ConfigMap it owns beside each widget and
	// reports the widget's area for the generation it saw.
	err = ctrl.NewControllerManagedBy(mgr).For(&Widget{}).Owns(&corev1.ConfigMap{}).Named("widget-status").Complete(
		reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var w Widget
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, &w); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-parts", Namespace: w.Namespace}}
			if err := controllerutil.SetControllerReference(&w, cm, scheme); err != nil {
				return reconcile.Result{}, err
			}
			if err := mgr.GetClient().Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
				return reconcile.Result{}, err
			}
			if w.Status.ObservedGeneration == w.Generation {
				return reconcile.Result{}, nil
			}
			w.Status = WidgetStatus{Phase: "Ready", Area: w.Spec.Size * w.Spec.Size, ObservedGeneration: w.Generation}
			return reconcile.Result{}, mgr.GetClient().Status().Update(ctx, &w)
		}))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()

	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	// A status in the create is dropped: status is a subresource.
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: ns}, Spec: WidgetSpec{Size: 3}, Status: WidgetStatus{Phase: "Forged"}}
	if err := c.Create(ctx, w); err != nil {
		t.Fatalf("creating the widget: %v", err)
	}
	if w.Spec.Color != "grey" || w.Status.Phase != "" || w.Generation != 1 || w.UID == "" {
		t.Errorf("created widget: spec %+v, status %+v, generation %d, uid %q", w.Spec, w.Status, w.Generation, w.UID)
	}
	key := types.NamespacedName{Namespace: ns, Name: "w1"}
	var got Widget
	eventually(t, "the reconciler to set the status", func() bool {
		return c.Get(ctx, key, &got) == nil && got.Status.ObservedGeneration == 1
	})
	if got.Status != (WidgetStatus{Phase: "Ready", Area: 9, ObservedGeneration: 1}) || got.Generation != 1 || got.Spec.Size != 3 {
		t.Errorf("reconciled widget: generation %d, spec %+v, status %+v", got.Generation, got.Spec, got.Status)
	}

	// A merge patch of spec bumps the generation; the reconciler follows.
	before := got.DeepCopyObject().(*Widget)
	got.Spec.Size = 4
	if err := c.Patch(ctx, &got, client.MergeFrom(before)); err != nil {
		t.Fatalf("patching the widget: %v", err)
	}
	if got.Generation != 2 || got.Spec.Size != 4 || got.Status.ObservedGeneration != 1 {
		t.Errorf("patched widget: generation %d, spec %+v, status %+v", got.Generation, got.Spec, got.Status)
	}
	eventually(t, "the reconciler to see the new generation", func() bool {
		return c.Get(ctx, key, &got) == nil && got.Status.ObservedGeneration == 2
	})
	if got.Status.Area != 16 || got.Generation != 2 {
		t.Errorf("reconciled widget: generation %d, status %+v", got.Generation, got.Status)
	}
	var list WidgetList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil || len(list.Items) != 1 || list.Items[0].Status.Area != 16 {
		t.Errorf("listing widgets: %v %+v", err, list.Items)
	}

	// The owned ConfigMap names the widget as its controller; deleting
	// the widget lets the garbage collector remove it.
	var cm corev1.ConfigMap
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "w1-parts"}, &cm); err != nil {
		t.Fatalf("the reconciler's ConfigMap: %v", err)
	}
	if refs := cm.OwnerReferences; len(refs) != 1 || refs[0].APIVersion != widgetGV.String() || refs[0].Kind != "Widget" ||
		refs[0].Name != "w1" || refs[0].UID != w.UID || refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("owner references %+v", refs)
	}
	if err := c.Delete(ctx, &got); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the owned ConfigMap to be collected", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "w1-parts"}, &corev1.ConfigMap{}))
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("manager stopped with %v", err)
	}

	// envtest's clean-up deletes the CRD; its resource and objects go.
	stopped = true
	if err := env.Stop(); err != nil {
		t.Fatalf("envtest stop: %v", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(config(t))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the CRD and its resource to go", func() bool {
		_, err := dc.ServerResourcesForGroupVersion(widgetGV.String())
		if !apierrors.IsNotFound(err) {
			return false
		}
		_, err = crdClient(t).Get(context.Background(), "widgets.clients.example.com", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}
