package helm

import (
	"context"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestInstall installs the shop chart and checks every object platd
// stored, the release record, helm list and helm get manifest.
func TestInstall(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	rel := install(t, ns, "shop", nil)
	if rel.Info.Notes == "" {
		t.Errorf("release has no notes")
	}
	checkShop(t, ns, "shop", defaults)
	checkHook(t, ns, "shop", 1, false)
	checkRelease(t, ns, "shop", 1, release.StatusDeployed)

	crd, err := apiextensions(t).ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), widgetsCRD, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the chart's CRD: %v", err)
	}
	established := false
	for _, c := range crd.Status.Conditions {
		established = established || (c.Type == apiextv1.Established && c.Status == apiextv1.ConditionTrue)
	}
	if !established {
		t.Errorf("CRD conditions %+v, want Established", crd.Status.Conditions)
	}
	if _, ok := crd.Labels["app.kubernetes.io/managed-by"]; ok {
		t.Errorf("CRD of crds/ got Helm's labels %v; Helm installs those as they are", crd.Labels)
	}
	resources, err := clientset(t).Discovery().ServerResourcesForGroupVersion(widgets.GroupVersion().String())
	if err != nil {
		t.Fatalf("discovery of %s: %v", widgets.GroupVersion(), err)
	}
	served := false
	for _, r := range resources.APIResources {
		served = served || r.Name == widgets.Resource
	}
	if !served {
		t.Errorf("discovery of %s lists %v, want widgets", widgets.GroupVersion(), resources.APIResources)
	}

	list := action.NewList(helmConfig(t, ns))
	list.SetStateMask()
	rels, err := list.Run()
	if err != nil {
		t.Fatalf("helm list: %v", err)
	}
	if len(rels) != 1 || rels[0].Name != "shop" || rels[0].Info.Status != release.StatusDeployed || rels[0].Version != 1 ||
		rels[0].Chart.Metadata.Version != "0.1.0" {
		t.Errorf("helm list: %+v, want shop deployed version 1 of chart 0.1.0", rels)
	}

	// helm list --all-namespaces lists the release Secrets of every
	// namespace.
	list = action.NewList(helmConfig(t, ""))
	list.AllNamespaces = true
	list.SetStateMask()
	rels, err = list.Run()
	if err != nil {
		t.Fatalf("helm list --all-namespaces: %v", err)
	}
	found := false
	for _, r := range rels {
		found = found || (r.Name == "shop" && r.Namespace == ns)
	}
	if !found {
		t.Errorf("helm list --all-namespaces: shop in %s missing from %d releases", ns, len(rels))
	}

	get := action.NewGet(helmConfig(t, ns))
	got, err := get.Run("shop")
	if err != nil {
		t.Fatalf("helm get manifest: %v", err)
	}
	for _, want := range []string{"kind: Deployment", "kind: Service", "kind: ConfigMap", "kind: Secret",
		"kind: ServiceAccount", "kind: Role", "kind: RoleBinding", "kind: Ingress", "kind: Widget", "kind: PodDisruptionBudget",
		"name: shop-shop-config", "image: \"nginx:1.25.0\""} {
		if !strings.Contains(got.Manifest, want) {
			t.Errorf("helm get manifest lacks %q:\n%s", want, got.Manifest)
		}
	}
	if strings.Contains(got.Manifest, "kind: CustomResourceDefinition") || strings.Contains(got.Manifest, "name: shop-shop-hook") {
		t.Errorf("helm get manifest holds the CRD or the hook:\n%s", got.Manifest)
	}
}
