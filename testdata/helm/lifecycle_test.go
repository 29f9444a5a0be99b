package helm

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// foreignAnnotation is set on the Deployment by someone other than Helm;
// Helm's three-way merge must keep it across upgrades and rollbacks.
const foreignAnnotation = "example.test/owner"

// TestUpgradeRollbackUninstall upgrades a release with changed values,
// rolls it back and uninstalls it, checking the stored objects and the
// release records after each step.
func TestUpgradeRollbackUninstall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := clientset(t)
	ns := namespace(t)
	const name = "store"
	full := fullname(name)
	install(t, ns, name, nil)
	checkShop(t, ns, name, defaults)
	before, err := cs.CoreV1().Secrets(ns).Get(ctx, full+"-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// Fields Helm does not own: an annotation, a spec field and a label
	// written by another client.
	patch, _ := json.Marshal(map[string]interface{}{
		"metadata": map[string]interface{}{"annotations": map[string]string{foreignAnnotation: "ops"}},
		"spec":     map[string]interface{}{"revisionHistoryLimit": 3},
	})
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, full, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("annotating the deployment: %v", err)
	}
	patch, _ = json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
		"labels": map[string]string{"team": "web"}}})
	if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, full+"-config", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("labelling the configmap: %v", err)
	}

	up := action.NewUpgrade(helmConfig(t, ns))
	up.Namespace, up.Timeout = ns, waitTimeout
	rel, err := up.Run(name, loadChart(t), upgraded.helmValues())
	if err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
	if rel.Version != 2 || rel.Info.Status != release.StatusDeployed {
		t.Fatalf("helm upgrade: version %d %s, want 2 deployed", rel.Version, rel.Info.Status)
	}
	checkShop(t, ns, name, upgraded)
	checkHook(t, ns, name, 2, true)
	checkRelease(t, ns, name, 2, release.StatusDeployed)
	checkRelease(t, ns, name, 1, release.StatusSuperseded)
	checkForeign(t, ns, name)
	after, err := cs.CoreV1().Secrets(ns).Get(ctx, full+"-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(after.Data["password"]) != string(before.Data["password"]) {
		t.Errorf("upgrade changed the password that the chart's lookup keeps: %q, was %q", after.Data["password"], before.Data["password"])
	}

	rb := action.NewRollback(helmConfig(t, ns))
	rb.Version, rb.Timeout = 1, waitTimeout
	if err := rb.Run(name); err != nil {
		t.Fatalf("helm rollback %s 1: %v", name, err)
	}
	checkShop(t, ns, name, defaults)
	checkRelease(t, ns, name, 3, release.StatusDeployed)
	checkRelease(t, ns, name, 2, release.StatusSuperseded)
	checkForeign(t, ns, name)

	hist := action.NewHistory(helmConfig(t, ns))
	hist.Max = 10
	rels, err := hist.Run(name)
	if err != nil {
		t.Fatalf("helm history: %v", err)
	}
	if len(rels) != 3 {
		t.Fatalf("helm history: %d revisions, want 3", len(rels))
	}
	for i, r := range rels {
		if r.Version != i+1 {
			t.Errorf("helm history: revision %d at %d", r.Version, i)
		}
	}
	if rels[2].Info.Description != "Rollback to 1" {
		t.Errorf("helm history: revision 3 description %q, want Rollback to 1", rels[2].Info.Description)
	}

	// An object deleted by hand comes back with the next upgrade.
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, full+"-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	up = action.NewUpgrade(helmConfig(t, ns))
	up.Namespace, up.Timeout = ns, waitTimeout
	if _, err := up.Run(name, loadChart(t), defaults.helmValues()); err != nil {
		t.Fatalf("helm upgrade after a deleted configmap: %v", err)
	}
	checkShop(t, ns, name, defaults)
	checkRelease(t, ns, name, 4, release.StatusDeployed)

	hook, err := cs.CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + full + "-goodbye"})
	if err != nil {
		t.Fatal(err)
	}
	defer hook.Stop()
	un := action.NewUninstall(helmConfig(t, ns))
	un.Timeout = waitTimeout
	res, err := un.Run(name)
	if err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	if res.Release.Info.Status != release.StatusUninstalled {
		t.Errorf("helm uninstall: status %s", res.Release.Info.Status)
	}
	checkGone(t, ns, name)
	// The pre-delete hook was created and deleted once it succeeded.
	var events []watch.EventType
	timeout := time.After(waitTimeout)
	for len(events) < 2 {
		select {
		case e, ok := <-hook.ResultChan():
			if !ok {
				t.Fatalf("watch of the pre-delete hook ended after %v", events)
			}
			events = append(events, e.Type)
		case <-timeout:
			t.Fatalf("pre-delete hook events %v, want ADDED and DELETED", events)
		}
	}
	if events[0] != watch.Added || events[1] != watch.Deleted {
		t.Errorf("pre-delete hook events %v, want ADDED and DELETED", events)
	}
	secrets, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 0 {
		t.Errorf("release secrets left after uninstall: %d", len(secrets.Items))
	}
	// Helm never deletes the CRDs of a chart's crds/ directory.
	if _, err := apiextensions(t).ApiextensionsV1().CustomResourceDefinitions().Get(ctx, widgetsCRD, metav1.GetOptions{}); err != nil {
		t.Errorf("CRD after uninstall: %v", err)
	}
	if _, err := action.NewStatus(helmConfig(t, ns)).Run(name); err == nil {
		t.Errorf("helm status after uninstall found the release")
	}
}

// checkForeign checks that the fields another client set survived.
func checkForeign(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	cs := clientset(t)
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, fullname(name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Annotations[foreignAnnotation] != "ops" {
		t.Errorf("deployment annotations %v lost %s", d.Annotations, foreignAnnotation)
	}
	if d.Spec.RevisionHistoryLimit == nil || *d.Spec.RevisionHistoryLimit != 3 {
		t.Errorf("deployment revisionHistoryLimit %v, want the 3 another client set", d.Spec.RevisionHistoryLimit)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, fullname(name)+"-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels["team"] != "web" {
		t.Errorf("configmap labels %v lost team=web", cm.Labels)
	}
}

// checkGone waits until every object of the release's manifest is gone.
func checkGone(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	dc := dynamicClient(t)
	full := fullname(name)
	for _, o := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, full},
		{schema.GroupVersionResource{Version: "v1", Resource: "services"}, full},
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, full + "-config"},
		{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, full + "-secret"},
		{schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, full},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, full},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, full},
		{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, full},
		{schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, full},
		{widgets, full},
	} {
		eventually(t, fmt.Sprintf("%s %s/%s to be deleted", o.gvr.Resource, ns, o.name), func() bool {
			_, err := dc.Resource(o.gvr).Namespace(ns).Get(ctx, o.name, metav1.GetOptions{})
			return notFound(err)
		})
	}
}
