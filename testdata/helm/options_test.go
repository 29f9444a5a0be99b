package helm

import (
	"context"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// manifestKinds are the version/kind keys of helm status --show-resources
// for the shop chart.
var manifestKinds = []string{"v1/ConfigMap", "v1/Secret", "v1/Service", "v1/ServiceAccount", "v1/Role", "v1/RoleBinding",
	"v1/Ingress", "v1/Deployment", "v1/Widget", "v1/PodDisruptionBudget"}

// TestStatusShowResources runs helm status --show-resources, which reads
// every object of the release back, as objects and as Tables. Helm drops
// the objects it fails to read, so every kind is checked.
func TestStatusShowResources(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	install(t, ns, "shown", nil)
	for _, table := range []bool{false, true} {
		st := action.NewStatus(helmConfig(t, ns))
		st.ShowResources, st.ShowResourcesTable = true, table
		rel, err := st.Run("shown")
		if err != nil {
			t.Fatalf("helm status --show-resources (table %t): %v", table, err)
		}
		for _, kind := range manifestKinds {
			objs := rel.Info.Resources[kind]
			if len(objs) != 1 {
				t.Errorf("table %t: %s: %d objects, want 1 (resources %v)", table, kind, len(objs), keys(rel.Info.Resources))
				continue
			}
			u, ok := objs[0].(*unstructured.Unstructured)
			if !ok {
				t.Errorf("table %t: %s: %T", table, kind, objs[0])
				continue
			}
			if !table {
				if got := u.GetName(); !strings.HasPrefix(got, "shown-shop") {
					t.Errorf("%s: name %q", kind, got)
				}
				continue
			}
			rows, _, _ := unstructured.NestedSlice(u.Object, "rows")
			cols, _, _ := unstructured.NestedSlice(u.Object, "columnDefinitions")
			if u.GetKind() != "Table" || len(rows) != 1 || len(cols) < 2 {
				t.Errorf("table of %s: kind %s, %d rows, %d columns", kind, u.GetKind(), len(rows), len(cols))
			}
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestUninstallCascade uninstalls with --cascade=foreground and
// --cascade=orphan, and --wait: each object is deleted with that
// propagation policy and Helm waits until it is gone.
func TestUninstallCascade(t *testing.T) {
	t.Parallel()
	for _, cascade := range []string{"foreground", "orphan"} {
		t.Run(cascade, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t)
			install(t, ns, cascade, nil)
			un := action.NewUninstall(helmConfig(t, ns))
			un.Timeout, un.Wait, un.DeletionPropagation = waitTimeout, true, cascade
			if _, err := un.Run(cascade); err != nil {
				t.Fatalf("helm uninstall --cascade=%s --wait: %v", cascade, err)
			}
			checkGone(t, ns, cascade)
		})
	}
}

// TestConfigMapDriver keeps the release records in ConfigMaps, as
// HELM_DRIVER=configmap does.
func TestConfigMapDriver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := clientset(t)
	ns := namespace(t)
	cfg := helmConfigDriver(t, ns, "configmap")
	in := action.NewInstall(cfg)
	in.Namespace, in.ReleaseName, in.Timeout = ns, "kept", waitTimeout
	if err := withCRD(func() error { _, err := in.Run(loadChart(t), nil); return err }); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	up := action.NewUpgrade(helmConfigDriver(t, ns, "configmap"))
	up.Namespace, up.Timeout = ns, waitTimeout
	if _, err := up.Run("kept", loadChart(t), upgraded.helmValues()); err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
	checkShop(t, ns, "kept", upgraded)
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=kept"})
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, cm := range cms.Items {
		status[cm.Name] = cm.Labels["status"]
	}
	if len(status) != 2 || status["sh.helm.release.v1.kept.v1"] != "superseded" || status["sh.helm.release.v1.kept.v2"] != "deployed" {
		t.Errorf("release configmaps %v, want v1 superseded and v2 deployed", status)
	}
	list := action.NewList(helmConfigDriver(t, ns, "configmap"))
	rels, err := list.Run()
	if err != nil || len(rels) != 1 || rels[0].Version != 2 {
		t.Errorf("helm list: %v %v", rels, err)
	}
	if _, err := action.NewUninstall(helmConfigDriver(t, ns, "configmap")).Run("kept"); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	checkGone(t, ns, "kept")
}

// TestAtomicUpgrade upgrades to a chart platd refuses with --atomic:
// Helm patches the Service, gets platd's error and rolls back. --atomic
// implies --wait, so the chart goes without its Deployment.
func TestAtomicUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := clientset(t)
	ns := namespace(t)
	noDeployment := map[string]interface{}{"deployment": map[string]interface{}{"enabled": false}}
	install(t, ns, "guarded", noDeployment)
	const want = `Service "guarded-shop" is invalid: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive`
	up := action.NewUpgrade(helmConfig(t, ns))
	up.Namespace, up.Timeout, up.Atomic, up.CleanupOnFail = ns, waitTimeout, true, true
	vals := upgraded.helmValues()
	vals["broken"] = true
	vals["deployment"] = noDeployment["deployment"]
	_, err := up.Run("guarded", loadChart(t), vals)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("helm upgrade --atomic of an invalid service: %v, want %q", err, want)
	}
	checkRelease(t, ns, "guarded", 2, release.StatusFailed)
	checkRelease(t, ns, "guarded", 3, release.StatusDeployed)
	st, err := action.NewStatus(helmConfig(t, ns)).Run("guarded")
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 3 || st.Info.Description != "Rollback to 1" {
		t.Errorf("helm status: version %d %q, want 3 Rollback to 1", st.Version, st.Info.Description)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "guarded-shop-config", metav1.GetOptions{})
	if err != nil || cm.Data["greeting"] != defaults.greeting {
		t.Errorf("configmap after the rollback: %v %v, want greeting %q", cm.Data, err, defaults.greeting)
	}
	svc, err := cs.CoreV1().Services(ns).Get(ctx, "guarded-shop", metav1.GetOptions{})
	if err != nil || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 {
		t.Errorf("service after the rollback: %+v %v", svc.Spec.Ports, err)
	}
}
