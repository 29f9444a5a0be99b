package helm

import (
	"context"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestUpgradeForce upgrades with --force: Helm replaces every object with
// a PUT of its rendered form, which holds no cluster IP, no
// resourceVersion-dependent fields and none of the server's defaults.
func TestUpgradeForce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := clientset(t)
	ns := namespace(t)
	install(t, ns, "forced", nil)
	before, err := cs.CoreV1().Services(ns).Get(ctx, "forced-shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	up := action.NewUpgrade(helmConfig(t, ns))
	up.Namespace, up.Timeout, up.Force = ns, waitTimeout, true
	rel, err := up.Run("forced", loadChart(t), upgraded.helmValues())
	if err != nil {
		t.Fatalf("helm upgrade --force: %v", err)
	}
	if rel.Version != 2 || rel.Info.Status != release.StatusDeployed {
		t.Fatalf("helm upgrade --force: version %d %s", rel.Version, rel.Info.Status)
	}
	checkShop(t, ns, "forced", upgraded)
	checkRelease(t, ns, "forced", 2, release.StatusDeployed)
	after, err := cs.CoreV1().Services(ns).Get(ctx, "forced-shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Spec.ClusterIP != before.Spec.ClusterIP || after.UID != before.UID {
		t.Errorf("replaced service: cluster IP %s uid %s, was %s %s", after.Spec.ClusterIP, after.UID, before.Spec.ClusterIP, before.UID)
	}
}

// TestUpgradeRemovesObject upgrades to values that leave an object out of
// the chart (Helm deletes it) with a history limit (Helm deletes the
// oldest release record).
func TestUpgradeRemovesObject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := clientset(t)
	ns := namespace(t)
	install(t, ns, "slim", nil)
	for v := 2; v <= 3; v++ {
		up := action.NewUpgrade(helmConfig(t, ns))
		up.Namespace, up.Timeout, up.MaxHistory = ns, waitTimeout, 2
		vals := map[string]interface{}{"ingress": map[string]interface{}{"enabled": v == 3}}
		if _, err := up.Run("slim", loadChart(t), vals); err != nil {
			t.Fatalf("helm upgrade to %d: %v", v, err)
		}
		_, err := cs.NetworkingV1().Ingresses(ns).Get(ctx, "slim-shop", metav1.GetOptions{})
		if v == 2 && !notFound(err) {
			t.Errorf("ingress left out of revision 2 is still stored: %v", err)
		}
		if v == 3 && err != nil {
			t.Errorf("ingress of revision 3: %v", err)
		}
	}
	checkShop(t, ns, "slim", defaults)
	checkRelease(t, ns, "slim", 3, release.StatusDeployed)
	checkRelease(t, ns, "slim", 2, release.StatusSuperseded)
	if _, err := cs.CoreV1().Secrets(ns).Get(ctx, "sh.helm.release.v1.slim.v1", metav1.GetOptions{}); !notFound(err) {
		t.Errorf("release record 1 beyond --history-max 2: %v", err)
	}
}

// TestWait installs and uninstalls with --wait a chart without its
// Deployment: Helm polls the Service for its cluster IP and the other
// kinds are ready at once; uninstall waits until every object is gone.
func TestWait(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := clientset(t)
	ns := namespace(t)
	vals := map[string]interface{}{"deployment": map[string]interface{}{"enabled": false}}

	in := action.NewInstall(helmConfig(t, ns))
	in.Namespace, in.ReleaseName, in.Timeout, in.Wait, in.WaitForJobs = ns, "patient", waitTimeout, true, true
	err := withCRD(func() error { _, err := in.Run(loadChart(t), vals); return err })
	if err != nil {
		t.Fatalf("helm install --wait: %v", err)
	}
	checkRelease(t, ns, "patient", 1, release.StatusDeployed)
	svc, err := cs.CoreV1().Services(ns).Get(ctx, "patient-shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.ClusterIP == "" {
		t.Errorf("service %+v", svc.Spec)
	}
	if _, err := cs.AppsV1().Deployments(ns).Get(ctx, "patient-shop", metav1.GetOptions{}); !notFound(err) {
		t.Errorf("deployment left out of the chart: %v", err)
	}

	up := action.NewUpgrade(helmConfig(t, ns))
	up.Namespace, up.Timeout, up.Wait = ns, waitTimeout, true
	vals["greeting"] = "bye"
	if _, err := up.Run("patient", loadChart(t), vals); err != nil {
		t.Fatalf("helm upgrade --wait: %v", err)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "patient-shop-config", metav1.GetOptions{})
	if err != nil || cm.Data["greeting"] != "bye" {
		t.Errorf("configmap after upgrade --wait: %v %v", cm.Data, err)
	}

	un := action.NewUninstall(helmConfig(t, ns))
	un.Timeout, un.Wait = waitTimeout, true
	if _, err := un.Run("patient"); err != nil {
		t.Fatalf("helm uninstall --wait: %v", err)
	}
	// --wait returned only once the objects were gone: no polling here.
	for what, err := range map[string]error{
		"service":   get(cs.CoreV1().Services(ns).Get(ctx, "patient-shop", metav1.GetOptions{})),
		"configmap": get(cs.CoreV1().ConfigMaps(ns).Get(ctx, "patient-shop-config", metav1.GetOptions{})),
		"widget":    get(dynamicClient(t).Resource(widgets).Namespace(ns).Get(ctx, "patient-shop", metav1.GetOptions{})),
	} {
		if !notFound(err) {
			t.Errorf("%s after uninstall --wait: %v", what, err)
		}
	}
}

// TestAdoption installs over objects that exist already: Helm refuses
// objects it does not own and, with --take-ownership, adopts them.
func TestAdoption(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := clientset(t)
	ns := namespace(t)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "adopted-shop-config", Labels: map[string]string{"team": "web"}},
		Data:       map[string]string{"greeting": "old", "extra": "kept"},
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	in := action.NewInstall(helmConfig(t, ns))
	in.Namespace, in.ReleaseName, in.Timeout = ns, "adopted", waitTimeout
	err := withCRD(func() error { _, err := in.Run(loadChart(t), nil); return err })
	if err == nil || !strings.Contains(err.Error(), "invalid ownership metadata") {
		t.Fatalf("helm install over a foreign configmap: %v, want invalid ownership metadata", err)
	}

	in = action.NewInstall(helmConfig(t, ns))
	in.Namespace, in.ReleaseName, in.Timeout, in.TakeOwnership, in.Replace = ns, "adopted", waitTimeout, true, true
	if err := withCRD(func() error { _, err := in.Run(loadChart(t), nil); return err }); err != nil {
		t.Fatalf("helm install --take-ownership: %v", err)
	}
	checkShop(t, ns, "adopted", defaults)
	got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "adopted-shop-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels["team"] != "web" || got.UID == "" {
		t.Errorf("adopted configmap %+v lost its own label", got.ObjectMeta)
	}
}
