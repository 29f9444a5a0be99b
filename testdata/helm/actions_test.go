package helm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDryRunServer renders with --dry-run=server: the chart's lookup
// reads the cluster, and nothing is stored.
func TestDryRunServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := clientset(t)
	ns := namespace(t)
	// A dry run installs no CRDs (Helm skips crds/ then), so the
	// custom resource maps only once a real install created the CRD.
	install(t, ns, "live", nil)

	in := action.NewInstall(helmConfig(t, ns))
	in.Namespace, in.ReleaseName, in.Timeout = ns, "preview", waitTimeout
	in.DryRun, in.DryRunOption = true, "server"
	rel, err := in.Run(loadChart(t), nil)
	if err != nil {
		t.Fatalf("helm install --dry-run=server: %v", err)
	}
	if rel.Info.Status != release.StatusPendingInstall || !strings.Contains(rel.Manifest, "name: preview-shop-config") {
		t.Errorf("dry run: status %s manifest:\n%s", rel.Info.Status, rel.Manifest)
	}
	secrets, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=preview"})
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 0 {
		t.Errorf("dry run stored release secrets: %d", len(secrets.Items))
	}
	for what, err := range map[string]error{
		"deployment": get(cs.AppsV1().Deployments(ns).Get(ctx, "preview-shop", metav1.GetOptions{})),
		"configmap":  get(cs.CoreV1().ConfigMaps(ns).Get(ctx, "preview-shop-config", metav1.GetOptions{})),
		"hook":       get(cs.CoreV1().ConfigMaps(ns).Get(ctx, "preview-shop-hook", metav1.GetOptions{})),
		"secret":     get(cs.CoreV1().Secrets(ns).Get(ctx, "preview-shop-secret", metav1.GetOptions{})),
		"widget":     get(dynamicClient(t).Resource(widgets).Namespace(ns).Get(ctx, "preview-shop", metav1.GetOptions{})),
	} {
		if !notFound(err) {
			t.Errorf("dry run stored the %s: %v", what, err)
		}
	}

	// A server dry run of an upgrade sees the stored password through the
	// chart's lookup and changes nothing.
	stored, err := cs.CoreV1().Secrets(ns).Get(ctx, "live-shop-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	up := action.NewUpgrade(helmConfig(t, ns))
	up.Namespace, up.Timeout, up.DryRun, up.DryRunOption = ns, waitTimeout, true, "server"
	rel, err = up.Run("live", loadChart(t), upgraded.helmValues())
	if err != nil {
		t.Fatalf("helm upgrade --dry-run=server: %v", err)
	}
	if rel.Version != 2 || !strings.Contains(rel.Manifest, "password: "+b64(stored.Data["password"])) {
		t.Errorf("dry-run upgrade: version %d, manifest without the stored password:\n%s", rel.Version, rel.Manifest)
	}
	checkShop(t, ns, "live", defaults)
	checkRelease(t, ns, "live", 1, release.StatusDeployed)
	if _, err := cs.CoreV1().Secrets(ns).Get(ctx, "sh.helm.release.v1.live.v2", metav1.GetOptions{}); !notFound(err) {
		t.Errorf("dry-run upgrade stored release version 2: %v", err)
	}
}

// TestCreateNamespace installs into a namespace Helm creates.
func TestCreateNamespace(t *testing.T) {
	t.Parallel()
	ns := nsName(t)
	t.Cleanup(func() { deleteNamespace(t, ns) })
	in := action.NewInstall(helmConfig(t, ns))
	in.Namespace, in.ReleaseName, in.Timeout, in.CreateNamespace = ns, "fresh", waitTimeout, true
	err := withCRD(func() error { _, err := in.Run(loadChart(t), nil); return err })
	if err != nil {
		t.Fatalf("helm install --create-namespace: %v", err)
	}
	got, err := clientset(t).CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("namespace created by Helm: %v", err)
	}
	if got.Labels["name"] != ns || got.Labels["kubernetes.io/metadata.name"] != ns || got.Status.Phase != "Active" {
		t.Errorf("namespace labels %v phase %s", got.Labels, got.Status.Phase)
	}
	checkShop(t, ns, "fresh", defaults)
	checkRelease(t, ns, "fresh", 1, release.StatusDeployed)
}

