package clients

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func init() { log.SetLogger(logr.Discard()) }

func TestMetadataOnlyClients(t *testing.T) {
	cs := clientset(t, config(t))
	ns := namespace(t, cs)
	ctx := context.Background()
	for _, name := range []string{"a", "b"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"set": "x"}}, Data: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// client-go's metadata client asks for PartialObjectMetadata.
	mc := metadata.NewForConfigOrDie(config(t))
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	list, err := mc.Resource(configMaps).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: "set=x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 || list.Items[0].Name != "a" || list.Items[0].UID == "" || list.ResourceVersion == "" {
		t.Errorf("metadata list: %+v", list)
	}
	one, err := mc.Resource(configMaps).Namespace(ns).Get(ctx, "b", metav1.GetOptions{})
	if err != nil || one.Name != "b" || one.Labels["set"] != "x" || one.CreationTimestamp.IsZero() {
		t.Errorf("metadata get: %v %+v", err, one)
	}

	// controller-runtime's client lists metadata only for a
	// PartialObjectMetadataList.
	c, err := client.New(config(t), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	partial := &metav1.PartialObjectMetadataList{}
	partial.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMapList"})
	if err := c.List(ctx, partial, client.InNamespace(ns), client.MatchingLabels{"set": "x"}); err != nil {
		t.Fatal(err)
	}
	if len(partial.Items) != 2 || partial.Items[1].Name != "b" {
		t.Errorf("controller-runtime metadata list: %+v", partial.Items)
	}
}

func TestControllerRuntimeManagerReconcilesConfigMaps(t *testing.T) {
	cs := clientset(t, config(t))
	ns := namespace(t, cs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	mgr, err := ctrl.NewManager(config(t), ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The reconciler marks every ConfigMap it sees.
	err = ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("mark-configmaps").Complete(
		reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var cm corev1.ConfigMap
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			if cm.Annotations["reconciled"] == "true" {
				return reconcile.Result{}, nil
			}
			if cm.Annotations == nil {
				cm.Annotations = map[string]string{}
			}
			cm.Annotations["reconciled"] = "true"
			return reconcile.Result{}, mgr.GetClient().Update(ctx, &cm)
		}))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()

	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "target"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the manager to reconcile the ConfigMap", func() bool {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "target", metav1.GetOptions{})
		return err == nil && cm.Annotations["reconciled"] == "true"
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("manager stopped with %v", err)
	}
}