// TestUpgradeInstall runs helm upgrade --install twice, as the helm
// command does: the first installs the new release, the second upgrades.
func TestUpgradeInstall(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	for i, v := range []shopValues{defaults, upgraded} {
		rel := upgradeInstall(t, ns, "rolling", v.helmValues())
		if rel.Version != i+1 || rel.Info.Status != release.StatusDeployed {
			t.Fatalf("helm upgrade --install #%d: version %d %s", i+1, rel.Version, rel.Info.Status)
		}
		checkShop(t, ns, "rolling", v)
		checkHook(t, ns, "rolling", i+1, i == 1)
		checkRelease(t, ns, "rolling", i+1, release.StatusDeployed)
	}
}

// upgradeInstall does what helm upgrade --install does.
func upgradeInstall(t *testing.T, ns, name string, vals map[string]interface{}) *release.Release {
	t.Helper()
	cfg := helmConfig(t, ns)
	hist := action.NewHistory(cfg)
	hist.Max = 1
	_, err := hist.Run(name)
	var rel *release.Release
	switch {
	case errors.Is(err, driver.ErrReleaseNotFound):
		in := action.NewInstall(cfg)
		in.Namespace, in.ReleaseName, in.Timeout = ns, name, waitTimeout
		err = withCRD(func() (err error) { rel, err = in.Run(loadChart(t), vals); return err })
	case err == nil:
		up := action.NewUpgrade(cfg)
		up.Namespace, up.Timeout, up.Install = ns, waitTimeout, true
		rel, err = up.Run(name, loadChart(t), vals)
	}
	if err != nil {
		t.Fatalf("helm upgrade --install %s: %v", name, err)
	}
	return rel
}

// TestFailedInstall installs a chart with an object platd refuses: the
// release is recorded failed with platd's error text, and an atomic
// install removes what it created.
func TestFailedInstall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := clientset(t)
	ns := namespace(t)
	const want = `Service "broken-shop" is invalid: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive`

	in := action.NewInstall(helmConfig(t, ns))
	in.Namespace, in.ReleaseName, in.Timeout = ns, "broken", waitTimeout
	var rel *release.Release
	err := withCRD(func() (err error) {
		rel, err = in.Run(loadChart(t), map[string]interface{}{"broken": true})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("helm install of an invalid service: %v, want %q", err, want)
	}
	if rel == nil || rel.Info.Status != release.StatusFailed || !strings.Contains(rel.Info.Description, want) {
		t.Fatalf("release %+v, want failed with %q", rel, want)
	}
	checkRelease(t, ns, "broken", 1, release.StatusFailed)
	st, err := action.NewStatus(helmConfig(t, ns)).Run("broken")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Info.Description, want) {
		t.Errorf("helm status description %q, want %q", st.Info.Description, want)
	}
	if _, err := cs.CoreV1().Services(ns).Get(ctx, "broken-shop", metav1.GetOptions{}); !notFound(err) {
		t.Errorf("the refused service was stored: %v", err)
	}

	// --atomic uninstalls what the failed install created.
	in = action.NewInstall(helmConfig(t, ns))
	in.Namespace, in.ReleaseName, in.Timeout, in.Atomic = ns, "undone", waitTimeout, true
	err = withCRD(func() error { _, err := in.Run(loadChart(t), map[string]interface{}{"broken": true}); return err })
	if err == nil || !strings.Contains(err.Error(), strings.ReplaceAll(want, "broken-shop", "undone-shop")) {
		t.Fatalf("helm install --atomic of an invalid service: %v", err)
	}
	checkGone(t, ns, "undone")
	if _, err := action.NewStatus(helmConfig(t, ns)).Run("undone"); !errors.Is(err, driver.ErrReleaseNotFound) {
		t.Errorf("helm status of the atomic release: %v, want not found", err)
	}
}
